#include "sim/llm/host_costs.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace specsim::llm {
namespace {

HostOpCost Cost(const std::string& cls, int kernels, std::vector<double> q) {
  HostOpCost c;
  c.op_class = cls;
  c.kernels = kernels;
  c.quantiles_us = std::move(q);
  return c;
}

// A class's per-call distribution is its ops', quantile by quantile, the median over the ops:
// kernel ops only those of one kernel (a 7-kernel rotary is several calls' worth of launches).
TEST(HostCosts, CallQuantilesAreTheClassOpsMedianQuantileByQuantile) {
  std::map<std::string, HostOpCost> ops;
  ops["rms_norm/q1"] = Cost("kernel", 1, {10, 12, 30});
  ops["add/q1"] = Cost("kernel", 1, {8, 14, 20});
  ops["argmax/q1"] = Cost("kernel", 1, {9, 13, 90});
  ops["rotary/q1"] = Cost("kernel", 7, {70, 80, 200});
  ops["linear/q1"] = Cost("library", 1, {20, 25, 60});
  EXPECT_EQ(CallQuantiles(ops, "kernel", true), (std::vector<double>{9, 13, 30}));
  EXPECT_EQ(CallQuantiles(ops, "kernel", false), (std::vector<double>{9.5, 13.5, 60}));
  EXPECT_EQ(CallQuantiles(ops, "library", false), (std::vector<double>{20, 25, 60}));
  EXPECT_TRUE(CallQuantiles(ops, "collective", false).empty());
  ops["odd/q1"] = Cost("library", 1, {1, 2});  // another grid: no common shape
  EXPECT_TRUE(CallQuantiles(ops, "library", false).empty());
}

}  // namespace
}  // namespace specsim::llm
