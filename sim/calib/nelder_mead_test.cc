#include "sim/calib/nelder_mead.h"

#include <gtest/gtest.h>

#include <cmath>

namespace specsim::calib {
namespace {

TEST(NelderMead, FindsTheMinimumOfRosenbrock) {
  // f(x, y) = (1 - x)^2 + 100 (y - x^2)^2: minimum 0 at (1, 1), a curved valley.
  auto f = [](const std::vector<double>& x) {
    return (1 - x[0]) * (1 - x[0]) + 100 * (x[1] - x[0] * x[0]) * (x[1] - x[0] * x[0]);
  };
  const NelderMeadResult r = MinimizeNelderMead(f, {-1.2, 1.0}, {0.1, 0.1}, 1e-16, 20000);
  EXPECT_NEAR(r.x[0], 1.0, 1e-3);
  EXPECT_NEAR(r.x[1], 1.0, 1e-3);
  EXPECT_LT(r.value, 1e-8);
}

TEST(NelderMead, FollowsAMaxOfTwoLines) {
  // The kind of objective attention's fit has: y = max(a x, b) sampled, fitted in (a, b). A term
  // that binds nowhere at the start is flat (no move in it can help), which is why FitAttention
  // restarts from several starts: here b starts where it binds for some points.
  std::vector<std::pair<double, double>> pts;
  for (double x = 1; x <= 10; x += 1) pts.push_back({x, std::max(3.0 * x, 12.0)});
  auto f = [&](const std::vector<double>& p) {
    double s = 0;
    for (auto [x, y] : pts) s += std::pow(std::max(p[0] * x, p[1]) - y, 2);
    return s;
  };
  const NelderMeadResult r = MinimizeNelderMead(f, {2.0, 15.0}, {0.5, 0.5});
  EXPECT_NEAR(r.x[0], 3.0, 1e-4);
  EXPECT_NEAR(r.x[1], 12.0, 1e-3);
}

TEST(NelderMead, IsDeterministicAndStopsAtTheBudget) {
  auto f = [](const std::vector<double>& x) { return x[0] * x[0] + x[1] * x[1] + x[2] * x[2]; };
  const NelderMeadResult a = MinimizeNelderMead(f, {3, -2, 1}, {1, 1, 1}, 0, 50);
  const NelderMeadResult b = MinimizeNelderMead(f, {3, -2, 1}, {1, 1, 1}, 0, 50);
  EXPECT_EQ(a.x, b.x);
  EXPECT_LE(a.evaluations, 50 + 3);  // a shrink may finish its n evaluations past the budget
  EXPECT_LT(a.value, f({3, -2, 1}));
}

}  // namespace
}  // namespace specsim::calib
