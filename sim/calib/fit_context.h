// Internal to the fit (fit.h): the state every fit group reads and writes, and the two solvers the
// groups build on. fit.cc runs the groups (fitters.h) in order on one FitContext.
//
//   FitTransferClass  t = L + B * (1/BW) by weighted linear least squares (weights 1/measured:
//                     relative residuals), for host copies, zero-copy writes and P2P classes
//   FitBySimulation   damped Gauss-Newton through the predictor (predictors.h), for the laws only
//                     the simulator evaluates (collectives, host-paced loops)
// Not part of sim/calib's interface: only fit.cc, the fit_*.cc files and their tests include it.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "sim/calib/fit.h"
#include "sim/calib/least_squares.h"
#include "sim/calib/params.h"
#include "sim/compute/kernel.h"
#include "sim/core/status.h"
#include "sim/net/topology.h"
#include "specsim/trace.pb.h"

namespace specsim::calib {

// An item's measured median, ns.
double MeasuredNs(const trace::Item& item);

// (bytes, measured ns) rows of one transfer class.
using SizeTimeRows = std::vector<std::pair<double, double>>;

// One unknown of a simulation-backed fit (FitContext::FitBySimulation).
struct SimUnknown {
  std::string name, unit;
  double value = 0;  // start, then the fit
  double step = 1;   // finite-difference step
  double lo = 0, hi = 1e12;
  int give_up = -1;  // >= 0: kept at its start, in this order, when the items cannot separate it
};

// Writes the fitted unknowns into a parameter set.
using ApplyUnknowns = std::function<void(const std::vector<double>&, CalibParams*)>;

struct FitContext {
  const trace::Trace& trace;
  std::vector<const trace::Item*> items;  // the items fitted (a group may narrow them for a while)
  // The box as given, then (after the transfer fits) with the fitted fabric applied: what the
  // simulation-backed fits run on (the fabric's kernel-read cap, copy engines, host-link rate).
  net::Topology topology;
  FitOptions options;
  FitResult result;  // the parameters so far, and the fitted / not-fitted lists

  // The items of `kind`, in trace order.
  std::vector<const trace::Item*> ItemsOfKind(trace::Kind kind) const;

  // The single-kernel items of `kind` whose kernel is known (predictors.h KernelOfItem), each with
  // its kernel's device time: the measured median, less the timed call's gap unless the item timed
  // the kernel alone (KernelTimeOnly); items whose device time is not above 0 are left out.
  struct MeasuredKernel {
    compute::Kernel kernel;
    double device_ns = 0;
  };
  std::vector<MeasuredKernel> KernelsOfKind(trace::Kind kind) const;

  // Applies the fabric fitted so far to `topology` (from the box as given).
  void ApplyFittedFabric(const net::Topology& given);

  // Lists unknown `col` of `s` as fitted (`value`, with its residual and points), or as not
  // fitted when the items could not separate it; nothing when no item touched it.
  void Record(const std::string& name, const std::string& unit, double value, const LinearSolution& s, int col);

  // t = L + B * (1/BW) over `rows`; updates `c` where determined. No rows: listed as not fitted.
  // A bandwidth that is not positive is an error (calibrate) or keeps the default (compare).
  Status FitTransferClass(const std::string& name, const SizeTimeRows& rows, TransferClass* c);

  // The host copy class of a direction and host memory (the parameters so far).
  const TransferClass& HostClass(trace::Direction d, trace::HostMemory m) const;

  // Damped Gauss-Newton: linearises every item's predicted median in the unknowns by finite
  // differences around the current values, solves the weighted (1/measured) least squares within
  // [lo, hi] (SolveWithinBounds), moves there and repeats until the largest relative change is
  // below 1e-3 (at most 12 rounds). An unknown that no item's prediction moves keeps its start and is listed in
  // not_fitted; so does one the items cannot separate from the others (of a set the items cannot
  // separate, only the first in `give_up` order when the unknowns give one). `apply` writes the
  // unknowns into a parameter set.
  Status FitBySimulation(const std::string& group, const std::vector<const trace::Item*>& fit_items,
                         std::vector<SimUnknown>& unknowns, const ApplyUnknowns& apply);
};

// One Gauss-Newton round's linear problem solved with every unknown within its [lo, hi], an
// active-set pass as in non-negative least squares: while the solution takes a determined unknown
// out of its range, the one furthest out (relative to its step) is held at the bound it crossed
// and the rest are solved again. `held` marks those unknowns; they are reported determined.
StatusOr<LinearSolution> SolveWithinBounds(LinearProblem p, const std::vector<SimUnknown>& unknowns,
                                           const std::string& group, std::vector<bool>* held);

}  // namespace specsim::calib
