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

StatusOr<LinearSolution> SolveLeastSquares(const LinearProblem& p, bool fix_undetermined, const std::string& what) {
  const int n = static_cast<int>(p.names.size());
  const int m = static_cast<int>(p.rows.size());
  SPECSIM_CHECK_EQ(p.defaults.size(), p.names.size());
  LinearSolution s;
  s.x = p.defaults;
  s.determined.assign(n, true);
  s.has_items.assign(n, false);
  s.points.assign(n, 0);
  s.residual_rms.assign(n, 0);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j)
      if (p.rows[i][j] != 0) {
        s.has_items[j] = true;
        ++s.points[j];
      }
  std::vector<bool> free(n);
  for (int j = 0; j < n; ++j) {
    free[j] = s.has_items[j];
    if (!free[j]) s.determined[j] = false;
  }
  // Solve, fixing undetermined unknowns one round at a time.
  for (int round = 0; round <= n; ++round) {
    std::vector<int> cols;
    for (int j = 0; j < n; ++j)
      if (free[j]) cols.push_back(j);
    if (cols.empty()) break;
    Eigen::MatrixXd a(m, cols.size());
    Eigen::VectorXd b(m);
    for (int i = 0; i < m; ++i) {
      double fixed = 0;
      for (int j = 0; j < n; ++j)
        if (!free[j]) fixed += p.rows[i][j] * s.x[j];
      b(i) = (p.rhs[i] - fixed) * p.weights[i];
      for (size_t c = 0; c < cols.size(); ++c) a(i, c) = p.rows[i][cols[c]] * p.weights[i];
    }
    Eigen::VectorXd scale(cols.size());
    for (size_t c = 0; c < cols.size(); ++c) {
      scale(c) = a.col(c).norm();
      if (scale(c) > 0) a.col(c) /= scale(c);
    }
    // Non-finite coefficients (a measurement of 1e-307 us weighs 1e307) have no least-squares
    // solution: Eigen's SVD would report InvalidInput and leave its state undefined.
    if (!a.allFinite() || !b.allFinite())
      return InvalidArgumentError(what +
                                  ": the items' values overflow the fit (a measured time or size out of any "
                                  "physical range; check the trace's items)");
    Eigen::JacobiSVD<Eigen::MatrixXd> svd(a, Eigen::ComputeThinU | Eigen::ComputeFullV);
    if (svd.info() != Eigen::Success) return InvalidArgumentError(what + ": the least-squares solve failed");
    const Eigen::VectorXd& sv = svd.singularValues();
    const double tol = (sv.size() > 0 ? sv(0) : 0) * 1e-9;
    std::vector<int> undetermined;
    for (int k = 0; k < static_cast<int>(cols.size()); ++k) {
      const bool null = k >= sv.size() || sv(k) <= tol;
      if (!null) continue;
      std::vector<int> in_null;
      for (size_t c = 0; c < cols.size(); ++c)
        if (std::abs(svd.matrixV()(c, k)) > 0.05) in_null.push_back(cols[c]);
      // With a give-up order: only its first unknown in this null vector (the rest are re-solved).
      int first = -1;
      for (int j : p.give_up_order)
        if (std::find(in_null.begin(), in_null.end(), j) != in_null.end()) {
          first = j;
          break;
        }
      if (first >= 0)
        undetermined.push_back(first);
      else
        undetermined.insert(undetermined.end(), in_null.begin(), in_null.end());
    }
    if (!undetermined.empty()) {
      std::sort(undetermined.begin(), undetermined.end());
      undetermined.erase(std::unique(undetermined.begin(), undetermined.end()), undetermined.end());
      if (!fix_undetermined) {
        std::string names;
        for (int j : undetermined) names += (names.empty() ? "" : ", ") + p.names[j];
        return InvalidArgumentError(what + ": cannot determine " + names +
                                    ": the trace's items do not separate them (measure more sizes / shapes)");
      }
      for (int j : undetermined) {
        free[j] = false;
        s.determined[j] = false;
      }
      continue;
    }
    svd.setThreshold(1e-12);
    Eigen::VectorXd y = svd.solve(b);
    for (size_t c = 0; c < cols.size(); ++c) s.x[cols[c]] = scale(c) > 0 ? y(c) / scale(c) : p.defaults[cols[c]];
    break;
  }
  // Residuals per unknown.
  std::vector<double> sum(n, 0);
  for (int i = 0; i < m; ++i) {
    double pred = 0;
    for (int j = 0; j < n; ++j) pred += p.rows[i][j] * s.x[j];
    const double r = (pred - p.rhs[i]) * p.weights[i];
    for (int j = 0; j < n; ++j)
      if (p.rows[i][j] != 0) sum[j] += r * r;
  }
  for (int j = 0; j < n; ++j) s.residual_rms[j] = s.points[j] > 0 ? std::sqrt(sum[j] / s.points[j]) : 0;
  return s;
}

}  // namespace specsim::calib
