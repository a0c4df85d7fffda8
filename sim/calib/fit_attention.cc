// Attention kernels per implementation (fitters.h): the geometry of compute/attention_cost.h's
// kernel (AttentionKernelOfName) with its costs fitted by Nelder-Mead on the squared log errors of
//   main  = ramp + max(rounds (block_ns + block_row_latency_ns valid_rows), sm_blocks block_row_ns valid_rows)
//                + max(KV_bytes / (bw e_m), sm_blocks kv_tiles (tile_ns + row_ns rows_per_block),
//                      rounds kv_tiles (tile_latency_ns + row_latency_ns rows_per_block))
//   merge = [splits > 1] combine_ns + combine_waves (combine_block_ns + combine_split_ns splits)
// against each item's measurement less the timed call's gap (predictors.h TimedKernelNs). The model
// is a max() of terms, which a linearisation cannot follow across its kinks; the simplex only
// compares values.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "sim/calib/fitters.h"
#include "sim/calib/nelder_mead.h"
#include "sim/calib/predictors.h"
#include "sim/compute/kernel_cost.h"
#include "sim/compute/profiled_attention.h"

namespace specsim::calib {
namespace {

// The unknowns of an attention implementation's fit, in log space (costs > 0) and logit space
// (the efficiency in (0, 1)).
enum AttentionUnknown {
  kRampA,
  kMemA,
  kTileA,
  kRowA,
  kTileLatA,
  kRowLatA,
  kBlockA,
  kBlockRowA,
  kBlockRowLatA,
  kCombineA,
  kCombineBlockA,
  kCombineSplitA,
  kColsA
};

// Which kernels a row measured: the main kernel alone, the merge pass alone (total - main) or the
// whole call.
enum AttentionPart { kMain, kMerge, kWhole };

struct AttentionRow {
  compute::AttentionCall call;
  double ns;
  AttentionPart part;
};

using Objective = std::function<double(const std::vector<double>&)>;

// The attention items whose call is known, per implementation.
std::map<std::string, std::vector<const trace::Item*>> AttentionItemsByImplementation(const FitContext& c) {
  std::map<std::string, std::vector<const trace::Item*>> by_impl;
  for (const trace::Item* it : c.ItemsOfKind(trace::KIND_ATTENTION)) {
    const ItemKernel ik = KernelOfItem(*it);
    if (ik.ok && ik.kernel.has_attention_call) by_impl[AttentionImplementationOf(it->attention())].push_back(it);
  }
  return by_impl;
}

// A timed call measures its kernels plus the timed call's gap (predictors.h TimedKernelNs): the
// main and whole rows lose it; the merge rows (call - main) hold the merge pass and the gap
// between the two kernels, which the merge pass's fixed cost takes.
std::vector<AttentionRow> AttentionRows(const FitContext& c, const std::vector<const trace::Item*>& its) {
  const compute::KernelCostModel gap_cost(c.topology.gpu_spec(0), c.result.params.compute);
  const double gap_ns = TimedCallGapNs(gap_cost, c.result.params.bench);
  std::vector<AttentionRow> rows;
  for (const trace::Item* it : its) {
    const compute::Kernel k = KernelOfItem(*it).kernel;
    const double ns = MeasuredNs(*it);
    const double main_ns = it->attention().main_kernel_median_us() * 1e3;
    // A profiler's kernel durations are device time: no gap to take off (a profiled merge row is
    // the reduction kernel alone).
    const double gap = KernelTimeOnly(*it) ? 0.0 : gap_ns;
    if (main_ns > 0 && main_ns < ns) {
      rows.push_back({k.attention, std::max(1.0, main_ns - gap), kMain});
      rows.push_back({k.attention, ns - main_ns, kMerge});
    } else {
      rows.push_back({k.attention, std::max(1.0, ns - gap), kWhole});
    }
  }
  return rows;
}

// `impl` with the costs of the unknowns `x`.
compute::AttentionImplementation ImplementationAt(const compute::AttentionImplementation& impl,
                                                  const std::vector<double>& x) {
  compute::AttentionImplementation a = impl;
  a.ramp_ns = std::exp(x[kRampA]);
  a.memory_efficiency = 1 / (1 + std::exp(-x[kMemA]));
  a.tile_ns = std::exp(x[kTileA]);
  a.row_ns = std::exp(x[kRowA]);
  a.tile_latency_ns = std::exp(x[kTileLatA]);
  a.row_latency_ns = std::exp(x[kRowLatA]);
  a.block_ns = std::exp(x[kBlockA]);
  a.block_row_ns = std::exp(x[kBlockRowA]);
  a.block_row_latency_ns = std::exp(x[kBlockRowLatA]);
  a.combine_ns = std::exp(x[kCombineA]);
  a.combine_block_ns = std::exp(x[kCombineBlockA]);
  a.combine_split_ns = std::exp(x[kCombineSplitA]);
  return a;
}

// The unknowns of `impl`'s costs (each kept off 0, whose log is not finite).
std::vector<double> UnknownsOf(const compute::AttentionImplementation& impl) {
  return {std::log(std::max(impl.ramp_ns, 1.0)),
          std::log(impl.memory_efficiency / (1 - std::min(impl.memory_efficiency, 0.999))),
          std::log(std::max(impl.tile_ns, 1e-3)),
          std::log(std::max(impl.row_ns, 1e-3)),
          std::log(std::max(impl.tile_latency_ns, 1e-3)),
          std::log(std::max(impl.row_latency_ns, 1e-3)),
          std::log(std::max(impl.block_ns, 1e-3)),
          std::log(std::max(impl.block_row_ns, 1e-3)),
          std::log(std::max(impl.block_row_latency_ns, 1e-3)),
          std::log(std::max(impl.combine_ns, 1.0)),
          std::log(std::max(impl.combine_block_ns, 1.0)),
          std::log(std::max(impl.combine_split_ns, 1e-3))};
}

// log(predicted / measured) of a row's part.
double AttentionLogError(const compute::AttentionImplementation& a, const AttentionRow& r, const net::GpuSpec& gpu) {
  const compute::AttentionTerms t = compute::AttentionTime(a, r.call, gpu.sm_count, gpu.memory_bandwidth_gbps);
  const double predicted = r.part == kMain ? t.main_ns() : r.part == kMerge ? t.combine_ns : t.total_ns();
  return std::log(std::max(predicted, 1.0) / std::max(r.ns, 1.0));
}

// Sum of squared log errors over the rows of `parts`, as a function of the unknowns.
Objective SquaredLogErrors(const compute::AttentionImplementation& impl, const std::vector<AttentionRow>& rows,
                           const net::GpuSpec& gpu, std::vector<AttentionPart> parts) {
  return [&impl, &rows, &gpu, parts](const std::vector<double>& x) {
    const compute::AttentionImplementation a = ImplementationAt(impl, x);
    double sum = 0;
    for (const AttentionRow& r : rows)
      if (std::find(parts.begin(), parts.end(), r.part) != parts.end())
        sum += std::pow(AttentionLogError(a, r, gpu), 2);
    return sum;
  };
}

// Nelder-Mead from `x` and from it with the main kernel's costs scaled down and up (the max() has
// flat regions), each restarted in place; the best.
std::vector<double> MinimizeWithRestarts(const Objective& f, const std::vector<double>& x) {
  constexpr int kEvaluations = 20000;
  NelderMeadResult best;
  best.value = std::numeric_limits<double>::infinity();
  for (double shift : {0.0, -1.0, 1.0}) {
    std::vector<double> start = x;
    for (int j : {kRampA, kTileA, kRowA, kTileLatA, kRowLatA, kBlockA, kBlockRowA, kBlockRowLatA}) start[j] += shift;
    NelderMeadResult r = MinimizeNelderMead(f, start, std::vector<double>(x.size(), 0.5), 1e-12, kEvaluations);
    r = MinimizeNelderMead(f, r.x, std::vector<double>(x.size(), 0.1), 1e-12, kEvaluations);  // restart in place
    if (r.value < best.value) best = r;
  }
  return best.x;
}

// With main-kernel rows: the main kernel's costs on the main and whole-call rows (one split: no
// merge pass; an item with splits that timed no main kernel also lands here, its merge at the
// start values), then the merge pass's costs on the differences. Without: all on the totals.
std::vector<double> FitAttentionUnknowns(const compute::AttentionImplementation& impl,
                                         const std::vector<AttentionRow>& rows, const net::GpuSpec& gpu) {
  const std::vector<double> x0 = UnknownsOf(impl);
  const bool parts_apart = std::any_of(rows.begin(), rows.end(), [](const AttentionRow& r) { return r.part == kMain; });
  if (!parts_apart) return MinimizeWithRestarts(SquaredLogErrors(impl, rows, gpu, {kWhole}), x0);
  std::vector<double> x = x0;
  std::vector<double> fitted = MinimizeWithRestarts(SquaredLogErrors(impl, rows, gpu, {kMain, kWhole}), x0);
  for (int j : {kRampA, kMemA, kTileA, kRowA, kTileLatA, kRowLatA, kBlockA, kBlockRowA, kBlockRowLatA})
    x[j] = fitted[j];
  fitted = MinimizeWithRestarts(SquaredLogErrors(impl, rows, gpu, {kMerge}), x);
  for (int j : {kCombineA, kCombineBlockA, kCombineSplitA}) x[j] = fitted[j];
  return x;
}

// Every cost of `impl`, with the rms log error over the rows and the items' count.
void RecordAttention(FitContext& c, const std::string& pre, const compute::AttentionImplementation& impl,
                     const std::vector<AttentionRow>& rows, int points, const net::GpuSpec& gpu) {
  double sum = 0;
  for (const AttentionRow& r : rows) sum += std::pow(AttentionLogError(impl, r, gpu), 2);
  const double residual = rows.empty() ? 0 : std::sqrt(sum / double(rows.size()));
  for (auto [field, unit, value] : std::vector<std::tuple<const char*, const char*, double>>{
           {"ramp_ns", "ns", impl.ramp_ns},
           {"memory_efficiency", "", impl.memory_efficiency},
           {"tile_ns", "ns", impl.tile_ns},
           {"row_ns", "ns", impl.row_ns},
           {"tile_latency_ns", "ns", impl.tile_latency_ns},
           {"row_latency_ns", "ns", impl.row_latency_ns},
           {"block_ns", "ns", impl.block_ns},
           {"block_row_ns", "ns", impl.block_row_ns},
           {"block_row_latency_ns", "ns", impl.block_row_latency_ns},
           {"combine_ns", "ns", impl.combine_ns},
           {"combine_block_ns", "ns", impl.combine_block_ns},
           {"combine_split_ns", "ns", impl.combine_split_ns}})
    c.result.fitted.push_back({pre + "." + field, unit, value, residual, points});
}

// One implementation: its geometry (AttentionKernelOfName: specsim-validate's kernels and those
// a profile names) with the costs so far as the start, the
// fit, the costs driven towards zero written as 0, recorded and set.
void FitAttentionImplementation(FitContext& c, const std::string& name, const std::vector<const trace::Item*>& its) {
  const net::GpuSpec& gpu = c.topology.gpu_spec(0);
  compute::ComputeParams& cp = c.result.params.compute;
  auto geometry = compute::AttentionKernelOfName(name);
  if (!geometry.ok()) {
    c.result.not_fitted.push_back("compute.attention." + name + ": " + geometry.status().message());
    return;
  }
  if (gpu.sm_count < 1) {
    c.result.not_fitted.push_back("compute.attention." + name + ": the GPU's sm_count is unknown");
    return;
  }
  compute::AttentionImplementation impl = *geometry;
  if (const compute::AttentionImplementation* old = cp.FindAttentionImplementation(name)) impl = *old;
  const std::vector<AttentionRow> rows = AttentionRows(c, its);
  const compute::AttentionImplementation start = impl;
  impl = ImplementationAt(impl, FitAttentionUnknowns(impl, rows, gpu));
  // No item ran a merge pass (one split each: cuDNN's and the memory-efficient kernels without a
  // split-KV reduction): nothing measured the merge's costs, which keep their start values.
  const bool merged = std::any_of(rows.begin(), rows.end(), [&](const AttentionRow& r) {
    return compute::AttentionTime(impl, r.call, gpu.sm_count, gpu.memory_bandwidth_gbps).combine_ns > 0;
  });
  if (!merged) {
    impl.combine_ns = start.combine_ns;
    impl.combine_block_ns = start.combine_block_ns;
    impl.combine_split_ns = start.combine_split_ns;
  }
  // A cost the items drove towards zero (exp of a large negative) is written as 0.
  for (double* v : {&impl.ramp_ns, &impl.tile_ns, &impl.row_ns, &impl.tile_latency_ns, &impl.row_latency_ns,
                    &impl.block_ns, &impl.block_row_ns, &impl.block_row_latency_ns, &impl.combine_ns,
                    &impl.combine_block_ns, &impl.combine_split_ns})
    if (*v < 1e-6) *v = 0;
  RecordAttention(c, "compute.attention." + name, impl, rows, static_cast<int>(its.size()), gpu);
  cp.SetAttentionImplementation(impl);
}

}  // namespace

// Per implementation with a known geometry; others are not fitted (noted), nor is MLA on
// validate's reference kernel (not simulated). Items that timed their main kernel alone
// (AttentionParams.main_kernel_median_us) fit the main kernel's costs and then the merge pass's on
// the difference; without any, all costs on the totals.
Status FitAttention(FitContext& c) {
  for (const auto& [name, its] : AttentionItemsByImplementation(c)) FitAttentionImplementation(c, name, its);
  return OkStatus();
}

}  // namespace specsim::calib
