#include "sim/net/peer_access.h"

#include <gtest/gtest.h>

#include "sim/net/test_topologies.h"

namespace specsim::net {
namespace {

using testing::AddLink;
using testing::AddNode;

// gpu0, gpu1 under one switch (PIX); gpu2 on a root port of the same CPU (PHB to both).
Topology SwitchAndRootPort() {
  Topology t = testing::SwitchBox(2, 63, 300);
  const int g = AddNode(t, "gpu2", NodeKind::kGpu);
  AddLink(t, g, t.FindNode("cpu0"), 63, 300);
  return t;
}

TEST(PeerAccess, DriverDefaultStagesOnlyReadsBetweenGpusThatMeetAtACpu) {
  const Topology t = SwitchAndRootPort();
  const Router router(t);
  ASSERT_EQ(router.GpuPathClass(0, 1), PathClass::kPix);
  ASSERT_EQ(router.GpuPathClass(0, 2), PathClass::kPhb);
  const PeerAccess under_switch = PeerAccessOf(router, 0, 1, DriverP2pMode::kDriverDefault);
  EXPECT_EQ(under_switch.reads, PeerPath::kDirect);
  EXPECT_EQ(under_switch.writes, PeerPath::kDirect);
  const PeerAccess at_cpu = PeerAccessOf(router, 0, 2, DriverP2pMode::kDriverDefault);
  EXPECT_EQ(at_cpu.reads, PeerPath::kStagedThroughHost);
  EXPECT_EQ(at_cpu.writes, PeerPath::kDirect);
}

TEST(PeerAccess, Bar1ForcedIsDirectAndNoP2pIsNoneOnEveryPciePair) {
  const Topology t = SwitchAndRootPort();
  const Router router(t);
  for (int b : {1, 2}) {
    const PeerAccess bar1 = PeerAccessOf(router, 0, b, DriverP2pMode::kBar1Forced);
    EXPECT_EQ(bar1.reads, PeerPath::kDirect);
    EXPECT_EQ(bar1.writes, PeerPath::kDirect);
    const PeerAccess none = PeerAccessOf(router, 0, b, DriverP2pMode::kNoPcieP2p);
    EXPECT_EQ(none.reads, PeerPath::kNone);
    EXPECT_EQ(none.writes, PeerPath::kNone);
  }
}

TEST(PeerAccess, NvLinkPairsIgnoreTheDriverMode) {
  const Topology t = testing::RingOfGpus(3, 100, 100);
  const Router router(t);
  for (DriverP2pMode m : {DriverP2pMode::kDriverDefault, DriverP2pMode::kBar1Forced, DriverP2pMode::kNoPcieP2p}) {
    const PeerAccess a = PeerAccessOf(router, 0, 1, m);
    EXPECT_EQ(a.reads, PeerPath::kDirect) << DriverP2pModeName(m);
    EXPECT_EQ(a.writes, PeerPath::kDirect) << DriverP2pModeName(m);
  }
}

TEST(PeerAccess, Bar1NeedsHopperOrLater) {
  EXPECT_TRUE(Bar1P2pSupported("sm90"));
  EXPECT_TRUE(Bar1P2pSupported("sm100"));
  EXPECT_TRUE(Bar1P2pSupported("sm120"));
  EXPECT_FALSE(Bar1P2pSupported("sm89"));  // Ada: the driver's BAR1 check is a stub returning false
  EXPECT_FALSE(Bar1P2pSupported("sm80"));
  EXPECT_FALSE(Bar1P2pSupported("gfx942"));
  EXPECT_FALSE(Bar1P2pSupported(""));
}

TEST(PeerAccess, ParseNamesTheAllowedValues) {
  EXPECT_EQ(*ParseDriverP2pMode("BAR1"), DriverP2pMode::kBar1Forced);
  EXPECT_EQ(*ParseDriverP2pMode("default"), DriverP2pMode::kDriverDefault);
  EXPECT_EQ(*ParseDriverP2pMode("none"), DriverP2pMode::kNoPcieP2p);
  const auto bad = ParseDriverP2pMode("mailbox");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("allowed values are default"), std::string::npos);
}

}  // namespace
}  // namespace specsim::net
