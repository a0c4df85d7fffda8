#include "sim/coll/nccl_tuning.h"

#include <gtest/gtest.h>

namespace specsim::coll {
namespace {

// 8 GPUs on PCIe Gen5 x16 (NCCL: 16 * 240 / 80 = 48 GB/s), RTX PRO 6000 (sm120).
NcclTuningInput Gen5Box(int sm = 120) {
  NcclTuningInput in;
  in.num_ranks = 8;
  in.worst_path = net::PathClass::kPhb;
  in.graph.sm = sm;
  in.graph.gpu_link_gbps = NcclPcieBandwidthGbps(5, 16);
  in.graph.ring_bottleneck_gbps = NcclPcieBandwidthGbps(5, 16);
  return in;
}

const NcclCandidate& Candidate(const NcclTuningResult& r, NcclAlgo a, NcclProto p) {
  for (const NcclCandidate& c : r.candidates) {
    if (c.algo == a && c.proto == p) return c;
  }
  ADD_FAILURE() << "no candidate";
  return r.candidates.front();
}

TEST(NcclTuningTest, PcieBandwidthAndArch) {
  EXPECT_DOUBLE_EQ(NcclPcieBandwidthGbps(5, 16), 48);
  EXPECT_DOUBLE_EQ(NcclPcieBandwidthGbps(4, 16), 24);
  EXPECT_DOUBLE_EQ(NcclPcieBandwidthGbps(5, 8), 24);
  EXPECT_EQ(*ParseSmArch("sm90"), 90);
  EXPECT_EQ(*ParseSmArch("SM_120"), 120);
  EXPECT_NE(ParseSmArch("hopper").status().message().find("expected smNN"), std::string::npos);
}

TEST(NcclTuningTest, GraphSearch) {
  NcclGraphInput in;
  in.sm = 90;
  // Gen5 x16: 40 -> 1 x 40; 30 -> 1 x 30; 24 -> 2 x 24 = 48 reaches the GPU link: stop.
  // 24 < 25: no duplication. The communicator runs 2 x 2 = 4 channels.
  auto g = SearchNcclRingGraph(in);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->search_channels, 2);
  EXPECT_DOUBLE_EQ(g->search_speed_gbps, 24);
  EXPECT_EQ(g->graph_channels, 2);
  EXPECT_DOUBLE_EQ(g->bw_intra_gbps, 24);
  EXPECT_EQ(g->comm_channels, 4);
  in.sm = 120;  // sm100+ list: 45 -> 45, 40, 30, 24 -> 48: the same 2 x 24
  EXPECT_EQ(SearchNcclRingGraph(in)->graph_channels, 2);

  // An AMD socket link (16 GB/s) on the ring: sm90 finds 1 x 15 (3 GB/s x 5 = 15 ties, the
  // higher speed wins); the sm100+ list stops at 18, so nothing fits and NCCL falls back to one
  // channel at 0.1 GB/s.
  in.ring_bottleneck_gbps = kNcclAmdInterCpuGbps;
  in.sm = 90;
  g = SearchNcclRingGraph(in);
  EXPECT_EQ(g->graph_channels, 1);
  EXPECT_DOUBLE_EQ(g->bw_intra_gbps, 15);
  in.sm = 120;
  g = SearchNcclRingGraph(in);
  EXPECT_TRUE(g->fell_back);
  EXPECT_DOUBLE_EQ(g->bw_intra_gbps, 0.1);
  EXPECT_NE(g->reason.find("simple order"), std::string::npos);

  // NVLink-like 100 GB/s on sm90: 60 -> 1 x 60; 50 -> 2 x 50 = 100: stop. 50 >= 25: duplicated
  // to 4 x 25.
  in.sm = 90;
  in.gpu_link_gbps = in.ring_bottleneck_gbps = 100;
  g = SearchNcclRingGraph(in);
  EXPECT_EQ(g->search_channels, 2);
  EXPECT_EQ(g->graph_channels, 4);
  EXPECT_DOUBLE_EQ(g->bw_intra_gbps, 25);
  EXPECT_EQ(g->comm_channels, 8);
}

TEST(NcclTuningTest, UserChannelLimits) {
  NcclGraphInput in;
  in.sm = 90;
  in.max_channels = 1;
  // One channel: the best single ring is 1 x 40; duplication is capped at 1 channel, so 40 stays.
  auto g = SearchNcclRingGraph(in);
  EXPECT_EQ(g->graph_channels, 1);
  EXPECT_DOUBLE_EQ(g->bw_intra_gbps, 40);
  EXPECT_EQ(g->comm_channels, 1);
  in.max_channels = 0;
  in.min_channels = 8;
  EXPECT_EQ(SearchNcclRingGraph(in)->comm_channels, 8);
  in.max_channels = 4;
  in.min_channels = 6;
  EXPECT_FALSE(SearchNcclRingGraph(in).ok());
}

TEST(NcclTuningTest, RingLlForSmallRingSimpleForLargeCrossoverNearTwoMegabytes) {
  // Graph 2 x 24 -> busBw 48. n = 8, nsteps = 14, algBw = busBw * 8/14.
  //   ring/ll:     lat 6.6 + 14 * 1.0 = 20.6 us, busBw min(282, 24) = 24 -> algBw 13.714 GB/s
  //   ring/simple: lat 8.4 + 14 * 5.7 = 88.2 us, busBw 48 -> algBw 27.429 GB/s
  // Equal when 67.6 us = S / 27429 B/us -> S = 1.854 MB (docs/reference/nccl-cost-model.md: "Ring LL wins up to
  // ~1.5 MB at n=8"). Tree never wins here: tree/ll has lat 20.8 > 20.6 and busBw
  // 0.85 * 0.92 * 48 / 3.8; tree/simple lat 64.4 and algBw 0.5 * 0.85 * 0.92 * 48 = 18.8 * corr.
  const NcclTuningInput in = Gen5Box();
  auto small = TuneNccl(in, 14336);  // one token of hidden 7168 in bf16
  ASSERT_TRUE(small.ok()) << small.status().ToString();
  EXPECT_EQ(small->algo, NcclAlgo::kRing);
  EXPECT_EQ(small->proto, NcclProto::kLl);
  EXPECT_NEAR(small->time_us, 20.6 + 14336 / (1000 * 48 * 0.5 * 8 / 14.0), 1e-9);
  EXPECT_NE(small->reason.find("picked ring/ll: ring/ll 21.6 us < "), std::string::npos) << small->reason;

  auto large = TuneNccl(in, int64_t{64} << 20);
  EXPECT_EQ(large->algo, NcclAlgo::kRing);
  EXPECT_EQ(large->proto, NcclProto::kSimple);

  // Find the switch by bisection: every size below picks ring/ll, every size above ring/simple.
  int64_t lo = 1024, hi = int64_t{64} << 20;
  while (hi - lo > 1) {
    const int64_t mid = (lo + hi) / 2;
    (TuneNccl(in, mid)->proto == NcclProto::kLl ? lo : hi) = mid;
  }
  EXPECT_GT(hi, 512 * 1000);  // the brief's bracket
  EXPECT_LT(hi, 4 * 1000 * 1000);
  EXPECT_NEAR(static_cast<double>(hi), 67.6 * 1000 * 48 * 8 / 14.0, 2000);  // 1.854 MB
  for (int64_t s : {int64_t{4096}, int64_t{256} << 10, int64_t{1} << 20}) {
    EXPECT_EQ(TuneNccl(in, s)->algo, NcclAlgo::kRing) << s;
    EXPECT_EQ(TuneNccl(in, s)->proto, NcclProto::kLl) << s;
  }
}

TEST(NcclTuningTest, TreeToRingRatios) {
  NcclTuningInput in = Gen5Box();
  in.tree_correction = false;
  const auto r = TuneNccl(in, int64_t{64} << 20);
  const NcclCandidate& ring_simple = Candidate(*r, NcclAlgo::kRing, NcclProto::kSimple);
  const NcclCandidate& tree_simple = Candidate(*r, NcclAlgo::kTree, NcclProto::kSimple);
  const NcclCandidate& ring_ll = Candidate(*r, NcclAlgo::kRing, NcclProto::kLl);
  const NcclCandidate& tree_ll = Candidate(*r, NcclAlgo::kTree, NcclProto::kLl);
  // Tree simple busBw = 0.85 * 0.92 * 48 = 37.54; algBw half of it.
  EXPECT_NEAR(tree_simple.bus_bw_gbps, 0.85 * 0.92 * 48, 1e-9);
  EXPECT_NEAR(tree_simple.alg_bw_gbps / ring_simple.alg_bw_gbps, 0.5 * 0.85 * 0.92 / (8 / 14.0), 1e-9);
  // Tree LL = 0.85 * 0.92 * 48 / 3.8; ring LL = 48 / 2.
  EXPECT_NEAR(tree_ll.bus_bw_gbps, 0.85 * 0.92 * 48 / 3.8, 1e-9);
  EXPECT_NEAR(ring_ll.bus_bw_gbps, 24, 1e-9);
  EXPECT_NEAR(tree_simple.latency_us, 8.4 + 14 * 4.0, 1e-9);
  EXPECT_NEAR(tree_ll.latency_us, 6.8 + 14 * 1.0, 1e-9);
  // The correction table scales tree algBw by size: 1.5 MB -> log2(1.5e6 / 64) = 14: Simple 0.5.
  in.tree_correction = true;
  const auto corrected = TuneNccl(in, 1'500'000);
  EXPECT_NEAR(Candidate(*corrected, NcclAlgo::kTree, NcclProto::kSimple).alg_bw_gbps, 0.5 * 0.85 * 0.92 * 48 * 0.5,
              1e-9);
  // Forcing tree (NCCL_ALGO=Tree) picks tree.
  in.algos = {NcclAlgo::kTree};
  EXPECT_EQ(TuneNccl(in, 1 << 20)->algo, NcclAlgo::kTree);
  // Tree has no allgather: nothing allowed.
  in.collective = Collective::kAllGather;
  EXPECT_FALSE(TuneNccl(in, 1 << 20).ok());
}

TEST(NcclTuningTest, LlCappedByLlMaxBwAndNvLinkLatency) {
  NcclTuningInput in = Gen5Box(90);
  in.worst_path = net::PathClass::kNvLink;
  // 400 GB/s links: 60 -> 6 x 60 = 360; 50 -> 8 x 50 = 400: stop; duplicated to 16 x 25.
  in.graph.gpu_link_gbps = in.graph.ring_bottleneck_gbps = 400;
  const auto r = TuneNccl(in, 1 << 20);
  EXPECT_EQ(r->graph.graph_channels, 16);
  // Ring LL = min(llMaxBw Hopper 141, 0.5 * 400).
  EXPECT_NEAR(Candidate(*r, NcclAlgo::kRing, NcclProto::kLl).bus_bw_gbps, 141, 1e-9);
  // NVLink hop latencies: 6.6 + 14 * 0.6.
  EXPECT_NEAR(Candidate(*r, NcclAlgo::kRing, NcclProto::kLl).latency_us, 6.6 + 14 * 0.6, 1e-9);
}

TEST(NcclTuningTest, AllGatherUsesNMinusOneSteps) {
  NcclTuningInput in = Gen5Box();
  in.collective = Collective::kAllGather;
  const auto r = TuneNccl(in, 1 << 20);
  ASSERT_TRUE(r.ok());
  const NcclCandidate& ll = Candidate(*r, NcclAlgo::kRing, NcclProto::kLl);
  EXPECT_NEAR(ll.latency_us, 6.6 + 7 * 1.0, 1e-9);
  EXPECT_NEAR(ll.alg_bw_gbps, 24 * 8 / 7.0, 1e-9);
  EXPECT_FALSE(Candidate(*r, NcclAlgo::kTree, NcclProto::kLl).allowed);
}

TEST(NcclTuningTest, ChannelShrink) {
  // Ring LL at n = 8: threshold 8 * 8 = 64 B/thread, 512 threads: 32 KiB per channel.
  // 64 KiB on 4 channels: 131072 > 65536 -> 3; 98304 > 65536 -> 2; 65536 is not < 65536: stop.
  EXPECT_EQ(ShrinkNcclChannels(NcclAlgo::kRing, NcclProto::kLl, 8, 4, 65536).channels, 2);
  // 14336 B: down to 1 channel, then threads 512 -> 256 -> 128 (14336 >= 128 * 64 = 8192).
  const NcclCallShape tiny = ShrinkNcclChannels(NcclAlgo::kRing, NcclProto::kLl, 8, 4, 14336);
  EXPECT_EQ(tiny.channels, 1);
  EXPECT_EQ(tiny.threads, 128);
  // Simple: 64 B/thread regardless of n; large messages keep every channel.
  EXPECT_EQ(ShrinkNcclChannels(NcclAlgo::kRing, NcclProto::kSimple, 8, 4, 1 << 20).channels, 4);
  // Tree Simple has 640 threads: 640 % 128 == 0 -> 320, then 320 % 128 != 0: stop.
  EXPECT_EQ(ShrinkNcclChannels(NcclAlgo::kTree, NcclProto::kSimple, 8, 4, 1).threads, 320);
  const auto r = TuneNccl(Gen5Box(), 14336);
  EXPECT_EQ(r->channels, 1);
  EXPECT_EQ(r->threads, 128);
}

// The channels NCCL 2.28.3 really used on the 2x H200 box (NCCL_DEBUG_SUBSYS=TUNING, "channel{Lo..Hi}"):
// over NVLink (24 channels) LL allreduce 1 KiB and 4 KiB on 1 channel, 16 KiB on 2, 64 KiB on 8,
// 256 KiB on 22, 1 MiB and more on 24; all-gather (log bytes = per-rank send) 2 KiB 1, 8 KiB 2,
// 32 KiB 8, 128 KiB 22; through host memory (NCCL_P2P_DISABLE=1, 4 channels) 16 KiB 2, 64 KiB 4.
TEST(NcclTuningTest, ChannelsUsedMatchNccl228OnTheTwoGpuBox) {
  auto used = [](Collective c, int comm, int64_t bytes) {
    const NcclCallShape shape = ShrinkNcclChannels(NcclAlgo::kRing, NcclProto::kLl, 2, comm, bytes);
    return NcclChannelsUsed(c, NcclProto::kLl, 2, shape.channels, comm, bytes);
  };
  const std::vector<std::pair<int64_t, int>> nvlink = {{1 << 10, 1},    {4 << 10, 1},  {16 << 10, 2},  {64 << 10, 8},
                                                       {256 << 10, 22}, {1 << 20, 24}, {256 << 20, 24}};
  for (auto [bytes, channels] : nvlink) EXPECT_EQ(used(Collective::kAllReduce, 24, bytes), channels) << bytes;
  // All-gather of nccl-tests size S = 2 x the per-rank send bytes NCCL logs.
  const std::vector<std::pair<int64_t, int>> gather = {{4 << 10, 1}, {16 << 10, 2}, {64 << 10, 8}, {256 << 10, 22}};
  for (auto [bytes, channels] : gather) EXPECT_EQ(used(Collective::kAllGather, 24, bytes), channels) << bytes;
  const std::vector<std::pair<int64_t, int>> shm = {{1 << 10, 1}, {16 << 10, 2}, {64 << 10, 4}, {1 << 20, 4}};
  for (auto [bytes, channels] : shm) EXPECT_EQ(used(Collective::kAllReduce, 4, bytes), channels) << bytes;
}

TEST(NcclTuningTest, Ll128OnlyOverNvLink) {
  NcclTuningInput in = Gen5Box();
  auto r = TuneNccl(in, 64 << 20);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(Candidate(*r, NcclAlgo::kRing, NcclProto::kLl128).allowed);
  in.worst_path = net::PathClass::kNvLink;
  in.graph.ring_bottleneck_gbps = 370.8;
  r = TuneNccl(in, 64 << 20);
  ASSERT_TRUE(r.ok());
  const NcclCandidate& ll128 = Candidate(*r, NcclAlgo::kRing, NcclProto::kLl128);
  EXPECT_TRUE(ll128.allowed);
  // bus = min(0.92 * channels * bw, channels * 36.7) on Hopper-class (sm >= 90) rings.
  const double bus = r->graph.graph_channels * r->graph.bw_intra_gbps;
  EXPECT_NEAR(ll128.bus_bw_gbps, std::min(0.92 * bus, r->graph.graph_channels * (in.graph.sm >= 100 ? 40.0 : 36.7)),
              1e-9);
}

TEST(NcclTuningTest, InputErrors) {
  NcclTuningInput in = Gen5Box();
  in.num_ranks = 1;
  EXPECT_FALSE(TuneNccl(in, 100).ok());
  in = Gen5Box();
  EXPECT_FALSE(TuneNccl(in, -1).ok());
  in.graph.ring_bottleneck_gbps = 0;
  EXPECT_FALSE(TuneNccl(in, 100).ok());
  in = Gen5Box();
  in.protos = {};
  EXPECT_FALSE(TuneNccl(in, 100).ok());
}

}  // namespace
}  // namespace specsim::coll
