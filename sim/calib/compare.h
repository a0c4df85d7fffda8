// Predicted against measured, per item and per suite (`specsim compare`).
//
// Error of an item = (predicted - measured) / measured, measured = the item's median time. Per
// suite: n, median, p90 and max of |error| (p90 by linear interpolation between order statistics,
// numpy's default). With a hold-out fraction f the items are split per suite (so every suite keeps
// items on both sides): each suite's item indices are shuffled with a SplitMix64-driven
// Fisher-Yates shuffle seeded by `seed` (identical on every platform), the first round(f * n) are
// held out; parameters are fitted on the rest (fit.h, undetermined groups keep their defaults) and
// errors are reported on the held-out items only.
//
// One split is one draw: which items land on which side moves a suite's held-out median by a few
// points. CompareHoldoutSeeds repeats the split and fit for seeds 1..N and summarises, per suite,
// the median over the seeds of the held-out median |error| (with its min and max over the seeds)
// and the median over the seeds of the held-out p90 |error|; medians over an even number of seeds
// interpolate (Percentile, q = 0.5).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/calib/fit.h"
#include "sim/calib/params.h"
#include "sim/compute/kernel_cost.h"
#include "sim/core/status.h"
#include "sim/net/topology.h"
#include "specsim/trace.pb.h"

namespace specsim::calib {

struct HoldoutSplit {
  std::vector<int> train, test;  // item indices, ascending
};

// REQUIRES: 0 <= fraction < 1.
HoldoutSplit SplitHoldout(const trace::Trace& trace, double fraction, uint64_t seed);

// What a hold-out sets apart: single items, or whole families (an item's name without its last
// path component: "kernels/gemm/llama-3.1-70b/tp2/qkv/m16" is of the family
// "kernels/gemm/llama-3.1-70b/tp2/qkv", one weight matrix over every m), so that no point of a
// held-out family is fitted.
enum class HoldoutUnit { kItem, kFamily };
// The family of an item name (HoldoutUnit::kFamily); the name itself when it has no "/".
std::string HoldoutFamilyOf(const std::string& item_name);
// As SplitHoldout, holding out round(fraction x families) whole families of each suite.
HoldoutSplit SplitHoldoutByFamily(const trace::Trace& trace, double fraction, uint64_t seed);

struct ItemResult {
  int index = -1;
  std::string suite, name;
  bool simulated = false;
  double predicted_us = 0, measured_us = 0;
  double error = 0;    // signed fraction
  std::string reason;  // when !simulated
};

struct SuiteStats {
  std::string suite;
  int n = 0;
  double median_abs_error = 0, p90_abs_error = 0, max_abs_error = 0;
};

struct ComparisonResult {
  std::vector<ItemResult> items;  // the evaluated items (held-out ones with a hold-out)
  // Over simulated items, in suite order pcie, collectives, kernels, decode, pacing (then any other).
  std::vector<SuiteStats> suites;
  FitResult fit;  // what the predictions used (start params when no fit)
  bool fitted = false;
  double holdout = 0;
};

std::vector<SuiteStats> SuiteStatistics(const std::vector<ItemResult>& items);

struct CompareOptions {
  double holdout = 0;  // 0: no fit here, predict every item with `params`
  uint64_t seed = 1;
  HoldoutUnit unit = HoldoutUnit::kItem;
};

// Predicts the items of `trace` on `topology` with `params` (holdout == 0), or fits on the training
// split starting from `params` and predicts the held-out items.
StatusOr<ComparisonResult> Compare(const trace::Trace& trace, const net::Topology& topology, const CalibParams& params,
                                   const CompareOptions& options);

// One suite over the seeds of CompareHoldoutSeeds.
struct SuiteSeedSummary {
  std::string suite;
  int seeds = 0;             // seeds with at least one simulated held-out item of the suite
  int n_min = 0, n_max = 0;  // simulated held-out items per seed (equal unless some can't be simulated)
  double median_abs_error_median = 0, median_abs_error_min = 0, median_abs_error_max = 0;
  double p90_abs_error_median = 0;
  std::vector<double> median_abs_error_per_seed, p90_abs_error_per_seed;  // in seed order
};

struct HoldoutSummary {
  double fraction = 0;
  int seeds = 0;                           // seeds 1..seeds were used
  std::vector<SuiteSeedSummary> suites;    // in the suite order of ComparisonResult::suites
  std::vector<ComparisonResult> per_seed;  // per_seed[s - 1]: the comparison of seed s
};

// Compare with holdout `fraction` for each seed 1..`seeds`, summarised per suite as described at
// the top. InvalidArgument unless 0 < fraction < 1 and seeds >= 1; a failed fit names its seed.
StatusOr<HoldoutSummary> CompareHoldoutSeeds(const trace::Trace& trace, const net::Topology& topology,
                                             const CalibParams& params, double fraction, int seeds,
                                             HoldoutUnit unit = HoldoutUnit::kItem);

// Every item held out in at least one seed, its predicted time the median over those seeds (error
// recomputed from it): the held-out view of a whole trace, for the per-regime and shape tables.
std::vector<ItemResult> PooledHeldOut(const HoldoutSummary& summary);

// Errors by regime of the verify pass, over simulated attention items (kernels suite) and decode
// steps / verify-width points (decode suite): "<suite> q=1", "<suite> q=2..16", "<suite> q>16" by
// query tokens per sequence (speculative cycles: their verify's N), and for attention items with
// fitted costs in `compute` also "kernels bandwidth-bound" / "kernels tile-bound" (the side of
// attention_cost.h's max() that binds under those costs on `topology`'s GPU 0); decode items also
// by capture mode ("decode graph" / "piecewise" / "eager"); pacing items by loop, capture mode and
// balance ("pacing layers graph balanced", "pacing layers eager+host slow rank", "pacing skew
// balanced", ...): the groups the rank-timeline model is judged on.
std::vector<SuiteStats> RegimeStatistics(const trace::Trace& trace, const std::vector<ItemResult>& items,
                                         const compute::ComputeParams& compute, const net::Topology& topology);

// The verify-width shape: items that differ only in query tokens per sequence (attention: model,
// tp, implementation, batch, context; decode: model, tp, capture, batch of the plain steps and
// verify-width points), each point's time over the group's q = 1 time, measured and predicted.
struct ShapePoint {
  int q = 1;
  double measured_ratio = 0, predicted_ratio = 0;
  double error = 0;  // predicted_ratio / measured_ratio - 1
};
struct ShapeGroup {
  std::string name;                // e.g. "kernels/attention/llama-3.1-8b/tp1/flash_mma/b8/ctx4096"
  std::vector<ShapePoint> points;  // ascending q, q = 1 first (ratio 1)
};
// Groups with a simulated q = 1 item and at least one simulated q > 1 item.
std::vector<ShapeGroup> VerifyWidthShapes(const trace::Trace& trace, const std::vector<ItemResult>& items);

}  // namespace specsim::calib
