// The kernels (fitters.h): the compute model of sim/compute/kernel_cost.h, in the laws of
// predictors.h (TimedKernelNs: t = max(issue + floor, device + timed call's gap)):
//   compute          one joint weighted linear least-squares problem (weights 1/measured) over
//                    GEMM, RMSNorm and launch items with unknowns eager issue, kernel floor, graph
//                    launch, graph gap, memory ramps and the inverse efficiencies (memory, skinny
//                    GEMM, attention, GEMM compute), the L2-resident rate and the GEMM column rate.
//                    Each kernel item is a row of the roofline term that binds under the current
//                    parameters (memory: ramp + B/bw * 1/e; compute: F/(peak*ramp(m)) * 1/e_c;
//                    floor: floor), less the timed call's gap; eager launches issue*k + floor
//                    (CPU-bound), graph launches G + k*(floor + gap). Launch items are solved first,
//                    alone; kernel rows then see the eager issue as known. Re-classified until
//                    stable (<= 20 rounds).
//   GEMM overlap     the value of 0, 0.1, ..., 0.5 whose compute fit predicts the GEMM items best
//   GEMM library     the main library's GEMMs join the compute fit; every other library's costs
//                    are fitted on its own GEMM items with the launch items
//   timed call gap   a grid search over the gap, each point's kernel fits (these and attention's,
//                    fit_attention.cc) judged by the CUDA-graph loops (no events between kernels)
#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "sim/calib/fitters.h"
#include "sim/calib/predictors.h"
#include "sim/compute/kernel_cost.h"

namespace specsim::calib {
namespace {

// ---- The compute model's joint problem ----

// Its unknowns (columns).
enum ComputeColumn {
  kIssue,
  kFloor,
  kGraphLaunch,
  kGraphGap,
  kRamp,
  kInvMem,
  kInvSkinny,
  kInvAtt,
  kInvGemmC,
  kInvL2,
  kRampGemm,
  kRampAtt,
  kInvAttC,
  kInvCol,
  kCols
};

// The unknowns as solved (inverse efficiencies and rates) and as recorded.
constexpr const char* kSolvedNames[kCols] = {"compute.launch_overhead_eager_ns",
                                             "compute.kernel_floor_ns",
                                             "compute.graph_launch_ns",
                                             "compute.launch_overhead_graph_ns",
                                             "compute.memory_ramp_ns",
                                             "compute.inverse_memory_efficiency",
                                             "compute.inverse_skinny_gemm_memory_efficiency",
                                             "compute.inverse_attention_memory_efficiency",
                                             "compute.inverse_gemm_compute_efficiency",
                                             "compute.inverse_l2_resident_bandwidth",
                                             "compute.gemm_memory_ramp_ns",
                                             "compute.attention_memory_ramp_ns",
                                             "compute.inverse_attention_compute_efficiency",
                                             "compute.inverse_gemm_column_rate"};
constexpr const char* kRecordedNames[kCols] = {"compute.launch_overhead_eager_ns",
                                               "compute.kernel_floor_ns",
                                               "compute.graph_launch_ns",
                                               "compute.launch_overhead_graph_ns",
                                               "compute.memory_ramp_ns",
                                               "compute.memory_efficiency",
                                               "compute.skinny_gemm_memory_efficiency",
                                               "compute.attention_memory_efficiency",
                                               "compute.gemm_compute_efficiency",
                                               "compute.l2_resident_bandwidth_gbps",
                                               "compute.gemm_memory_ramp_ns",
                                               "compute.attention_memory_ramp_ns",
                                               "compute.attention_compute_efficiency",
                                               "compute.gemm_column_rate_gbps"};
constexpr const char* kRecordedUnits[kCols] = {"ns", "ns", "ns",   "ns", "ns", "", "",
                                               "",   "",   "GB/s", "ns", "ns", "", "GB/s per column"};

// Which side of the law a row is on.
enum ComputeSide { kLaunchRow = -1, kFloorSide = 0, kMemorySide = 1, kComputeSide = 2 };

// What one round classifies and prices its kernel rows with.
struct ComputeRound {
  const net::GpuSpec& gpu;
  const compute::ComputeParams& safe;  // the parameters so far, clamped into range
  const compute::KernelCostModel& cost;
  const BenchParams& bench;  // the fit's (the timed call's gap)
  double l2_gbps;
};

// The launch items and the GEMM and RMSNorm items whose kernel is known.
std::vector<const trace::Item*> ComputeItems(const FitContext& c) {
  std::vector<const trace::Item*> ks;
  for (const trace::Item* it : c.items) {
    const trace::Kind k = it->kind();
    if (k == trace::KIND_LAUNCH_OVERHEAD)
      ks.push_back(it);
    else if ((k == trace::KIND_GEMM || k == trace::KIND_RMSNORM) && KernelOfItem(*it).ok)
      ks.push_back(it);
  }
  return ks;
}

// Sets the start of the rounds on the compute parameters and returns the L2-resident rate's start.
double StartComputeFit(FitContext& c, const std::vector<const trace::Item*>& ks) {
  compute::ComputeParams& cp = c.result.params.compute;
  const net::GpuSpec& gpu = c.topology.gpu_spec(0);
  // Start with no floor: small kernels begin as memory-bound (ramp) rows, so the floor is set by
  // the empty kernels of the launch items and the ramp by the small kernels.
  cp.kernel_floor_ns = 0;
  cp.gemm_memory_ramp_ns = cp.RampNs(compute::KernelClass::kGemm);
  cp.attention_memory_ramp_ns = cp.RampNs(compute::KernelClass::kAttention);
  // Start attention compute low so that verify-shaped items (several queries per sequence) can
  // start on the compute side; the rounds settle each item on the side that binds.
  cp.attention_compute_efficiency = std::min(cp.attention_compute_efficiency, 0.05);
  // GEMM column rate (kernel_cost.h, GEMM efficiency by shape class): unless set, start at the
  // highest per-column rate any GEMM item shows, B / (n * measured); that classifies the narrowest
  // GEMMs as column-limited and the rounds settle the rest.
  if (cp.gemm_column_rate_gbps <= 0) {
    for (const trace::Item* it : ks) {
      if (it->kind() != trace::KIND_GEMM) continue;
      const ItemKernel ik = KernelOfItem(*it);
      if (ik.ok && ik.kernel.n > 0)
        cp.gemm_column_rate_gbps =
            std::max(cp.gemm_column_rate_gbps, ik.kernel.weight_bytes / (ik.kernel.n * MeasuredNs(*it)));
    }
  }
  return c.result.params.bench.l2_resident_bandwidth_gbps > 0 ? c.result.params.bench.l2_resident_bandwidth_gbps
                                                              : 2 * gpu.memory_bandwidth_gbps;
}

// The joint problem's unknowns with the parameters so far as defaults; no rows yet.
LinearProblem ComputeProblem(const compute::ComputeParams& cp, double l2_gbps) {
  LinearProblem p;
  p.names.assign(std::begin(kSolvedNames), std::end(kSolvedNames));
  p.defaults = {cp.launch_overhead_eager_ns,
                cp.kernel_floor_ns,
                cp.graph_launch_ns,
                cp.launch_overhead_graph_ns,
                cp.memory_ramp_ns,
                1 / cp.memory_efficiency,
                1 / cp.skinny_gemm_memory_efficiency,
                1 / cp.attention_memory_efficiency,
                1 / cp.gemm_compute_efficiency,
                1 / l2_gbps,
                cp.RampNs(compute::KernelClass::kGemm),
                cp.RampNs(compute::KernelClass::kAttention),
                1 / cp.attention_compute_efficiency,
                cp.gemm_column_rate_gbps > 0 ? 1 / cp.gemm_column_rate_gbps : 0};
  return p;
}

// The parameters so far with efficiencies in [1e-3, 1] and times >= 0: what a round classifies
// the items with.
compute::ComputeParams ClampedIntoRange(compute::ComputeParams cp) {
  for (double* e : {&cp.memory_efficiency, &cp.skinny_gemm_memory_efficiency, &cp.attention_memory_efficiency,
                    &cp.gemm_compute_efficiency, &cp.attention_compute_efficiency})
    *e = std::clamp(*e, 1e-3, 1.0);
  for (double* v : {&cp.kernel_floor_ns, &cp.memory_ramp_ns, &cp.gemm_memory_ramp_ns, &cp.attention_memory_ramp_ns,
                    &cp.launch_overhead_eager_ns, &cp.launch_overhead_graph_ns, &cp.graph_launch_ns})
    *v = std::max(0.0, *v);
  return cp;
}

// A launch item's row: eager k issues + one floor; graph: one launch + k (floor + gap).
void AddLaunchRow(const trace::Item& it, LinearProblem* p) {
  const double ns = MeasuredNs(it);
  std::vector<double> row(kCols, 0);
  const double k = std::max(1, it.launch().kernels());
  if (it.launch().cuda_graph()) {
    row[kGraphLaunch] = 1;
    row[kFloor] = k;
    row[kGraphGap] = k;
  } else {
    row[kIssue] = k;
    row[kFloor] = 1;
  }
  p->AddRow(row, ns, 1 / ns);
}

// The memory term's coefficients, scaled by `w`: the ramp of the kernel's class and bytes over the
// rate that applies (L2-resident, GEMM column, skinny GEMM, attention or plain memory).
void AddMemoryTerms(const ComputeRound& r, const compute::Kernel& kernel, bool resident, double w,
                    std::vector<double>& row) {
  row[kernel.kernel_class == compute::KernelClass::kGemm        ? kRampGemm
      : kernel.kernel_class == compute::KernelClass::kAttention ? kRampAtt
                                                                : kRamp] += w;
  const double x = kernel.bytes / r.gpu.memory_bandwidth_gbps;
  if (resident)
    row[kInvL2] += w * kernel.bytes;
  else if (r.cost.ColumnLimited(kernel))
    row[kInvCol] += w * (kernel.weight_bytes > 0 ? kernel.weight_bytes : kernel.bytes) / kernel.n;
  else if (kernel.kernel_class == compute::KernelClass::kGemm)
    row[kInvSkinny] += w * x;
  else if (kernel.kernel_class == compute::KernelClass::kAttention)
    row[kInvAtt] += w * x;
  else
    row[kInvMem] += w * x;
}

// A GEMM's compute term's coefficient, scaled by `w`: F / (peak * m / (m + m_half)).
void AddGemmComputeTerms(const ComputeRound& r, const compute::Kernel& kernel, double w, std::vector<double>& row) {
  const double ramp = kernel.m > 0 ? kernel.m / (kernel.m + r.safe.gemm_m_half) : 1.0;
  row[kInvGemmC] += w * kernel.flops / (r.cost.PeakTflops(kernel.math_dtype) * 1e3 * ramp);
}

// The side of the roofline that binds a kernel under the round's parameters, and its time there.
struct KernelBinding {
  ComputeSide side;
  double ns;
  bool resident;  // its memory term at the L2-resident rate
};

KernelBinding BindingSide(const ComputeRound& r, const trace::Item& it, const compute::Kernel& kernel) {
  const bool tensor =
      kernel.kernel_class == compute::KernelClass::kGemm || kernel.kernel_class == compute::KernelClass::kAttention;
  double compute_ns = 0;
  if (tensor && kernel.flops > 0)
    compute_ns = kernel.flops / (r.cost.PeakTflops(kernel.math_dtype) * 1e3 * r.cost.ComputeEfficiency(kernel));
  if (compute_ns > 0 && kernel.kernel_class == compute::KernelClass::kAttention)
    compute_ns += r.safe.RampNs(compute::KernelClass::kAttention);
  BenchParams bench;
  bench.l2_resident_bandwidth_gbps = r.l2_gbps;
  const bool resident = L2Resident(it, kernel, r.gpu, bench);
  const double memory_ns = resident ? r.safe.memory_ramp_ns + kernel.bytes / r.l2_gbps : r.cost.MemoryNs(kernel);
  // A kernel that moves bytes is a memory or compute row, never a floor row: the floor is the
  // empty kernel of the launch items, and a small kernel's extra time is the memory ramp
  // (which the fit keeps above the floor whenever small kernels outlast empty ones).
  KernelBinding b{kernel.bytes > 0 ? kMemorySide : kFloorSide, 0, resident};
  b.ns = b.side == kMemorySide ? memory_ns : r.safe.kernel_floor_ns;
  if (compute_ns > b.ns) {
    b.side = kComputeSide;
    b.ns = compute_ns;
  }
  return b;
}

// A kernel item's row on the side that binds (GEMMs: that term counts 1, the other gemm_overlap;
// kernel_cost.h), its right-hand side the measurement less the timed call's gap. None for items
// the law calls host-bound that measure within 1.3x the host's per-call period (issue + floor):
// near the period a call measures part host, part device, and says nothing of the device time.
std::optional<ComputeSide> AddKernelRow(const ComputeRound& r, const trace::Item& it, LinearProblem* p) {
  const double ns = MeasuredNs(it);
  const compute::Kernel kernel = KernelOfItem(it).kernel;
  // GPU-bound items measure device + the timed call's gap (predictors.h TimedKernelNs); a
  // profiler's kernel durations (KernelTimeOnly) are device time already.
  const double rhs = KernelTimeOnly(it) ? ns : ns - TimedCallGapNs(r.cost, r.bench);
  const KernelBinding b = BindingSide(r, it, kernel);
  if (!KernelTimeOnly(it) && TimedKernelHostBound(r.cost, r.bench, std::max(b.ns, r.safe.kernel_floor_ns)) &&
      ns < 1.3 * (r.safe.launch_overhead_eager_ns + r.safe.kernel_floor_ns))
    return std::nullopt;
  std::vector<double> row(kCols, 0);
  if (b.side == kFloorSide) row[kFloor] = 1;
  const bool gemm = kernel.kernel_class == compute::KernelClass::kGemm;
  const double overlap = gemm && kernel.flops > 0 && !b.resident ? r.safe.gemm_overlap : 0;
  if (b.side == kMemorySide) {
    AddMemoryTerms(r, kernel, b.resident, 1, row);
    if (overlap > 0) AddGemmComputeTerms(r, kernel, overlap, row);
  } else if (b.side == kComputeSide && gemm) {
    AddGemmComputeTerms(r, kernel, 1, row);
    if (overlap > 0) AddMemoryTerms(r, kernel, b.resident, overlap, row);
  } else if (b.side == kComputeSide) {
    // Attention: fixed cost (the attention ramp) + per-query compute (kernel_cost.h).
    row[kRampAtt] = 1;
    row[kInvAttC] = kernel.flops / (r.cost.PeakTflops(kernel.math_dtype) * 1e3);
  }
  p->AddRow(row, rhs, 1 / ns);
  return b.side;
}

// Every item's row; returns each row's side (kLaunchRow for launch items), in row order.
std::vector<int> AddComputeRows(const ComputeRound& r, const std::vector<const trace::Item*>& ks, LinearProblem* p) {
  std::vector<int> sides;
  for (const trace::Item* it : ks) {
    if (it->kind() == trace::KIND_LAUNCH_OVERHEAD) {
      AddLaunchRow(*it, p);
      sides.push_back(kLaunchRow);
    } else if (const std::optional<ComputeSide> side = AddKernelRow(r, *it, p)) {
      sides.push_back(*side);
    }
  }
  return sides;
}

// Launch items first, alone: eager issue, floor (the empty kernel), graph launch and gap. The
// kernel rows then see the eager issue as known (their issue + ramp intercept cannot separate the
// two). Returns the kernel rows' solution with the launch unknowns of the launch rows' solution.
StatusOr<LinearSolution> SolveLaunchThenKernels(FitContext& c, const LinearProblem& p, const std::vector<int>& sides) {
  LinearProblem lp = p;
  lp.rows.clear();
  lp.rhs.clear();
  lp.weights.clear();
  LinearProblem kp = lp;
  for (size_t i = 0; i < p.rows.size(); ++i)
    (sides[i] == kLaunchRow ? lp : kp).AddRow(p.rows[i], p.rhs[i], p.weights[i]);
  ASSIGN_OR_RETURN(LinearSolution ls, SolveLeastSquares(lp, true, "launch overheads"));
  if (ls.determined[kGraphGap] && ls.x[kGraphGap] < 0) {
    // A graph's per-kernel cost below the eager intercept: hold the gap at 0 (it cannot be
    // negative) and refit the rest.
    for (auto& row : lp.rows) row[kGraphGap] = 0;
    lp.defaults[kGraphGap] = 0;
    ASSIGN_OR_RETURN(ls, SolveLeastSquares(lp, true, "launch overheads"));
    ls.points[kGraphGap] = ls.points[kGraphLaunch];
    c.result.not_fitted.push_back(
        "compute.launch_overhead_graph_ns: the graph's per-kernel time is below the "
        "eager launches' device tail; held at 0");
  }
  // Kernel rows: move the issue term to the right-hand side.
  const double issue = ls.has_items[kIssue] ? ls.x[kIssue] : c.result.params.compute.launch_overhead_eager_ns;
  for (size_t i = 0; i < kp.rows.size(); ++i) {
    kp.rhs[i] -= kp.rows[i][kIssue] * issue;
    kp.rows[i][kIssue] = 0;
  }
  ASSIGN_OR_RETURN(LinearSolution s, SolveLeastSquares(kp, true, "kernel efficiencies"));
  const int kernel_issue_points = s.points[kIssue];
  for (int j : {kIssue, kFloor, kGraphLaunch, kGraphGap}) {
    s.x[j] = ls.x[j];
    s.determined[j] = ls.determined[j];
    s.has_items[j] = ls.has_items[j];
    s.points[j] = ls.points[j];
    s.residual_rms[j] = ls.residual_rms[j];
  }
  if (!ls.has_items[kIssue] && kernel_issue_points == 0) s.x[kIssue] = c.result.params.compute.launch_overhead_eager_ns;
  return s;
}

// Takes a round's solution into the compute parameters and the L2-resident rate.
void ApplyComputeSolution(const LinearSolution& s, double& l2_gbps, CalibParams& params) {
  compute::ComputeParams& cp = params.compute;
  cp.launch_overhead_eager_ns = s.x[kIssue];
  cp.kernel_floor_ns = s.x[kFloor];
  cp.graph_launch_ns = s.x[kGraphLaunch];
  cp.launch_overhead_graph_ns = s.x[kGraphGap];
  cp.memory_ramp_ns = s.x[kRamp];
  cp.memory_efficiency = 1 / s.x[kInvMem];
  cp.skinny_gemm_memory_efficiency = 1 / s.x[kInvSkinny];
  cp.attention_memory_efficiency = 1 / s.x[kInvAtt];
  cp.gemm_compute_efficiency = 1 / s.x[kInvGemmC];
  cp.gemm_memory_ramp_ns = s.x[kRampGemm];
  cp.attention_memory_ramp_ns = s.x[kRampAtt];
  cp.attention_compute_efficiency = 1 / s.x[kInvAttC];
  // No column-limited item this round: keep the rate (the next round's classification uses it).
  if (s.has_items[kInvCol] && s.x[kInvCol] > 0) cp.gemm_column_rate_gbps = 1 / s.x[kInvCol];
  if (s.has_items[kInvL2] && s.x[kInvL2] > 0) l2_gbps = 1 / s.x[kInvL2];
  params.bench.l2_resident_bandwidth_gbps = s.has_items[kInvL2] ? l2_gbps : 0;
}

// Undetermined columns that had items: refuse (calibrate) or keep defaults (compare).
Status CheckComputeDetermined(const FitContext& c, const LinearSolution& s, const LinearProblem& p) {
  if (c.options.fix_undetermined) return OkStatus();
  std::string bad;
  for (int j = 0; j < kCols; ++j)
    if (s.has_items[j] && !s.determined[j]) bad += (bad.empty() ? "" : ", ") + p.names[j];
  if (!bad.empty())
    return InvalidArgumentError("compute fit: cannot determine " + bad +
                                ": the trace's kernel and launch items do not separate them");
  return OkStatus();
}

// Efficiencies outside (0, 1] and negative times: an error (calibrate), or clamped into range so
// the cost model stays valid (compare).
Status CheckComputePhysical(FitContext& c, const LinearSolution& s, const std::array<double, kCols>& values) {
  std::string bad;
  for (int j : {kInvMem, kInvSkinny, kInvAtt, kInvGemmC, kInvAttC})
    if (s.determined[j] && !(values[j] > 0 && values[j] <= 1.0))
      bad += std::string(bad.empty() ? "" : "; ") + kRecordedNames[j] + " = " + std::to_string(values[j]);
  for (int j : {kIssue, kFloor, kGraphLaunch, kGraphGap, kRamp, kRampGemm, kRampAtt, kInvCol})
    if (s.determined[j] && values[j] < 0)
      bad += std::string(bad.empty() ? "" : "; ") + kRecordedNames[j] + " = " + std::to_string(values[j]);
  if (bad.empty()) return OkStatus();
  if (!c.options.fix_undetermined)
    return InvalidArgumentError("compute fit: unphysical values (" + bad +
                                "): an efficiency above 1 means the hardware config's peak rate is too low for "
                                "what was measured; a negative time means the items do not support the law");
  compute::ComputeParams& cp = c.result.params.compute;
  cp = ClampedIntoRange(cp);
  cp.gemm_column_rate_gbps = std::max(0.0, cp.gemm_column_rate_gbps);
  c.result.not_fitted.push_back("compute: clamped into range: " + bad);
  return OkStatus();
}

// Records every column (a column rate that binds no item is not a measurement: back to the
// default, no limit), then checks the values are physical.
Status RecordCompute(FitContext& c, const LinearSolution& s, double l2_gbps) {
  compute::ComputeParams& cp = c.result.params.compute;
  if (!s.has_items[kInvCol]) cp.gemm_column_rate_gbps = compute::ComputeParams{}.gemm_column_rate_gbps;
  const std::array<double, kCols> values = {cp.launch_overhead_eager_ns,
                                            cp.kernel_floor_ns,
                                            cp.graph_launch_ns,
                                            cp.launch_overhead_graph_ns,
                                            cp.memory_ramp_ns,
                                            cp.memory_efficiency,
                                            cp.skinny_gemm_memory_efficiency,
                                            cp.attention_memory_efficiency,
                                            cp.gemm_compute_efficiency,
                                            l2_gbps,
                                            cp.gemm_memory_ramp_ns,
                                            cp.attention_memory_ramp_ns,
                                            cp.attention_compute_efficiency,
                                            cp.gemm_column_rate_gbps};
  for (int j = 0; j < kCols; ++j) {
    if (!s.has_items[j]) {
      c.result.not_fitted.push_back(std::string(kRecordedNames[j]) + ": no items bind it (default kept)");
      continue;
    }
    c.Record(kRecordedNames[j], kRecordedUnits[j], values[j], s, j);
  }
  return CheckComputePhysical(c, s, values);
}

// The joint problem on the items so far: classify, solve, re-classify until stable.
Status FitCompute(FitContext& c) {
  const std::vector<const trace::Item*> ks = ComputeItems(c);
  if (ks.empty()) {
    c.result.not_fitted.push_back(
        "compute (launch overheads, kernel floor, efficiencies): no kernel items (defaults kept)");
    return OkStatus();
  }
  compute::ComputeParams& cp = c.result.params.compute;
  const net::GpuSpec& gpu = c.topology.gpu_spec(0);
  double l2_gbps = StartComputeFit(c, ks);
  std::vector<int> last_sides;
  LinearSolution s;
  LinearProblem p;
  for (int round = 0; round < 20; ++round) {
    p = ComputeProblem(cp, l2_gbps);
    const compute::ComputeParams safe = ClampedIntoRange(cp);
    const compute::KernelCostModel cost(gpu, safe);
    const std::vector<int> sides = AddComputeRows({gpu, safe, cost, c.result.params.bench, l2_gbps}, ks, &p);
    ASSIGN_OR_RETURN(s, SolveLaunchThenKernels(c, p, sides));
    ApplyComputeSolution(s, l2_gbps, c.result.params);
    if (sides == last_sides) break;
    last_sides = sides;
  }
  RETURN_IF_ERROR(CheckComputeDetermined(c, s, p));
  return RecordCompute(c, s, l2_gbps);
}

// ---- GEMM overlap and GEMM libraries ----

// Sum of squared log errors of `gemms` predicted with the parameters so far.
double GemmSquaredLogErrors(const FitContext& c, const std::vector<const trace::Item*>& gemms) {
  const Predictor at(c.trace, c.topology, c.result.params);
  double sum = 0;
  for (const trace::Item* it : gemms) {
    const Prediction p = at.Predict(*it);
    if (p.simulated && p.predicted_us > 0) sum += std::pow(std::log(p.predicted_us / (MeasuredNs(*it) * 1e-3)), 2);
  }
  return sum;
}

// gemm_overlap (kernel_cost.h): the value of 0, 0.1, ..., 0.5 whose compute fit leaves the
// smallest sum of squared log errors over the GEMM items, among those whose GEMM efficiencies stay
// below the datasheet peaks; the compute fit is then redone with it.
Status FitComputeWithGemmOverlap(FitContext& c) {
  std::vector<const trace::Item*> gemms;
  for (const trace::Item* it : c.items)
    if (it->kind() == trace::KIND_GEMM && KernelOfItem(*it).ok) gemms.push_back(it);
  if (gemms.empty()) return FitCompute(c);
  const FitResult saved = c.result;
  double best_overlap = saved.params.compute.gemm_overlap, best = std::numeric_limits<double>::infinity();
  for (double overlap : {0.0, 0.1, 0.2, 0.3, 0.4, 0.5}) {
    c.result = saved;
    c.result.params.compute.gemm_overlap = overlap;
    if (!FitCompute(c).ok()) continue;  // the final fit below reports the error
    // An overlap the efficiencies can only meet by streaming or computing at the datasheet peak
    // (or above it, clamped) is not a physical fit.
    const compute::ComputeParams& fitted = c.result.params.compute;
    if (overlap > 0 && (fitted.skinny_gemm_memory_efficiency >= 0.999 || fitted.gemm_compute_efficiency >= 0.999))
      continue;
    const double sum = GemmSquaredLogErrors(c, gemms);
    if (sum < best) {
      best = sum;
      best_overlap = overlap;
    }
  }
  c.result = saved;
  c.result.params.compute.gemm_overlap = best_overlap;
  RETURN_IF_ERROR(FitCompute(c));
  c.result.fitted.push_back({"compute.gemm_overlap", "", best_overlap, std::sqrt(best / double(gemms.size())),
                             static_cast<int>(gemms.size())});
  return OkStatus();
}

// GEMM items with a known kernel per library (GemmParams.library; empty: cublasGemmEx).
std::map<std::string, int> GemmCountByLibrary(const FitContext& c) {
  std::map<std::string, int> count;
  for (const trace::Item* it : c.items)
    if (it->kind() == trace::KIND_GEMM && KernelOfItem(*it).ok) ++count[GemmLibraryOf(it->gemm())];
  return count;
}

// The decode loop's library when it has GEMM items, else the one with the most (the first by name
// of equals).
std::string MainGemmLibrary(const FitContext& c, const std::map<std::string, int>& count) {
  std::string main;
  for (const trace::Item* it : c.items)
    if (it->has_decode() && !it->decode().gemm_library().empty()) main = it->decode().gemm_library();
  if (main.empty() || !count.count(main)) {
    int most = 0;
    for (const auto& [lib, n] : count)
      if (n > most) most = n, main = lib;
  }
  return main;
}

// Narrows the fitted items to those of `all` that `keep` accepts.
void KeepItems(FitContext& c, const std::vector<const trace::Item*>& all,
               const std::function<bool(const trace::Item*)>& keep) {
  c.items.clear();
  for (const trace::Item* it : all)
    if (keep(it)) c.items.push_back(it);
}

// A library other than the main one: its GEMM costs fitted on its own items with the launch items
// (the rest of the compute model as the main fit left it), then only those costs kept, with the
// rms log error of its items under its own fit. A failed fit is listed as not fitted.
void FitOtherGemmLibrary(FitContext& c, const std::string& lib, int n, const std::vector<const trace::Item*>& all) {
  const FitResult base = c.result;
  c.result.params.compute.gemm_library = lib;
  c.result.params.compute.gemm_libraries.clear();
  KeepItems(c, all, [&](const trace::Item* it) {
    return it->kind() == trace::KIND_LAUNCH_OVERHEAD ||
           (it->kind() == trace::KIND_GEMM && GemmLibraryOf(it->gemm()) == lib);
  });
  const Status lib_status = FitComputeWithGemmOverlap(c);
  const compute::ComputeParams fitted = c.result.params.compute;
  // (c.items holds the launch items too; they are not GEMMs and are skipped.)
  const double sum = lib_status.ok() ? GemmSquaredLogErrors(c, c.ItemsOfKind(trace::KIND_GEMM)) : 0;
  const double residual = std::sqrt(sum / std::max(1, n));
  c.result = base;
  c.items = all;
  if (!lib_status.ok()) {
    c.result.not_fitted.push_back("compute.gemm." + lib + ": " + lib_status.message());
    return;
  }
  compute::ComputeParams::GemmLibraryCosts g;
  g.library = lib;
  g.skinny_gemm_memory_efficiency = fitted.skinny_gemm_memory_efficiency;
  g.gemm_compute_efficiency = fitted.gemm_compute_efficiency;
  g.gemm_memory_ramp_ns = fitted.RampNs(compute::KernelClass::kGemm);
  g.gemm_column_rate_gbps = fitted.gemm_column_rate_gbps;
  g.gemm_overlap = fitted.gemm_overlap;
  c.result.params.compute.SetGemmLibrary(g);
  for (auto [field, unit, value] : std::vector<std::tuple<const char*, const char*, double>>{
           {"skinny_gemm_memory_efficiency", "", g.skinny_gemm_memory_efficiency},
           {"gemm_compute_efficiency", "", g.gemm_compute_efficiency},
           {"gemm_memory_ramp_ns", "ns", g.gemm_memory_ramp_ns},
           {"gemm_column_rate_gbps", "GB/s per column", g.gemm_column_rate_gbps},
           {"gemm_overlap", "", g.gemm_overlap}})
    c.result.fitted.push_back({"compute.gemm." + lib + "." + field, unit, value, residual, n});
}

// ---- The timed call's gap ----

// CUDA-graph decode forwards and GEMM layer loops: the same kernels back to back, no events.
std::vector<const trace::Item*> GraphLoops(const FitContext& c) {
  std::vector<const trace::Item*> loops;
  for (const trace::Item* it : c.items) {
    const bool graph_decode = (it->kind() == trace::KIND_DECODE_STEP || it->kind() == trace::KIND_SPEC_CYCLE) &&
                              it->has_decode() && DecodeCaptureOf(it->decode()) == "graph";
    const bool graph_layers =
        it->kind() == trace::KIND_LAYER_LOOP && it->layer_loop().capture() == "graph" && it->layer_loop().gemm();
    if (graph_decode || graph_layers) loops.push_back(it);
  }
  return loops;
}

// The best gap tried so far: its sum of squared log errors over the loops predicted.
struct GapTrial {
  double gap = -1;
  double sum = std::numeric_limits<double>::infinity();
  int loops = 0;
};

// The kernel fits (compute, attention) redone from `before_kernels` with the gap, the loops
// predicted with them and `c`'s other fits; kept in `best` when better.
void TryTimedCallGap(const FitContext& before_kernels, const FitContext& c,
                     const std::vector<const trace::Item*>& loops, double gap, GapTrial& best) {
  gap = std::max(1e-3, gap);  // 0 would mean "unset"
  FitContext trial = before_kernels;
  trial.result.params.bench.timed_call_gap_ns = gap;
  if (!FitComputeByGemmLibrary(trial).ok() || !FitAttention(trial).ok()) return;
  CalibParams p = c.result.params;
  p.compute = trial.result.params.compute;
  p.bench = trial.result.params.bench;
  const Predictor at(before_kernels.trace, c.topology, p);
  double sum = 0;
  int n = 0;
  for (const trace::Item* it : loops) {
    const Prediction pr = at.Predict(*it);
    if (!pr.simulated || !(pr.predicted_us > 0)) continue;
    sum += std::pow(std::log(pr.predicted_us / (MeasuredNs(*it) * 1e-3)), 2);
    ++n;
  }
  if (n > 0 && sum < best.sum) best = {gap, sum, n};
}

}  // namespace

// GEMM items by library (GemmParams.library; empty: cublasGemmEx, as traces without the field
// were measured). The main library's (the decode loop's, else the one with the most items)
// join the compute fit; every other library's GEMM costs are fitted on its own items with the
// launch items, the rest of the compute model as the main fit left it.
Status FitComputeByGemmLibrary(FitContext& c) {
  const std::map<std::string, int> count = GemmCountByLibrary(c);
  const std::string main = MainGemmLibrary(c, count);
  const std::vector<const trace::Item*> all = c.items;
  // The predictions inside the fits take the fields being fitted: the library they describe is
  // the one being fitted.
  c.result.params.compute.gemm_library = main;
  KeepItems(c, all,
            [&](const trace::Item* it) { return it->kind() != trace::KIND_GEMM || GemmLibraryOf(it->gemm()) == main; });
  const Status st = FitComputeWithGemmOverlap(c);
  c.items = all;
  RETURN_IF_ERROR(st);
  for (const auto& [lib, n] : count)
    if (lib != main) FitOtherGemmLibrary(c, lib, n, all);
  return OkStatus();
}

// The timed call's gap (BenchParams.timed_call_gap_ns, predictors.h TimedKernelNs). Every timed
// kernel item measures device + gap, so the kernel items alone cannot tell the gap from the
// kernels' fill times (each ramp absorbs it). Loops that run the same kernels back to back with no
// events between them can: decode forwards and layer loops captured in CUDA graphs. (One-rank
// NCCL calls replayed in graphs, a local copy kernel each, ask for a gap of 4+ us that the decode
// forwards refuse: NCCL's copy kernel is not the norm kernels whose ramp it is priced with; left
// out.) Grid search: for each gap tried the kernel fits (compute, attention) are redone from
// `before_kernels` and the graph loops predicted with them and `c`'s other fits; gaps of 0, 0.5,
// ..., 4 us, then the best one +- 0.25 us; the gap with the smallest sum of squared log errors is
// kept and every fit from the kernels on redone with it. Without such loops the gap stays unset
// (the eager device gap) and is listed as not fitted.
Status FitTimedCallGap(const FitContext& before_kernels, const std::function<Status(FitContext&)>& kernels_onwards,
                       FitContext& c) {
  const std::vector<const trace::Item*> loops = GraphLoops(before_kernels);
  if (loops.empty()) {
    c.result.not_fitted.push_back(
        "compute.timed_call_gap_ns: no CUDA-graph decode or layer loops to tell it from the kernels' fill times (the "
        "eager device gap is used)");
    return OkStatus();
  }
  GapTrial best;
  for (int step = 0; step <= 8; ++step) TryTimedCallGap(before_kernels, c, loops, 500.0 * step, best);
  if (best.gap >= 0) {
    const double coarse = best.gap;
    TryTimedCallGap(before_kernels, c, loops, coarse - 250, best);
    TryTimedCallGap(before_kernels, c, loops, coarse + 250, best);
  }
  if (best.gap < 0) {
    c.result.not_fitted.push_back(
        "compute.timed_call_gap_ns: no graph loop could be predicted (the eager device gap is used)");
    return OkStatus();
  }
  FitContext chosen = before_kernels;
  chosen.result.params.bench.timed_call_gap_ns = best.gap;
  RETURN_IF_ERROR(kernels_onwards(chosen));
  chosen.result.fitted.push_back(
      {"compute.timed_call_gap_ns", "ns", best.gap, std::sqrt(best.sum / best.loops), best.loops});
  c.result = std::move(chosen.result);
  c.topology = std::move(chosen.topology);
  return OkStatus();
}

}  // namespace specsim::calib
