#include "sim/calib/fit_context.h"

#include <algorithm>
#include <cmath>

#include "sim/calib/predictors.h"

namespace specsim::calib {
namespace {

// What the rounds of FitBySimulation learned of each unknown.
struct UnknownTally {
  std::vector<bool> ever_determined, ever_had_items;
  std::vector<int> points;
};

// The unknowns with a give-up order, by that order (LinearProblem.give_up_order).
std::vector<int> GiveUpOrder(const std::vector<SimUnknown>& unknowns) {
  std::vector<std::pair<int, int>> give_up;
  for (int j = 0; j < static_cast<int>(unknowns.size()); ++j)
    if (unknowns[j].give_up >= 0) give_up.push_back({unknowns[j].give_up, j});
  std::sort(give_up.begin(), give_up.end());
  std::vector<int> order;
  for (const auto& [rank, j] : give_up) order.push_back(j);
  return order;
}

// One Gauss-Newton round's problem: each simulated item's predicted median (us) linearised around
// `theta` by a forward (or, at the upper bound, backward) difference per unknown:
//   measured - predicted(theta) + sum_j d_j theta_j = sum_j d_j x_j,   weight 1 / measured.
LinearProblem LinearisedProblem(const FitContext& c, const std::vector<const trace::Item*>& fit_items,
                                const std::vector<SimUnknown>& unknowns, const std::vector<double>& theta,
                                const ApplyUnknowns& apply) {
  const int k = static_cast<int>(unknowns.size());
  auto params_at = [&](const std::vector<double>& t) {
    CalibParams p = c.result.params;
    apply(t, &p);
    return p;
  };
  LinearProblem p;
  for (const SimUnknown& u : unknowns) p.names.push_back(u.name);
  p.defaults = theta;
  p.give_up_order = GiveUpOrder(unknowns);
  const Predictor at(c.trace, c.topology, params_at(theta));
  std::vector<Predictor> bumped;
  std::vector<double> h(k);
  for (int j = 0; j < k; ++j) {
    std::vector<double> t = theta;
    h[j] = t[j] + unknowns[j].step <= unknowns[j].hi ? unknowns[j].step : -unknowns[j].step;
    t[j] += h[j];
    bumped.emplace_back(c.trace, c.topology, params_at(t));
  }
  for (const trace::Item* it : fit_items) {
    const Prediction base = at.Predict(*it);
    if (!base.simulated) continue;
    std::vector<double> row(k);
    double rhs = MeasuredNs(*it) * 1e-3 - base.predicted_us;
    for (int j = 0; j < k; ++j) {
      const Prediction b = bumped[j].Predict(*it);
      row[j] = b.simulated ? (b.predicted_us - base.predicted_us) / h[j] : 0;
      // A floor or cap that does not bind gives (almost) exactly 0: the item says nothing of it.
      if (std::abs(row[j] * h[j]) < 1e-6 * std::max(1e-3, base.predicted_us)) row[j] = 0;
      rhs += row[j] * theta[j];
    }
    p.AddRow(row, rhs, 1 / (MeasuredNs(*it) * 1e-3));
  }
  return p;
}

// Moves `theta` to the determined unknowns of `s`, damped: within [lo, hi], and a positive value
// by at most 4x or 1/4, except that an unknown held at a bound goes to it at once.
double DampedStep(const std::vector<SimUnknown>& unknowns, const LinearSolution& s, const std::vector<bool>& held,
                  std::vector<double>& theta) {
  double change = 0;
  for (size_t j = 0; j < theta.size(); ++j) {
    if (!s.determined[j]) continue;
    double next = std::clamp(s.x[j], unknowns[j].lo, unknowns[j].hi);
    if (theta[j] > 0 && !held[j]) next = std::clamp(next, theta[j] / 4, theta[j] * 4);
    change = std::max(change, std::abs(next - theta[j]) / std::max(std::abs(theta[j]), 1e-9));
    theta[j] = next;
  }
  return change;
}

// An unknown the items never determined keeps its start; one they moved is reported with the
// residual of the last round's rows (the group's rms relative residual).
void RecordSimulationFit(FitContext& c, const LinearSolution& last, const UnknownTally& tally,
                         std::vector<SimUnknown>& unknowns, std::vector<double>& theta) {
  double group_residual = 0;
  for (size_t j = 0; j < unknowns.size(); ++j) group_residual = std::max(group_residual, last.residual_rms[j]);
  for (size_t j = 0; j < unknowns.size(); ++j) {
    if (!tally.ever_determined[j]) {
      theta[j] = unknowns[j].value;
      c.result.not_fitted.push_back(
          unknowns[j].name +
          (tally.ever_had_items[j] ? ": not separable by the items used" : ": no item depends on it") + " (kept at " +
          std::to_string(theta[j]) + " " + unknowns[j].unit + ": the default, or an earlier pass's fit)");
    } else {
      c.result.fitted.push_back({unknowns[j].name, unknowns[j].unit, theta[j], group_residual, tally.points[j]});
    }
    unknowns[j].value = theta[j];
  }
}

}  // namespace

// The linearised problem solved with every unknown within its [lo, hi] (an active-set pass, as in
// non-negative least squares): while the solution takes a determined unknown out of its range, the
// one furthest out (relative to its finite-difference step) is held at the bound it crossed, its
// column moved to the right-hand side, and the rest solved again. A held unknown is reported
// determined (the bound is its fit) with the rows that touched it. Invariant: the free unknowns are
// the least-squares solution given the held ones' bounds. Clamping the unconstrained solution
// instead would leave them compensating for the held one's impossible value (a negative graph
// launch cost pushes the issue cost up), and damping would approach the bound only geometrically,
// a round at a time (fit_context_test pins the re-solve).
StatusOr<LinearSolution> SolveWithinBounds(LinearProblem p, const std::vector<SimUnknown>& unknowns,
                                           const std::string& group, std::vector<bool>* held) {
  const int k = static_cast<int>(unknowns.size());
  held->assign(k, false);
  ASSIGN_OR_RETURN(LinearSolution s, SolveLeastSquares(p, /*fix_undetermined=*/true, group));
  const LinearSolution unconstrained = s;
  for (int pass = 0; pass < k; ++pass) {
    int worst = -1;
    double worst_out = 0;
    for (int j = 0; j < k; ++j) {
      if (!s.determined[j] || (*held)[j]) continue;
      const double out = std::max(unknowns[j].lo - s.x[j], s.x[j] - unknowns[j].hi) / unknowns[j].step;
      if (out > worst_out) {
        worst = j;
        worst_out = out;
      }
    }
    if (worst < 0) break;
    const double bound = s.x[worst] < unknowns[worst].lo ? unknowns[worst].lo : unknowns[worst].hi;
    for (size_t i = 0; i < p.rows.size(); ++i) {
      p.rhs[i] -= p.rows[i][worst] * bound;
      p.rows[i][worst] = 0;
    }
    p.defaults[worst] = bound;
    (*held)[worst] = true;
    ASSIGN_OR_RETURN(s, SolveLeastSquares(p, /*fix_undetermined=*/true, group));
  }
  // A held unknown's residual: the constrained solution's, over the rows of the unknowns still free.
  double constrained_residual = 0;
  for (int j = 0; j < k; ++j)
    if (s.determined[j] && !(*held)[j]) constrained_residual = std::max(constrained_residual, s.residual_rms[j]);
  for (int j = 0; j < k; ++j) {
    if (!(*held)[j]) continue;
    s.determined[j] = true;
    s.has_items[j] = unconstrained.has_items[j];
    s.points[j] = unconstrained.points[j];
    s.residual_rms[j] = constrained_residual > 0 ? constrained_residual : unconstrained.residual_rms[j];
  }
  return s;
}

double MeasuredNs(const trace::Item& item) { return item.stats().median_us() * 1e3; }

std::vector<const trace::Item*> FitContext::ItemsOfKind(trace::Kind kind) const {
  std::vector<const trace::Item*> of_kind;
  for (const trace::Item* it : items)
    if (it->kind() == kind) of_kind.push_back(it);
  return of_kind;
}

std::vector<FitContext::MeasuredKernel> FitContext::KernelsOfKind(trace::Kind kind) const {
  const net::GpuSpec& gpu = topology.gpu_spec(0);
  const compute::KernelCostModel gap_cost(gpu, result.params.compute);
  std::vector<MeasuredKernel> out;
  for (const trace::Item* it : ItemsOfKind(kind)) {
    const ItemKernel ik = KernelOfItem(*it);
    if (!ik.ok) continue;
    const double ns =
        KernelTimeOnly(*it) ? MeasuredNs(*it) : MeasuredNs(*it) - TimedCallGapNs(gap_cost, result.params.bench);
    if (ns > 0) out.push_back({ik.kernel, ns});
  }
  return out;
}

void FitContext::ApplyFittedFabric(const net::Topology& given) {
  topology = given;
  const config::Calibration c = CalibrationFromFit(result, given, "");
  ApplyFabricCalibration(c.fabric(), &topology);
}

void FitContext::Record(const std::string& name, const std::string& unit, double value, const LinearSolution& s,
                        int col) {
  if (!s.determined[col]) {
    if (s.has_items[col]) result.not_fitted.push_back(name + ": not separable by the items used (default kept)");
    return;
  }
  result.fitted.push_back({name, unit, value, s.residual_rms[col], s.points[col]});
}

Status FitContext::FitTransferClass(const std::string& name, const SizeTimeRows& rows, TransferClass* c) {
  if (rows.empty()) {
    result.not_fitted.push_back(name + ": no items (default kept)");
    return OkStatus();
  }
  LinearProblem p;
  p.names = {name + ".latency_ns", name + ".inverse_bandwidth"};
  p.defaults = {c->latency_ns, 1 / c->bandwidth_gbps};
  for (auto [bytes, t] : rows) p.AddRow({1, bytes}, t, 1 / t);
  ASSIGN_OR_RETURN(LinearSolution s, SolveLeastSquares(p, options.fix_undetermined, name));
  if (s.x[1] <= 0) {
    if (!options.fix_undetermined)
      return InvalidArgumentError(name + ": the fitted bandwidth is not positive (time does not grow with size)");
    result.not_fitted.push_back(name + ": fitted bandwidth not positive (default kept)");
    return OkStatus();
  }
  c->latency_ns = s.x[0];
  c->bandwidth_gbps = 1 / s.x[1];
  Record(name + ".latency_ns", "ns", c->latency_ns, s, 0);
  Record(name + ".bandwidth_gbps", "GB/s", c->bandwidth_gbps, s, 1);
  return OkStatus();
}

const TransferClass& FitContext::HostClass(trace::Direction d, trace::HostMemory m) const {
  const FabricParams& f = result.params.fabric;
  const bool pageable = m == trace::HOST_PAGEABLE;
  if (d == trace::DIRECTION_H2D) return pageable ? f.h2d_pageable : f.h2d_pinned;
  return pageable ? f.d2h_pageable : f.d2h_pinned;
}

Status FitContext::FitBySimulation(const std::string& group, const std::vector<const trace::Item*>& fit_items,
                                   std::vector<SimUnknown>& unknowns, const ApplyUnknowns& apply) {
  const int k = static_cast<int>(unknowns.size());
  std::vector<double> theta(k);
  for (int j = 0; j < k; ++j) theta[j] = unknowns[j].value;
  LinearSolution s;
  UnknownTally tally{std::vector<bool>(k, false), std::vector<bool>(k, false), std::vector<int>(k, 0)};
  for (int round = 0; round < 12; ++round) {
    const LinearProblem p = LinearisedProblem(*this, fit_items, unknowns, theta, apply);
    if (p.rows.empty()) {
      result.not_fitted.push_back(group + ": no item could be simulated (defaults kept)");
      return OkStatus();
    }
    std::vector<bool> held;
    ASSIGN_OR_RETURN(s, SolveWithinBounds(p, unknowns, group, &held));
    for (int j = 0; j < k; ++j) {
      if (s.determined[j]) {
        tally.ever_determined[j] = true;
        tally.points[j] = std::max(tally.points[j], s.points[j]);
      }
      tally.ever_had_items[j] = tally.ever_had_items[j] || s.has_items[j];
    }
    if (DampedStep(unknowns, s, held, theta) < 1e-3) break;
  }
  RecordSimulationFit(*this, s, tally, unknowns, theta);
  apply(theta, &result.params);
  return OkStatus();
}

}  // namespace specsim::calib
