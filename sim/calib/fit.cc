#include "sim/calib/fit.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <functional>
#include <numeric>
#include <optional>
#include <tuple>
#include <limits>

#include "sim/calib/least_squares.h"
#include "sim/calib/nelder_mead.h"
#include "sim/calib/predictors.h"
#include "sim/calib/trace_io.h"
#include "sim/coll/collective_planner.h"
#include "sim/coll/protocol.h"
#include "sim/compute/kernel_cost.h"
#include "sim/net/routing.h"

namespace specsim::calib {
namespace {

double MeasuredNs(const trace::Item& item) { return item.stats().median_us() * 1e3; }

struct Fitter {
  const trace::Trace& trace;
  std::vector<const trace::Item*> items;
  // The box as given, then (after the transfer fits) with the fitted fabric applied: what the
  // simulation-backed fits run on (the fabric's kernel-read cap, copy engines, host-link rate).
  net::Topology topology;
  FitOptions options;
  FitResult result;

  // Applies the fabric fitted so far to `topology` (from the box as given).
  Status ApplyFittedFabric(const net::Topology& given) {
    topology = given;
    const config::Calibration c = CalibrationFromFit(result, given, "");
    return ApplyFabricCalibration(c.fabric(), &topology);
  }

  void Record(const std::string& name, const std::string& unit, double value, const LinearSolution& s, int col) {
    if (!s.determined[col]) {
      if (s.has_items[col]) result.not_fitted.push_back(name + ": not separable by the items used (default kept)");
      return;
    }
    result.fitted.push_back({name, unit, value, s.residual_rms[col], s.points[col]});
  }

  // t = L + B * (1/BW) over `rows` (bytes, measured ns). Updates `c` where determined.
  Status FitClass(const std::string& name, const std::vector<std::pair<double, double>>& rows, TransferClass* c) {
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

  Status FitHostCopies() {
    std::map<std::string, std::vector<std::pair<double, double>>> rows;
    for (const trace::Item* it : items) {
      if (it->kind() != trace::KIND_H2D_COPY && it->kind() != trace::KIND_D2H_COPY) continue;
      const trace::TransferParams& t = it->transfer();
      std::string cls = std::string(t.direction() == trace::DIRECTION_H2D ? "h2d" : "d2h") +
                        (t.host_memory() == trace::HOST_PAGEABLE ? "_pageable" : "_pinned");
      rows[cls].push_back({static_cast<double>(t.bytes()), MeasuredNs(*it)});
    }
    FabricParams& f = result.params.fabric;
    RETURN_IF_ERROR(FitClass("fabric.h2d_pinned", rows["h2d_pinned"], &f.h2d_pinned));
    RETURN_IF_ERROR(FitClass("fabric.d2h_pinned", rows["d2h_pinned"], &f.d2h_pinned));
    RETURN_IF_ERROR(FitClass("fabric.h2d_pageable", rows["h2d_pageable"], &f.h2d_pageable));
    RETURN_IF_ERROR(FitClass("fabric.d2h_pageable", rows["d2h_pageable"], &f.d2h_pageable));
    return OkStatus();
  }

  const TransferClass& Host(trace::Direction d, trace::HostMemory m) const {
    const FabricParams& f = result.params.fabric;
    const bool pageable = m == trace::HOST_PAGEABLE;
    if (d == trace::DIRECTION_H2D) return pageable ? f.h2d_pageable : f.h2d_pinned;
    return pageable ? f.d2h_pageable : f.d2h_pinned;
  }

  // Multi-stream overhead and 1/duplex for engine count c; returns the problem.
  LinearProblem MultiStreamProblem(int engines) const {
    LinearProblem p;
    p.names = {"fabric.multi_stream_overhead_ns", "fabric.inverse_duplex_factor"};
    p.defaults = {result.params.fabric.multi_stream_overhead_ns, 1 / result.params.fabric.duplex_factor};
    for (const trace::Item* it : items) {
      const trace::TransferParams& t = it->transfer();
      const double bytes = static_cast<double>(t.bytes()), ns = MeasuredNs(*it);
      if (it->kind() == trace::KIND_CONCURRENT_COPIES) {
        const TransferClass& c = Host(t.direction(), t.host_memory());
        const int k = std::max(1, t.streams());
        const int rounds = (k + engines - 1) / engines;
        p.AddRow({1, 0}, ns - rounds * c.latency_ns - k * bytes / c.bandwidth_gbps, 1 / ns);
      } else if (it->kind() == trace::KIND_BIDIR_COPY) {
        const TransferClass& h = Host(trace::DIRECTION_H2D, t.host_memory());
        const TransferClass& d = Host(trace::DIRECTION_D2H, t.host_memory());
        const TransferClass& slow = h.TimeNs(bytes) >= d.TimeNs(bytes) ? h : d;
        p.AddRow({1, bytes / slow.bandwidth_gbps}, ns - slow.latency_ns, 1 / ns);
      }
    }
    return p;
  }

  Status FitMultiStream(int max_engines) {
    int concurrent = 0;
    for (const trace::Item* it : items) concurrent += it->kind() == trace::KIND_CONCURRENT_COPIES;
    FabricParams& f = result.params.fabric;
    int best = f.copy_engines_per_direction;
    if (concurrent > 0) {
      double best_err = INFINITY;
      for (int c = 1; c <= std::max(1, max_engines); ++c) {
        auto s = SolveLeastSquares(MultiStreamProblem(c), true, "copy engines");
        if (!s.ok()) continue;
        double err = 0;
        for (double r : s->residual_rms) err += r;
        if (err < best_err - 1e-9) {
          best_err = err;
          best = c;
        }
      }
      f.copy_engines_per_direction = best;
      result.fitted.push_back({"fabric.copy_engines_per_direction", "engines", double(best), best_err, concurrent});
    } else {
      result.not_fitted.push_back("fabric.copy_engines_per_direction: no concurrent-copy items (default kept)");
    }
    LinearProblem p = MultiStreamProblem(best);
    if (p.rows.empty()) {
      result.not_fitted.push_back(
          "fabric.duplex_factor, fabric.multi_stream_overhead_ns: no bidirectional or "
          "concurrent copies (defaults kept)");
      return OkStatus();
    }
    ASSIGN_OR_RETURN(LinearSolution s, SolveLeastSquares(p, options.fix_undetermined, "multi-stream copies"));
    if (s.determined[0]) f.multi_stream_overhead_ns = s.x[0];
    Record("fabric.multi_stream_overhead_ns", "ns", f.multi_stream_overhead_ns, s, 0);
    if (s.determined[1] && s.x[1] > 0) {
      f.duplex_factor = 1 / s.x[1];
      Record("fabric.duplex_factor", "", f.duplex_factor, s, 1);
    } else if (!s.has_items[1]) {
      result.not_fitted.push_back("fabric.duplex_factor: no bidirectional copies (default kept)");
    }
    return OkStatus();
  }

  Status FitZeroCopy() {
    FabricParams& f = result.params.fabric;
    std::vector<std::pair<double, double>> writes;
    std::vector<const trace::Item*> reads;
    for (const trace::Item* it : items) {
      if (it->kind() == trace::KIND_ZERO_COPY_WRITE)
        writes.push_back({double(it->transfer().bytes()), MeasuredNs(*it)});
      if (it->kind() == trace::KIND_ZERO_COPY_READ) reads.push_back(it);
    }
    RETURN_IF_ERROR(FitClass("fabric.zero_copy_write", writes, &f.zero_copy_write));
    if (reads.empty()) {
      result.not_fitted.push_back(
          "fabric.zero_copy_read, fabric.kernel_read_per_sm_gbps: no zero-copy reads (default kept)");
      return OkStatus();
    }
    // Start: the best observed rate is the link; the best one-block rate the per-SM cap.
    double link = 0, per_sm = 0;
    for (const trace::Item* it : reads) {
      const double gbps = it->transfer().bytes() / MeasuredNs(*it);
      link = std::max(link, gbps);
      if (it->transfer().blocks() == 1) per_sm = std::max(per_sm, gbps);
    }
    if (per_sm <= 0) per_sm = f.kernel_read_per_sm_gbps > 0 ? f.kernel_read_per_sm_gbps : link;
    const int gpu = reads[0]->transfer().gpu();
    const int sms = gpu < topology.num_gpus() ? topology.gpu_spec(gpu).sm_count : 1;
    LinearSolution s;
    for (int round = 0; round < 20; ++round) {
      LinearProblem p;
      p.names = {"fabric.zero_copy_read.latency_ns", "fabric.zero_copy_read.inverse_bandwidth",
                 "fabric.inverse_kernel_read_per_sm_gbps"};
      p.defaults = {f.zero_copy_read.latency_ns, 1 / link, 1 / per_sm};
      for (const trace::Item* it : reads) {
        const double b = double(it->transfer().bytes()), ns = MeasuredNs(*it);
        const int used = std::max(1, std::min(it->transfer().blocks(), sms));
        if (used * per_sm < link)
          p.AddRow({1, 0, b / used}, ns, 1 / ns);
        else
          p.AddRow({1, b, 0}, ns, 1 / ns);
      }
      ASSIGN_OR_RETURN(s, SolveLeastSquares(p, true, "zero-copy reads"));
      const double new_link = s.determined[1] && s.x[1] > 0 ? 1 / s.x[1] : link;
      const double new_sm = s.determined[2] && s.x[2] > 0 ? 1 / s.x[2] : per_sm;
      f.zero_copy_read.latency_ns = s.x[0];
      const bool stable = std::abs(new_link - link) < 1e-6 * link && std::abs(new_sm - per_sm) < 1e-6 * per_sm;
      link = new_link;
      per_sm = new_sm;
      if (stable) break;
    }
    if (!s.determined[0] && !options.fix_undetermined)
      return InvalidArgumentError("zero-copy reads: cannot determine the latency (measure more sizes)");
    f.zero_copy_read.bandwidth_gbps = link;
    Record("fabric.zero_copy_read.latency_ns", "ns", f.zero_copy_read.latency_ns, s, 0);
    Record("fabric.zero_copy_read.bandwidth_gbps", "GB/s", link, s, 1);
    if (s.has_items[2]) {
      f.kernel_read_per_sm_gbps = per_sm;
      Record("fabric.kernel_read_per_sm_gbps", "GB/s", per_sm, s, 2);
    } else {
      result.not_fitted.push_back("fabric.kernel_read_per_sm_gbps: every read was link-limited (default kept)");
    }
    return OkStatus();
  }

  Status FitP2p() {
    std::map<std::string, std::map<int, std::vector<std::pair<double, double>>>> rows;  // class -> kind
    for (const trace::Item* it : items) {
      const trace::Kind k = it->kind();
      if (k != trace::KIND_P2P_COPY && k != trace::KIND_P2P_KERNEL_READ && k != trace::KIND_P2P_KERNEL_WRITE) continue;
      rows[PathClassName(it->transfer().path_class())][k].push_back({double(it->transfer().bytes()), MeasuredNs(*it)});
    }
    if (rows.empty()) {
      result.not_fitted.push_back(
          "fabric.p2p (per path class): no GPU-to-GPU items (one GPU?): the simulator's "
          "routed-path defaults are kept");
      return OkStatus();
    }
    for (auto& [cls, by_kind] : rows) {
      if (cls.empty()) continue;
      const trace::Item* any = nullptr;
      for (const trace::Item* it : items)
        if (it->has_transfer() && PathClassName(it->transfer().path_class()) == cls) any = it;
      P2pParams& pp = result.params.fabric.p2p[cls];
      pp = P2pDefaults(topology, any->transfer().src_gpu(), any->transfer().dst_gpu(), result.params.compute);
      const std::string base = "fabric.p2p." + cls;
      if (by_kind.count(trace::KIND_P2P_COPY))
        RETURN_IF_ERROR(FitClass(base + ".copy", by_kind[trace::KIND_P2P_COPY], &pp.copy));
      if (by_kind.count(trace::KIND_P2P_KERNEL_WRITE))
        RETURN_IF_ERROR(FitClass(base + ".kernel_write", by_kind[trace::KIND_P2P_KERNEL_WRITE], &pp.kernel_write));
      if (by_kind.count(trace::KIND_P2P_KERNEL_READ))
        RETURN_IF_ERROR(FitClass(base + ".kernel_read", by_kind[trace::KIND_P2P_KERNEL_READ], &pp.kernel_read));
    }
    return OkStatus();
  }

  // Attention items, per implementation (compute/attention_cost.h): the geometry of the kernel
  // (SpecsimValidateKernel) and its costs, fitted by Nelder-Mead on the squared log errors (the
  // model is a max() of terms, which a linearisation cannot follow across its kinks):
  //   main  = ramp + max(rounds (block_ns + block_row_latency_ns valid_rows), sm_blocks block_row_ns valid_rows)
  //                + max(KV_bytes / (bw e_m), sm_blocks kv_tiles (tile_ns + row_ns rows_per_block),
  //                      rounds kv_tiles (tile_latency_ns + row_latency_ns rows_per_block))
  //   merge = [splits > 1] combine_ns + combine_waves (combine_block_ns + combine_split_ns splits)
  // Items that timed their main kernel alone (AttentionParams.main_kernel_median_us) fit the main
  // kernel's costs and then the merge pass's on the difference; without any, all costs on the totals.
  // Implementations without a known geometry are not fitted (noted); nor is MLA (not simulated).
  Status FitAttention() {
    std::map<std::string, std::vector<const trace::Item*>> by_impl;
    for (const trace::Item* it : items) {
      if (it->kind() != trace::KIND_ATTENTION) continue;
      const ItemKernel ik = KernelOfItem(*it);
      if (ik.ok && ik.kernel.has_attention_call) by_impl[AttentionImplementationOf(it->attention())].push_back(it);
    }
    const net::GpuSpec& gpu = topology.gpu_spec(0);
    compute::ComputeParams& cp = result.params.compute;
    for (const auto& [name, its] : by_impl) {
      auto geometry = compute::SpecsimValidateKernel(name);
      if (!geometry.ok()) {
        result.not_fitted.push_back("compute.attention." + name + ": " + geometry.status().message());
        continue;
      }
      if (gpu.sm_count < 1) {
        result.not_fitted.push_back("compute.attention." + name + ": the GPU's sm_count is unknown");
        continue;
      }
      compute::AttentionImplementation impl = *geometry;
      if (const compute::AttentionImplementation* old = cp.FindAttentionImplementation(name)) impl = *old;
      const std::string pre = "compute.attention." + name;
      // Rows: (item, measured ns, part): the main kernel alone, the merge pass alone (total - main)
      // or the whole call.
      enum Part { kMain, kMerge, kWhole };
      struct Row {
        compute::AttentionCall call;
        double ns;
        Part part;
      };
      // A timed call measures its kernels plus the timed call's gap (predictors.h TimedKernelNs): the
      // main and whole rows lose it; the merge rows (call - main) hold the merge pass and the gap
      // between the two kernels, which the merge pass's fixed cost takes.
      std::vector<Row> rows;
      const compute::KernelCostModel gap_cost(gpu, cp);
      const double gap_ns = TimedCallGapNs(gap_cost, result.params.bench);
      for (const trace::Item* it : its) {
        const compute::Kernel k = KernelOfItem(*it).kernel;
        const double ns = MeasuredNs(*it);
        const double main_ns = it->attention().main_kernel_median_us() * 1e3;
        if (main_ns > 0 && main_ns < ns) {
          rows.push_back({k.attention, std::max(1.0, main_ns - gap_ns), kMain});
          rows.push_back({k.attention, ns - main_ns, kMerge});
        } else {
          rows.push_back({k.attention, std::max(1.0, ns - gap_ns), kWhole});
        }
      }
      // Unknowns in log space (costs > 0) and logit space (efficiency in (0, 1)).
      enum {
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
      auto to_impl = [&impl](const std::vector<double>& x) {
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
      };
      auto log_error = [&](const compute::AttentionImplementation& a, const Row& r) {
        const compute::AttentionTerms t = compute::AttentionTime(a, r.call, gpu.sm_count, gpu.memory_bandwidth_gbps);
        const double predicted = r.part == kMain ? t.main_ns() : r.part == kMerge ? t.combine_ns : t.total_ns();
        return std::log(std::max(predicted, 1.0) / std::max(r.ns, 1.0));
      };
      // Sum of squared log errors over the rows of `parts`.
      auto objective = [&](const std::vector<Part>& parts) {
        return [&, parts](const std::vector<double>& x) {
          const compute::AttentionImplementation a = to_impl(x);
          double sum = 0;
          for (const Row& r : rows)
            if (std::find(parts.begin(), parts.end(), r.part) != parts.end()) sum += std::pow(log_error(a, r), 2);
          return sum;
        };
      };
      std::vector<double> x0 = {std::log(std::max(impl.ramp_ns, 1.0)),
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
      // Restarts from the start and from it scaled down and up (the max() has flat regions).
      constexpr int kEvaluations = 20000;
      auto minimize = [&](const std::function<double(const std::vector<double>&)>& f, std::vector<double> x) {
        NelderMeadResult best;
        best.value = std::numeric_limits<double>::infinity();
        for (double shift : {0.0, -1.0, 1.0}) {
          std::vector<double> start = x;
          for (int j : {kRampA, kTileA, kRowA, kTileLatA, kRowLatA, kBlockA, kBlockRowA, kBlockRowLatA})
            start[j] += shift;
          NelderMeadResult r = MinimizeNelderMead(f, start, std::vector<double>(x.size(), 0.5), 1e-12, kEvaluations);
          r = MinimizeNelderMead(f, r.x, std::vector<double>(x.size(), 0.1), 1e-12, kEvaluations);  // restart in place
          if (r.value < best.value) best = r;
        }
        return best.x;
      };
      const bool parts_apart = std::any_of(rows.begin(), rows.end(), [](const Row& r) { return r.part == kMain; });
      std::vector<double> x = x0;
      if (parts_apart) {
        // Main-kernel costs on the main rows and the whole-call rows (one split: no merge pass; an
        // item with splits that timed no main kernel also lands here, its merge at the start
        // values), then the merge pass's costs on the differences.
        std::vector<double> fitted = minimize(objective({kMain, kWhole}), x0);
        for (int j : {kRampA, kMemA, kTileA, kRowA, kTileLatA, kRowLatA, kBlockA, kBlockRowA, kBlockRowLatA})
          x[j] = fitted[j];
        fitted = minimize(objective({kMerge}), x);
        for (int j : {kCombineA, kCombineBlockA, kCombineSplitA}) x[j] = fitted[j];
      } else {
        x = minimize(objective({kWhole}), x0);
      }
      impl = to_impl(x);
      // A cost the items drove towards zero (exp of a large negative) is written as 0.
      for (double* v : {&impl.ramp_ns, &impl.tile_ns, &impl.row_ns, &impl.tile_latency_ns, &impl.row_latency_ns,
                        &impl.block_ns, &impl.block_row_ns, &impl.block_row_latency_ns, &impl.combine_ns,
                        &impl.combine_block_ns, &impl.combine_split_ns})
        if (*v < 1e-6) *v = 0;
      double sum = 0;
      for (const Row& r : rows) sum += std::pow(log_error(impl, r), 2);
      const double residual = rows.empty() ? 0 : std::sqrt(sum / double(rows.size()));
      const int points = static_cast<int>(its.size());
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
        result.fitted.push_back({pre + "." + field, unit, value, residual, points});
      cp.SetAttentionImplementation(impl);
    }
    return OkStatus();
  }

  enum Col {
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

  // GEMM items by library (GemmParams.library; empty: cublasGemmEx, validate's only library
  // before 2026-11-30). The main library's (the decode loop's, else the one with the most items)
  // join the compute fit; every other library's GEMM costs are fitted on its own items with the
  // launch items, the rest of the compute model as the main fit left it.
  Status FitComputeByGemmLibrary() {
    std::map<std::string, int> count;
    for (const trace::Item* it : items)
      if (it->kind() == trace::KIND_GEMM && KernelOfItem(*it).ok) ++count[GemmLibraryOf(it->gemm())];
    std::string main;
    for (const trace::Item* it : items)
      if (it->has_decode() && !it->decode().gemm_library().empty()) main = it->decode().gemm_library();
    if (main.empty() || !count.count(main)) {
      int most = 0;
      for (const auto& [lib, n] : count)
        if (n > most) most = n, main = lib;
    }
    const std::vector<const trace::Item*> all = items;
    auto only = [&](const std::function<bool(const trace::Item*)>& keep) {
      items.clear();
      for (const trace::Item* it : all)
        if (keep(it)) items.push_back(it);
    };
    // The predictions inside the fits take the fields being fitted: the library they describe is
    // the one being fitted.
    result.params.compute.gemm_library = main;
    only([&](const trace::Item* it) { return it->kind() != trace::KIND_GEMM || GemmLibraryOf(it->gemm()) == main; });
    Status st = FitComputeWithGemmOverlap();
    items = all;
    RETURN_IF_ERROR(st);
    for (const auto& entry : count) {
      const std::string& lib = entry.first;  // named references: lambdas below capture them
      const int n = entry.second;
      if (lib == main) continue;
      const FitResult base = result;
      result.params.compute.gemm_library = lib;
      result.params.compute.gemm_libraries.clear();
      only([&](const trace::Item* it) {
        return it->kind() == trace::KIND_LAUNCH_OVERHEAD ||
               (it->kind() == trace::KIND_GEMM && GemmLibraryOf(it->gemm()) == lib);
      });
      Status lib_status = FitComputeWithGemmOverlap();
      const compute::ComputeParams fitted = result.params.compute;
      // rms log error of the library's items under its own fit
      double sum = 0;
      if (lib_status.ok()) {
        const Predictor at(trace, topology, result.params);
        for (const trace::Item* it : items) {
          if (it->kind() != trace::KIND_GEMM) continue;
          const Prediction p = at.Predict(*it);
          if (p.simulated && p.predicted_us > 0)
            sum += std::pow(std::log(p.predicted_us / (MeasuredNs(*it) * 1e-3)), 2);
        }
      }
      const double residual = std::sqrt(sum / std::max(1, n));
      result = base;
      items = all;
      if (!lib_status.ok()) {
        result.not_fitted.push_back("compute.gemm." + lib + ": " + lib_status.message());
        continue;
      }
      compute::ComputeParams::GemmLibraryCosts g;
      g.library = lib;
      g.skinny_gemm_memory_efficiency = fitted.skinny_gemm_memory_efficiency;
      g.gemm_compute_efficiency = fitted.gemm_compute_efficiency;
      g.gemm_memory_ramp_ns = fitted.RampNs(compute::KernelClass::kGemm);
      g.gemm_column_rate_gbps = fitted.gemm_column_rate_gbps;
      g.gemm_overlap = fitted.gemm_overlap;
      result.params.compute.SetGemmLibrary(g);
      for (auto [field, unit, value] : std::vector<std::tuple<const char*, const char*, double>>{
               {"skinny_gemm_memory_efficiency", "", g.skinny_gemm_memory_efficiency},
               {"gemm_compute_efficiency", "", g.gemm_compute_efficiency},
               {"gemm_memory_ramp_ns", "ns", g.gemm_memory_ramp_ns},
               {"gemm_column_rate_gbps", "GB/s per column", g.gemm_column_rate_gbps},
               {"gemm_overlap", "", g.gemm_overlap}})
        result.fitted.push_back({"compute.gemm." + lib + "." + field, unit, value, residual, n});
    }
    return OkStatus();
  }

  // gemm_overlap (kernel_cost.h): the value of 0, 0.1, ..., 0.5 whose compute fit leaves the
  // smallest sum of squared log errors over the GEMM items, among those whose GEMM efficiencies stay
  // below the datasheet peaks; the compute fit is then redone with it.
  Status FitComputeWithGemmOverlap() {
    std::vector<const trace::Item*> gemms;
    for (const trace::Item* it : items)
      if (it->kind() == trace::KIND_GEMM && KernelOfItem(*it).ok) gemms.push_back(it);
    if (gemms.empty()) return FitCompute();
    const FitResult saved = result;
    double best_overlap = saved.params.compute.gemm_overlap, best = std::numeric_limits<double>::infinity();
    for (double overlap : {0.0, 0.1, 0.2, 0.3, 0.4, 0.5}) {
      result = saved;
      result.params.compute.gemm_overlap = overlap;
      if (!FitCompute().ok()) continue;  // the final fit below reports the error
      // An overlap the efficiencies can only meet by streaming or computing at the datasheet peak
      // (or above it, clamped) is not a physical fit.
      const compute::ComputeParams& fitted = result.params.compute;
      if (overlap > 0 && (fitted.skinny_gemm_memory_efficiency >= 0.999 || fitted.gemm_compute_efficiency >= 0.999))
        continue;
      const Predictor at(trace, topology, result.params);
      double sum = 0;
      for (const trace::Item* it : gemms) {
        const Prediction p = at.Predict(*it);
        if (p.simulated && p.predicted_us > 0) sum += std::pow(std::log(p.predicted_us / (MeasuredNs(*it) * 1e-3)), 2);
      }
      if (sum < best) {
        best = sum;
        best_overlap = overlap;
      }
    }
    result = saved;
    result.params.compute.gemm_overlap = best_overlap;
    RETURN_IF_ERROR(FitCompute());
    result.fitted.push_back({"compute.gemm_overlap", "", best_overlap, std::sqrt(best / double(gemms.size())),
                             static_cast<int>(gemms.size())});
    return OkStatus();
  }

  Status FitCompute() {
    compute::ComputeParams& cp = result.params.compute;
    std::vector<const trace::Item*> ks;
    for (const trace::Item* it : items) {
      const trace::Kind k = it->kind();
      if (k == trace::KIND_LAUNCH_OVERHEAD)
        ks.push_back(it);
      else if ((k == trace::KIND_GEMM || k == trace::KIND_RMSNORM) && KernelOfItem(*it).ok)
        ks.push_back(it);
    }
    if (ks.empty()) {
      result.not_fitted.push_back(
          "compute (launch overheads, kernel floor, efficiencies): no kernel items (defaults kept)");
      return OkStatus();
    }
    const net::GpuSpec& gpu = topology.gpu_spec(0);
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
    double l2_gbps = result.params.bench.l2_resident_bandwidth_gbps > 0 ? result.params.bench.l2_resident_bandwidth_gbps
                                                                        : 2 * gpu.memory_bandwidth_gbps;
    std::vector<int> last_class;
    LinearSolution s;
    LinearProblem p;
    for (int round = 0; round < 20; ++round) {
      p = LinearProblem{};
      p.names = {"compute.launch_overhead_eager_ns",
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
      compute::ComputeParams safe = cp;
      auto clamp = [](double& e) { e = std::clamp(e, 1e-3, 1.0); };
      clamp(safe.memory_efficiency);
      clamp(safe.skinny_gemm_memory_efficiency);
      clamp(safe.attention_memory_efficiency);
      clamp(safe.gemm_compute_efficiency);
      clamp(safe.attention_compute_efficiency);
      for (double* v :
           {&safe.kernel_floor_ns, &safe.memory_ramp_ns, &safe.gemm_memory_ramp_ns, &safe.attention_memory_ramp_ns,
            &safe.launch_overhead_eager_ns, &safe.launch_overhead_graph_ns, &safe.graph_launch_ns})
        *v = std::max(0.0, *v);
      compute::KernelCostModel cost(gpu, safe);
      std::vector<int> cls;
      for (const trace::Item* it : ks) {
        const double ns = MeasuredNs(*it);
        std::vector<double> row(kCols, 0);
        if (it->kind() == trace::KIND_LAUNCH_OVERHEAD) {
          const double k = std::max(1, it->launch().kernels());
          if (it->launch().cuda_graph()) {
            row[kGraphLaunch] = 1;
            row[kFloor] = k;
            row[kGraphGap] = k;
          } else {
            row[kIssue] = k;
            row[kFloor] = 1;
          }
          p.AddRow(row, ns, 1 / ns);
          cls.push_back(-1);
          continue;
        }
        const compute::Kernel kernel = KernelOfItem(*it).kernel;
        // GPU-bound items measure device + the timed call's gap (predictors.h TimedKernelNs);
        // host-bound ones say nothing of the device time and are left to the launch items.
        // A profiler's kernel durations (KernelTimeOnly) are device time already.
        double rhs = KernelTimeOnly(*it) ? ns : ns - TimedCallGapNs(cost, result.params.bench);
        const bool tensor = kernel.kernel_class == compute::KernelClass::kGemm ||
                            kernel.kernel_class == compute::KernelClass::kAttention;
        double compute_ns = 0;
        if (tensor && kernel.flops > 0)
          compute_ns = kernel.flops / (cost.PeakTflops(kernel.math_dtype) * 1e3 * cost.ComputeEfficiency(kernel));
        if (compute_ns > 0 && kernel.kernel_class == compute::KernelClass::kAttention)
          compute_ns += safe.RampNs(compute::KernelClass::kAttention);
        BenchParams bench;
        bench.l2_resident_bandwidth_gbps = l2_gbps;
        const bool resident = L2Resident(*it, kernel, gpu, bench);
        const double memory_ns = resident ? safe.memory_ramp_ns + kernel.bytes / l2_gbps : cost.MemoryNs(kernel);
        // A kernel that moves bytes is a memory or compute row, never a floor row: the floor is the
        // empty kernel of the launch items, and a small kernel's extra time is the memory ramp
        // (which the fit keeps above the floor whenever small kernels outlast empty ones).
        int c = kernel.bytes > 0 ? 1 : 0;  // 0 floor, 1 memory, 2 compute
        double best = c == 1 ? memory_ns : safe.kernel_floor_ns;
        if (compute_ns > best) {
          c = 2;
          best = compute_ns;
        }
        // Items the law calls host-bound and that measure within 1.3x the host's per-call period
        // (issue + floor) say nothing of the device time: near the period a call measures part
        // host, part device.
        if (!KernelTimeOnly(*it) &&
            TimedKernelHostBound(cost, result.params.bench, std::max(best, safe.kernel_floor_ns)) &&
            ns < 1.3 * (safe.launch_overhead_eager_ns + safe.kernel_floor_ns))
          continue;
        if (c == 0) {
          row[kFloor] = 1;
        }
        // The memory and compute terms' coefficients, scaled by `w` (GEMMs: the term that binds
        // counts 1, the other gemm_overlap; kernel_cost.h).
        auto memory_terms = [&](double w) {
          row[kernel.kernel_class == compute::KernelClass::kGemm        ? kRampGemm
              : kernel.kernel_class == compute::KernelClass::kAttention ? kRampAtt
                                                                        : kRamp] += w;
          const double x = kernel.bytes / gpu.memory_bandwidth_gbps;
          if (resident)
            row[kInvL2] += w * kernel.bytes;
          else if (cost.ColumnLimited(kernel))
            row[kInvCol] += w * (kernel.weight_bytes > 0 ? kernel.weight_bytes : kernel.bytes) / kernel.n;
          else if (kernel.kernel_class == compute::KernelClass::kGemm)
            row[kInvSkinny] += w * x;
          else if (kernel.kernel_class == compute::KernelClass::kAttention)
            row[kInvAtt] += w * x;
          else
            row[kInvMem] += w * x;
        };
        auto gemm_compute_terms = [&](double w) {
          const double ramp = kernel.m > 0 ? kernel.m / (kernel.m + safe.gemm_m_half) : 1.0;
          row[kInvGemmC] += w * kernel.flops / (cost.PeakTflops(kernel.math_dtype) * 1e3 * ramp);
        };
        const bool gemm = kernel.kernel_class == compute::KernelClass::kGemm;
        const double overlap = gemm && kernel.flops > 0 && !resident ? safe.gemm_overlap : 0;
        if (c == 1) {
          memory_terms(1);
          if (overlap > 0) gemm_compute_terms(overlap);
        } else if (c == 2 && gemm) {
          gemm_compute_terms(1);
          if (overlap > 0) memory_terms(overlap);
        } else if (c == 2) {
          // Attention: fixed cost (the attention ramp) + per-query compute (kernel_cost.h).
          row[kRampAtt] = 1;
          row[kInvAttC] = kernel.flops / (cost.PeakTflops(kernel.math_dtype) * 1e3);
        }
        p.AddRow(row, rhs, 1 / ns);
        cls.push_back(c);
      }
      // Launch items first, alone: eager issue, floor (the empty kernel), graph launch and gap.
      // The kernel rows then see the eager issue as known (their issue + ramp intercept cannot
      // separate the two).
      {
        LinearProblem lp = p;
        lp.rows.clear();
        lp.rhs.clear();
        lp.weights.clear();
        LinearProblem kp = lp;
        for (size_t i = 0; i < p.rows.size(); ++i) {
          (cls[i] == -1 ? lp : kp).AddRow(p.rows[i], p.rhs[i], p.weights[i]);
        }
        ASSIGN_OR_RETURN(LinearSolution ls, SolveLeastSquares(lp, true, "launch overheads"));
        if (ls.determined[kGraphGap] && ls.x[kGraphGap] < 0) {
          // A graph's per-kernel cost below the eager intercept: hold the gap at 0 (it cannot be
          // negative) and refit the rest.
          for (auto& row : lp.rows) row[kGraphGap] = 0;
          lp.defaults[kGraphGap] = 0;
          ASSIGN_OR_RETURN(ls, SolveLeastSquares(lp, true, "launch overheads"));
          ls.points[kGraphGap] = ls.points[kGraphLaunch];
          result.not_fitted.push_back(
              "compute.launch_overhead_graph_ns: the graph's per-kernel time is below the "
              "eager launches' device tail; held at 0");
        }
        // Kernel rows: move the issue term to the right-hand side.
        const double issue = ls.has_items[kIssue] ? ls.x[kIssue] : cp.launch_overhead_eager_ns;
        for (size_t i = 0; i < kp.rows.size(); ++i) {
          kp.rhs[i] -= kp.rows[i][kIssue] * issue;
          kp.rows[i][kIssue] = 0;
        }
        ASSIGN_OR_RETURN(LinearSolution ks, SolveLeastSquares(kp, true, "kernel efficiencies"));
        s = ks;
        for (int j : {kIssue, kFloor, kGraphLaunch, kGraphGap}) {
          s.x[j] = ls.x[j];
          s.determined[j] = ls.determined[j];
          s.has_items[j] = ls.has_items[j];
          s.points[j] = ls.points[j];
          s.residual_rms[j] = ls.residual_rms[j];
        }
        if (!ls.has_items[kIssue] && ks.points[kIssue] == 0) s.x[kIssue] = cp.launch_overhead_eager_ns;
      }
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
      result.params.bench.l2_resident_bandwidth_gbps = s.has_items[kInvL2] ? l2_gbps : 0;
      if (cls == last_class) break;
      last_class = cls;
    }
    // Undetermined columns that had items: refuse (calibrate) or keep defaults (compare).
    if (!options.fix_undetermined) {
      std::string bad;
      for (int j = 0; j < kCols; ++j)
        if (s.has_items[j] && !s.determined[j]) bad += (bad.empty() ? "" : ", ") + p.names[j];
      if (!bad.empty())
        return InvalidArgumentError("compute fit: cannot determine " + bad +
                                    ": the trace's kernel and launch items do not separate them");
    }
    const char* names[kCols] = {"compute.launch_overhead_eager_ns",
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
    const char* units[kCols] = {"ns", "ns", "ns",   "ns", "ns", "", "",
                                "",   "",   "GB/s", "ns", "ns", "", "GB/s per column"};
    // A column rate that binds no item is not a measurement: back to the default (no limit).
    if (!s.has_items[kInvCol]) cp.gemm_column_rate_gbps = compute::ComputeParams{}.gemm_column_rate_gbps;
    const double values[kCols] = {cp.launch_overhead_eager_ns,
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
    const compute::ComputeParams defaults;
    const double default_values[kCols] = {defaults.launch_overhead_eager_ns,
                                          defaults.kernel_floor_ns,
                                          defaults.graph_launch_ns,
                                          defaults.launch_overhead_graph_ns,
                                          defaults.memory_ramp_ns,
                                          defaults.memory_efficiency,
                                          defaults.skinny_gemm_memory_efficiency,
                                          defaults.attention_memory_efficiency,
                                          defaults.gemm_compute_efficiency,
                                          0,
                                          0,
                                          0,
                                          0,
                                          0};
    (void)default_values;
    for (int j = 0; j < kCols; ++j) {
      if (!s.has_items[j]) {
        result.not_fitted.push_back(std::string(names[j]) + ": no items bind it (default kept)");
        continue;
      }
      Record(names[j], units[j], values[j], s, j);
    }
    // Physical checks.
    std::string bad;
    for (int j : {kInvMem, kInvSkinny, kInvAtt, kInvGemmC, kInvAttC})
      if (s.determined[j] && !(values[j] > 0 && values[j] <= 1.0))
        bad += std::string(bad.empty() ? "" : "; ") + names[j] + " = " + std::to_string(values[j]);
    for (int j : {kIssue, kFloor, kGraphLaunch, kGraphGap, kRamp, kRampGemm, kRampAtt, kInvCol})
      if (s.determined[j] && values[j] < 0)
        bad += std::string(bad.empty() ? "" : "; ") + names[j] + " = " + std::to_string(values[j]);
    if (!bad.empty()) {
      if (!options.fix_undetermined)
        return InvalidArgumentError("compute fit: unphysical values (" + bad +
                                    "): an efficiency above 1 means the hardware config's peak rate is too low for "
                                    "what was measured; a negative time means the items do not support the law");
      // Compare: clamp into range so the cost model stays valid.
      cp.memory_efficiency = std::clamp(cp.memory_efficiency, 1e-3, 1.0);
      cp.skinny_gemm_memory_efficiency = std::clamp(cp.skinny_gemm_memory_efficiency, 1e-3, 1.0);
      cp.attention_memory_efficiency = std::clamp(cp.attention_memory_efficiency, 1e-3, 1.0);
      cp.gemm_compute_efficiency = std::clamp(cp.gemm_compute_efficiency, 1e-3, 1.0);
      cp.attention_compute_efficiency = std::clamp(cp.attention_compute_efficiency, 1e-3, 1.0);
      for (double* v : {&cp.kernel_floor_ns, &cp.memory_ramp_ns, &cp.gemm_memory_ramp_ns, &cp.attention_memory_ramp_ns,
                        &cp.launch_overhead_eager_ns, &cp.launch_overhead_graph_ns, &cp.graph_launch_ns})
        *v = std::max(0.0, *v);
      cp.gemm_column_rate_gbps = std::max(0.0, cp.gemm_column_rate_gbps);
      result.not_fitted.push_back("compute: clamped into range: " + bad);
    }
    return OkStatus();
  }

  // One-rank NCCL calls: the local copy kernel's fill time and bandwidth from the calls replayed in
  // graphs (per call: the graph launch's share + the copy + the graph gap; Gauss-Newton on finite
  // differences, as the copy may sit on its floor), then NCCL's eager per-call cost over the eager
  // calls with that copy.
  Status FitNcclLocal() {
    {
      std::vector<const trace::Item*> graph;
      for (const trace::Item* it : items)
        if (it->kind() == trace::KIND_COLLECTIVE && it->collective().nranks() <= 1 && it->collective().cuda_graph() &&
            it->collective().implementation() == trace::IMPL_NCCL)
          graph.push_back(it);
      if (graph.empty()) {
        result.not_fitted.push_back(
            "nccl.local_copy_ramp_ns, nccl.local_copy_memory_efficiency: no one-rank NCCL calls in CUDA graphs (the "
            "compute model's memory ramp and efficiency are used)");
      } else {
        const NcclParams& n = result.params.nccl;
        const compute::ComputeParams& cp = result.params.compute;
        std::vector<SimUnknown> u = {
            {"nccl.local_copy_ramp_ns", "ns", n.local_copy_ramp_ns > 0 ? n.local_copy_ramp_ns : cp.memory_ramp_ns, 100,
             1e-3, 1e6},
            {"nccl.local_copy_memory_efficiency", "",
             n.local_copy_memory_efficiency > 0 ? n.local_copy_memory_efficiency : cp.memory_efficiency, 0.01, 0.01,
             1.0}};
        RETURN_IF_ERROR(FitBySimulation("nccl one-rank calls in graphs", graph, u,
                                        [](const std::vector<double>& t, CalibParams* p) {
                                          p->nccl.local_copy_ramp_ns = t[0];
                                          p->nccl.local_copy_memory_efficiency = t[1];
                                        }));
      }
    }
    // The eager calls: host-bound ones (the prediction moves with the overhead) measure
    // issue + floor + overhead; a few rounds settle which ones those are.
    std::vector<const trace::Item*> eager;
    for (const trace::Item* it : items)
      if (it->kind() == trace::KIND_COLLECTIVE && it->collective().nranks() <= 1 && !it->collective().cuda_graph())
        eager.push_back(it);
    bool any = false;
    LinearSolution s;
    for (int round = 0; round < 3 && !eager.empty(); ++round) {
      CalibParams bumped = result.params;
      bumped.nccl.local_call_overhead_ns += 100;
      const Predictor predictor(trace, topology, result.params), p1(trace, topology, bumped);
      LinearProblem p;
      p.names = {"nccl.local_call_overhead_ns"};
      p.defaults = {result.params.nccl.local_call_overhead_ns};
      const double current = result.params.nccl.local_call_overhead_ns;
      for (const trace::Item* it : eager) {
        const Prediction pr = predictor.Predict(*it), pb = p1.Predict(*it);
        if (!pr.simulated || !pb.simulated) continue;
        any = true;
        if (pb.predicted_us - pr.predicted_us < 0.05) continue;  // device-bound: says nothing of it
        const double ns = MeasuredNs(*it);
        p.AddRow({1}, ns - (pr.predicted_us * 1e3 - current), 1 / ns);
      }
      if (p.rows.empty()) break;
      ASSIGN_OR_RETURN(s, SolveLeastSquares(p, options.fix_undetermined, "NCCL one-rank calls"));
      const bool done = std::abs(s.x[0] - current) < 1;
      result.params.nccl.local_call_overhead_ns = s.x[0];
      if (done) break;
    }
    if (!any) {
      result.not_fitted.push_back("nccl.local_call_overhead_ns: no one-rank NCCL items (default kept)");
    } else if (s.x.empty()) {
      result.not_fitted.push_back(
          "nccl.local_call_overhead_ns: every eager one-rank call is device-bound (default kept)");
    } else {
      Record("nccl.local_call_overhead_ns", "ns", result.params.nccl.local_call_overhead_ns, s, 0);
    }
    return FitNcclSteps();
  }

  // ---- Fits that go through the simulator (collectives) ----

  // One unknown of a simulation-backed fit.
  struct SimUnknown {
    std::string name, unit;
    double value = 0;  // start, then the fit
    double step = 1;   // finite-difference step
    double lo = 0, hi = 1e12;
    int give_up = -1;  // >= 0: kept at its start, in this order, when the items cannot separate it
  };

  // Damped Gauss-Newton: linearises every item's predicted median in the unknowns by finite
  // differences around the current values, solves the weighted (1/measured) least squares, moves
  // there (clamped to [lo, hi]) and repeats until the largest relative change is below 1e-3 (at most
  // 12 rounds). An unknown that no item's prediction moves keeps its start and is listed in
  // not_fitted; so does one the items cannot separate from the others (of a set the items cannot
  // separate, only the first in `give_up` order when the unknowns give one). `apply` writes the unknowns
  // into a parameter set.
  Status FitBySimulation(const std::string& group, const std::vector<const trace::Item*>& fit_items,
                         std::vector<SimUnknown>& unknowns,
                         const std::function<void(const std::vector<double>&, CalibParams*)>& apply) {
    const int k = static_cast<int>(unknowns.size());
    std::vector<double> theta(k);
    for (int j = 0; j < k; ++j) theta[j] = unknowns[j].value;
    auto params_at = [&](const std::vector<double>& t) {
      CalibParams p = result.params;
      apply(t, &p);
      return p;
    };
    LinearSolution s;
    std::vector<bool> ever_determined(k, false), ever_had_items(k, false);
    std::vector<int> points(k, 0);
    for (int round = 0; round < 12; ++round) {
      LinearProblem p;
      for (const SimUnknown& u : unknowns) p.names.push_back(u.name);
      p.defaults = theta;
      std::vector<std::pair<int, int>> give_up;
      for (int j = 0; j < k; ++j)
        if (unknowns[j].give_up >= 0) give_up.push_back({unknowns[j].give_up, j});
      std::sort(give_up.begin(), give_up.end());
      for (const auto& [order, j] : give_up) p.give_up_order.push_back(j);
      const Predictor at(trace, topology, params_at(theta));
      std::vector<Predictor> bumped;
      std::vector<double> h(k);
      for (int j = 0; j < k; ++j) {
        std::vector<double> t = theta;
        h[j] = t[j] + unknowns[j].step <= unknowns[j].hi ? unknowns[j].step : -unknowns[j].step;
        t[j] += h[j];
        bumped.emplace_back(trace, topology, params_at(t));
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
      if (p.rows.empty()) {
        result.not_fitted.push_back(group + ": no item could be simulated (defaults kept)");
        return OkStatus();
      }
      ASSIGN_OR_RETURN(s, SolveLeastSquares(p, /*fix_undetermined=*/true, group));
      for (int j = 0; j < k; ++j) {
        if (s.determined[j]) {
          ever_determined[j] = true;
          points[j] = std::max(points[j], s.points[j]);
        }
        ever_had_items[j] = ever_had_items[j] || s.has_items[j];
      }
      double change = 0;
      for (int j = 0; j < k; ++j) {
        if (!s.determined[j]) continue;
        // Damping: stay within [lo, hi], and move a positive value by at most 4x or 1/4 per round.
        double next = std::clamp(s.x[j], unknowns[j].lo, unknowns[j].hi);
        if (theta[j] > 0) next = std::clamp(next, theta[j] / 4, theta[j] * 4);
        change = std::max(change, std::abs(next - theta[j]) / std::max(std::abs(theta[j]), 1e-9));
        theta[j] = next;
      }
      if (change < 1e-3) break;
    }
    // An unknown the items never determined keeps its start; one they moved is reported with the
    // residual of the last round's rows (the group's rms relative residual).
    double group_residual = 0;
    for (int j = 0; j < k; ++j) group_residual = std::max(group_residual, s.residual_rms[j]);
    for (int j = 0; j < k; ++j) {
      if (!ever_determined[j]) {
        theta[j] = unknowns[j].value;
        result.not_fitted.push_back(
            unknowns[j].name + (ever_had_items[j] ? ": not separable by the items used" : ": no item depends on it") +
            " (kept at " + std::to_string(theta[j]) + " " + unknowns[j].unit +
            ": the default, or an earlier pass's fit)");
      } else {
        result.fitted.push_back({unknowns[j].name, unknowns[j].unit, theta[j], group_residual, points[j]});
      }
      unknowns[j].value = theta[j];
    }
    apply(theta, &result.params);
    return OkStatus();
  }

  // NCCL's per-step costs per (transport, protocol) from collectives of 2+ ranks: the base latency
  // (once per collective), the per-step latency (a floor on every chunk's step) and the channel
  // rate (the most one channel moves), each group fitted on its own items by FitBySimulation.
  // Which transport and protocol an item ran on comes from the planner (the recorded NCCL pick and
  // environment). With one rank count the base and per-step latencies separate only through the
  // chunk counts of larger messages; when they do not, NCCL's per-step value is kept and named.
  Status FitNcclSteps() {
    using Key = std::tuple<coll::NcclTransport, coll::NcclProto, int>;
    std::map<Key, std::vector<const trace::Item*>> groups;
    int multi = 0;
    for (const trace::Item* it : items) {
      if (it->kind() != trace::KIND_COLLECTIVE || it->collective().nranks() < 2 ||
          it->collective().implementation() != trace::IMPL_NCCL)
        continue;
      ++multi;
      auto request = CollectiveRequestOf(it->collective(), result.params);
      if (!request.ok()) continue;
      net::Router router(topology);
      auto plan = coll::PlanCollective(topology, router, *request);
      if (!plan.ok()) continue;
      auto proto = coll::ParseNcclProto(plan->protocol);
      if (!proto.ok()) continue;
      groups[{plan->worst_transport, *proto, static_cast<int>(request->collective)}].push_back(it);
    }
    if (multi == 0) {
      result.not_fitted.push_back(
          "nccl per-step costs (per transport and protocol): need NCCL collectives of 2 or more ranks (NCCL's tables "
          "kept)");
      return OkStatus();
    }
    // Two passes: the groups, then NCCL's eager and in-graph per-call extras from what is left
    // (one pair for every group), then the groups again with those extras.
    for (int pass = 0; pass < 2; ++pass) {
      for (auto& [key, group_items] : groups) RETURN_IF_ERROR(FitNcclGroup(key, group_items, pass == 1));
      if (pass == 0) FitNcclCallExtras();
    }
    return OkStatus();
  }

  // Eager and in-graph NCCL calls differ by what NCCL does per call on the host (eager) or per
  // captured call (graph). The extra is the median, over the items named alike but for their mode
  // (".../eager/..." and ".../graph/...": one op, size, rank count and trace)
  // of (graph - eager measured) - (graph - eager predicted), over the pairs whose
  // eager time is under 1 ms (all pairs if none is): a per-call cost of a few us is invisible in
  // the noise of a 30 ms call (0.5% = 150 us), and a mean over all sizes would be that noise (it
  // gave -23 us on the SHM LL trace, and negative predictions).
  void FitNcclCallExtras() {
    const Predictor at(trace, topology, result.params);
    struct Side {
      double measured_ns = -1, predicted_ns = 0;
    };
    std::map<std::string, std::array<Side, 2>> pairs;
    for (const trace::Item* it : items) {
      if (it->kind() != trace::KIND_COLLECTIVE || it->collective().nranks() < 2 ||
          it->collective().implementation() != trace::IMPL_NCCL || it->collective().kernel_time_only())
        continue;  // (a profiler's kernel durations carry no per-call cost)
      const Prediction p = at.Predict(*it);
      if (!p.simulated) continue;
      // The pair's key: the item's name with its mode taken out (".../allreduce/graph/n2/1KiB").
      const bool graph = it->collective().cuda_graph();
      std::string key = it->name();
      const std::string mode = graph ? "/graph/" : "/eager/";
      if (const size_t at_mode = key.find(mode); at_mode != std::string::npos)
        key.replace(at_mode, mode.size(), "/");
      else
        key += graph ? "#graph" : "#eager";
      Side& side = pairs[key][graph ? 1 : 0];
      side.measured_ns = MeasuredNs(*it);
      side.predicted_ns = p.predicted_us * 1e3;
    }
    std::vector<double> small, all;
    for (const auto& [key, pair] : pairs) {
      if (pair[0].measured_ns < 0 || pair[1].measured_ns < 0) continue;
      const double d = (pair[1].measured_ns - pair[0].measured_ns) - (pair[1].predicted_ns - pair[0].predicted_ns);
      all.push_back(d);
      if (pair[0].measured_ns < 1e6) small.push_back(d);
    }
    if (all.empty()) {
      result.not_fitted.push_back(
          "nccl.graph_call_extra_ns: needs NCCL items of one size both eager and in CUDA graphs (default kept)");
      return;
    }
    std::vector<double>& use = small.empty() ? all : small;
    std::sort(use.begin(), use.end());
    const size_t n = use.size();
    const double median = n % 2 ? use[n / 2] : 0.5 * (use[n / 2 - 1] + use[n / 2]);
    result.params.nccl.graph_call_extra_ns += median;
    result.fitted.push_back(
        {"nccl.graph_call_extra_ns", "ns", result.params.nccl.graph_call_extra_ns, 0, static_cast<int>(2 * n)});
  }

  Status FitNcclGroup(const std::tuple<coll::NcclTransport, coll::NcclProto, int>& key,
                      const std::vector<const trace::Item*>& group_items, bool report) {
    {
      const auto [transport, proto, op] = key;
      const std::string base = std::string("nccl.") + coll::NcclTransportName(transport) + "." +
                               coll::NcclProtoName(proto) + "." +
                               coll::CollectiveName(static_cast<coll::Collective>(op));
      const coll::ProtocolCost& cost = result.params.nccl.protocol.per_op[key];
      const coll::ProtocolModel table =
          coll::ApplyProtocolOverrides(coll::NcclProtocolModel(proto, coll::NcclAlgo::kRing, coll::NcclHwOf(transport)),
                                       proto, transport, result.params.nccl.protocol, op);
      // Channel rate start: slightly above the largest item's measured bus bandwidth per channel
      // (so that it binds there and the fit can move it).
      double channel_start = 0;
      for (const trace::Item* it : group_items) {
        int ch = it->collective().nccl_chosen_channels();
        if (ch <= 0) {  // not recorded: the channels the planner gives the call
          auto request = CollectiveRequestOf(it->collective(), result.params);
          net::Router router(topology);
          auto plan = request.ok() ? coll::PlanCollective(topology, router, *request)
                                   : StatusOr<coll::PlannedCollective>(request.status());
          ch = plan.ok() ? plan->channels : 1;
        }
        channel_start = std::max(channel_start, 1.2 * it->busbw_gbps() / std::max(1, ch));
      }
      if (cost.channel_gbps) channel_start = *cost.channel_gbps;
      std::vector<SimUnknown> u = {
          {base + ".base_latency_us", "us", NanosFromPicos(table.base_latency_ps) * 1e-3, 0.5, 0, 200, 1},
          {base + ".hop_latency_us", "us", NanosFromPicos(table.hop_latency_ps) * 1e-3, 0.25, 0, 100, 0},
          {base + ".channel_gbps", "GB/s", std::max(channel_start, 0.1), 0.05 * std::max(channel_start, 0.1), 0.01, 1e4,
           2}};
      const size_t fitted_before = result.fitted.size(), not_fitted_before = result.not_fitted.size();
      RETURN_IF_ERROR(FitBySimulation(base, group_items, u, [key](const std::vector<double>& t, CalibParams* p) {
        coll::ProtocolCost& c = p->nccl.protocol.per_op[key];
        c.base_latency_us = t[0];
        c.hop_latency_us = t[1];
        c.channel_gbps = t[2];
      }));
      if (!report) {  // the first pass's report is superseded by the second's
        result.fitted.resize(fitted_before);
        result.not_fitted.resize(not_fitted_before);
      }
    }
    return OkStatus();
  }

  // Our one-shot / two-shot kernels per transport (peer, host): the barrier flag's trip and one
  // block's read rate.
  Status FitCustomAllreduce() {
    for (bool host : {false, true}) {
      std::vector<const trace::Item*> group_items;
      double start_rate = 0;
      for (const trace::Item* it : items) {
        if (it->kind() != trace::KIND_CUSTOM_ALLREDUCE || it->collective().nranks() < 2) continue;
        if ((it->collective().transport() == trace::TRANSPORT_HOST_MAPPED) != host) continue;
        group_items.push_back(it);
        const int blocks = std::max(1, it->collective().blocks());
        // Start below the largest item's bus bandwidth per block, so that the cap binds there and
        // the fit can move it (a cap that binds nothing has no derivative).
        start_rate = std::max(start_rate, 0.8 * it->busbw_gbps() / blocks);
      }
      const std::string base = std::string("custom_allreduce.") + (host ? "host" : "peer");
      if (group_items.empty()) {
        result.not_fitted.push_back(base + ": no custom allreduce items of 2+ ranks (defaults kept)");
        continue;
      }
      CustomAllreduceParams& c = result.params.custom;
      std::vector<SimUnknown> u = {
          // Start above any path latency (the floor must bind to be moved): 20 us.
          {base + ".flag_latency_us", "us", std::max(host ? c.host_flag_latency_us : c.peer_flag_latency_us, 20.0),
           0.25, 0, 500},
          {base + ".read_gbps_per_block", "GB/s", std::max(start_rate, 0.1), 0.05 * std::max(start_rate, 0.1), 0.01,
           1e4}};
      RETURN_IF_ERROR(FitBySimulation(base, group_items, u, [host](const std::vector<double>& t, CalibParams* p) {
        (host ? p->custom.host_flag_latency_us : p->custom.peer_flag_latency_us) = t[0];
        (host ? p->custom.host_read_gbps_per_block : p->custom.peer_read_gbps_per_block) = t[1];
      }));
    }
    return OkStatus();
  }

  // The ranks' host threads (HostParams) from the host-paced loops: the pacing suite's layer loops
  // (eager: per-op issue costs of library calls and collective calls; graph: the graph launch)
  // and collective skew loops (the natural jitter, the sync wake), by FitBySimulation over those
  // items (the loops are seeded identically for every prediction, so the fit sees smooth changes).
  // The raw kernel launch stays the compute fit's eager launch (launch items).
  Status FitHostPacing() {
    std::vector<const trace::Item*> loops;
    for (const trace::Item* it : items)
      if (it->kind() == trace::KIND_LAYER_LOOP || it->kind() == trace::KIND_COLLECTIVE_SKEW) loops.push_back(it);
    if (loops.empty()) {
      result.not_fitted.push_back(
          "host.library_issue_us, host.collective_issue_us, host.graph_launch_us, host.jitter_mean_us, "
          "host.sync_wake_us: no host-paced loops (pacing suite) in the trace (defaults kept: the "
          "compute model's launch overheads, no jitter)");
      return OkStatus();
    }
    HostParams& h = result.params.host;
    const double launch_us = result.params.compute.launch_overhead_eager_ns * 1e-3;
    std::vector<SimUnknown> u = {
        {"host.library_issue_us", "us", h.library_issue_us.value_or(2 * launch_us), 0.25, 0, 500},
        {"host.collective_issue_us", "us", h.collective_issue_us.value_or(2 * launch_us), 0.25, 0, 500},
        {"host.graph_launch_us", "us", h.graph_launch_us.value_or(result.params.compute.graph_launch_ns * 1e-3), 0.25,
         0, 500},
        {"host.jitter_mean_us", "us", std::max(h.jitter_mean_us, 0.5), 0.1, 0, 100},
        {"host.sync_wake_us", "us", h.sync_wake_us.value_or(1.0), 0.25, 0, 500}};
    return FitBySimulation("host pacing", loops, u, [](const std::vector<double>& t, CalibParams* p) {
      p->host.library_issue_us = t[0];
      p->host.collective_issue_us = t[1];
      p->host.graph_launch_us = t[2];
      p->host.jitter_mean_us = t[3];
      p->host.sync_wake_us = t[4];
    });
  }

  // Small copies under a bulk copy: which H2D sizes bypass the queue (the largest size measured
  // not queued, below the smallest one queued), and per (small, bulk) direction pair the extra
  // latency of copies that do not queue: the mean of measured - (L + B / rate) over them.
  Status FitUnderLoad() {
    FabricParams& f = result.params.fabric;
    double largest_bypass = 0, smallest_queued = 0;
    std::map<std::string, std::vector<double>> extra;
    std::vector<const trace::Item*> loads;
    for (const trace::Item* it : items)
      if (it->kind() == trace::KIND_LATENCY_UNDER_LOAD) loads.push_back(it);
    if (loads.empty()) {
      result.not_fitted.push_back(
          "fabric.h2d_bypass_max_bytes, fabric.under_load_extra_ns: no latency-under-load items (defaults kept)");
      return OkStatus();
    }
    for (const trace::Item* it : loads) {
      const trace::TransferParams& t = it->transfer();
      const double bytes = static_cast<double>(t.bytes()), ns = MeasuredNs(*it);
      const TransferClass& load = Host(t.load_direction(), t.host_memory());
      const bool queued =
          t.direction() == t.load_direction() && ns > 0.5 * load.TimeNs(static_cast<double>(t.load_bytes()));
      if (t.direction() == trace::DIRECTION_H2D && t.load_direction() == trace::DIRECTION_H2D) {
        if (queued)
          smallest_queued = smallest_queued == 0 ? bytes : std::min(smallest_queued, bytes);
        else
          largest_bypass = std::max(largest_bypass, bytes);
      }
      if (queued) continue;
      const TransferClass& c = Host(t.direction(), t.host_memory());
      const double rate =
          t.direction() == t.load_direction() ? 0.5 * c.bandwidth_gbps : f.duplex_factor * c.bandwidth_gbps;
      extra[UnderLoadKey(t.direction(), t.load_direction())].push_back(ns - c.latency_ns - bytes / rate);
    }
    if (largest_bypass > 0 && (smallest_queued == 0 || largest_bypass < smallest_queued)) {
      f.h2d_bypass_max_bytes = largest_bypass;
      result.fitted.push_back({"fabric.h2d_bypass_max_bytes", "B", largest_bypass, 0, static_cast<int>(loads.size())});
    } else {
      result.not_fitted.push_back(
          "fabric.h2d_bypass_max_bytes: no H2D copy bypassed a running H2D copy (every copy queues)");
    }
    for (auto& [key, values] : extra) {
      const double mean = std::accumulate(values.begin(), values.end(), 0.0) / values.size();
      f.under_load_extra_ns[key] = mean;
      result.fitted.push_back({"fabric.under_load_extra_ns." + key, "ns", mean, 0, static_cast<int>(values.size())});
    }
    return OkStatus();
  }

  // The shared host limit of copies on several GPUs and directions at once: the median aggregate
  // rate of the items whose copies together ran below 90% of what they would alone.
  Status FitHostMemory() {
    FabricParams& f = result.params.fabric;
    const double saved = f.host_memory_gbps;
    f.host_memory_gbps = 0;
    const Predictor unlimited(trace, topology, result.params);
    std::vector<double> binding;
    int multi = 0;
    for (const trace::Item* it : items) {
      if (it->kind() != trace::KIND_HOST_COPIES_MULTI) continue;
      ++multi;
      const Prediction p = unlimited.Predict(*it);
      if (!p.simulated || p.predicted_us * 1e3 > 0.9 * MeasuredNs(*it)) continue;
      double total = 0;
      for (const trace::ConcurrentCopy& c : it->transfer().copies()) total += static_cast<double>(c.bytes());
      binding.push_back(total / MeasuredNs(*it));
    }
    f.host_memory_gbps = saved;
    if (multi == 0) {
      result.not_fitted.push_back("fabric.host_memory_gbps: no host copies on several GPUs at once (default kept)");
      return OkStatus();
    }
    if (binding.empty()) {
      result.not_fitted.push_back(
          "fabric.host_memory_gbps: copies on several GPUs ran as fast as alone (no shared limit seen)");
      return OkStatus();
    }
    std::sort(binding.begin(), binding.end());
    f.host_memory_gbps = binding[binding.size() / 2];
    result.fitted.push_back(
        {"fabric.host_memory_gbps", "GB/s", f.host_memory_gbps, 0, static_cast<int>(binding.size())});
    return OkStatus();
  }
};

// The fits from the kernels on (each may use the ones before it).
Status KernelsOnwards(Fitter& f) {
  RETURN_IF_ERROR(f.FitComputeByGemmLibrary());
  RETURN_IF_ERROR(f.FitAttention());
  RETURN_IF_ERROR(f.FitUnderLoad());
  RETURN_IF_ERROR(f.FitHostMemory());
  RETURN_IF_ERROR(f.FitNcclLocal());
  RETURN_IF_ERROR(f.FitCustomAllreduce());
  return f.FitHostPacing();
}

// The timed call's gap (BenchParams.timed_call_gap_ns, predictors.h TimedKernelNs). Every timed
// kernel item measures device + gap, so the kernel items alone cannot tell the gap from the
// kernels' fill times (each ramp absorbs it). Loops that run the same kernels back to back with no
// events between them can: decode forwards and layer loops captured in CUDA graphs. (One-rank
// NCCL calls replayed in graphs, a local copy kernel each, ask for a gap of 4+ us that the decode
// forwards refuse: NCCL's copy kernel is not the norm kernels whose ramp it is priced with; left
// out.) Grid search: for each gap tried the kernel fits (compute, attention) are redone from
// `before_kernels` and the graph loops predicted with them and `f`'s other fits; gaps of 0, 0.5,
// ..., 4 us, then the best one +- 0.25 us; the gap with the smallest sum of squared log errors is
// kept and every fit from the kernels on redone with it. Without such loops the gap stays unset
// (the eager device gap) and is listed as not fitted.
Status FitTimedCallGap(const Fitter& before_kernels, Fitter* f) {
  std::vector<const trace::Item*> loops;
  for (const trace::Item* it : before_kernels.items) {
    const bool graph_decode = (it->kind() == trace::KIND_DECODE_STEP || it->kind() == trace::KIND_SPEC_CYCLE) &&
                              it->has_decode() && DecodeCaptureOf(it->decode()) == "graph";
    const bool graph_layers =
        it->kind() == trace::KIND_LAYER_LOOP && it->layer_loop().capture() == "graph" && it->layer_loop().gemm();
    if (graph_decode || graph_layers) loops.push_back(it);
  }
  if (loops.empty()) {
    f->result.not_fitted.push_back(
        "compute.timed_call_gap_ns: no CUDA-graph decode or layer loops to tell it from the kernels' fill times (the "
        "eager device gap is used)");
    return OkStatus();
  }
  double best_gap = -1, best = std::numeric_limits<double>::infinity();
  int best_n = 0;
  auto try_gap = [&](double gap) {
    gap = std::max(1e-3, gap);  // 0 would mean "unset"
    Fitter trial = before_kernels;
    trial.result.params.bench.timed_call_gap_ns = gap;
    if (!trial.FitComputeByGemmLibrary().ok() || !trial.FitAttention().ok()) return;
    CalibParams p = f->result.params;
    p.compute = trial.result.params.compute;
    p.bench = trial.result.params.bench;
    const Predictor at(before_kernels.trace, f->topology, p);
    double sum = 0;
    int n = 0;
    for (const trace::Item* it : loops) {
      const Prediction pr = at.Predict(*it);
      if (!pr.simulated || !(pr.predicted_us > 0)) continue;
      sum += std::pow(std::log(pr.predicted_us / (MeasuredNs(*it) * 1e-3)), 2);
      ++n;
    }
    if (n > 0 && sum < best) {
      best = sum;
      best_gap = gap;
      best_n = n;
    }
  };
  for (int step = 0; step <= 8; ++step) try_gap(500.0 * step);
  if (best_gap >= 0) {
    const double coarse = best_gap;
    try_gap(coarse - 250);
    try_gap(coarse + 250);
  }
  if (best_gap < 0) {
    f->result.not_fitted.push_back(
        "compute.timed_call_gap_ns: no graph loop could be predicted (the eager device gap is used)");
    return OkStatus();
  }
  Fitter chosen = before_kernels;
  chosen.result.params.bench.timed_call_gap_ns = best_gap;
  RETURN_IF_ERROR(KernelsOnwards(chosen));
  chosen.result.fitted.push_back({"compute.timed_call_gap_ns", "ns", best_gap, std::sqrt(best / best_n), best_n});
  f->result = std::move(chosen.result);
  f->topology = std::move(chosen.topology);
  return OkStatus();
}

}  // namespace

StatusOr<FitResult> Fit(const trace::Trace& trace, const std::vector<int>& indices, const net::Topology& topology,
                        const CalibParams& start, const FitOptions& options) {
  Fitter f{trace, {}, topology, options, {}};
  f.result.topology = topology;
  f.result.params = start;
  if (indices.empty()) {
    for (const trace::Item& it : trace.items()) f.items.push_back(&it);
  } else {
    for (int i : indices) f.items.push_back(&trace.items(i));
  }
  // Only items with a positive median time are usable.
  f.items.erase(std::remove_if(f.items.begin(), f.items.end(),
                               [](const trace::Item* it) { return !(it->stats().median_us() > 0); }),
                f.items.end());
  if (f.items.empty())
    return InvalidArgumentError(
        "no item of the trace has a measured time (every stats.median_us is 0): nothing to fit");
  int max_engines = 1;
  for (const trace::Gpu& g : trace.environment().gpus()) max_engines = std::max(max_engines, g.async_engine_count());
  RETURN_IF_ERROR(f.FitHostCopies());
  RETURN_IF_ERROR(f.FitMultiStream(max_engines));
  RETURN_IF_ERROR(f.FitZeroCopy());
  RETURN_IF_ERROR(f.FitP2p());
  RETURN_IF_ERROR(f.ApplyFittedFabric(topology));
  const Fitter before_kernels = f;
  RETURN_IF_ERROR(KernelsOnwards(f));
  RETURN_IF_ERROR(FitTimedCallGap(before_kernels, &f));
  f.result.topology = f.topology;
  return std::move(f.result);
}

config::Calibration CalibrationFromFit(const FitResult& result, const net::Topology& topology,
                                       const std::string& source) {
  config::Calibration c = ToCalibrationProto(result.params);
  c.set_source(source);
  // Derived GPU-model fields on the host path of GPU 0.
  net::Router router(topology);
  const int gpu_node = topology.gpus[0];
  const int memory = topology.HostMemoryOfSocket(topology.nodes[gpu_node].socket);
  if (memory >= 0 && router.Reachable(memory, gpu_node)) {
    const double one_way = router.Route(memory, gpu_node).latency_ns;
    const FabricParams& f = result.params.fabric;
    const double setup = std::min(f.h2d_pinned.latency_ns, f.d2h_pinned.latency_ns) - one_way -
                         result.params.compute.launch_overhead_eager_ns;
    c.mutable_fabric()->set_copy_engine_setup_ns(std::max(0.0, setup));
    if (f.kernel_read_per_sm_gbps > 0)
      c.mutable_fabric()->set_kernel_read_outstanding_bytes_per_sm(f.kernel_read_per_sm_gbps * 2 * one_way);
  }
  for (const FittedParam& p : result.fitted) {
    config::FittedValue* v = c.add_fitted();
    v->set_name(p.name);
    v->set_value(p.value);
    v->set_unit(p.unit);
    v->set_residual(p.residual);
    v->set_points(p.points);
  }
  return c;
}

}  // namespace specsim::calib
