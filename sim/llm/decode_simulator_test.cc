#include "sim/llm/decode_simulator.h"

#include <algorithm>
#include <string>

#include <gtest/gtest.h>

#include "sim/llm/test_models.h"
#include "sim/net/test_topologies.h"

namespace specsim::llm {

// The reference implementation and the replay switch, which only tests use.
class DecodeSimulatorTestPeer {
 public:
  static StatusOr<PassTiming> PassOnEventEngine(DecodeSimulator& sim, PassKind kind, int tokens_per_sequence) {
    return sim.SimulatePassOnEventEngine(kind, tokens_per_sequence);
  }
  static void RunEveryCycle(DecodeSimulator& sim) { sim.replay_cycles_ = false; }
  static StatusOr<TimelineProgram> CycleProgramOf(DecodeSimulator& sim, int key) {
    return sim.BuildCycleProgram(key, /*labels=*/true);
  }
};

namespace {

// 4 GPUs of RTX-PRO-like specs under one PCIe switch (50 GB/s links, 300 ns).
net::Topology Box(double memory_bandwidth_gbps = 1597) {
  net::Topology t = net::testing::SwitchBox(4, 63, 300);
  net::GpuSpec& g = t.gpu_specs[0];
  g.arch = "sm120";
  g.sm_count = 188;
  g.memory_gib = 96;
  g.memory_bandwidth_gbps = memory_bandwidth_gbps;
  g.bf16_dense_tflops = 500;
  g.fp8_dense_tflops = 1000;
  g.kernel_read_outstanding_bytes_per_sm = 3360;
  for (net::Link& l : t.links) {
    if (l.kind == net::LinkKind::kPcie) {
      l.pcie_gen = 5;
      l.pcie_lanes = 16;
    }
  }
  return t;
}

DecodeSetup Llama8B(const net::Topology* t, int tp) {
  DecodeSetup s;
  s.topology = t;
  s.target = testing::Llama31_8B();
  s.parallel.tp = tp;
  s.batch = 1;
  s.context_length = 2048;
  return s;
}

DecodeSetup WithEagle(DecodeSetup s, std::vector<double> p) {
  s.draft = testing::Eagle3Llama31_8B();
  s.speculation.method = SpeculationMethod::kEagle3;
  s.speculation.num_steps = static_cast<int>(p.size());
  s.speculation.topk = 1;
  s.speculation.num_draft_tokens = static_cast<int>(p.size()) + 1;
  s.speculation.acceptance = *AcceptanceModel::FromPerPosition(p);
  s.speculation.seed = 3;
  s.speculation.cycles = 2000;
  return s;
}

// The NCCL range of a run: its comm scaled by the transport model's range. A 10 ms baseline step
// with 4 ms of comm at x0.5-1.5 takes 8-12 ms: 125 .. 83.3 tok/s, slower NCCL first; a cycle of
// 20 ms, 3 tokens, 6 ms of draft and verify comm: 17-23 ms, 150 .. 130.4 tok/s. A calibrated or
// custom collective, or a wait, gives no range.
TEST(DecodeSimulator, NcclRangeScalesTheCollectivesOfTheRun) {
  DecodeResult r;
  r.baseline_step_ms = 10;
  r.baseline_step.comm_ps = PicosFromMicros(4000);
  CollectiveInfo c;
  c.range_low = 0.5;
  c.range_high = 1.5;
  r.collectives = {c, c};
  auto base = NcclRangeOf(r);
  ASSERT_TRUE(base.has_value());
  EXPECT_NEAR(base->low_tokens_per_s, 1000 / 12.0, 1e-9);
  EXPECT_NEAR(base->high_tokens_per_s, 1000 / 8.0, 1e-9);
  r.speculative = true;
  r.cycle_ms = 20;
  r.speculative_tokens_per_s = 150;  // 3 tokens per 20 ms cycle
  r.breakdown.draft_comm_ms = 1;
  r.breakdown.verify_comm_ms = 5;
  auto spec = NcclRangeOf(r);
  ASSERT_TRUE(spec.has_value());
  EXPECT_NEAR(spec->low_tokens_per_s, 3000 / 23.0, 1e-9);
  EXPECT_NEAR(spec->high_tokens_per_s, 3000 / 17.0, 1e-9);
  r.breakdown.verify_wait_ms = 0.1;
  EXPECT_FALSE(NcclRangeOf(r).has_value());
  r.breakdown.verify_wait_ms = 0;
  r.collectives[1].range_low = r.collectives[1].range_high = 1;  // a calibrated or custom collective
  EXPECT_FALSE(NcclRangeOf(r).has_value());
  r.collectives.clear();
  EXPECT_FALSE(NcclRangeOf(r).has_value());
}

TEST(DecodeSimulator, VerifyOfOneTokenEqualsAPlainDecodeStep) {
  net::Topology t = Box();
  auto a = DecodeSimulator::Create(Llama8B(&t, 4));
  auto b = DecodeSimulator::Create(Llama8B(&t, 4));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  auto decode = (*a)->Pass(PassKind::kTargetDecode, 1);
  auto verify = (*b)->Pass(PassKind::kVerify, 1);
  ASSERT_TRUE(decode.ok()) << decode.status().ToString();
  EXPECT_EQ(decode->total_ps, verify->total_ps);
  EXPECT_EQ(decode->comm_ps, verify->comm_ps);
  // And a verify of 4 tokens costs more, but far less than 4 decode steps (weights read once).
  auto verify4 = (*b)->Pass(PassKind::kVerify, 4);
  EXPECT_GT(verify4->total_ps, decode->total_ps);
  EXPECT_LT(verify4->total_ps, 2 * decode->total_ps);
}

TEST(DecodeSimulator, TokensPerSecondRiseWithMemoryBandwidth) {
  double previous = 0;
  for (double bw : {800.0, 1597.0, 3200.0}) {
    net::Topology t = Box(bw);
    auto sim = DecodeSimulator::Create(Llama8B(&t, 1));
    auto r = (*sim)->Run();
    ASSERT_TRUE(r.ok());
    EXPECT_GT(r->baseline_tokens_per_s, previous * 1.2) << bw;
    previous = r->baseline_tokens_per_s;
  }
}

// A kernel or collective past the longest op a run simulates (time.h kMaxOpDurationPs) is an error
// naming it, never a sum that overflows the clock into a plausible figure.
TEST(DecodeSimulator, AnOpPastTheLongestSimulatedIsAnErrorNamingIt) {
  net::Topology slow_memory = Box(1e-3);  // 1 MB/s: a 16 MB weight read takes 16 s
  auto sim = DecodeSimulator::Create(Llama8B(&slow_memory, 1));
  ASSERT_TRUE(sim.ok());
  auto r = (*sim)->Run();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("kernel layer0."), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("past the 1.1 s specsim simulates per op"), std::string::npos);
  net::Topology slow_links = Box();
  for (net::Link& l : slow_links.links) l.bandwidth_gbps = 1e-6;  // 1 kB/s
  auto comm = DecodeSimulator::Create(Llama8B(&slow_links, 4));
  ASSERT_TRUE(comm.ok());
  auto c = (*comm)->Run();
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("allreduce of"), std::string::npos) << c.status().message();
}

TEST(DecodeSimulator, OneGpuHasNoCommunicationAndTpHasTwoAllreducesPerLayer) {
  net::Topology t = Box();
  auto one = DecodeSimulator::Create(Llama8B(&t, 1));
  auto step1 = (*one)->Pass(PassKind::kTargetDecode, 1);
  EXPECT_EQ(step1->comm_ps, 0);
  EXPECT_EQ(step1->collectives, 0);
  auto four = DecodeSimulator::Create(Llama8B(&t, 4));
  auto step4 = (*four)->Pass(PassKind::kTargetDecode, 1);
  EXPECT_EQ(step4->collectives, 1 + 2 * 32 + 1);  // embedding + 2 per layer + logits gather
  EXPECT_GT(step4->comm_ps, 0);
}

// The pass's device time by kernel class adds up to the pass's compute (kernels) and, on several
// ranks without jitter, its communication (collectives' transfers); attention grows with the
// verify width, GEMMs hardly (weights read once).
TEST(DecodeSimulator, PassDeviceTimeByClassAddsUpToThePass) {
  net::Topology t = Box();
  auto sim = DecodeSimulator::Create(Llama8B(&t, 4));
  ASSERT_TRUE(sim.ok());
  auto step = (*sim)->Pass(PassKind::kTargetDecode, 1);
  auto by = (*sim)->PassDeviceTimeByClass(PassKind::kTargetDecode, 1);
  ASSERT_TRUE(step.ok() && by.ok());
  double kernels = 0;
  for (const auto& [c, ns] : *by)
    if (c != "collective") kernels += ns;
  EXPECT_NEAR(kernels, NanosFromPicos(step->compute_ps), 1e-3 * kernels);
  ASSERT_TRUE(by->count("collective") && by->count("gemm") && by->count("attention") && by->count("norm"));
  EXPECT_NEAR(by->at("collective"), NanosFromPicos(step->comm_ps), 1e-3 * by->at("collective"));
  auto wide = (*sim)->PassDeviceTimeByClass(PassKind::kVerify, 8);
  ASSERT_TRUE(wide.ok());
  EXPECT_GT(wide->at("attention"), by->at("attention"));
  EXPECT_LT(wide->at("gemm"), 1.5 * by->at("gemm"));
}

TEST(DecodeSimulator, EagerIsSlowerThanGraphsForSmallKernels) {
  net::Topology t = Box();
  DecodeSetup eager = Llama8B(&t, 4);
  eager.cuda_graphs = false;
  auto g = (*DecodeSimulator::Create(Llama8B(&t, 4)))->Pass(PassKind::kTargetDecode, 1);
  auto e = (*DecodeSimulator::Create(eager))->Pass(PassKind::kTargetDecode, 1);
  EXPECT_GT(e->total_ps, g->total_ps);
  // Same kernels and collectives: only the launch/CPU part differs.
  EXPECT_EQ(e->compute_ps, g->compute_ps);
  EXPECT_EQ(e->comm_ps, g->comm_ps);
  EXPECT_GT(e->launch_ps, g->launch_ps);
}

TEST(DecodeSimulator, SpeculativeThroughputIsTauOverCycleTime) {
  net::Topology t = Box();
  auto sim = DecodeSimulator::Create(WithEagle(Llama8B(&t, 1), {0.8, 0.6, 0.5}));
  ASSERT_TRUE(sim.ok()) << sim.status().ToString();
  auto r = (*sim)->Run();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_NEAR(r->tau_expected, 2.52, 1e-12);
  EXPECT_NEAR(r->tau, 2.52, 0.05);  // 2000 sampled cycles
  EXPECT_NEAR(r->speculative_tokens_per_s, r->tau / (r->cycle_ms * 1e-3), 1e-6 * r->speculative_tokens_per_s);
  // The cycle is one verify of 4 tokens, 2 draft steps and a draft extend: longer than a decode
  // step, shorter than 4 of them (Llama-8B's draft head is small).
  EXPECT_GT(r->cycle_ms, r->baseline_step_ms);
  EXPECT_LT(r->cycle_ms, 4 * r->baseline_step_ms);
  // Breakdown adds up to the cycle.
  const CycleBreakdown& b = r->breakdown;
  EXPECT_NEAR(b.draft_compute_ms + b.draft_comm_ms + b.verify_compute_ms + b.verify_comm_ms + b.launch_sync_ms,
              r->cycle_ms, 1e-9 * r->cycle_ms + 1e-9);
}

TEST(DecodeSimulator, PerfectAcceptanceAndZeroAcceptanceBracketTheSpeedup) {
  net::Topology t = Box();
  auto all = (*DecodeSimulator::Create(WithEagle(Llama8B(&t, 1), {1, 1, 1})))->Run();
  auto none = (*DecodeSimulator::Create(WithEagle(Llama8B(&t, 1), {0, 0, 0})))->Run();
  EXPECT_DOUBLE_EQ(all->tau, 4.0);
  EXPECT_DOUBLE_EQ(none->tau, 1.0);
  EXPECT_GT(all->speedup, 1.0);
  EXPECT_LT(none->speedup, 1.0);  // a cycle that yields one token costs more than a decode step
}

// Issue 41: a standalone draft model at TP 4 is a full forward of its own per draft step, with its
// own collectives: the embedding's allreduce, 2 per layer (16 layers) and the logits gather = 34,
// where an EAGLE-3 head has 4 (embedding, one layer's 2, gather). It costs more per step than the
// head and yields the same tau for the same acceptance.
TEST(DecodeSimulator, AStandaloneDraftRunsItsOwnCollectivesPerDraftStep) {
  net::Topology t = Box();
  DecodeSetup eagle = WithEagle(Llama8B(&t, 4), {0.8, 0.6, 0.5});
  DecodeSetup standalone = eagle;
  standalone.draft = testing::Llama32_1B();
  standalone.speculation.method = SpeculationMethod::kDraftModel;
  auto e = (*DecodeSimulator::Create(eagle))->Run();
  auto d = (*DecodeSimulator::Create(standalone))->Run();
  ASSERT_TRUE(e.ok() && d.ok()) << d.status().ToString();
  EXPECT_EQ(d->draft_step.collectives, 2 * 16 + 2);
  EXPECT_EQ(e->draft_step.collectives, 4);
  EXPECT_GT(d->draft_step.total_ps, e->draft_step.total_ps);
  EXPECT_GT(d->breakdown.draft_comm_ms, e->breakdown.draft_comm_ms);
  EXPECT_DOUBLE_EQ(d->tau, e->tau);  // the same sampled acceptance
  DecodeSetup missing = standalone;
  missing.draft.reset();
  EXPECT_FALSE(DecodeSimulator::Create(missing).ok());
}

// Issue 41: n-gram speculation has no draft passes; its cycle is the host's matching (batch x the
// per-sequence cost, before the verify it feeds), one verify and the read-back. With match
// probability 0 every cycle yields one token. A framework that does not pad (vLLM) verifies one
// token per sequence when nothing matched: the cycle then costs about a decode step, where a
// padded one (SGLang) still verifies num_draft_tokens.
TEST(DecodeSimulator, NgramHasNoDraftComputeAndPaysTheHostsMatching) {
  net::Topology t = Box();
  DecodeSetup base = WithEagle(Llama8B(&t, 1), {0.8, 0.6, 0.5});
  base.draft.reset();
  base.speculation.method = SpeculationMethod::kNgram;
  base.speculation.proposed_acceptance = base.speculation.acceptance;
  base.speculation.ngram_match_probability = 1;
  auto free_match = (*DecodeSimulator::Create(base))->Run();
  ASSERT_TRUE(free_match.ok()) << free_match.status().ToString();
  EXPECT_EQ(free_match->breakdown.draft_compute_ms, 0);
  EXPECT_EQ(free_match->breakdown.draft_comm_ms, 0);
  EXPECT_EQ(free_match->draft_step.total_ps, 0);
  DecodeSetup costly = base;
  costly.batch = 4;
  costly.speculation.ngram_host_match_us_per_sequence = 250;  // 1 ms of matching per cycle
  DecodeSetup free4 = base;
  free4.batch = 4;
  auto a = (*DecodeSimulator::Create(free4))->Run();
  auto b = (*DecodeSimulator::Create(costly))->Run();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NEAR(b->cycle_ms - a->cycle_ms, 1.0, 0.05);  // no framework: the host's matching is serial
  // No match: one token per cycle; padded verifies 4 tokens, unpadded one.
  DecodeSetup never = base;
  never.speculation.ngram_match_probability = 0;
  never.speculation.acceptance = *AcceptanceModel::FromHistogram({1});
  auto padded = (*DecodeSimulator::Create(never))->Run();
  never.speculation.ngram_verify_padded = false;
  auto ragged = (*DecodeSimulator::Create(never))->Run();
  ASSERT_TRUE(padded.ok() && ragged.ok()) << ragged.status().ToString();
  EXPECT_DOUBLE_EQ(padded->tau, 1);
  EXPECT_DOUBLE_EQ(ragged->tau, 1);
  EXPECT_NEAR(ragged->cycle_ms, ragged->baseline_step_ms, 0.02 * ragged->baseline_step_ms);
  EXPECT_GT(padded->cycle_ms, ragged->cycle_ms);
  // Unpadded with matches: tau as the mixture says, 1 + m E[A] (E[A] = 0.8 + 0.48 + 0.24 = 1.52).
  DecodeSetup half = base;
  half.speculation.ngram_verify_padded = false;
  half.speculation.ngram_match_probability = 0.5;
  half.speculation.cycles = 20000;
  auto h = (*DecodeSimulator::Create(half))->Run();
  ASSERT_TRUE(h.ok());
  EXPECT_NEAR(h->tau, 1 + 0.5 * 1.52, 0.03);
}

// Issue 41: vLLM's n-gram batch is ragged (ngram.h): each of the batch's sequences matches on its
// own, the matched ones verify num_draft_tokens and the others one token. At batch 8 the cycle's
// key is the matched count: with the whole pass captured, a cycle at match probability 0.5 costs
// between the no-match cycle (8 tokens) and the all-matched one (32), and tau is 1 + m E[A]. Such
// a batch is not vLLM's uniform verify batch: with a FULL verify and a PIECEWISE ragged capture,
// a cycle with an unmatched sequence launches its 32 attention kernels eagerly, the all-matched
// cycle none.
TEST(DecodeSimulator, AnUnpaddedNgramBatchIsRaggedAndNotUniform) {
  net::Topology t = Box();
  DecodeSetup base = WithEagle(Llama8B(&t, 1), {0.8, 0.6, 0.5});
  base.draft.reset();
  base.batch = 8;
  base.speculation.method = SpeculationMethod::kNgram;
  base.speculation.proposed_acceptance = base.speculation.acceptance;
  base.speculation.ngram_verify_padded = false;
  base.speculation.cycles = 4000;
  auto cycle_ms = [&](double m) {
    DecodeSetup s = base;
    s.speculation.ngram_match_probability = m;
    auto r = (*DecodeSimulator::Create(s))->Run();
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return std::make_pair(r->cycle_ms, r->tau);
  };
  const auto [none_ms, none_tau] = cycle_ms(0);
  const auto [half_ms, half_tau] = cycle_ms(0.5);
  const auto [all_ms, all_tau] = cycle_ms(1);
  EXPECT_LT(none_ms, half_ms);
  EXPECT_LT(half_ms, all_ms);
  EXPECT_DOUBLE_EQ(none_tau, 1);
  EXPECT_NEAR(half_tau, 1 + 0.5 * 1.52, 0.02);  // E[A] = 0.8 + 0.48 + 0.24
  EXPECT_NEAR(all_tau, 2.52, 0.02);
  DecodeSetup vllm = base;
  FrameworkProfile f;
  f.capture.verify = CaptureMode::kFull;
  f.speculation_methods.ngram_ragged_verify_capture = CaptureMode::kPiecewise;
  vllm.framework = f;
  auto sim = DecodeSimulator::Create(vllm);
  ASSERT_TRUE(sim.ok());
  auto eager_attention = [&](int matched) {
    auto p = DecodeSimulatorTestPeer::CycleProgramOf(**sim, matched);
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    int n = 0;
    for (const TimelineStep& st : p->steps)
      n += st.kind == TimelineStep::Kind::kKernel && !st.graph && st.label.find("attention") != std::string::npos;
    return n;
  };
  EXPECT_EQ(eager_attention(0), 32);
  EXPECT_EQ(eager_attention(5), 32);
  EXPECT_EQ(eager_attention(8), 0);
}

// Issue 10, test 5: with zero jitter the rank timelines equal the symmetric event-engine schedule
// (the single-rank engine), exactly, for full graphs and eager launches, every pass kind.
TEST(DecodeSimulator, RankTimelinesEqualTheEventEngineWithoutJitter) {
  net::Topology t = Box();
  for (int tp : {1, 2, 4}) {
    for (bool graphs : {true, false}) {
      DecodeSetup s = WithEagle(Llama8B(&t, tp), {0.8, 0.6, 0.5});
      s.cuda_graphs = graphs;
      auto sim = DecodeSimulator::Create(s);
      ASSERT_TRUE(sim.ok()) << sim.status().ToString();
      for (auto [kind, tokens] : {std::pair{PassKind::kTargetDecode, 1},
                                  {PassKind::kVerify, 4},
                                  {PassKind::kDraftExtend, 2},
                                  {PassKind::kDraftStep, 1}}) {
        auto timeline = (*sim)->Pass(kind, tokens);
        auto reference = DecodeSimulatorTestPeer::PassOnEventEngine(**sim, kind, tokens);
        ASSERT_TRUE(timeline.ok() && reference.ok());
        EXPECT_EQ(timeline->total_ps, reference->total_ps)
            << "tp " << tp << " graphs " << graphs << " " << PassKindName(kind);
        EXPECT_EQ(timeline->compute_ps, reference->compute_ps);
        EXPECT_EQ(timeline->comm_ps, reference->comm_ps);
      }
    }
  }
}

// Capture modes per phase: piecewise graphs launch attention eagerly between captured segments, so
// a decode step costs more than a full graph and less than all-eager; a framework's eager per-op
// host cost and per-step host work add to the step; one rank with a slower GPU makes every other
// rank wait at every collective.
TEST(DecodeSimulator, CaptureModesFrameworkCostsAndASlowRank) {
  net::Topology t = Box();
  auto step_ms = [&](CaptureMode mode, double eager_op_us, double step_host_us, std::vector<double> factors) {
    DecodeSetup s = Llama8B(&t, 4);
    FrameworkProfile f;
    f.capture.decode = mode;
    f.eager_op_host_us = eager_op_us;
    f.decode_step_host_us = step_host_us;
    s.framework = f;
    s.gpu_variation.rank_factor = std::move(factors);
    auto r = (*DecodeSimulator::Create(s))->Run();
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r->baseline_step_ms;
  };
  const double full = step_ms(CaptureMode::kFull, 0, 0, {});
  const double piecewise = step_ms(CaptureMode::kPiecewise, 0, 0, {});
  const double eager = step_ms(CaptureMode::kEager, 0, 0, {});
  EXPECT_LT(full, piecewise);
  EXPECT_LT(piecewise, eager);
  // 20 us of Python per eager op: far more than the kernels at batch 1.
  EXPECT_GT(step_ms(CaptureMode::kEager, 20, 0, {}), eager + 1.0);
  // Host work per step adds itself when the host waits for the GPU at every step.
  EXPECT_NEAR(step_ms(CaptureMode::kFull, 0, 500, {}), full + 0.5, 1e-6);
  // Rank 3 10% slower on every kernel: the step follows the slowest rank.
  DecodeSetup slow = Llama8B(&t, 4);
  slow.gpu_variation.rank_factor = {1, 1, 1, 1.1};
  auto r = (*DecodeSimulator::Create(slow))->Run();
  ASSERT_TRUE(r.ok());
  EXPECT_GT(r->baseline_step_ms, full);
  EXPECT_GT(r->baseline_step.wait_ps, 0);
}

// Where a framework's host waits for the GPU in a cycle (FrameworkProfile::cycle_host_waits) sets
// how much of the GPU's time the host's work hides. With 1.5 ms of host work per cycle (longer than
// the draft extend) and every pass a full graph: an unnamed wait after verify puts the work
// between verify and the draft extend (the GPU idles through it); SGLang's spec-v2 wait (after the
// draft extend is issued, on verify's event) lets the draft extend run under it, so the cycle is
// shorter by about the draft extend's time; the serial worker's five waits (four after verify,
// one after the draft extend) add a wake per wait and idle the GPU before the draft; with no wait
// the host runs ahead and the cycle is the GPU's work alone.
TEST(DecodeSimulator, NamedHostWaitsPlaceTheCyclesHostWork) {
  net::Topology t = Box();
  auto cycle_ms = [&](bool sync, std::vector<HostWait> waits, double host_us) {
    DecodeSetup s = WithEagle(Llama8B(&t, 4), {1.0, 1.0, 1.0});  // every cycle alike
    FrameworkProfile f;
    f.spec_cycle_host_us = host_us;
    f.sync_each_cycle = sync;
    f.cycle_host_waits = std::move(waits);
    s.framework = f;
    auto r = (*DecodeSimulator::Create(s))->Run();
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r->cycle_ms;
  };
  const HostWait v2{"verify_done.synchronize()", LoopPass::kDraftExtend, LoopPass::kVerify, ""};
  std::vector<HostWait> v1(4, HostWait{"tolist()", LoopPass::kVerify, LoopPass::kVerify, ""});
  v1.push_back({"seq_lens.sum().item()", LoopPass::kDraftExtend, LoopPass::kDraftExtend, ""});
  const double unnamed = cycle_ms(true, {}, 1500);
  const double overlapped = cycle_ms(true, {v2}, 1500);
  const double serial = cycle_ms(true, v1, 1500);
  const double ahead = cycle_ms(false, {}, 1500);
  // The draft extend of 4 tokens on Llama-8B's one-layer head: tens of microseconds.
  DecodeSetup probe = WithEagle(Llama8B(&t, 4), {1.0, 1.0, 1.0});
  auto sim = DecodeSimulator::Create(probe);
  ASSERT_TRUE(sim.ok());
  auto extend = (*sim)->Pass(PassKind::kDraftExtend, 4);
  ASSERT_TRUE(extend.ok());
  const double extend_ms = NanosFromPicos(extend->compute_ps) * 1e-6;
  EXPECT_GT(extend_ms, 0.005);
  EXPECT_LT(overlapped, unnamed);
  EXPECT_NEAR(unnamed - overlapped, extend_ms, 0.5 * extend_ms);
  EXPECT_GT(serial, unnamed);
  EXPECT_LT(ahead, overlapped);
  // Without host work the event wait costs the GPU nothing: the cycle is the host-ahead one's.
  EXPECT_NEAR(cycle_ms(true, {v2}, 0), cycle_ms(false, {}, 0), 0.01 * cycle_ms(false, {}, 0));
}

// The cycle's own launches outside its passes (FrameworkProfile::cycle_ops) cost the host the
// framework's per-call price of a small tensor op (tensor_op_host_us, not a layer op's
// eager_op_host_us) and the GPU a minimal kernel each. With a stream sync after verify, launches met
// before verify are issued while only the short draft steps run: 10 launches at 1 ms of host each
// lengthen the cycle by about 10 ms less what the GPU still has queued; at 1 ms per layer op and
// none per tensor op, by their kernels alone (under 0.2 ms). At no host cost they add their
// kernels' device time alone, linearly.
TEST(DecodeSimulator, CycleOpsCostTheirLaunchesAndKernels) {
  net::Topology t = Box();
  auto cycle_ms = [&](int kernels, double op_us, double layer_op_us = 0) {
    DecodeSetup s = WithEagle(Llama8B(&t, 4), {1.0, 1.0, 1.0});
    FrameworkProfile f;
    f.sync_each_cycle = true;
    f.tensor_op_host_us = op_us;
    f.eager_op_host_us = layer_op_us;
    if (kernels > 0) f.cycle_ops.push_back({"bookkeeping", LoopPass::kVerify, kernels, "test"});
    s.framework = f;
    auto r = (*DecodeSimulator::Create(s))->Run();
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r->cycle_ms;
  };
  const double host_bound = cycle_ms(10, 1000) - cycle_ms(0, 1000);
  EXPECT_GT(host_bound, 9.0);
  EXPECT_LT(host_bound, 10.2);
  EXPECT_LT(cycle_ms(10, 0, 1000) - cycle_ms(0, 0, 1000), 0.2);
  const double five = cycle_ms(5, 0) - cycle_ms(0, 0), ten = cycle_ms(10, 0) - cycle_ms(0, 0);
  EXPECT_GT(five, 0);
  EXPECT_NEAR(ten, 2 * five, 0.1 * ten);
}

// A group met before every draft step (vLLM's per-step input updates) repeats num_steps - 1 times a
// cycle; a group before the draft is met once. With 10 ms of host per launch and a stream sync per
// cycle, a 2-launch group costs 20 ms once and 2 x (4 - 1) x 10 = 60 ms before every step at
// num_steps 4, less the GPU work of the pass each group's launches overlap (under 0.4 ms a pass
// here: the host is the bottleneck).
TEST(DecodeSimulator, DraftStepGroupsRepeatBeforeEveryDraftStep) {
  net::Topology t = Box();
  auto cycle_ms = [&](bool with_group, bool every_step) {
    DecodeSetup s = WithEagle(Llama8B(&t, 4), {1.0, 1.0, 1.0, 1.0});
    FrameworkProfile f;
    f.sync_each_cycle = true;
    f.tensor_op_host_us = 10000;
    CycleOps c{"step inputs", LoopPass::kDraft, 2, "test"};
    c.every_draft_step = every_step;
    if (with_group) f.cycle_ops.push_back(c);
    s.framework = f;
    auto r = (*DecodeSimulator::Create(s))->Run();
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r->cycle_ms;
  };
  const double none = cycle_ms(false, false);
  EXPECT_NEAR(cycle_ms(true, false) - none, 20.0, 0.4);
  EXPECT_NEAR(cycle_ms(true, true) - none, 60.0, 1.2);
  CycleOps c{"step inputs", LoopPass::kDraft, 2, "test"};
  c.kernels_per_sequence = 1;
  EXPECT_EQ(c.LaunchesPerCycle(/*batch=*/3, /*num_steps=*/4), 5);
  c.every_draft_step = true;
  EXPECT_EQ(c.LaunchesPerCycle(3, 4), 15);
  EXPECT_EQ(c.LaunchesPerCycle(3, 1), 0);  // one step: the draft extend alone, no draft step
}

// Llama-3.1-8B on one GPU under the n-gram worker, every sequence matched, at `batch`; a framework
// with a stream sync per cycle and `tensor_op_us` of host per cycle launch.
DecodeSetup NgramSetup(const net::Topology* t, int batch, double tensor_op_us) {
  DecodeSetup s = WithEagle(Llama8B(t, 1), {0.8, 0.6, 0.5});
  s.draft.reset();
  s.batch = batch;
  s.speculation.method = SpeculationMethod::kNgram;
  s.speculation.proposed_acceptance = s.speculation.acceptance;
  s.speculation.ngram_match_probability = 1;
  FrameworkProfile f;
  f.sync_each_cycle = true;
  f.tensor_op_host_us = tensor_op_us;
  s.framework = f;
  return s;
}

// The n-gram worker meets only the waits marked for it (HostWait::RunBy; the drafting worker's wait
// after its draft extend is not its), and its groups listed before the draft run after its waits:
// there the host cannot overlap them with the verify, so 2 launches at 1 ms each add their 2 ms in
// full, while the same 2 listed before the draft extend (right after its verify, before its first
// wait) overlap the verify's GPU time and add less.
TEST(DecodeSimulator, NgramWaitsAndLaunchesAfterThemAreItsOwn) {
  net::Topology t = Box();
  auto setup = [&](std::optional<LoopPass> group) {
    DecodeSetup s = NgramSetup(&t, 1, 1000);
    FrameworkProfile& f = *s.framework;
    HostWait drafting{"verify_done", LoopPass::kDraftExtend, LoopPass::kVerify, "test"};
    drafting.ngram = false;
    HostWait ngram{"accepted_indices.tolist()", LoopPass::kVerify, LoopPass::kVerify, "test"};
    ngram.drafting = false;
    f.cycle_host_waits = {drafting, ngram};
    if (group) {
      CycleOps c{"acceptance", *group, 2, "test"};
      c.drafting = false;
      c.ngram = true;
      f.cycle_ops.push_back(c);
    }
    return s;
  };
  const std::vector<HostWait> waits = CycleWaitsOf(setup(std::nullopt));
  ASSERT_EQ(waits.size(), 1u);
  EXPECT_EQ(waits[0].name, "accepted_indices.tolist()");
  auto cycle_ms = [&](std::optional<LoopPass> group) {
    auto r = (*DecodeSimulator::Create(setup(group)))->Run();
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r->cycle_ms;
  };
  const double none = cycle_ms(std::nullopt);
  const double after_waits = cycle_ms(LoopPass::kDraft) - none;
  const double before_wait = cycle_ms(LoopPass::kDraftExtend) - none;
  EXPECT_NEAR(after_waits, 2.0, 0.1);
  EXPECT_LT(before_wait, after_waits - 0.2);
}

// A group of a reduced draft vocabulary (vLLM's d2t remap after each draft LM head) runs only
// with a head whose draft_vocab_size is below the target's vocab_size (the Llama-3.1 EAGLE-3
// head: 32000 of 128256), not with a full-vocabulary head nor for the n-gram worker; the other
// groups run either way.
TEST(DecodeSimulator, DraftVocabularyGroupsRunOnlyWithAMappedVocabulary) {
  net::Topology t = Box();
  DecodeSetup s = WithEagle(Llama8B(&t, 4), {0.8, 0.6});
  FrameworkProfile f;
  CycleOps remap{"d2t remap", LoopPass::kDraft, 4, "test"};
  remap.draft_vocab_map = true;
  f.cycle_ops = {remap, CycleOps{"gather", LoopPass::kDraft, 1, "test"}};
  s.framework = f;
  auto names = [](const DecodeSetup& setup) {
    std::vector<std::string> out;
    for (const CycleOps& c : CycleOpsOf(setup)) out.push_back(c.name);
    return out;
  };
  ASSERT_LT(s.draft->eagle3.draft_vocab_size, s.target.vocab_size);
  EXPECT_EQ(names(s), (std::vector<std::string>{"d2t remap", "gather"}));
  DecodeSetup full_vocab = s;
  full_vocab.draft->eagle3.draft_vocab_size = s.target.vocab_size;
  EXPECT_EQ(names(full_vocab), (std::vector<std::string>{"gather"}));
  DecodeSetup ngram = s;
  ngram.speculation.method = SpeculationMethod::kNgram;
  EXPECT_TRUE(names(ngram).empty());
  s.framework.reset();
  EXPECT_TRUE(names(s).empty());
}

// The n-gram worker runs only the groups marked for it, per sequence where they say so: with a
// stream sync after its verify and 1 ms of host per launch, a group of 2 launches per sequence
// before the verify costs about 2 ms a cycle at batch 1 and 8 ms at batch 4 (the GPU idles: the
// host issues the verify only after them); a drafting-only group costs it nothing.
TEST(DecodeSimulator, NgramCyclesRunTheirOwnLaunchesPerSequence) {
  net::Topology t = Box();
  auto cycle_ms = [&](int batch, bool ngram_group) {
    DecodeSetup s = NgramSetup(&t, batch, 1000);
    FrameworkProfile& f = *s.framework;
    CycleOps c{"per-request mask", LoopPass::kVerify, 0, "test"};
    c.kernels_per_sequence = 2;
    c.drafting = !ngram_group;
    c.ngram = ngram_group;
    f.cycle_ops.push_back(c);
    auto r = (*DecodeSimulator::Create(s))->Run();
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r->cycle_ms;
  };
  EXPECT_NEAR(cycle_ms(1, true) - cycle_ms(1, false), 2.0, 0.1);
  EXPECT_NEAR(cycle_ms(4, true) - cycle_ms(4, false), 8.0, 0.2);
}

// A calibration with a Python framework's per-op distributions (HostCosts::ops, the PyTorch probe's
// fit) prices each eager call by a draw from its class's distribution, in place of the driver's
// issue cost and the framework profile's per-op cost (which would count Python twice). Every class
// uniform on [40, 60] us: the eager step is that of a fixed 50 us per call (the draws' mean) within
// the draws' noise over some 400 calls (sd of the sum ~ 20 x 5.8 = 115 us against ~20 ms), and far
// from the 1000 us per op the profile states.
TEST(DecodeSimulator, PerOpDistributionsPriceEagerCallsInPlaceOfFixedCosts) {
  net::Topology t = Box();
  auto step_ms = [&](bool distributions) {
    DecodeSetup s = Llama8B(&t, 4);
    FrameworkProfile f;
    f.capture.decode = CaptureMode::kEager;
    f.eager_op_host_us = distributions ? 1000 : 0;
    s.framework = f;
    if (distributions) {
      for (const char* cls : {"kernel", "library", "collective"}) {
        HostOpCost c;
        c.op_class = cls;
        c.kernels = 1;
        c.quantiles_us = {40, 50, 60};
        s.driver.ops[std::string(cls) + "_op/q1"] = c;
      }
    } else {
      s.driver.kernel_issue_us = s.driver.library_issue_us = s.driver.collective_issue_us = 50;
    }
    auto r = (*DecodeSimulator::Create(s))->Run();
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r->baseline_step_ms;
  };
  const double fixed = step_ms(false), drawn = step_ms(true);
  EXPECT_GT(fixed, 10);  // host-bound: hundreds of eager calls at 50 us
  EXPECT_NEAR(drawn, fixed, 0.03 * fixed);
}

// A framework's host time around a graph replay (graph_replay_host_us) is the whole call, the
// driver's graph launch included (its low end is torch's bare CUDAGraph.replay()): a replay costs
// max(graph_replay_host_us, graph_launch). Plain decode in one full graph, a sync per step, launch
// 10 us: a replay cost of 5 us leaves the step as with none; 1000 us adds exactly 1000 - 10.
TEST(DecodeSimulator, AGraphReplaysHostTimeIncludesTheLaunch) {
  net::Topology t = Box();
  auto step_ms = [&](double replay_us) {
    DecodeSetup s = Llama8B(&t, 4);
    s.driver.graph_launch_us = 10;
    FrameworkProfile f;
    f.capture.decode = f.capture.verify = f.capture.draft = f.capture.draft_extend = CaptureMode::kFull;
    f.graph_replay_host_us = replay_us;
    f.sync_each_step = true;
    s.framework = f;
    auto r = (*DecodeSimulator::Create(s))->Run();
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r->baseline_step_ms;
  };
  const double none = step_ms(0);
  EXPECT_DOUBLE_EQ(step_ms(5), none);
  EXPECT_NEAR(step_ms(1000) - none, 0.990, 1e-9);
}

// Deterministic speculative loops replay repeated cycles from a memo (by accepted count and the
// clocks relative to the GPU, or, for cycles the host never held back, from any state where the
// GPU leads further). The results must be those of running every cycle: every capture mode, with
// and without a sync per cycle (without it the GPU-bound loop's clocks drift apart and only the
// GPU-bound replay applies), with framework host costs.
TEST(DecodeSimulator, ReplayedCyclesGiveTheResultOfRunningEveryCycle) {
  net::Topology t = Box();
  int cases = 0;
  for (CaptureMode mode : {CaptureMode::kFull, CaptureMode::kPiecewise, CaptureMode::kEager}) {
    for (bool sync : {true, false}) {
      for (double cycle_host_us : {0.0, 40.0, 3000.0}) {
        DecodeSetup s = WithEagle(Llama8B(&t, 4), {0.8, 0.6, 0.4});
        FrameworkProfile f;
        f.capture.decode = f.capture.verify = f.capture.draft = f.capture.draft_extend = mode;
        f.eager_op_host_us = 2;
        f.graph_replay_host_us = 20;
        f.spec_cycle_host_us = cycle_host_us;
        f.sync_each_cycle = sync;
        s.framework = f;
        s.speculation.cycles = 300;
        auto every = DecodeSimulator::Create(s);
        ASSERT_TRUE(every.ok());
        DecodeSimulatorTestPeer::RunEveryCycle(**every);
        auto a = (*DecodeSimulator::Create(s))->Run();
        auto b = (*every)->Run();
        ASSERT_TRUE(a.ok() && b.ok());
        SCOPED_TRACE(std::to_string(static_cast<int>(mode)) + (sync ? " sync " : " no sync ") +
                     std::to_string(cycle_host_us));
        EXPECT_EQ(a->cycle_ms, b->cycle_ms);
        EXPECT_EQ(a->tau, b->tau);
        EXPECT_EQ(a->speculative_tokens_per_s, b->speculative_tokens_per_s);
        EXPECT_EQ(a->breakdown.draft_compute_ms, b->breakdown.draft_compute_ms);
        EXPECT_EQ(a->breakdown.verify_comm_ms, b->breakdown.verify_comm_ms);
        EXPECT_EQ(a->breakdown.launch_sync_ms, b->breakdown.launch_sync_ms);
        EXPECT_EQ(a->breakdown.wait_max_ms, b->breakdown.wait_max_ms);
        ++cases;
      }
    }
  }
  EXPECT_EQ(cases, 18);
}

// A loop given as stages (how sim/calib states specsim-validate's measured loop) runs on the same
// passes and rank timelines as the serving loop: the plain step written as stages (decode pass,
// host sync) lasts exactly Run()'s baseline step; a read-back copy of device time d issued by the
// host after a full-graph pass, while the GPU is still busy, adds exactly the eager gap g and d
// (ready = max(G + g, H) = G + g, then G += d); the host sync makes every iteration start aligned.
TEST(DecodeSimulator, LoopsGivenAsStagesRunOnTheSameTimelines) {
  net::Topology t = Box();
  DecodeSetup s = Llama8B(&t, 4);
  auto sim = DecodeSimulator::Create(s);
  ASSERT_TRUE(sim.ok());
  auto run = (*sim)->Run();
  ASSERT_TRUE(run.ok());
  LoopSpec step;
  step.phases = {"forward", "host"};
  step.stages = {LoopStage::Pass(PassKind::kTargetDecode, 1, 0), LoopStage::HostSync(1, "sync")};
  auto spans = (*sim)->RunLoop(step, 50);
  ASSERT_TRUE(spans.ok()) << spans.status().ToString();
  ASSERT_EQ(spans->size(), 1u);  // deterministic: one iteration stands for all
  EXPECT_EQ((*spans)[0], run->baseline_step.total_ps);

  constexpr SimTime kCopyPs = 3'000'000;
  LoopSpec with_copy = step;
  with_copy.stages.insert(with_copy.stages.begin() + 1, LoopStage::Copy(kCopyPs, 1, "read back"));
  auto copied = (*sim)->RunLoop(with_copy, 50);
  ASSERT_TRUE(copied.ok());
  EXPECT_EQ((*copied)[0], (*spans)[0] + (*sim)->HostModelOf().eager_gap_ps + kCopyPs);

  // Host work between passes adds itself when the host waits for the GPU before it.
  LoopSpec with_work = step;
  with_work.stages.push_back(LoopStage::HostWork(7.0, 1, "work"));
  EXPECT_EQ((*(*sim)->RunLoop(with_work, 1))[0], (*spans)[0] + PicosFromMicros(7.0));

  // With host jitter every iteration is run and timed.
  DecodeSetup jittered = s;
  jittered.driver.jitter.kind = Jitter::Kind::kExponential;
  jittered.driver.jitter.mean_us = 5;
  auto varied = (*DecodeSimulator::Create(jittered))->RunLoop(step, 40);
  ASSERT_TRUE(varied.ok());
  EXPECT_EQ(varied->size(), 40u);
  EXPECT_NE(*std::min_element(varied->begin(), varied->end()), *std::max_element(varied->begin(), varied->end()));

  // Bad loops are errors, not crashes.
  LoopSpec bad = step;
  bad.stages.push_back(LoopStage::HostSync(2, "no such phase"));
  EXPECT_FALSE((*sim)->RunLoop(bad, 1).ok());
  EXPECT_FALSE((*sim)->RunLoop(step, 0).ok());
}

TEST(DecodeSimulator, InconsistentSetupsAreErrors) {
  net::Topology t = Box();
  DecodeSetup s = WithEagle(Llama8B(&t, 4), {0.5});
  s.draft.reset();
  EXPECT_NE(DecodeSimulator::Create(s).status().message().find("draft_model"), std::string::npos);
  DecodeSetup big = Llama8B(&t, 8);
  EXPECT_FALSE(DecodeSimulator::Create(big).ok());
  DecodeSetup mtp = Llama8B(&t, 4);
  mtp.speculation = WithEagle(mtp, {0.5}).speculation;
  mtp.speculation.method = SpeculationMethod::kMtp;
  EXPECT_NE(DecodeSimulator::Create(mtp).status().message().find("MTP"), std::string::npos);
}

}  // namespace
}  // namespace specsim::llm
