// Weighted linear least squares with named unknowns (Eigen), for the fits in fit.h.
//
// Each row says  sum_j a_ij x_j = b_i  for one measured item; rows are weighted by 1 / b_i's
// measured time (the caller passes the weight), so the fit minimises relative residuals, which is
// what `specsim compare` reports. Columns are scaled to unit norm before an SVD solve, so unknowns
// of very different magnitudes (a latency in ns, an inverse bandwidth in ns per byte) are treated
// alike.
//
// Undetermined unknowns: a column no row touches has no items behind it; a set of columns whose
// combination lies in the numerical null space (singular value below 1e-9 of the largest) cannot
// be separated by the items (e.g. copies of one size only: latency and bandwidth trade off). The
// solver reports both; with `fix_undetermined` it keeps their given defaults and solves for the
// rest, otherwise an undetermined unknown that has items is an error. By default every unknown with
// a weight above 0.05 in a null vector is kept at its default; a problem that knows which unknown
// to give up first (e.g. NCCL's per-step latency, which two ranks never separate from the base
// latency) lists it in `give_up_order`: then only the first listed unknown of each null vector is
// kept, and the solve is repeated, so a collinear pair does not take a third, separable unknown
// with it.
#pragma once

#include <string>
#include <vector>

#include "sim/core/status.h"

namespace specsim::calib {

struct LinearProblem {
  std::vector<std::string> names;  // one per unknown
  std::vector<double> defaults;    // used for unknowns that stay fixed
  std::vector<std::vector<double>> rows;
  std::vector<double> rhs;
  std::vector<double> weights;     // per row, > 0
  std::vector<int> give_up_order;  // optional: unknown indices, the first kept at its default first

  // Adds a row; `coefficients` has one entry per unknown.
  void AddRow(std::vector<double> coefficients, double rhs_value, double weight);
};

struct LinearSolution {
  std::vector<double> x;
  std::vector<bool> determined;      // false: kept at the default
  std::vector<bool> has_items;       // false: no row touches the unknown
  std::vector<int> points;           // rows touching each unknown
  std::vector<double> residual_rms;  // rms weighted residual over the rows touching it
};

// InvalidArgument naming the unknowns when an unknown with items is undetermined and
// `fix_undetermined` is false; `what` prefixes the message (e.g. "compute fit").
StatusOr<LinearSolution> SolveLeastSquares(const LinearProblem& problem, bool fix_undetermined,
                                           const std::string& what);

}  // namespace specsim::calib
