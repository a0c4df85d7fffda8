#include "sim/coll/nccl_transport.h"

#include <gtest/gtest.h>

namespace specsim::coll {
namespace {

using net::Mechanism;
using net::PathClass;

// 8 GPUs, two sockets of 4: PIX within pairs (0,1), (2,3), ...; PHB between pairs of a socket;
// SYS across sockets.
std::vector<std::vector<PathClass>> TwoSocketBox() {
  std::vector<std::vector<PathClass>> m(8, std::vector<PathClass>(8, PathClass::kSys));
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 8; ++j) {
      if (i / 4 == j / 4) m[i][j] = (i / 2 == j / 2) ? PathClass::kPix : PathClass::kPhb;
    }
  }
  return m;
}

TEST(NcclTransportTest, DefaultIsPxbSoPhbAndSysUseShm) {
  NcclTransportInput in;
  in.path_class = TwoSocketBox();
  in.cpu_vendor = net::CpuVendor::kAmd;
  const auto choice = ChooseNcclTransport(in);
  ASSERT_TRUE(choice.ok()) << choice.status().ToString();
  EXPECT_EQ(choice->level, PathClass::kPxb);
  EXPECT_EQ(choice->mechanism[0][1], Mechanism::kKernelWrite);  // PIX
  EXPECT_EQ(choice->mechanism[0][2], Mechanism::kHostStaged);   // PHB > PXB
  EXPECT_EQ(choice->mechanism[0][4], Mechanism::kHostStaged);   // SYS
  // 8 PIX ordered pairs use P2P; 56 - 8 = 48 use SHM.
  EXPECT_EQ(choice->p2p_pairs, 8);
  EXPECT_EQ(choice->shm_pairs, 48);
  EXPECT_NE(choice->reason.find("PXB (NCCL >= 2.23 default)"), std::string::npos) << choice->reason;
  EXPECT_NE(choice->reason.find("16 PHB > PXB, 32 SYS > PXB"), std::string::npos) << choice->reason;
}

TEST(NcclTransportTest, AmdWithTwoGpusKeepsP2p) {
  NcclTransportInput in;
  in.path_class = {{PathClass::kSys, PathClass::kSys}, {PathClass::kSys, PathClass::kSys}};
  in.cpu_vendor = net::CpuVendor::kAmd;
  auto choice = ChooseNcclTransport(in);
  EXPECT_EQ(choice->level, PathClass::kSys);
  EXPECT_EQ(choice->mechanism[0][1], Mechanism::kKernelWrite);
  // An Intel host with the same two GPUs uses SHM.
  in.cpu_vendor = net::CpuVendor::kIntel;
  choice = ChooseNcclTransport(in);
  EXPECT_EQ(choice->mechanism[0][1], Mechanism::kHostStaged);
}

TEST(NcclTransportTest, UserLevelAndDisable) {
  NcclTransportInput in;
  in.path_class = TwoSocketBox();
  in.p2p_level = *ParseP2pLevel("SYS");
  auto choice = ChooseNcclTransport(in);
  EXPECT_EQ(choice->shm_pairs, 0);
  EXPECT_NE(choice->reason.find("NCCL_P2P_LEVEL"), std::string::npos);
  in.p2p_level = PathClass::kPhb;
  choice = ChooseNcclTransport(in);
  EXPECT_EQ(choice->mechanism[0][2], Mechanism::kKernelWrite);
  EXPECT_EQ(choice->mechanism[0][4], Mechanism::kHostStaged);
  in.p2p_disable = true;
  in.path_class[0][1] = in.path_class[1][0] = PathClass::kNvLink;
  choice = ChooseNcclTransport(in);
  EXPECT_EQ(choice->p2p_pairs, 0);  // NCCL_P2P_DISABLE turns NVLink P2P off too
  EXPECT_NE(choice->reason.find("NCCL_P2P_DISABLE=1"), std::string::npos);
}

TEST(NcclTransportTest, NvLinkIsAlwaysP2p) {
  NcclTransportInput in;
  in.path_class = TwoSocketBox();
  in.path_class[0][4] = in.path_class[4][0] = PathClass::kNvLink;
  in.p2p_level = PathClass::kPix;
  const auto choice = ChooseNcclTransport(in);
  EXPECT_EQ(choice->mechanism[0][4], Mechanism::kKernelWrite);
  EXPECT_EQ(choice->mechanism[4][0], Mechanism::kKernelWrite);
}

TEST(NcclTransportTest, ParseErrors) {
  const auto bad = ParseP2pLevel("nvl");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("allowed values are pix, pxb, phb, sys"), std::string::npos);
  EXPECT_EQ(*ParseP2pLevel("Pix"), PathClass::kPix);
  NcclTransportInput in;
  in.path_class = {{PathClass::kPix, PathClass::kPix}, {PathClass::kPix}};
  EXPECT_FALSE(ChooseNcclTransport(in).ok());
}

// Issue 12 item 3: pairs the driver gives no PCIe P2P use SHM whatever NCCL_P2P_LEVEL says, and
// the reason counts them.
TEST(NcclTransportTest, PairsWithoutDriverP2pUseShmAtAnyLevel) {
  NcclTransportInput in;
  in.path_class = TwoSocketBox();
  in.p2p_level = PathClass::kSys;
  in.p2p_possible.assign(8, std::vector<bool>(8, true));
  in.p2p_possible[0][1] = in.p2p_possible[1][0] = false;
  const auto choice = ChooseNcclTransport(in);
  ASSERT_TRUE(choice.ok()) << choice.status().ToString();
  EXPECT_EQ(choice->mechanism[0][1], Mechanism::kHostStaged);
  EXPECT_EQ(choice->mechanism[0][2], Mechanism::kKernelWrite);
  EXPECT_EQ(choice->p2p_pairs, 54);
  EXPECT_EQ(choice->shm_pairs, 2);
  EXPECT_NE(choice->reason.find("2 pairs SHM: the driver gives them no PCIe P2P"), std::string::npos) << choice->reason;
  in.p2p_possible.resize(3);
  EXPECT_FALSE(ChooseNcclTransport(in).ok());
}

}  // namespace
}  // namespace specsim::coll
