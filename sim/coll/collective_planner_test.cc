#include "sim/coll/collective_planner.h"

#include <gtest/gtest.h>

#include "sim/coll/executor.h"
#include "sim/coll/schedule_check.h"
#include "sim/net/test_topologies.h"

namespace specsim::coll {
namespace {

using net::testing::AddLink;
using net::testing::AddNode;

// Two AMD sockets, 4 GPUs on root ports of each (PCIe Gen5 x16: 63 GB/s raw, 0.914 efficiency),
// a 192 GB/s socket link: the dual-socket RTX PRO 6000 layout.
net::Topology FourPlusFour() {
  net::Topology t;
  t.name = "4+4";
  t.cpu_vendor = net::CpuVendor::kAmd;
  t.gpu_specs.push_back(net::testing::TestGpu());
  t.gpu_specs[0].arch = "sm120";
  t.gpu_specs[0].kernel_read_outstanding_bytes_per_sm = 1e6;  // reads not latency-bound here
  int cpu[2];
  for (int s = 0; s < 2; ++s) {
    cpu[s] = AddNode(t, "cpu" + std::to_string(s), net::NodeKind::kCpuRootComplex, s);
    AddLink(t, cpu[s], AddNode(t, "mem" + std::to_string(s), net::NodeKind::kHostMemory, s), 400, 50,
            net::LinkKind::kMemory);
  }
  for (int g = 0; g < 8; ++g) {
    int s = g / 4;
    int l = AddLink(t, AddNode(t, "gpu" + std::to_string(g), net::NodeKind::kGpu, s), cpu[s], 63, 275);
    t.links[l].payload_efficiency = 0.914;
    t.links[l].pcie_gen = 5;
    t.links[l].pcie_lanes = 16;
  }
  AddLink(t, cpu[0], cpu[1], 192, 100, net::LinkKind::kCpuInterconnect);
  // Peer reads GPU to GPU (the cut-load tests below are about that path); the driver's default
  // stages them through host memory (CustomAllreduceFollowsTheDriversPeerReadPath).
  t.driver_p2p_mode = net::DriverP2pMode::kBar1Forced;
  return t;
}

double SocketLinkBytes(const CollectiveTiming& timing, const std::string& name) {
  for (size_t r = 0; r < timing.resource_names.size(); ++r)
    if (timing.resource_names[r] == name) return timing.resource_bytes[r];
  ADD_FAILURE() << "no resource " << name;
  return 0;
}

CollectiveTiming RunAlgo(const net::Topology& t, Algorithm algo, int64_t bytes, PlannedCollective* plan_out = nullptr) {
  net::Router router(t);
  CollectiveRequest request;
  request.algorithm = algo;
  request.bytes = bytes;
  request.protocol = algo == Algorithm::kRing ? std::optional<NcclProto>(NcclProto::kSimple) : std::nullopt;
  request.p2p_level = net::PathClass::kSys;  // P2P everywhere: no host staging
  auto plan = PlanCollective(t, router, request);
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_TRUE(CheckSchedule(plan->schedule).ok());
  if (plan_out) *plan_out = *plan;
  return CollectiveTimer(router).Time(plan->schedule, plan->rank_gpus);
}

// One timer across collectives of every algorithm, size and transport (host-staged ones included)
// gives, collective by collective, exactly what a fresh fabric gives: its reuse (the routes kept,
// the queue and fabric reset) changes no result.
TEST(CollectiveTimer, TimesEachCollectiveExactlyAsAFreshFabric) {
  net::Topology t = FourPlusFour();
  t.driver_p2p_mode = net::DriverP2pMode::kDriverDefault;  // peer reads staged through host memory
  net::Router router(t);
  CollectiveTimer timer(router);
  int timed = 0;
  for (bool p2p_disable : {false, true}) {
    for (Algorithm algo : {Algorithm::kRing, Algorithm::kTree, Algorithm::kOneShot, Algorithm::kTwoShot}) {
      for (int64_t bytes : {int64_t{4096}, int64_t{1} << 20, int64_t{48} << 20}) {
        CollectiveRequest request;
        request.algorithm = algo;
        request.bytes = bytes;
        request.p2p_disable = p2p_disable;
        auto plan = PlanCollective(t, router, request);
        if (!plan.ok()) continue;  // custom allreduce without P2P: refused
        FabricTrace fresh_trace, reused_trace;
        std::vector<std::pair<SimTime, SimTime>> fresh_ops, reused_ops;
        const CollectiveTiming fresh =
            CollectiveTimer(router).Time(plan->schedule, plan->rank_gpus, &fresh_trace, &fresh_ops);
        const CollectiveTiming reused = timer.Time(plan->schedule, plan->rank_gpus, &reused_trace, &reused_ops);
        SCOPED_TRACE(plan->choice);
        EXPECT_EQ(reused.duration_ps, fresh.duration_ps);
        EXPECT_EQ(reused.events, fresh.events);
        EXPECT_EQ(reused.flows, fresh.flows);
        EXPECT_EQ(reused.resource_bytes, fresh.resource_bytes);
        EXPECT_EQ(reused.busiest_resource, fresh.busiest_resource);
        EXPECT_EQ(reused.busiest_utilisation, fresh.busiest_utilisation);
        EXPECT_EQ(reused_ops, fresh_ops);
        EXPECT_EQ(reused_trace.flows.size(), fresh_trace.flows.size());
        EXPECT_EQ(reused_trace.rates.size(), fresh_trace.rates.size());
        // And without a trace (the fabric's trace switch is reset per collective).
        EXPECT_EQ(timer.Time(plan->schedule, plan->rank_gpus).duration_ps, fresh.duration_ps);
        ++timed;
      }
    }
  }
  EXPECT_GE(timed, 18);
}

void ExpectSamePlan(const StatusOr<PlannedCollective>& got, const StatusOr<PlannedCollective>& want) {
  ASSERT_EQ(got.ok(), want.ok()) << got.status().ToString() << " vs " << want.status().ToString();
  if (!want.ok()) {
    EXPECT_EQ(got.status().ToString(), want.status().ToString());
    return;
  }
  EXPECT_EQ(got->rank_gpus, want->rank_gpus);
  EXPECT_EQ(got->algorithm, want->algorithm);
  EXPECT_EQ(got->protocol, want->protocol);
  EXPECT_EQ(got->channels, want->channels);
  EXPECT_EQ(got->choice, want->choice);
  EXPECT_EQ(got->transport, want->transport);
  EXPECT_EQ(got->worst_transport, want->worst_transport);
  const Schedule& a = got->schedule;
  const Schedule& b = want->schedule;
  EXPECT_EQ(a.collective, b.collective);
  EXPECT_EQ(a.algorithm, b.algorithm);
  EXPECT_EQ(a.protocol, b.protocol);
  EXPECT_EQ(a.channels, b.channels);
  EXPECT_EQ(a.num_ranks, b.num_ranks);
  EXPECT_EQ(a.num_segments, b.num_segments);
  EXPECT_EQ(a.total_bytes, b.total_bytes);
  ASSERT_EQ(a.ops.size(), b.ops.size());
  for (size_t i = 0; i < a.ops.size(); ++i) {
    const ScheduleOp& x = a.ops[i];
    const ScheduleOp& y = b.ops[i];
    SCOPED_TRACE("op " + std::to_string(i));
    EXPECT_EQ(x.kind, y.kind);
    EXPECT_EQ(x.src_rank, y.src_rank);
    EXPECT_EQ(x.dst_rank, y.dst_rank);
    EXPECT_EQ(x.src_buffer, y.src_buffer);
    EXPECT_EQ(x.dst_buffer, y.dst_buffer);
    EXPECT_EQ(x.effect, y.effect);
    EXPECT_EQ(x.segment_begin, y.segment_begin);
    EXPECT_EQ(x.segment_end, y.segment_end);
    EXPECT_EQ(x.channel, y.channel);
    EXPECT_EQ(x.unordered_reduce, y.unordered_reduce);
    EXPECT_EQ(x.rate_cap_is_measured_read_rate, y.rate_cap_is_measured_read_rate);
    EXPECT_EQ(x.bytes, y.bytes);
    EXPECT_EQ(x.mechanism, y.mechanism);
    EXPECT_EQ(x.host_end, y.host_end);
    EXPECT_EQ(x.wire_efficiency, y.wire_efficiency);
    EXPECT_EQ(x.latency_floor_ps, y.latency_floor_ps);
    EXPECT_EQ(x.rate_cap_gbps, y.rate_cap_gbps);
    EXPECT_EQ(x.read_sms, y.read_sms);
    EXPECT_EQ(x.duration_ps, y.duration_ps);
    EXPECT_TRUE(x.deps == y.deps);
  }
}

// One planner across requests that change the size, the algorithm, the GPUs, the P2P level and
// NCCL_P2P_DISABLE (and back) plans each exactly as PlanCollective does, refusals included: what
// it keeps between plans is recomputed whenever the ranks' view of the fabric changes.
TEST(CollectivePlanner, PlansEachRequestExactlyAsPlanCollective) {
  net::Topology t = FourPlusFour();
  t.driver_p2p_mode = net::DriverP2pMode::kDriverDefault;  // peer reads staged through host memory
  net::Router router(t);
  CollectivePlanner planner(router);
  std::vector<CollectiveRequest> requests;
  for (const std::vector<int>& gpus : {std::vector<int>{}, std::vector<int>{0, 1, 2, 3}, std::vector<int>{3, 4},
                                       std::vector<int>{}, std::vector<int>{1, 1}}) {
    for (std::optional<net::PathClass> level : {std::optional<net::PathClass>(), std::optional(net::PathClass::kSys)}) {
      for (bool p2p_disable : {false, true}) {
        for (Algorithm algo : {Algorithm::kAuto, Algorithm::kRing, Algorithm::kTree, Algorithm::kOneShot,
                               Algorithm::kTwoShot, Algorithm::kDirect}) {
          for (int64_t bytes : {int64_t{4096}, int64_t{8} << 20}) {
            CollectiveRequest request;
            request.gpus = gpus;
            request.p2p_level = level;
            request.p2p_disable = p2p_disable;
            request.algorithm = algo;
            request.bytes = bytes;
            if (algo == Algorithm::kDirect) request.collective = Collective::kAllToAll;
            requests.push_back(request);
          }
        }
      }
    }
  }
  int planned = 0, refused = 0;
  for (const CollectiveRequest& request : requests) {
    const StatusOr<PlannedCollective> want = PlanCollective(t, router, request);
    SCOPED_TRACE(std::string(AlgorithmName(request.algorithm)) + " " + std::to_string(request.bytes) + " B on " +
                 std::to_string(request.gpus.size()) + " GPUs, p2p_disable " + std::to_string(request.p2p_disable));
    ExpectSamePlan(planner.Plan(request), want);
    (want.ok() ? planned : refused) += 1;
  }
  // 192 planned and 48 refused today (GPU 1 listed twice, custom allreduce over host-mapped
  // buffers, ...): both kinds must be exercised.
  EXPECT_GE(planned, 100);
  EXPECT_GE(refused, 20);
}

// Socket-link load per direction with k = 4 of n = 8 GPUs on each side (docs/reference/allreduce-algorithms.md):
//   ring 2(n-1)/n S = 1.75 S, two-shot 2k(n-k)S/n = 4 S, one-shot k(n-k) S = 16 S.
// Barrier flags add a few hundred bytes: tolerance 0.1%.
TEST(CollectivePlanner, SocketLinkLoadsOnAFourPlusFourSplit) {
  net::Topology t = FourPlusFour();
  const double S = 8 << 20;
  struct Case {
    Algorithm algo;
    double factor;
  };
  for (Case c : {Case{Algorithm::kRing, 1.75}, Case{Algorithm::kTwoShot, 4.0}, Case{Algorithm::kOneShot, 16.0}}) {
    CollectiveTiming timing = RunAlgo(t, c.algo, static_cast<int64_t>(S));
    for (const char* dir : {"cpu0->cpu1", "cpu1->cpu0"})
      EXPECT_NEAR(SocketLinkBytes(timing, dir), c.factor * S, 1e-3 * S) << AlgorithmName(c.algo) << " " << dir;
  }
}

TEST(CollectivePlanner, OneShotBeatsRingSmallAndLosesLarge) {
  net::Topology t = FourPlusFour();
  EXPECT_LT(RunAlgo(t, Algorithm::kOneShot, 4096).duration_ps, RunAlgo(t, Algorithm::kRing, 4096).duration_ps);
  EXPECT_GT(RunAlgo(t, Algorithm::kOneShot, 64 << 20).duration_ps, RunAlgo(t, Algorithm::kRing, 64 << 20).duration_ps);
}

TEST(CollectivePlanner, DefaultTransportIsShmAcrossCpusAndP2pLevelSysRestoresP2p) {
  net::Topology t = FourPlusFour();
  net::Router router(t);
  CollectiveRequest request;
  request.algorithm = Algorithm::kRing;
  request.bytes = 1 << 20;
  auto shm = PlanCollective(t, router, request);
  ASSERT_TRUE(shm.ok());
  for (const ScheduleOp& op : shm->schedule.ops)
    if (op.kind == OpKind::kTransfer) {
      EXPECT_EQ(op.mechanism, net::Mechanism::kHostStaged);
    }
  request.p2p_level = net::PathClass::kSys;
  auto p2p = PlanCollective(t, router, request);
  ASSERT_TRUE(p2p.ok());
  for (const ScheduleOp& op : p2p->schedule.ops)
    if (op.kind == OpKind::kTransfer) {
      EXPECT_EQ(op.mechanism, net::Mechanism::kKernelWrite);
    }
}

TEST(CollectivePlanner, AutoSaysWhatItPicked) {
  net::Topology t = FourPlusFour();
  net::Router router(t);
  CollectiveRequest request;
  request.bytes = 1024;
  auto plan = PlanCollective(t, router, request);
  ASSERT_TRUE(plan.ok());
  EXPECT_NE(plan->choice.find("NCCL's pick"), std::string::npos);
  EXPECT_TRUE(plan->algorithm == "ring" || plan->algorithm == "tree");
  EXPECT_GE(plan->channels, 1);
}

TEST(CollectivePlanner, BadRequestsAreErrorsNotCrashes) {
  net::Topology t = FourPlusFour();
  net::Router router(t);
  CollectiveRequest request;
  request.bytes = 1024;
  request.gpus = {0, 9};
  EXPECT_NE(PlanCollective(t, router, request).status().message().find("GPUs 0-7"), std::string::npos);
  request.gpus = {1, 1};
  EXPECT_NE(PlanCollective(t, router, request).status().message().find("twice"), std::string::npos);
  request.gpus = {1};
  EXPECT_FALSE(PlanCollective(t, router, request).ok());
  request.gpus = {};
  request.collective = Collective::kAllGather;
  request.algorithm = Algorithm::kOneShot;
  // The library names the request's fields, never a command's flags (the CLI maps them).
  const std::string m = PlanCollective(t, router, request).status().message();
  EXPECT_EQ(m.rfind("algorithm oneshot: implements allreduce only", 0), 0u) << m;
  request.gpus = {1, 1};
  EXPECT_EQ(PlanCollective(t, router, request).status().message().rfind("gpus: ", 0), 0u);
  EXPECT_NE(ParseAlgorithm("rign").status().message().find("ring"), std::string::npos);
}

TEST(CollectivePlanner, CalibratedProtocolCostsReplaceNcclsTable) {
  // A latency-bound ring (64 KiB, Simple): its time is NCCL's base + 2(n-1) hops. With the hop
  // calibrated to 2.0 us and the base to 4.0 us, every transfer's floor and every rank's start
  // delay follow them instead of the transport model's (nccl_step_model.h).
  net::Topology t = FourPlusFour();
  net::Router router(t);
  CollectiveRequest request;
  request.algorithm = Algorithm::kRing;
  request.protocol = NcclProto::kSimple;
  request.bytes = 64 << 10;
  auto plain = PlanCollective(t, router, request);
  for (NcclTransport tr : {NcclTransport::kP2pNvLink, NcclTransport::kP2pPcie, NcclTransport::kShm}) {
    ProtocolCost& simple = request.protocol_overrides.per_transport[{tr, NcclProto::kSimple}];
    simple.hop_latency_us = 2.0;
    simple.base_latency_us = 4.0;
    request.protocol_overrides.per_transport[{tr, NcclProto::kLl}].hop_latency_us = 0.1;  // another protocol's
  }
  auto calibrated = PlanCollective(t, router, request);
  ASSERT_TRUE(plain.ok() && calibrated.ok());
  for (const ScheduleOp& op : calibrated->schedule.ops) {
    if (op.kind == OpKind::kTransfer) {
      EXPECT_EQ(op.latency_floor_ps, 2'000'000);
    }
    if (op.kind == OpKind::kDelay) {
      EXPECT_EQ(op.duration_ps, 4'000'000);
    }
  }
  const double a = MicrosFromPicos(CollectiveTimer(router).Time(plain->schedule, plain->rank_gpus).duration_ps);
  const double b =
      MicrosFromPicos(CollectiveTimer(router).Time(calibrated->schedule, calibrated->rank_gpus).duration_ps);
  // Uncalibrated, the transport model prices each ring hop by its path (P2P between the GPUs of a
  // socket, SHM across: NCCL's PXB default level); the 14 steps of the 8-rank ring walk every hop
  // of the ring (0-1-...-7-0) once and 6 of them twice, so the collective gets faster by about
  // (base - 4.0) + sum over 14 consecutive hops of (hop - 2.0), the largest such sum.
  const NcclStepWork work = DefaultNcclStepWork();
  double hops[8];
  for (int r = 0; r < 8; ++r) {
    const NcclTransport tr = NcclTransport::kShm;  // every pair meets at a CPU (PHB, SYS > PXB)
    auto path = NcclStepPathTimes(t, router, r, (r + 1) % 8, tr);
    ASSERT_TRUE(path.ok());
    hops[r] = NcclStepHopUs(NcclProto::kSimple, *path, work);
  }
  double worst_chain = 0;
  for (int s0 = 0; s0 < 8; ++s0) {
    double chain = 0;
    for (int k = 0; k < 14; ++k) chain += hops[(s0 + k) % 8] - 2.0;
    worst_chain = std::max(worst_chain, chain);
  }
  EXPECT_NEAR(a - b, (NcclStepBaseUs(NcclProto::kSimple, work) - 4.0) + worst_chain, 5.0);
  // An impossible calibrated value is an input error, not a crash.
  for (NcclTransport tr : {NcclTransport::kP2pNvLink, NcclTransport::kP2pPcie, NcclTransport::kShm})
    request.protocol_overrides.per_transport[{tr, NcclProto::kSimple}].hop_latency_us = -1;
  EXPECT_FALSE(PlanCollective(t, router, request).ok());
}

TEST(CollectivePlanner, BusBandwidthFactorsFollowNcclTests) {
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(Collective::kAllReduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(Collective::kAllGather, 8), 0.875);
}

// The lent 2x H200 box: Intel CPU, each GPU on its own Gen5 x16 root port, both on an NVSwitch
// with NV18 (18 x 25 GB/s per direction).
net::Topology H200Pair() {
  net::Topology t;
  t.name = "h200-2x";
  t.cpu_vendor = net::CpuVendor::kIntel;
  t.gpu_specs.push_back(net::testing::TestGpu());
  t.gpu_specs[0].arch = "sm90";
  int cpu = AddNode(t, "cpu0", net::NodeKind::kCpuRootComplex);
  AddLink(t, cpu, AddNode(t, "mem0", net::NodeKind::kHostMemory), 400, 50, net::LinkKind::kMemory);
  int nvs = AddNode(t, "nvswitch0", net::NodeKind::kNvSwitch);
  for (int g = 0; g < 2; ++g) {
    int gpu = AddNode(t, "gpu" + std::to_string(g), net::NodeKind::kGpu);
    int l = AddLink(t, gpu, cpu, 63, 275);
    t.links[l].payload_efficiency = 0.914;
    t.links[l].pcie_gen = 5;
    t.links[l].pcie_lanes = 16;
    int nv = AddLink(t, gpu, nvs, 450, 275, net::LinkKind::kNvLink);
    t.links[nv].nvlinks = 18;
  }
  return t;
}

// NCCL 2.28.3 on that box (NCCL_DEBUG=INFO): over NVLink "nChannels 12, bw 30" after duplication,
// 24 channels; with NCCL_P2P_DISABLE=1 the GPUs meet at the Intel CPU (PHB, 48 GB/s charged 6/5):
// "nChannels 2, bw 20", 4 channels, and LL128 disabled. A 1 MiB LL allreduce then runs on 24 and
// 4 channels, over P2P/NVLink and SHM transports.
TEST(CollectivePlannerTest, TwoGpuH200ChannelsAndTransportsFollowNccl) {
  net::Topology t = H200Pair();
  net::Router router(t);
  CollectiveRequest r;
  r.algorithm = Algorithm::kRing;
  r.protocol = NcclProto::kLl;
  r.bytes = 1 << 20;
  auto nv = PlanCollective(t, router, r);
  ASSERT_TRUE(nv.ok()) << nv.status().ToString();
  EXPECT_EQ(nv->channels, 24);
  for (const ScheduleOp& op : nv->schedule.ops) {
    if (op.kind == OpKind::kTransfer) {
      EXPECT_EQ(op.mechanism, net::Mechanism::kKernelWrite);
    }
  }
  r.p2p_disable = true;
  auto shm = PlanCollective(t, router, r);
  ASSERT_TRUE(shm.ok()) << shm.status().ToString();
  EXPECT_EQ(shm->channels, 4);
  for (const ScheduleOp& op : shm->schedule.ops) {
    if (op.kind == OpKind::kTransfer) {
      EXPECT_EQ(op.mechanism, net::Mechanism::kHostStaged);
    }
  }
  // Uncalibrated, LL's hop is the transport model's over each path: NVLink's 275 + 0 + 275 ns
  // GPU to GPU; through host memory the write to it (275 + 50 ns) and the polling threads' read
  // back (325 ns), nccl_step_model.h; LL's step work is 0.
  auto floor_of = [](const PlannedCollective& p) {
    for (const ScheduleOp& op : p.schedule.ops)
      if (op.kind == OpKind::kTransfer) return op.latency_floor_ps;
    return SimTime{-1};
  };
  ASSERT_EQ(DefaultNcclStepWork().step_us[static_cast<size_t>(NcclProto::kLl)], 0);
  EXPECT_EQ(floor_of(*nv), 550'000);
  EXPECT_EQ(floor_of(*shm), 650'000);
  // Calibrated per-transport costs reach only their own transport.
  ProtocolCost shm_cost;
  shm_cost.channel_gbps = 7.0;
  shm_cost.hop_latency_us = 3.0;
  r.protocol_overrides.per_transport[{NcclTransport::kShm, NcclProto::kLl}] = shm_cost;
  auto shm2 = PlanCollective(t, router, r);
  ASSERT_TRUE(shm2.ok());
  EXPECT_EQ(floor_of(*shm2), 3'000'000);
  r.p2p_disable = false;
  auto nv2 = PlanCollective(t, router, r);
  ASSERT_TRUE(nv2.ok());
  EXPECT_EQ(floor_of(*nv2), 550'000);
  // LL128 is NCCL's over NVLink only.
  r.protocol = NcclProto::kLl128;
  EXPECT_TRUE(PlanCollective(t, router, r).ok());
  r.p2p_disable = true;
  EXPECT_FALSE(PlanCollective(t, router, r).ok());
}

// Our custom allreduce's fitted per-block read rate replaces the fabric's a-priori read cap (Little's
// law: SMs x outstanding bytes / round trip) instead of adding to it. With 4 KiB outstanding per SM
// over the 2 x 275 ns NVLink path the fabric caps 36 blocks at 36 x 4096 B / 1100 ns = 134 GB/s, so
// a one-shot 64 MiB allreduce (each rank pulls its peer's 64 MiB) takes about 64 MiB / 134 GB/s =
// 500 us; a fitted 10 GB/s per block (360 GB/s, under NVLink's 450) takes about 64 MiB / 360 GB/s =
// 186 us; 2 GB/s per block (72 GB/s) about 932 us.
TEST(CollectivePlannerTest, FittedCustomReadRateReplacesTheFabricsReadCap) {
  net::Topology t = H200Pair();
  t.gpu_specs[0].kernel_read_outstanding_bytes_per_sm = 4096;
  net::Router router(t);
  CollectiveRequest r;
  r.algorithm = Algorithm::kOneShot;
  r.bytes = 64 << 20;
  r.custom_blocks = 36;
  auto time_us = [&](double per_block) {
    r.custom_read_gbps_per_block = per_block;
    auto plan = PlanCollective(t, router, r);
    EXPECT_TRUE(plan.ok()) << plan.status().ToString();
    return NanosFromPicos(CollectiveTimer(router).Time(plan->schedule, plan->rank_gpus).duration_ps) * 1e-3;
  };
  const double bytes = 64.0 * (1 << 20);
  EXPECT_NEAR(time_us(0), bytes / (36 * 4096 / 1100.0) * 1e-3, 0.1 * 500);
  EXPECT_NEAR(time_us(10), bytes / 360.0 * 1e-3, 0.1 * 186);
  EXPECT_NEAR(time_us(2), bytes / 72.0 * 1e-3, 0.1 * 932);
}

// Barrier flags through mapped host memory take at least the measured one-way trip plus the other
// writes into their 128-byte line when no calibration sets a floor (HostFlagFloorUs: 2.335 us + (n x
// min(blocks, 4) - 1) x 0.35 us); a calibrated floor replaces it; flags written GPU to GPU keep the
// fabric's own latency (no floor). The flags are the transfers of blocks x 4 bytes with no data
// effect (staging copies move the input). 16 KiB = 1024 packs: vLLM launches 2 blocks.
TEST(CollectivePlannerTest, HostMemoryBarrierFlagsTakeTheMeasuredTripUnlessCalibrated) {
  net::Topology t = H200Pair();
  net::Router router(t);
  CollectiveRequest r;
  r.algorithm = Algorithm::kOneShot;
  r.bytes = 16384;
  auto flag_floors = [&](const CollectiveRequest& req) {
    auto plan = PlanCollective(t, router, req);
    EXPECT_TRUE(plan.ok()) << plan.status().ToString();
    std::vector<SimTime> floors;
    if (!plan.ok()) return floors;
    EXPECT_EQ(plan->channels, req.custom_blocks > 0 ? req.custom_blocks : 2);
    for (const ScheduleOp& op : plan->schedule.ops)
      if (op.kind == OpKind::kTransfer && op.effect == DataEffect::kNone && op.bytes == plan->channels * 4)
        floors.push_back(op.latency_floor_ps);
    return floors;
  };
  // Two ranks, two barriers: each rank flags its peer twice.
  auto peer = flag_floors(r);
  ASSERT_EQ(peer.size(), 4u);
  for (SimTime f : peer) EXPECT_EQ(f, 0);
  r.custom_host_mapped = true;
  auto host = flag_floors(r);
  ASSERT_EQ(host.size(), 4u);
  for (SimTime f : host) EXPECT_EQ(f, PicosFromMicros(2.335 + 3 * 0.35));  // 2 ranks x 2 blocks in the line
  auto plan = PlanCollective(t, router, r);
  ASSERT_TRUE(plan.ok());
  EXPECT_NE(plan->choice.find("barrier flags >= 2.33 us one way + 0.35 us per other flag"), std::string::npos)
      << plan->choice;
  EXPECT_NE(plan->choice.find("as vLLM launches"), std::string::npos) << plan->choice;
  r.custom_blocks = 36;  // a fixed grid: 4 blocks share each line
  for (SimTime f : flag_floors(r)) EXPECT_EQ(f, PicosFromMicros(2.335 + 7 * 0.35));
  r.custom_flag_latency_ps = PicosFromMicros(23.7);  // a calibration's value
  for (SimTime f : flag_floors(r)) EXPECT_EQ(f, PicosFromMicros(23.7));
}

// vLLM's grid: min(36, ceil(16-byte packs / 512)), at least one block; and the flag floor's line
// arithmetic: n ranks x min(blocks, 4) writes share a line.
TEST(CollectivePlannerTest, FrameworkGridAndHostFlagFloor) {
  EXPECT_EQ(FrameworkCustomBlocks(0), 1);
  EXPECT_EQ(FrameworkCustomBlocks(1024), 1);   // 64 packs
  EXPECT_EQ(FrameworkCustomBlocks(14336), 2);  // Kimi-K2's hidden 7168 in bf16: 896 packs
  EXPECT_EQ(FrameworkCustomBlocks(8192), 1);   // 512 packs: one full block
  EXPECT_EQ(FrameworkCustomBlocks(8208), 2);   // 513 packs
  EXPECT_EQ(FrameworkCustomBlocks(int64_t{64} << 20), 36);
  EXPECT_DOUBLE_EQ(HostFlagFloorUs(1, 1), kHostFlagOneWayUs);
  EXPECT_DOUBLE_EQ(HostFlagFloorUs(8, 2), kHostFlagOneWayUs + 15 * kHostFlagLineWriteUs);
  EXPECT_DOUBLE_EQ(HostFlagFloorUs(8, 36), kHostFlagOneWayUs + 31 * kHostFlagLineWriteUs);
  // 0 asks for the rule; a negative count is refused, not read as 0.
  net::Topology t = H200Pair();
  net::Router router(t);
  CollectiveRequest r;
  r.algorithm = Algorithm::kOneShot;
  r.bytes = 14336;
  auto plan = PlanCollective(t, router, r);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->channels, 2);
  r.custom_blocks = -3;
  auto bad = PlanCollective(t, router, r);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("blocks = -3: must be >= 1, or 0 for vLLM's rule"), std::string::npos)
      << bad.status().ToString();
}

// Issue 12 items 2 and 3: a custom allreduce between GPUs that meet only at a CPU is priced over
// the path its peer reads really take under the driver's P2P mode: through mapped host memory
// with the driver default (reads staged through system memory) or no PCIe P2P; GPU to GPU with
// BAR1 forced. The plan says which, and why.
TEST(CollectivePlannerTest, CustomAllreduceFollowsTheDriversPeerReadPath) {
  for (Algorithm algo : {Algorithm::kOneShot, Algorithm::kTwoShot}) {
    net::Topology t = FourPlusFour();
    t.driver_p2p_mode = net::DriverP2pMode::kDriverDefault;
    PlannedCollective staged;
    const CollectiveTiming host = RunAlgo(t, algo, 1 << 20, &staged);
    EXPECT_NE(staged.choice.find("exchange buffers in mapped host memory (56 GPU pairs meet only at a CPU"),
              std::string::npos)
        << staged.choice;
    EXPECT_EQ(WhyPeerReadsAreNotDirect(t, staged.rank_gpus).find("56 GPU pairs"), 0u);
    t.driver_p2p_mode = net::DriverP2pMode::kBar1Forced;
    PlannedCollective direct;
    const CollectiveTiming bar1 = RunAlgo(t, algo, 1 << 20, &direct);
    EXPECT_EQ(direct.choice.find("mapped host memory"), std::string::npos) << direct.choice;
    EXPECT_EQ(WhyPeerReadsAreNotDirect(t, direct.rank_gpus), "");
    // The host path carries every byte over each GPU's host link twice: slower at 1 MiB.
    EXPECT_GT(host.duration_ps, bar1.duration_ps) << AlgorithmName(algo);
    t.driver_p2p_mode = net::DriverP2pMode::kNoPcieP2p;
    PlannedCollective none;
    RunAlgo(t, algo, 1 << 20, &none);
    EXPECT_NE(none.choice.find("have no peer mapping (no PCIe P2P)"), std::string::npos) << none.choice;
  }
}

}  // namespace
}  // namespace specsim::coll
