#include "sim/llm/rank_timeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

namespace specsim::llm {
namespace {

constexpr SimTime kUs = 1'000'000;  // ps

TimelineStep Kernel(SimTime device, bool graph, int rank = -1) {
  TimelineStep s;
  s.kind = TimelineStep::Kind::kKernel;
  s.device_ps = device;
  s.graph = graph;
  s.rank = rank;
  return s;
}

TimelineStep Collective(SimTime transfer, bool graph) {
  TimelineStep s;
  s.kind = TimelineStep::Kind::kCollective;
  s.transfer_ps = transfer;
  s.graph = graph;
  s.host_class = HostOpClass::kCollective;
  return s;
}

TimelineStep Of(TimelineStep::Kind kind, SimTime host = 0, int rank = -1) {
  TimelineStep s;
  s.kind = kind;
  s.host_ps = host;
  s.rank = rank;
  return s;
}

// Issue 10, test 5: one rank late by d: the other's collective lasts d longer, the step by d.
// Two ranks, eager: kernel of 10 us, collective of T = 5 us; rank 1's host works d = 7 us first.
// No issue costs or gaps: rank 0 arrives at 10, rank 1 at 7 + 10 = 17; transfer 17..22.
TEST(RankTimeline, OneLateRankDelaysTheOtherByItsLateness) {
  TimelineProgram p;
  p.phases = {"step"};
  p.steps = {Of(TimelineStep::Kind::kHostWork, 7 * kUs, 1), Kernel(10 * kUs, false), Collective(5 * kUs, false)};
  ASSERT_TRUE(ValidateProgram(p, 2).ok());
  RankTimelines t(2, HostModel{}, GpuVariation{}, 1);
  std::vector<PhaseAccount> acc;
  const RunResult r = t.Run(p, &acc);
  EXPECT_EQ(r.gpu_end_ps[0], 22 * kUs);
  EXPECT_EQ(r.gpu_end_ps[1], 22 * kUs);
  EXPECT_DOUBLE_EQ(r.wait_ps[0], 7.0 * kUs);  // rank 0's collective: 7 us of wait + 5 of transfer
  EXPECT_DOUBLE_EQ(r.wait_ps[1], 0.0);
  EXPECT_EQ(r.span_ps, 22 * kUs);  // 15 us without the late rank: longer by d
  EXPECT_DOUBLE_EQ(acc[0].wait_ps, 7.0 * kUs);
  EXPECT_DOUBLE_EQ(acc[0].transfer_ps, 5.0 * kUs);
  EXPECT_EQ(acc[0].collectives, 1);
}

// Eager launches: a kernel starts at the later of its host issue and the previous kernel's end
// plus the eager gap. Host issue 3 us per kernel, kernels 1 us, gap 0.5 us: host-bound, the
// third kernel starts at 9 us and ends at 10; with 5 us kernels the GPU binds: 3 + 5 + 0.5 + 5 +
// 0.5 + 5 = 19 us.
TEST(RankTimeline, EagerKernelsWaitForTheHostOrTheGpu) {
  HostModel h;
  h.kernel_issue_ps = 3 * kUs;
  h.eager_gap_ps = kUs / 2;
  for (auto [device, end] : {std::pair<SimTime, SimTime>{kUs, 10 * kUs}, {5 * kUs, 19 * kUs}}) {
    TimelineProgram p;
    p.steps = {Kernel(device, false), Kernel(device, false), Kernel(device, false)};
    RankTimelines t(1, h, GpuVariation{}, 1);
    EXPECT_EQ(t.Run(p).gpu_end_ps[0], end) << device;
  }
}

// A framework's small tensor op (HostOpClass::kTensorOp, its cycle's own launches) pays the
// framework's tensor_op_ps, the whole call (Python, dispatcher, launch), not its per-layer-op
// framework_op_ps, and not the driver's kernel issue on top: issue 3 us, layer op 100 us, tensor
// op 7 us, kernels of 1 us: three tensor ops end at 3 x 7 + 1 = 22 us, host-bound. Without a
// framework's tensor op cost the driver's issue alone: 3 x 3 + 1 = 10 us. A collective adds NCCL's
// host work (collective_issue_ps 5 us) to the framework's per-op cost: 100 + 5 + 1 = 106 us. With
// the kernel class's per-call draws (the probe's one-kernel ops) a tensor op draws from them as a
// raw kernel does: a fixed 20 us per call (quantiles 20, 20) ends the third at 3 x 20 + 1 = 61 us.
TEST(RankTimeline, TensorOpsPayTheFrameworksTensorOpCost) {
  HostModel h;
  h.kernel_issue_ps = 3 * kUs;
  h.collective_issue_ps = 5 * kUs;
  h.framework_op_ps = 100 * kUs;
  h.tensor_op_ps = 7 * kUs;
  TimelineProgram p;
  for (int i = 0; i < 3; ++i) {
    TimelineStep s = Kernel(kUs, false);
    s.host_class = HostOpClass::kTensorOp;
    p.steps.push_back(s);
  }
  RankTimelines fixed(1, h, GpuVariation{}, 1);
  EXPECT_EQ(fixed.Run(p).gpu_end_ps[0], 22 * kUs);
  HostModel bare = h;
  bare.tensor_op_ps = 0;
  RankTimelines driver_only(1, bare, GpuVariation{}, 1);
  EXPECT_EQ(driver_only.Run(p).gpu_end_ps[0], 10 * kUs);
  TimelineProgram collective;
  TimelineStep c = Kernel(kUs, false);
  c.host_class = HostOpClass::kCollective;
  collective.steps.push_back(c);
  RankTimelines with_nccl(1, h, GpuVariation{}, 1);
  EXPECT_EQ(with_nccl.Run(collective).gpu_end_ps[0], 106 * kUs);
  h.call_quantiles_us[static_cast<size_t>(HostOpClass::kKernel)] = {20, 20};
  RankTimelines drawn(1, h, GpuVariation{}, 1);
  EXPECT_EQ(drawn.Run(p).gpu_end_ps[0], 61 * kUs);
}

// A Python framework's per-call distribution replaces the class's issue cost (and the framework's
// per-op cost) for eager ops of that class, drawn per rank and op. Kernel calls uniform on [20, 40]
// us (quantiles 20, 30, 40), library calls a fixed 50 us, kernels of 1 us: 400 host-bound kernel
// calls end near 400 x 30 = 12,000 us (the sum's sd: sqrt(400) x 5.8 = 115 us); the fixed
// kernel_issue_ps and framework_op_ps are not paid. Two ranks draw apart (no mirroring), and a
// graph-launched kernel pays no call.
TEST(RankTimeline, PerCallDistributionsPriceEagerOpsPerRank) {
  HostModel h;
  h.kernel_issue_ps = 1000 * kUs;  // replaced
  h.framework_op_ps = 1000 * kUs;  // replaced
  h.call_quantiles_us[static_cast<size_t>(HostOpClass::kKernel)] = {20, 30, 40};
  EXPECT_TRUE(h.Random());
  TimelineProgram p;
  for (int i = 0; i < 400; ++i) p.steps.push_back(Kernel(kUs, false));
  RankTimelines t(2, h, GpuVariation{}, 7);
  const RunResult r = t.Run(p);
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_GT(r.end_ps[rank], 11'600 * kUs) << rank;
    EXPECT_LT(r.end_ps[rank], 12'400 * kUs) << rank;
  }
  EXPECT_NE(r.end_ps[0], r.end_ps[1]);

  TimelineProgram library;
  TimelineStep gemm = Kernel(kUs, false);
  gemm.host_class = HostOpClass::kLibrary;
  h.library_issue_ps = 50 * kUs;  // no library distribution: the fixed cost, plus framework_op_ps
  h.framework_op_ps = 0;
  library.steps = {gemm, Kernel(kUs, true)};
  RankTimelines g(1, h, GpuVariation{}, 7);
  EXPECT_EQ(g.Run(library).gpu_end_ps[0], 51 * kUs + h.graph_gap_ps + kUs);
}

// With call_correlation the host's speed of the moment is drawn once per Run and shared by every
// call of every rank (pass_quantiles.h). Calls uniform on [20, 40] us, 400 host-bound kernel calls
// per Run, 200 Runs:
//   0: each Run's end is 400 x 30 = 12,000 us give or take sqrt(400) x 5.8 = 115 us (1 sd), and the
//      two ranks differ by about sqrt(2) x 115 = 163 us;
//   0.98: a Run's calls sit near one quantile u, so Runs spread as 400 x (20 + 20 u): sd near
//      400 x 5.8 = 2300 us, while the ranks, sharing the Run's score, stay within a few hundred us
//      (their own parts: sqrt(0.02) of the score's sd).
TEST(RankTimeline, CorrelatedCallsShareTheRunsHostSpeedAcrossRanks) {
  auto spread = [](double rho, double* rank_gap_us) {
    HostModel h;
    h.call_quantiles_us[static_cast<size_t>(HostOpClass::kKernel)] = {20, 30, 40};
    h.call_correlation = rho;
    TimelineProgram p;
    for (int i = 0; i < 400; ++i) p.steps.push_back(Kernel(kUs, false));
    RankTimelines t(2, h, GpuVariation{}, 11);
    std::vector<double> runs;
    double gap = 0;
    SimTime start = 0;
    for (int i = 0; i < 200; ++i) {
      const RunResult r = t.Run(p);
      runs.push_back(static_cast<double>(r.end_ps[0] - start) / kUs);
      gap += std::abs(static_cast<double>(r.end_ps[0] - r.end_ps[1])) / kUs / 200;
      t.AlignClocks();
      start = std::max(r.end_ps[0], r.end_ps[1]);
    }
    *rank_gap_us = gap;
    double mean = 0, var = 0;
    for (double x : runs) mean += x / 200;
    for (double x : runs) var += (x - mean) * (x - mean) / 199;
    return std::sqrt(var);
  };
  double gap0 = 0, gap98 = 0;
  const double sd0 = spread(0, &gap0), sd98 = spread(0.98, &gap98);
  EXPECT_GT(sd0, 80);
  EXPECT_LT(sd0, 160);
  EXPECT_GT(sd98, 1800);
  EXPECT_LT(sd98, 2800);
  EXPECT_GT(gap0, 80);     // mean |difference| of two sums with sd 163: 163 x sqrt(2 / pi) = 130
  EXPECT_LT(gap98, gap0);  // shared speed: closer ranks despite 20x the spread
}

// Graphs: the host launches once (2 us), kernels follow each other with the graph gap (0.25 us).
TEST(RankTimeline, GraphSegmentStartsAfterItsLaunch) {
  HostModel h;
  h.graph_launch_ps = 2 * kUs;
  h.graph_gap_ps = kUs / 4;
  TimelineProgram p;
  p.steps = {Of(TimelineStep::Kind::kGraphLaunch), Kernel(kUs, true), Kernel(kUs, true), Kernel(kUs, true)};
  RankTimelines t(1, h, GpuVariation{}, 1);
  // 2 + 0.25 + 1 + 0.25 + 1 + 0.25 + 1 = 5.75 us.
  EXPECT_EQ(t.Run(p).gpu_end_ps[0], 5 * kUs + 3 * kUs / 4);
}

// A host sync makes the host wait for its GPU: the next step's issue starts after the GPU.
TEST(RankTimeline, HostSyncWaitsForTheGpu) {
  HostModel h;
  h.kernel_issue_ps = kUs;
  h.sync_wake_ps = 2 * kUs;
  TimelineProgram p;
  p.steps = {Kernel(10 * kUs, false), Of(TimelineStep::Kind::kHostSync), Kernel(kUs, false)};
  RankTimelines t(1, h, GpuVariation{}, 1);
  // Kernel 1: issued by 1, ends at 11; sync: host at 11 + 2 = 13; kernel 2 issued by 14, ends 15.
  EXPECT_EQ(t.Run(p).gpu_end_ps[0], 15 * kUs);
}

// A sync on an event waits for the GPU only up to where the event was recorded: the ops issued
// after it keep running (cudaEventSynchronize), on every rank and under the lockstep and mirrored
// shortcuts alike.
TEST(RankTimeline, HostSyncOnAnEventWaitsOnlyForTheOpsBeforeIt) {
  HostModel h;
  h.kernel_issue_ps = kUs;
  h.sync_wake_ps = 2 * kUs;
  TimelineProgram p;
  TimelineStep on_event = Of(TimelineStep::Kind::kHostSync);
  on_event.on_event = true;
  // Kernel 1: issued by 1, ends 11; event at 11; kernel 2: issued by 2, starts 11, ends 31; the
  // sync wakes at 11 + 2 = 13; kernel 3 issued by 14, runs after kernel 2: ends 32.
  p.steps = {Kernel(10 * kUs, false), Of(TimelineStep::Kind::kEventRecord),      Kernel(20 * kUs, false), on_event,
             Kernel(kUs, false),      Of(TimelineStep::Kind::kHostWork, 5 * kUs)};
  for (int ranks : {1, 4}) {
    RankTimelines t(ranks, h, GpuVariation{}, 1);
    const RunResult r = t.Run(p);
    for (int rank = 0; rank < ranks; ++rank) {
      EXPECT_EQ(r.gpu_end_ps[rank], 32 * kUs);
      EXPECT_EQ(t.host_clock(rank), 19 * kUs);  // 14 + the host work's 5
    }
  }
  // The same sync on the stream waits for kernel 2: host at 33, kernel 3 issued by 34, ends 35.
  p.steps[3].on_event = false;
  RankTimelines t(1, h, GpuVariation{}, 1);
  EXPECT_EQ(t.Run(p).gpu_end_ps[0], 35 * kUs);
  // A sync on an event needs one recorded before it.
  TimelineProgram bad;
  bad.steps = {Kernel(kUs, false), on_event};
  EXPECT_FALSE(ValidateProgram(bad, 1).ok());
}

// Issue 10, test 5: over 10,000 cycles, N ranks whose launch before a collective is delayed by
// independent Exp(m) draws wait on average m (H_N - 1) for the last one (the expected maximum of
// N exponentials is m H_N). Checked within 2% for N = 2, 4, 8.
TEST(RankTimeline, MeanWaitOfExponentialJitterIsTheHarmonicClosedForm) {
  for (int n : {2, 4, 8}) {
    HostModel h;
    h.jitter.kind = Jitter::Kind::kExponential;
    h.jitter.mean_us = 10;
    h.sync_wake_ps = kUs;
    TimelineProgram p;
    // Each cycle: the host waits for its GPU, launches one graph (one jitter draw), whose
    // collective is the rendezvous.
    p.steps = {Of(TimelineStep::Kind::kHostSync), Of(TimelineStep::Kind::kGraphLaunch), Collective(5 * kUs, true)};
    RankTimelines t(n, h, GpuVariation{}, 42);
    double wait = 0;
    const int cycles = 10000;
    for (int c = 0; c < cycles; ++c) {
      const RunResult r = t.Run(p);
      for (int rank = 0; rank < n; ++rank) wait += r.wait_ps[rank];
    }
    double harmonic = 0;
    for (int i = 1; i <= n; ++i) harmonic += 1.0 / i;
    const double expected_us = 10 * (harmonic - 1);  // 0.5m, 1.083m, 1.718m
    const double mean_us = wait / (cycles * n) / kUs;
    EXPECT_NEAR(mean_us, expected_us, 0.02 * expected_us) << "N = " << n;
  }
}

TEST(RankTimeline, DeterministicUnderASeed) {
  HostModel h;
  h.jitter.kind = Jitter::Kind::kLognormal;
  h.jitter.mean_us = 3;
  h.jitter.sigma = 1;
  h.kernel_issue_ps = kUs;
  GpuVariation g;
  g.kernel_sigma = 0.1;
  TimelineProgram p;
  p.steps = {Kernel(5 * kUs, false), Collective(2 * kUs, false), Of(TimelineStep::Kind::kHostSync)};
  auto run = [&](uint64_t seed) {
    RankTimelines t(4, h, g, seed);
    std::vector<SimTime> ends;
    for (int i = 0; i < 100; ++i) ends.push_back(t.Run(p).span_ps);
    return ends;
  };
  EXPECT_EQ(run(7), run(7));
  EXPECT_NE(run(7), run(8));
}

// Merging consecutive graph kernels changes no clock: random programs with rank factors, host
// jitter and per-rank kernels, run merged and unmerged from the same seed.
TEST(RankTimeline, MergedGraphKernelsGiveTheSameClocks) {
  std::mt19937_64 g(3);
  std::uniform_int_distribution<int> kind(0, 9), dur(1, 30);
  HostModel h;
  h.kernel_issue_ps = 3 * kUs;
  h.library_issue_ps = 7 * kUs;
  h.collective_issue_ps = 9 * kUs;
  h.graph_launch_ps = 4 * kUs;
  h.eager_gap_ps = kUs;
  h.graph_gap_ps = kUs / 2;
  h.jitter.kind = Jitter::Kind::kExponential;
  h.jitter.mean_us = 2;
  GpuVariation var;
  var.rank_factor = {1.0, 1.1, 0.95};
  for (int trial = 0; trial < 20; ++trial) {
    TimelineProgram p;
    bool launched = false;
    for (int i = 0; i < 200; ++i) {
      const int k = kind(g);
      if (k == 0 || !launched) {
        p.steps.push_back(Of(TimelineStep::Kind::kGraphLaunch));
        launched = true;
      } else if (k <= 5) {
        p.steps.push_back(Kernel(dur(g) * kUs, true));
      } else if (k == 6) {
        p.steps.push_back(Kernel(dur(g) * kUs, false));
      } else if (k == 7) {
        p.steps.push_back(Collective(dur(g) * kUs, k % 2 == 0));
      } else if (k == 8) {
        p.steps.push_back(Kernel(dur(g) * kUs, true, 1));
      } else {
        p.steps.push_back(Of(TimelineStep::Kind::kHostSync));
      }
    }
    const TimelineProgram merged = MergeGraphKernels(p, h.graph_gap_ps);
    EXPECT_LT(merged.steps.size(), p.steps.size());
    RankTimelines a(3, h, var, 11), b(3, h, var, 11);
    for (int i = 0; i < 3; ++i) {
      const RunResult ra = a.Run(p), rb = b.Run(merged);
      EXPECT_EQ(ra.gpu_end_ps, rb.gpu_end_ps) << trial;
      EXPECT_EQ(ra.end_ps, rb.end_ps) << trial;
      EXPECT_EQ(ra.wait_ps, rb.wait_ps) << trial;
    }
  }
}

TEST(RankTimeline, ValidationNamesTheProblem) {
  TimelineProgram p;
  p.steps = {Kernel(kUs, true)};
  EXPECT_NE(ValidateProgram(p, 2).message().find("before any graph launch"), std::string::npos);
  p.steps = {Kernel(kUs, false, 5)};
  EXPECT_NE(ValidateProgram(p, 2).message().find("out of range"), std::string::npos);
  Jitter j;
  j.kind = Jitter::Kind::kEmpirical;
  j.quantiles_us = {3, 2};
  EXPECT_NE(ValidateJitter(j, "host.jitter").message().find("must not decrease"), std::string::npos);
  j.quantiles_us = {1};
  EXPECT_FALSE(ValidateJitter(j, "host.jitter").ok());
}

// The lockstep and mirrored-rank shortcuts (graph ops evaluated once for ranks whose GPU clocks
// agree; without jitter, one rank standing for all) must give exactly what the per-rank
// recurrences give. Asking for slices turns the shortcuts off, so each random program runs twice,
// with and without slices, from the same clocks: every clock, wait and phase account must agree.
// Programs mix eager and graph kernels and collectives, launches, syncs, host work (some with an
// exponential cost of their own) and steps of one rank; hosts with and without jitter, rank
// factors equal (shortcuts on) and unequal (off).
TEST(RankTimeline, ShortcutsGiveThePerRankRecurrencesExactly) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 8);
    HostModel host;
    host.kernel_issue_ps = (1 + rng() % 5) * kUs;
    host.library_issue_ps = (1 + rng() % 7) * kUs;
    host.collective_issue_ps = (1 + rng() % 9) * kUs;
    host.graph_launch_ps = (2 + rng() % 20) * kUs;
    host.sync_wake_ps = (rng() % 3) * kUs;
    host.eager_gap_ps = (rng() % 2) * kUs;
    host.graph_gap_ps = (rng() % 2) * kUs / 2;
    if (trial % 3 == 1) host.jitter = Jitter{Jitter::Kind::kExponential, 2.0, 0, {}};
    GpuVariation gpu;
    if (trial % 5 == 4) {
      for (int r = 0; r < n; ++r) gpu.rank_factor.push_back(1.0 + 0.1 * r);
    } else if (trial % 5 == 3) {
      gpu.rank_factor.assign(n, 1.25);
    }
    TimelineProgram p;
    p.phases = {"a", "b"};
    bool launched = false;
    const int steps = 20 + static_cast<int>(rng() % 200);
    for (int i = 0; i < steps; ++i) {
      TimelineStep s;
      switch (rng() % 9) {
        case 0:
        case 1: s = Kernel((1 + rng() % 40) * kUs, launched && rng() % 3 != 0); break;
        case 2: s = Collective((1 + rng() % 30) * kUs, launched && rng() % 2 == 0); break;
        case 3:
          s = Of(TimelineStep::Kind::kGraphLaunch, (rng() % 4) * kUs);
          launched = true;
          break;
        case 4: s = Of(TimelineStep::Kind::kHostSync); break;
        case 5: s = Of(TimelineStep::Kind::kHostWork, (rng() % 50) * kUs); break;
        case 6:
          s = Of(TimelineStep::Kind::kHostWork, 0);
          s.host_exp_mean_us = rng() % 2 == 0 ? 3.0 : 0.0;
          break;
        case 7: s = Kernel((1 + rng() % 40) * kUs, launched && rng() % 2 == 0, static_cast<int>(rng() % n)); break;
        default:
          s = Kernel((1 + rng() % 10) * kUs, launched);
          s.host_class = HostOpClass::kLibrary;
          break;
      }
      s.phase = static_cast<int>(rng() % 2);
      p.steps.push_back(s);
    }
    ASSERT_TRUE(ValidateProgram(p, n).ok()) << ValidateProgram(p, n).ToString();
    RankTimelines fast(n, host, gpu, 11), exact(n, host, gpu, 11);
    for (int run = 0; run < 3; ++run) {  // later runs start from the clocks the last one left
      std::vector<PhaseAccount> acc_fast, acc_exact;
      std::vector<RankSlice> slices;
      const RunResult a = fast.Run(p, &acc_fast);
      const RunResult b = exact.Run(p, &acc_exact, &slices);
      SCOPED_TRACE("trial " + std::to_string(trial) + " run " + std::to_string(run));
      ASSERT_EQ(a.end_ps, b.end_ps);
      ASSERT_EQ(a.gpu_end_ps, b.gpu_end_ps);
      ASSERT_EQ(a.wait_ps, b.wait_ps);
      ASSERT_EQ(a.span_ps, b.span_ps);
      ASSERT_EQ(a.host_synced, b.host_synced);
      ASSERT_EQ(a.min_gpu_lead_ps, b.min_gpu_lead_ps);
      for (int r = 0; r < n; ++r) {
        ASSERT_EQ(fast.host_clock(r), exact.host_clock(r)) << r;
        ASSERT_EQ(fast.launch_clock(r), exact.launch_clock(r)) << r;
      }
      for (size_t k = 0; k < acc_exact.size(); ++k) {
        EXPECT_EQ(acc_fast[k].compute_ps, acc_exact[k].compute_ps);
        EXPECT_EQ(acc_fast[k].transfer_ps, acc_exact[k].transfer_ps);
        EXPECT_EQ(acc_fast[k].wait_ps, acc_exact[k].wait_ps);
        EXPECT_EQ(acc_fast[k].wait_max_ps, acc_exact[k].wait_max_ps);
        EXPECT_EQ(acc_fast[k].span_ps, acc_exact[k].span_ps);
        EXPECT_EQ(acc_fast[k].collectives, acc_exact[k].collectives);
      }
    }
  }
}

// A run leaves a launch clock the GPU has passed at the GPU clock (it can delay nothing more), so
// a drained state compares equal whatever was launched before.
TEST(RankTimeline, LaunchClockTheGpuPassedEndsAtTheGpuClock) {
  HostModel host;
  host.graph_launch_ps = 5 * kUs;
  RankTimelines tl(2, host, {}, 1);
  TimelineProgram p;
  p.steps = {Of(TimelineStep::Kind::kGraphLaunch), Kernel(50 * kUs, true)};
  tl.Run(p);
  // Launched at 5 us, the kernel ends at 55 us: the launch clock is 55 us, not 5.
  EXPECT_EQ(tl.gpu_clock(0), 55 * kUs);
  EXPECT_EQ(tl.launch_clock(0), 55 * kUs);
  EXPECT_EQ(tl.launch_clock(1), 55 * kUs);
  EXPECT_TRUE(tl.RanksAgree());
  tl.SetClocks(1 * kUs, 2 * kUs, 3 * kUs);
  EXPECT_EQ(tl.host_clock(1), 1 * kUs);
  EXPECT_EQ(tl.gpu_clock(1), 2 * kUs);
  EXPECT_EQ(tl.launch_clock(1), 3 * kUs);
}

}  // namespace
}  // namespace specsim::llm
