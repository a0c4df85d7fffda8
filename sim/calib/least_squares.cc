#include "sim/calib/least_squares.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>

#include "sim/core/check.h"

namespace specsim::calib {

void LinearProblem::AddRow(std::vector<double> coefficients, double rhs_value, double weight) {
  SPECSIM_CHECK_EQ(coefficients.size(), names.size());
  rows.push_back(std::move(coefficients));
  rhs.push_back(rhs_value);
  weights.push_back(weight);
}

namespace {

// Which unknowns any row touches (has_items) and how many rows touch each (points).
void CountRowsPerUnknown(const LinearProblem& p, LinearSolution* s) {
  const int n = static_cast<int>(p.names.size());
  for (const std::vector<double>& row : p.rows)
    for (int j = 0; j < n; ++j)
      if (row[j] != 0) {
        s->has_items[j] = true;
        ++s->points[j];
      }
}

// The weighted system in the free unknowns (columns `cols`), the fixed ones moved to the right-hand
// side at their values `x`; columns scaled to unit norm (`scale`, 0 for an all-zero column).
struct ScaledSystem {
  std::vector<int> cols;
  Eigen::MatrixXd a;
  Eigen::VectorXd b;
  Eigen::VectorXd scale;
};

ScaledSystem ScaledSystemOf(const LinearProblem& p, const std::vector<bool>& free, const std::vector<double>& x) {
  const int n = static_cast<int>(p.names.size());
  const int m = static_cast<int>(p.rows.size());
  ScaledSystem sys;
  for (int j = 0; j < n; ++j)
    if (free[j]) sys.cols.push_back(j);
  const std::vector<int>& cols = sys.cols;
  sys.a.resize(m, cols.size());
  sys.b.resize(m);
  for (int i = 0; i < m; ++i) {
    double fixed = 0;
    for (int j = 0; j < n; ++j)
      if (!free[j]) fixed += p.rows[i][j] * x[j];
    sys.b(i) = (p.rhs[i] - fixed) * p.weights[i];
    for (size_t c = 0; c < cols.size(); ++c) sys.a(i, c) = p.rows[i][cols[c]] * p.weights[i];
  }
  sys.scale.resize(cols.size());
  for (size_t c = 0; c < cols.size(); ++c) {
    sys.scale(c) = sys.a.col(c).norm();
    if (sys.scale(c) > 0) sys.a.col(c) /= sys.scale(c);
  }
  return sys;
}

// The unknowns of one null vector (column k of V) that the solve gives up: with a give-up order,
// only its first unknown in the null vector (the rest are re-solved); else every unknown weighing
// more than 0.05 in it.
std::vector<int> GivenUpInNullVector(const Eigen::MatrixXd& v, int k, const std::vector<int>& cols,
                                     const std::vector<int>& give_up_order) {
  std::vector<int> in_null;
  for (size_t c = 0; c < cols.size(); ++c)
    if (std::abs(v(c, k)) > 0.05) in_null.push_back(cols[c]);
  for (int j : give_up_order)
    if (std::find(in_null.begin(), in_null.end(), j) != in_null.end()) return {j};
  return in_null;
}

// The unknowns the items do not separate: those given up in every null vector (singular value at
// most 1e-9 of the largest), sorted, without repeats.
std::vector<int> UndeterminedUnknowns(const Eigen::JacobiSVD<Eigen::MatrixXd>& svd, const std::vector<int>& cols,
                                      const std::vector<int>& give_up_order) {
  const Eigen::VectorXd& sv = svd.singularValues();
  const double tol = (sv.size() > 0 ? sv(0) : 0) * 1e-9;
  std::vector<int> undetermined;
  for (int k = 0; k < static_cast<int>(cols.size()); ++k) {
    const bool null = k >= sv.size() || sv(k) <= tol;
    if (!null) continue;
    const std::vector<int> given_up = GivenUpInNullVector(svd.matrixV(), k, cols, give_up_order);
    undetermined.insert(undetermined.end(), given_up.begin(), given_up.end());
  }
  std::sort(undetermined.begin(), undetermined.end());
  undetermined.erase(std::unique(undetermined.begin(), undetermined.end()), undetermined.end());
  return undetermined;
}

Status UndeterminedError(const LinearProblem& p, const std::vector<int>& undetermined, const std::string& what) {
  std::string names;
  for (int j : undetermined) names += (names.empty() ? "" : ", ") + p.names[j];
  return InvalidArgumentError(what + ": cannot determine " + names +
                              ": the trace's items do not separate them (measure more sizes / shapes)");
}

// The rms weighted residual over the rows touching each unknown (0 for an unknown no row touches).
std::vector<double> ResidualRmsPerUnknown(const LinearProblem& p, const std::vector<double>& x,
                                          const std::vector<int>& points) {
  const int n = static_cast<int>(p.names.size());
  std::vector<double> sum(n, 0);
  for (size_t i = 0; i < p.rows.size(); ++i) {
    double pred = 0;
    for (int j = 0; j < n; ++j) pred += p.rows[i][j] * x[j];
    const double r = (pred - p.rhs[i]) * p.weights[i];
    for (int j = 0; j < n; ++j)
      if (p.rows[i][j] != 0) sum[j] += r * r;
  }
  std::vector<double> rms(n, 0);
  for (int j = 0; j < n; ++j) rms[j] = points[j] > 0 ? std::sqrt(sum[j] / points[j]) : 0;
  return rms;
}

}  // namespace

StatusOr<LinearSolution> SolveLeastSquares(const LinearProblem& p, bool fix_undetermined, const std::string& what) {
  const int n = static_cast<int>(p.names.size());
  SPECSIM_CHECK_EQ(p.defaults.size(), p.names.size());
  LinearSolution s;
  s.x = p.defaults;
  s.determined.assign(n, true);
  s.has_items.assign(n, false);
  s.points.assign(n, 0);
  CountRowsPerUnknown(p, &s);
  std::vector<bool> free(n);
  for (int j = 0; j < n; ++j) {
    free[j] = s.has_items[j];
    if (!free[j]) s.determined[j] = false;
  }
  // Solve, fixing undetermined unknowns one round at a time.
  for (int round = 0; round <= n; ++round) {
    ScaledSystem sys = ScaledSystemOf(p, free, s.x);
    if (sys.cols.empty()) break;
    // Non-finite coefficients (a measurement of 1e-307 us weighs 1e307) have no least-squares
    // solution: Eigen's SVD would report InvalidInput and leave its state undefined.
    if (!sys.a.allFinite() || !sys.b.allFinite())
      return InvalidArgumentError(what +
                                  ": the items' values overflow the fit (a measured time or size out of any "
                                  "physical range; check the trace's items)");
    Eigen::JacobiSVD<Eigen::MatrixXd> svd(sys.a, Eigen::ComputeThinU | Eigen::ComputeFullV);
    if (svd.info() != Eigen::Success) return InvalidArgumentError(what + ": the least-squares solve failed");
    const std::vector<int> undetermined = UndeterminedUnknowns(svd, sys.cols, p.give_up_order);
    if (!undetermined.empty()) {
      if (!fix_undetermined) return UndeterminedError(p, undetermined, what);
      for (int j : undetermined) {
        free[j] = false;
        s.determined[j] = false;
      }
      continue;
    }
    svd.setThreshold(1e-12);
    const Eigen::VectorXd y = svd.solve(sys.b);
    for (size_t c = 0; c < sys.cols.size(); ++c)
      s.x[sys.cols[c]] = sys.scale(c) > 0 ? y(c) / sys.scale(c) : p.defaults[sys.cols[c]];
    break;
  }
  s.residual_rms = ResidualRmsPerUnknown(p, s.x, s.points);
  return s;
}

}  // namespace specsim::calib
