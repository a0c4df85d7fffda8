#include "sim/core/svg.h"

#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <string>

namespace specsim::svg {
namespace {

// Any number of series gets its own colour: the first thousand are valid "#rrggbb" strings, all
// different; the first eight are the palette the plots have always used.
TEST(Svg, SeriesColoursAreDistinctForAnyNumberOfSeries) {
  const std::regex hex("#[0-9a-f]{6}");
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    const std::string c = SeriesColour(i);
    EXPECT_TRUE(std::regex_match(c, hex)) << i << ": " << c;
    EXPECT_TRUE(seen.insert(c).second) << "series " << i << " repeats " << c;
  }
  EXPECT_EQ(SeriesColour(0), "#1f77b4");
  EXPECT_EQ(SeriesColour(7), "#17becf");
  EXPECT_NE(SeriesColour(8), SeriesColour(0));
}

}  // namespace
}  // namespace specsim::svg
