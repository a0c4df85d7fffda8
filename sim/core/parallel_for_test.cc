#include "sim/core/parallel_for.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <sstream>
#include <vector>

#include "sim/core/progress_line.h"

namespace specsim {
namespace {

// Every index runs exactly once, whatever the thread count, and the pool never outnumbers the items.
TEST(ParallelFor, RunsEveryIndexOnce) {
  for (int threads : {0, 1, 3, 64}) {
    std::vector<int> runs(1000, 0);
    ParallelFor(runs.size(), threads, [&](size_t i) { ++runs[i]; });  // each index its own slot
    EXPECT_EQ(std::accumulate(runs.begin(), runs.end(), 0), 1000) << threads;
    EXPECT_EQ(*std::min_element(runs.begin(), runs.end()), 1) << threads;
  }
  int calls = 0;
  ParallelFor(0, 4, [&](size_t) { ++calls; });
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(ParallelThreads(3, 64), 3);
  EXPECT_EQ(ParallelThreads(100, 2), 2);
  EXPECT_EQ(ParallelThreads(0, 2), 1);
}

// The first advance draws at once; the ones within the interval after it do not (an interval no
// run reaches: no clock in the test); Finish draws the final count and ends the line, once.
TEST(ProgressLine, DrawsOncePerIntervalAndFinishesOnce) {
  std::ostringstream out;
  ProgressLine line(
      &out, [](size_t done, double) { return std::to_string(done) + " done"; }, /*min_interval_s=*/1e9);
  line.Advance();
  line.Advance();
  line.Advance(5);
  EXPECT_EQ(out.str(), "\r1 done");
  line.Finish();
  line.Finish();
  EXPECT_EQ(out.str(), "\r1 done\r7 done\n");
  EXPECT_EQ(line.done(), 7u);
  ProgressLine silent(nullptr, [](size_t, double) { return std::string("x"); });
  silent.Advance();
  silent.Finish();
  EXPECT_EQ(silent.done(), 1u);
}

}  // namespace
}  // namespace specsim
