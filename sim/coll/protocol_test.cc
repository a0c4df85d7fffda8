#include "sim/coll/protocol.h"

#include <gtest/gtest.h>

#include "sim/coll/pipeline.h"

namespace specsim::coll {
namespace {

TEST(ProtocolTest, NcclPciDefaults) {
  const ProtocolModel ll = NcclProtocolModel(NcclProto::kLl);
  EXPECT_EQ(ll.name, "ll");
  EXPECT_EQ(ll.wire_efficiency, 0.5);
  EXPECT_EQ(ll.hop_latency_ps, 1'000'000);
  EXPECT_EQ(ll.base_latency_ps, 6'600'000);
  EXPECT_EQ(ll.slot_payload_bytes, 32 * 1024);  // 512 KiB LL buffer / 8 slots / 2 (flags)
  EXPECT_EQ(ll.slots, 8);
  const ProtocolModel simple = NcclProtocolModel(NcclProto::kSimple);
  EXPECT_EQ(simple.wire_efficiency, 1.0);
  EXPECT_EQ(simple.hop_latency_ps, 5'700'000);
  EXPECT_EQ(simple.base_latency_ps, 8'400'000);
  EXPECT_EQ(simple.slot_payload_bytes, 512 * 1024);  // 4 MiB / 8 slots
}

TEST(ProtocolTest, TreeAndNvLinkValues) {
  EXPECT_EQ(NcclProtocolModel(NcclProto::kLl, NcclAlgo::kTree).base_latency_ps, 6'800'000);
  EXPECT_EQ(NcclProtocolModel(NcclProto::kSimple, NcclAlgo::kTree).hop_latency_ps, 4'000'000);
  EXPECT_EQ(NcclProtocolModel(NcclProto::kLl, NcclAlgo::kRing, NcclHw::kNvLink).hop_latency_ps, 600'000);
  EXPECT_EQ(NcclProtocolModel(NcclProto::kSimple, NcclAlgo::kRing, NcclHw::kNvLink).hop_latency_ps, 3'400'000);
  EXPECT_EQ(NcclProtocolModel(NcclProto::kSimple, NcclAlgo::kTree, NcclHw::kNvLink).hop_latency_ps, 4'000'000);
  EXPECT_DOUBLE_EQ(NcclHopLatencyUs(NcclHw::kPci, NcclAlgo::kTree, NcclProto::kLl), 1.0);
}

TEST(ProtocolTest, Ll128FollowsNcclBuffersAndTables) {
  const ProtocolModel m = NcclProtocolModel(NcclProto::kLl128, NcclAlgo::kRing, NcclHw::kNvLink);
  EXPECT_EQ(m.name, "ll128");
  EXPECT_DOUBLE_EQ(m.wire_efficiency, 120.0 / 128.0);
  EXPECT_EQ(m.hop_latency_ps, 1'900'000);
  EXPECT_EQ(m.base_latency_ps, 14'000'000);
  // 120 uint64 x 640 threads x 8 steps x 8 bytes = 4,915,200 wire bytes per connection; a slot is
  // 1/8 of it, 120/128 of that payload.
  EXPECT_EQ(m.slot_payload_bytes, 576'000);
  EXPECT_EQ(NcclProtocolModel(NcclProto::kLl128, NcclAlgo::kTree, NcclHw::kPci).hop_latency_ps, 1'900'000);
}

// Measured costs are kept per transport: an SHM override must not touch P2P transfers, and an op's
// entry wins over its transport's.
TEST(ProtocolTest, OverridesApplyPerTransportThenPerOp) {
  ProtocolOverrides o;
  ProtocolCost shm;
  shm.base_latency_us = 11.0;
  shm.channel_gbps = 7.2;
  o.per_transport[{NcclTransport::kShm, NcclProto::kSimple}] = shm;
  ProtocolCost shm_gather;
  shm_gather.channel_gbps = 9.5;
  const int gather = 1;  // Collective::kAllGather: the op's entry applies to that op only
  o.per_op[{NcclTransport::kShm, NcclProto::kSimple, gather}] = shm_gather;
  const ProtocolModel base = NcclProtocolModel(NcclProto::kSimple);
  const ProtocolModel on_shm = ApplyProtocolOverrides(base, NcclProto::kSimple, NcclTransport::kShm, o);
  EXPECT_EQ(on_shm.base_latency_ps, 11'000'000);
  EXPECT_DOUBLE_EQ(on_shm.channel_payload_gbps, 7.2);
  EXPECT_EQ(on_shm.hop_latency_ps, base.hop_latency_ps);
  const ProtocolModel on_shm_gather = ApplyProtocolOverrides(base, NcclProto::kSimple, NcclTransport::kShm, o, gather);
  EXPECT_EQ(on_shm_gather.base_latency_ps, 11'000'000);
  EXPECT_DOUBLE_EQ(on_shm_gather.channel_payload_gbps, 9.5);
  const ProtocolModel on_p2p = ApplyProtocolOverrides(base, NcclProto::kSimple, NcclTransport::kP2pPcie, o);
  EXPECT_EQ(on_p2p.base_latency_ps, base.base_latency_ps);
  EXPECT_DOUBLE_EQ(on_p2p.channel_payload_gbps, 0.0);
  EXPECT_FALSE(o.empty());
  EXPECT_TRUE(ProtocolOverrides{}.empty());
}

TEST(ProtocolTest, Parse) {
  EXPECT_EQ(*ParseNcclProto("LL"), NcclProto::kLl);
  EXPECT_EQ(*ParseNcclProto("simple"), NcclProto::kSimple);
  EXPECT_EQ(*ParseNcclProto("LL128"), NcclProto::kLl128);
  const auto bad = ParseNcclProto("ll64");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("allowed values are ll, ll128, simple"), std::string::npos);
  EXPECT_EQ(*ParseNcclTransport("SHM"), NcclTransport::kShm);
  EXPECT_NE(ParseNcclTransport("nvls").status().message().find("p2p_nvlink, p2p_pcie, shm"), std::string::npos);
  EXPECT_EQ(*ParseNcclAlgo("Tree"), NcclAlgo::kTree);
  EXPECT_NE(ParseNcclAlgo("nvls").status().message().find("ring, tree"), std::string::npos);
}

TEST(ProtocolTest, ChunksPerBlock) {
  const ProtocolModel ll = NcclProtocolModel(NcclProto::kLl);
  EXPECT_EQ(ChunksPerBlock(0, ll, 16), 1);
  EXPECT_EQ(ChunksPerBlock(32 * 1024, ll, 16), 1);
  EXPECT_EQ(ChunksPerBlock(32 * 1024 + 1, ll, 16), 2);
  EXPECT_EQ(ChunksPerBlock(int64_t{1} << 30, ll, 16), 16);
  EXPECT_EQ(ChunksPerBlock(int64_t{1} << 40, IdealProtocol(), 16), 1);  // no overflow
}

}  // namespace
}  // namespace specsim::coll
