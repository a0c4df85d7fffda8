#include "sim/net/fabric.h"

#include <gtest/gtest.h>

#include <random>

#include "sim/net/test_topologies.h"

namespace specsim::net {

// The memo's switches, which only tests turn: whether solved mixes are reused, and a key mask
// (0: every mix one key, so that telling mixes apart rests on the check of their classes alone).
class FabricTestPeer {
 public:
  static void SetReuseSolvedMixes(Fabric& fabric, bool on) { fabric.reuse_solved_mixes_ = on; }
  static void SetMixKeyMask(Fabric& fabric, uint64_t mask) { fabric.memo_ = SolvedMixMemo(mask); }
};

namespace {

using testing::AddLink;
using testing::AddNode;

// Runs the given transfers, all started at t=0, and returns each completion time in ps (and, if
// asked, the wire bytes that crossed each resource).
std::vector<SimTime> RunAll(const Topology& t, const std::vector<TransferSpec>& specs,
                            std::vector<double>* resource_bytes = nullptr) {
  EventQueue q;
  Router router(t);
  Fabric fabric(&q, &t, &router);
  std::vector<SimTime> done(specs.size(), -1);
  for (size_t i = 0; i < specs.size(); ++i) fabric.Start(specs[i], [&, i] { done[i] = q.now(); });
  q.Run();
  if (resource_bytes != nullptr) *resource_bytes = fabric.resource_bytes();
  return done;
}

TransferSpec Spec(int src, int dst, int64_t bytes, Mechanism m = Mechanism::kKernelWrite) {
  TransferSpec s;
  s.src_node = src;
  s.dst_node = dst;
  s.bytes = bytes;
  s.mechanism = m;
  return s;
}

// Two GPUs on one link of 50 GB/s (0.05 B/ps) and 500 ns.
Topology Pair() {
  Topology t;
  t.gpu_specs.push_back(testing::TestGpu());
  int a = AddNode(t, "a", NodeKind::kGpu), b = AddNode(t, "b", NodeKind::kGpu);
  AddLink(t, a, b, 50, 500);
  return t;
}

TEST(Fabric, OneFlowTakesLatencyPlusBytesOverBandwidth) {
  // T = 500 ns + 1e6 B / 0.05 B/ps = 5e5 + 2e7 ps.
  auto done = RunAll(Pair(), {Spec(0, 1, 1'000'000)});
  EXPECT_EQ(done[0], 500'000 + 20'000'000);
}

TEST(Fabric, PayloadEfficiencyAndProtocolEfficiencyScaleWireBytes) {
  Topology t = Pair();
  t.links[0].payload_efficiency = 0.5;  // 25 GB/s of payload
  TransferSpec s = Spec(0, 1, 1'000'000);
  s.wire_efficiency = 0.5;  // LL: 2 B of wire per payload byte
  // 2e6 wire bytes / 0.025 B/ps = 8e7 ps.
  EXPECT_EQ(RunAll(t, {s})[0], 500'000 + 80'000'000);
}

// An NCCL channel moves at most its own rate: a flow capped at 10 GB/s of payload on a 50 GB/s link
// takes 1e6 / 0.01 B/ps; with LL's 0.5 wire efficiency the cap is on payload, so the wire carries
// 20 GB/s and the time is the same. A second, uncapped flow takes what the capped one leaves.
TEST(Fabric, PayloadCapBoundsOneFlowAndLeavesTheRest) {
  TransferSpec capped = Spec(0, 1, 1'000'000);
  capped.payload_cap_gbps = 10;
  EXPECT_EQ(RunAll(Pair(), {capped})[0], 500'000 + 100'000'000);
  capped.wire_efficiency = 0.5;
  EXPECT_EQ(RunAll(Pair(), {capped})[0], 500'000 + 100'000'000);
  capped.wire_efficiency = 1;
  // Max-min: the capped flow gets 10 GB/s, the other 40 GB/s: 1e6 / 0.04 = 2.5e7 ps.
  auto done = RunAll(Pair(), {capped, Spec(0, 1, 1'000'000)});
  EXPECT_EQ(done[0], 500'000 + 100'000'000);
  EXPECT_EQ(done[1], 500'000 + 25'000'000);
}

TEST(Fabric, TwoFlowsShareOneDirection) {
  // Each gets B/2: both end at 2S/B + latency.
  auto done = RunAll(Pair(), {Spec(0, 1, 1'000'000), Spec(0, 1, 1'000'000)});
  EXPECT_EQ(done[0], 500'000 + 40'000'000);
  EXPECT_EQ(done[1], 500'000 + 40'000'000);
}

TEST(Fabric, OppositeDirectionsDoNotInterfere) {
  auto done = RunAll(Pair(), {Spec(0, 1, 1'000'000), Spec(1, 0, 1'000'000)});
  EXPECT_EQ(done[0], 500'000 + 20'000'000);
  EXPECT_EQ(done[1], 500'000 + 20'000'000);
}

TEST(Fabric, ShortFlowLeavesAndLongFlowSpeedsUp) {
  // Both share until the short one (S) drains at 2S/B; the long one (3S) has 2S left, alone at B:
  // it drains at 2S/B + 2S/B = 4S/B.
  auto done = RunAll(Pair(), {Spec(0, 1, 1'000'000), Spec(0, 1, 3'000'000)});
  EXPECT_EQ(done[0], 500'000 + 40'000'000);
  EXPECT_EQ(done[1], 500'000 + 80'000'000);
}

TEST(Fabric, CopiesOnOneEngineRunOneAfterAnother) {
  Topology t = Pair();
  t.gpu_specs[0].copy_engine_setup_ns = 1000;
  // Engine FIFO: copy 1 = setup + S/B (+ latency); copy 2 starts when copy 1 drained.
  auto done = RunAll(t, {Spec(0, 1, 1'000'000, Mechanism::kCopyEngine), Spec(0, 1, 1'000'000, Mechanism::kCopyEngine)});
  EXPECT_EQ(done[0], 1'000'000 + 20'000'000 + 500'000);
  EXPECT_EQ(done[1], 2 * (1'000'000 + 20'000'000) + 500'000);
}

TEST(Fabric, CopiesOnTwoEnginesShareTheLink) {
  Topology t = Pair();
  t.gpu_specs[0].copy_engine_setup_ns = 1000;
  t.gpu_specs[0].copy_engines_per_direction = 2;
  auto done = RunAll(t, {Spec(0, 1, 1'000'000, Mechanism::kCopyEngine), Spec(0, 1, 1'000'000, Mechanism::kCopyEngine)});
  EXPECT_EQ(done[0], 1'000'000 + 40'000'000 + 500'000);
  EXPECT_EQ(done[1], done[0]);
}

// A reset fabric (and queue) times the next run exactly as fresh ones: its routes are kept, its
// clock, counters, copy engines and bytes per resource start over.
TEST(Fabric, ResetRunsTheNextTransfersLikeAFreshFabric) {
  Topology t = Pair();
  t.gpu_specs[0].copy_engine_setup_ns = 1000;
  const std::vector<TransferSpec> specs = {Spec(0, 1, 1'000'000, Mechanism::kCopyEngine),
                                           Spec(0, 1, 1'000'000, Mechanism::kCopyEngine), Spec(1, 0, 3'000'000)};
  EventQueue q;
  Router router(t);
  Fabric fabric(&q, &t, &router);
  auto run = [&] {
    std::vector<SimTime> done(specs.size(), -1);
    for (size_t i = 0; i < specs.size(); ++i) fabric.Start(specs[i], [&, i] { done[i] = q.now(); });
    q.Run();
    return done;
  };
  const std::vector<SimTime> first = run();
  const std::vector<double> first_bytes = fabric.resource_bytes();
  EXPECT_EQ(first, RunAll(t, specs));
  fabric.Reset();
  q.Reset();
  EXPECT_EQ(fabric.flows_started(), 0);
  EXPECT_EQ(run(), first);
  EXPECT_EQ(fabric.resource_bytes(), first_bytes);
  EXPECT_EQ(fabric.flows_started(), 3);
}

TEST(FabricDeathTest, ResettingWithFlowsActiveIsABug) {
  EventQueue q;
  Topology t = Pair();
  Router router(t);
  Fabric fabric(&q, &t, &router);
  fabric.Start(Spec(0, 1, 1000), [] {});
  EXPECT_DEATH(fabric.Reset(), "active");
}

TEST(Fabric, KernelReadsAreBoundedByOutstandingBytes) {
  Topology t = Pair();
  // 2 SMs x 5000 B in flight over a round trip of 2 x 500 ns: 10000 B / 1e6 ps = 0.01 B/ps
  // (10 GB/s < the link's 50). T = 1e6 / 0.01 + 500 ns.
  t.gpu_specs[0].kernel_read_outstanding_bytes_per_sm = 5000;
  TransferSpec s = Spec(0, 1, 1'000'000, Mechanism::kKernelRead);
  s.read_sms = 2;
  EXPECT_EQ(RunAll(t, {s})[0], 100'000'000 + 500'000);
}

TEST(Fabric, HostStagedGoesThroughHostMemory) {
  // Two GPUs under a switch; SHM = gpu0 -> sw -> cpu -> mem, then mem -> cpu -> sw -> gpu1.
  // The switch uplink carries the flow once in each direction, so the bottleneck is a single
  // 50 GB/s link: T = S/B + both half-paths' latency.
  Topology t = testing::SwitchBox(2, 50, 100);
  int g0 = t.gpus[0], g1 = t.gpus[1];
  // Half path latencies: gpu->sw->cpu->mem = 100 + 100 + 50 = 250 (no forwarding latency set),
  // back the same: 250.
  auto done = RunAll(t, {Spec(g0, g1, 1'000'000, Mechanism::kHostStaged)});
  EXPECT_EQ(done[0], 20'000'000 + 500'000);
  // A second SHM flow the other way shares nothing: the uplink is split duplex... but both flows
  // cross the uplink in both directions, so they share it: 2S/B.
  auto two =
      RunAll(t, {Spec(g0, g1, 1'000'000, Mechanism::kHostStaged), Spec(g1, g0, 1'000'000, Mechanism::kHostStaged)});
  EXPECT_EQ(two[0], 40'000'000 + 500'000);
}

TEST(Fabric, CpuForwardingCollapsesWithManyFlows) {
  // Four GPUs on root ports of one CPU. Forwarding capacity 40 GB/s, collapse 0.5 per extra
  // flow. Three flows g0->g1, g2->g3, g1->g2 (distinct link directions, 50 GB/s each):
  // capacity 40 / (1 + 0.5*2) = 20 GB/s shared by 3: each 20/3 GB/s.
  Topology t;
  t.gpu_specs.push_back(testing::TestGpu());
  int cpu = AddNode(t, "cpu", NodeKind::kCpuRootComplex);
  t.nodes[cpu].p2p_forward_bandwidth_gbps = 40;
  t.nodes[cpu].p2p_forward_collapse_per_flow = 0.5;
  for (int i = 0; i < 4; ++i) AddLink(t, AddNode(t, "g" + std::to_string(i), NodeKind::kGpu), cpu, 50, 0);
  const auto& g = t.gpus;
  auto done = RunAll(t, {Spec(g[0], g[1], 1'000'000), Spec(g[2], g[3], 1'000'000), Spec(g[1], g[2], 1'000'000)});
  // 1e6 B / (0.02/3 B/ps) = 1.5e8 ps.
  for (SimTime d : done) EXPECT_NEAR(static_cast<double>(d), 150'000'000.0, 2.0);
  // Alone, a flow gets the full 40.
  auto one = RunAll(t, {Spec(g[0], g[1], 1'000'000)});
  EXPECT_EQ(one[0], 25'000'000);
}

// Reusing the rates of a flow mix solved before gives exactly what solving every instant gives:
// waves of transfers from a few patterns (so mixes repeat, and repeat with other counts), with
// caps, kernel reads, host staging and a collapsing CPU forwarding limit, each wave's transfers
// chained so that they start at many instants. With the mix keys masked to one value, every mix
// met is a candidate for every other: the check of the classes' counts alone must tell them apart.
TEST(Fabric, ReusingSolvedMixesChangesNoCompletionTime) {
  Topology t;
  t.gpu_specs.push_back(testing::TestGpu());
  t.gpu_specs[0].kernel_read_outstanding_bytes_per_sm = 5000;
  int cpu = AddNode(t, "cpu", NodeKind::kCpuRootComplex);
  t.nodes[cpu].p2p_forward_bandwidth_gbps = 40;
  t.nodes[cpu].p2p_forward_collapse_per_flow = 0.5;
  AddLink(t, cpu, AddNode(t, "mem", NodeKind::kHostMemory), 100, 50, LinkKind::kMemory);
  for (int i = 0; i < 4; ++i) AddLink(t, AddNode(t, "g" + std::to_string(i), NodeKind::kGpu), cpu, 50, 300);
  std::mt19937 rng(3);
  std::vector<TransferSpec> patterns;
  for (int p = 0; p < 6; ++p) {
    const int src = static_cast<int>(rng() % 4);
    TransferSpec spec = Spec(t.gpus[src], t.gpus[(src + 1 + rng() % 3) % 4], 100'000 + 50'000 * (rng() % 5),
                             static_cast<Mechanism>(rng() % 4));
    if (spec.mechanism == Mechanism::kKernelRead) spec.read_sms = 4;
    if (p % 2 == 0) spec.payload_cap_gbps = 12;
    patterns.push_back(spec);
  }
  auto run = [&](bool reuse, uint64_t key_mask = ~uint64_t{0}) {
    EventQueue q;
    Router router(t);
    Fabric fabric(&q, &t, &router);
    FabricTestPeer::SetReuseSolvedMixes(fabric, reuse);
    FabricTestPeer::SetMixKeyMask(fabric, key_mask);
    std::vector<SimTime> done;
    for (int wave = 0; wave < 40; ++wave) {
      q.Schedule(wave * 3'000'000, [&, wave] {
        for (int k = 0; k < 3; ++k) {
          const TransferSpec& first = patterns[(wave + k) % patterns.size()];
          const TransferSpec& second = patterns[(wave * 7 + k) % patterns.size()];
          fabric.Start(first, [&, second] {
            done.push_back(q.now());
            fabric.Start(second, [&] { done.push_back(q.now()); });
          });
        }
      });
    }
    q.Run();
    return std::make_pair(done, fabric.resource_bytes());
  };
  const auto reused = run(true);
  EXPECT_EQ(reused.first.size(), 240u);
  EXPECT_EQ(reused, run(false));
  EXPECT_EQ(reused, run(true, 0));
}

// All-to-all among 128 GPUs under one switch: 16,256 routes, whose resources fill several of the
// fabric's chunks (16k ints each), so a route pointing into the wrong chunk or past its end would
// show. Each GPU's uplink and downlink carry 127 equal flows, so every flow runs at bw / 127 and
// all end at once: T = 2 hops x 100 ns + 1000 B x 127 / 0.05 B/ps = 2e5 + 2.54e6 ps (up to 1 ps
// of rounding); every link direction to or from a GPU carries 127 x 1000 B.
TEST(Fabric, AllToAllOver128GpusRunsEveryFlowOnItsOwnRoute) {
  constexpr int kGpus = 128;
  const Topology t = testing::SwitchBox(kGpus, 50, 100);
  std::vector<TransferSpec> specs;
  for (int a = 0; a < kGpus; ++a)
    for (int b = 0; b < kGpus; ++b)
      if (a != b) specs.push_back(Spec(t.gpus[a], t.gpus[b], 1000));
  std::vector<double> resource_bytes;
  for (SimTime d : RunAll(t, specs, &resource_bytes)) EXPECT_NEAR(static_cast<double>(d), 200'000.0 + 2'540'000.0, 1.0);
  for (int l = 1; l < static_cast<int>(t.links.size()); ++l) {
    if (t.nodes[t.links[l].a].kind != NodeKind::kGpu) continue;  // the switch's link to the CPU is idle
    EXPECT_NEAR(resource_bytes[2 * l], 127'000.0, 1e-6) << t.DirectedLinkName(l, 0);
    EXPECT_NEAR(resource_bytes[2 * l + 1], 127'000.0, 1e-6) << t.DirectedLinkName(l, 1);
  }
}

TEST(Fabric, ZeroByteTransferTakesOnlyLatency) { EXPECT_EQ(RunAll(Pair(), {Spec(0, 1, 0)})[0], 500'000); }

TEST(Fabric, AccountsWireBytesPerResource) {
  EventQueue q;
  Topology t = Pair();
  Router router(t);
  Fabric fabric(&q, &t, &router);
  fabric.Start(Spec(0, 1, 1'000'000), [] {});
  fabric.Start(Spec(1, 0, 250'000), [] {});
  q.Run();
  EXPECT_NEAR(fabric.resource_bytes()[0], 1e6, 1e-3);
  EXPECT_NEAR(fabric.resource_bytes()[1], 2.5e5, 1e-3);
  EXPECT_EQ(fabric.ResourceName(0), "a->b");
}

}  // namespace
}  // namespace specsim::net
