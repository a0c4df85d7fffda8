#include "sim/tools/sizes.h"

#include <gtest/gtest.h>

namespace specsim::tools {
namespace {

TEST(Sizes, RangeDoublesLikeNcclTests) {
  auto sizes = ParseSizeList("1K:256M");
  ASSERT_TRUE(sizes.ok()) << sizes.status().ToString();
  ASSERT_EQ(sizes->size(), 19u);  // 2^10 .. 2^28
  EXPECT_EQ(sizes->front(), 1024);
  EXPECT_EQ(sizes->back(), 256LL * 1024 * 1024);
}

TEST(Sizes, ListsAndSuffixes) {
  auto sizes = ParseSizeList("64,4K,1.5M,2GB");
  ASSERT_TRUE(sizes.ok());
  EXPECT_EQ(*sizes, (std::vector<int64_t>{64, 4096, 1572864, 2147483648LL}));
}

TEST(Sizes, BadInputNamesTheProblem) {
  EXPECT_NE(ParseSizeList("4Q").status().message().find("K, M or G"), std::string::npos);
  EXPECT_FALSE(ParseSizeList("1M:1K").ok());
  EXPECT_FALSE(ParseSizeList("0").ok());
  EXPECT_FALSE(ParseSizeList("0.5").ok());
  EXPECT_FALSE(ParseSizeList("").ok());
}

TEST(Sizes, FormatRoundTrips) {
  EXPECT_EQ(FormatSize(1024), "1K");
  EXPECT_EQ(FormatSize(256LL << 20), "256M");
  EXPECT_EQ(FormatSize(1000), "1000");
  EXPECT_EQ(FormatSize(3 << 20), "3M");
}

TEST(IndexList, RangesAndErrors) {
  EXPECT_EQ(*ParseIndexList("0,2,4-6"), (std::vector<int>{0, 2, 4, 5, 6}));
  EXPECT_FALSE(ParseIndexList("a").ok());
  EXPECT_FALSE(ParseIndexList("3-1").ok());
  EXPECT_FALSE(ParseIndexList("1,,2").ok());
  // Issue 15, item 5: "0-2147483647" overflowed the loop (4.2 GB, then a misleading message) and
  // "0-1-5" ran as 0-1; a GPU listed twice became two ranks.
  EXPECT_NE(ParseIndexList("0-2147483647").status().message().find("is past 1023"), std::string::npos);
  EXPECT_NE(ParseIndexList("0-1-5").status().message().find("one dash per range"), std::string::npos);
  EXPECT_NE(ParseIndexList("0,1,1").status().message().find("GPU 1 is listed twice"), std::string::npos);
  EXPECT_EQ(ParseIndexList("0-1023")->size(), 1024u);
}

}  // namespace
}  // namespace specsim::tools
