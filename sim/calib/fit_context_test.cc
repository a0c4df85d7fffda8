// Tests of fit_context.cc's bounded least squares (SolveWithinBounds), the step every
// simulation-backed fit (FitBySimulation) takes each Gauss-Newton round.
#include "sim/calib/fit_context.h"

#include <gtest/gtest.h>

namespace specsim::calib {
namespace {

// y = x0 + t * x1 measured 12, 11, 10 at t = 0, 1, 2: the unconstrained fit is x0 = 12, x1 = -1.
// With x1 >= 0 the least-squares answer is x1 = 0 and x0 = mean(12, 11, 10) = 11; clamping the
// unconstrained solution instead would leave x0 at 12, where it compensated x1 = -1.
TEST(SolveWithinBounds, AnUnknownPushedBelowItsBoundIsHeldThereAndTheOthersSolvedAgain) {
  LinearProblem p;
  p.names = {"x0", "x1"};
  p.defaults = {1, 1};
  for (int t = 0; t < 3; ++t) p.AddRow({1.0, static_cast<double>(t)}, 12.0 - t, 1.0);
  const std::vector<SimUnknown> unknowns = {{"x0", "us", 1, 0.25, 0, 100}, {"x1", "us", 1, 0.25, 0, 100}};
  auto unconstrained = SolveLeastSquares(p, true, "test");
  ASSERT_TRUE(unconstrained.ok());
  EXPECT_NEAR(unconstrained->x[1], -1.0, 1e-9);
  std::vector<bool> held;
  auto s = SolveWithinBounds(p, unknowns, "test", &held);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_NEAR(s->x[0], 11.0, 1e-9);
  EXPECT_NEAR(s->x[1], 0.0, 1e-12);
  EXPECT_EQ(held, (std::vector<bool>{false, true}));
  EXPECT_TRUE(s->determined[0]);
  EXPECT_TRUE(s->determined[1]);  // the bound is its fit
  EXPECT_EQ(s->points[1], 2);     // the rows that touched it (t = 1, 2)
}

TEST(SolveWithinBounds, AnUpperBoundToo) {
  LinearProblem p;
  p.names = {"x0", "x1"};
  p.defaults = {1, 1};
  for (int t = 0; t < 3; ++t) p.AddRow({1.0, static_cast<double>(t)}, 10.0 + 5.0 * t, 1.0);  // x1 = 5
  const std::vector<SimUnknown> unknowns = {{"x0", "us", 1, 0.25, 0, 100}, {"x1", "us", 1, 0.25, 0, 2}};
  std::vector<bool> held;
  auto s = SolveWithinBounds(p, unknowns, "test", &held);
  ASSERT_TRUE(s.ok());
  EXPECT_NEAR(s->x[1], 2.0, 1e-12);
  // x0 = mean(y - 2 t) = mean(10, 13, 16) = 13.
  EXPECT_NEAR(s->x[0], 13.0, 1e-9);
  EXPECT_EQ(held, (std::vector<bool>{false, true}));
}

TEST(SolveWithinBounds, WithinRangeItIsTheUnconstrainedSolution) {
  LinearProblem p;
  p.names = {"x0", "x1"};
  p.defaults = {1, 1};
  for (int t = 0; t < 3; ++t) p.AddRow({1.0, static_cast<double>(t)}, 10.0 + t, 1.0);
  const std::vector<SimUnknown> unknowns = {{"x0", "us", 1, 0.25, 0, 100}, {"x1", "us", 1, 0.25, 0, 100}};
  std::vector<bool> held;
  auto s = SolveWithinBounds(p, unknowns, "test", &held);
  ASSERT_TRUE(s.ok());
  EXPECT_NEAR(s->x[0], 10.0, 1e-9);
  EXPECT_NEAR(s->x[1], 1.0, 1e-9);
  EXPECT_EQ(held, (std::vector<bool>{false, false}));
}

}  // namespace
}  // namespace specsim::calib
