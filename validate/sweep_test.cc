#include "validate/sweep.h"

#include <gtest/gtest.h>

namespace specsim::validate {
namespace {

TEST(GeometricSizes, IncludesBothEnds) {
  EXPECT_EQ(GeometricSizes(4, 256, 4), (std::vector<int64_t>{4, 16, 64, 256}));
  EXPECT_EQ(GeometricSizes(4, 100, 4), (std::vector<int64_t>{4, 16, 64, 100}));
  EXPECT_EQ(GeometricSizes(8, 8, 2), (std::vector<int64_t>{8}));
  EXPECT_TRUE(GeometricSizes(0, 8, 2).empty());
  EXPECT_TRUE(GeometricSizes(8, 4, 2).empty());
}

TEST(GeometricSizes, NoOverflowNearInt64Max) {
  auto s = GeometricSizes(1, int64_t{1} << 62, 4);
  EXPECT_EQ(s.back(), int64_t{1} << 62);
  EXPECT_EQ(s.size(), 32u);
}

TEST(Sweeps, CopyAndCollectiveRanges) {
  auto c = CopySizes(256LL << 20, false);
  EXPECT_EQ(c.front(), 4);
  EXPECT_EQ(c.back(), 256LL << 20);
  EXPECT_EQ(c.size(), 14u);  // 4^1 .. 4^14
  EXPECT_LT(CopySizes(256LL << 20, true).size(), c.size());
  auto k = CollectiveSizes(256LL << 20, false);
  EXPECT_EQ(k.front(), 1024);
  EXPECT_EQ(k.back(), 256LL << 20);
  EXPECT_EQ(k.size(), 10u);
}

TEST(Sweeps, TokensAndBlocks) {
  EXPECT_EQ(TokenCounts(false), (std::vector<int64_t>{1, 2, 4, 8, 16, 32, 64, 128, 256}));
  EXPECT_EQ(TokenCounts(true).front(), 1);
  EXPECT_EQ(TokenCounts(true).back(), 256);
  auto b = BlockCounts(132, false);
  EXPECT_EQ(b.front(), 1);
  EXPECT_EQ(b[b.size() - 2], 132);
  EXPECT_EQ(b.back(), 264);
}

TEST(Sweeps, IterationsClamp) {
  EXPECT_EQ(IterationsFor(1, 1 << 30, 5, 100), 100);
  EXPECT_EQ(IterationsFor(1 << 30, 1 << 30, 5, 100), 5);
  EXPECT_EQ(IterationsFor(1 << 20, 20 << 20, 5, 100), 20);
  EXPECT_EQ(IterationsFor(0, 1, 5, 100), 100);
}

TEST(Sweeps, SizeLabel) {
  EXPECT_EQ(SizeLabel(4), "4B");
  EXPECT_EQ(SizeLabel(65536), "64KiB");
  EXPECT_EQ(SizeLabel(256LL << 20), "256MiB");
  EXPECT_EQ(SizeLabel(1000), "1000B");
}

}  // namespace
}  // namespace specsim::validate
