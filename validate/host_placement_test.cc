// host_placement.h: the parsers and the far-node choice on hand-written inputs, and binding on this
// machine (whatever its NUMA layout: a refused mbind must come back as a status naming the errno).
#include "validate/host_placement.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

namespace specsim::validate {
namespace {

TEST(HostPlacement, NodeListsParseLikeCpuLists) {
  auto two = ParseNodeList("0-1\n");
  ASSERT_TRUE(two.ok()) << two.status().ToString();
  EXPECT_EQ(*two, (std::vector<int>{0, 1}));
  auto gaps = ParseNodeList("0,2-3");
  ASSERT_TRUE(gaps.ok());
  EXPECT_EQ(*gaps, (std::vector<int>{0, 2, 3}));
  auto junk = ParseNodeList("node0");
  ASSERT_FALSE(junk.ok());
  EXPECT_NE(junk.status().message().find("node0"), std::string::npos);
}

TEST(HostPlacement, IommuParametersAreKeptInOrderAndNothingElse) {
  EXPECT_EQ(IommuKernelParameters("BOOT_IMAGE=/vmlinuz root=/dev/sda1 intel_iommu=on iommu=pt quiet"),
            "intel_iommu=on iommu=pt");
  EXPECT_EQ(IommuKernelParameters("amd_iommu=off iommu.passthrough=1 iommu.strict=0"),
            "amd_iommu=off iommu.passthrough=1 iommu.strict=0");
  // Words that only contain "iommu" are not parameters of it.
  EXPECT_EQ(IommuKernelParameters("root=/dev/iommu_disk noiommu_thing=1"), "");
  EXPECT_EQ(IommuKernelParameters(""), "");
}

TEST(HostPlacement, FarNodeIsAnotherNodeThanTheGpus) {
  EXPECT_EQ(FarNumaNode(0, {0, 1}), 1);
  EXPECT_EQ(FarNumaNode(1, {0, 1}), 0);
  EXPECT_EQ(FarNumaNode(2, {0, 2, 3}), 0);
  EXPECT_EQ(FarNumaNode(-1, {0, 1}), 1);  // unknown GPU node: the first node plays near
  EXPECT_EQ(FarNumaNode(0, {0}), -1);     // one node: nothing is far
  EXPECT_EQ(FarNumaNode(-1, {}), -1);
}

TEST(HostPlacement, BindingToAnOnlineNodeLandsThereOrSaysWhyNot) {
  const std::vector<int> nodes = ReadOnlineNumaNodes();
  if (nodes.empty()) GTEST_SKIP() << "no NUMA nodes in sysfs";
  const size_t bytes = 4 * static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  const int node = nodes.back();
  Status st = BindToNumaNode(p, bytes, node);
  std::memset(p, 1, bytes);
  const int found = NumaNodeOfAddress(p);
  if (st.ok()) {
    // Bound strictly: the kernel must report the node it was bound to (or nothing at all).
    EXPECT_TRUE(found == node || found == -1) << "bound to " << node << ", page on " << found;
  } else {
    EXPECT_NE(st.message().find("errno"), std::string::npos) << st.message();
  }
  munmap(p, bytes);
}

TEST(HostPlacement, AnOfflineNodeIsRefused) {
  EXPECT_FALSE(BindToNumaNode(nullptr, 4096, -1).ok());
  EXPECT_FALSE(BindToNumaNode(nullptr, 4096, 5000).ok());
}

}  // namespace
}  // namespace specsim::validate
