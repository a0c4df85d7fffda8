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

TEST(ProtocolTest, Parse) {
  EXPECT_EQ(*ParseNcclProto("LL"), NcclProto::kLl);
  EXPECT_EQ(*ParseNcclProto("simple"), NcclProto::kSimple);
  const auto bad = ParseNcclProto("ll128");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("allowed values are ll, simple"), std::string::npos);
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
