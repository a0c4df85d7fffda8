// The host link and the copy engines (fitters.h), each a weighted linear least-squares problem
// (weights 1/measured: relative residuals) in the laws of predictors.h, or a statistic of them:
//   host copies      per class (H2D/D2H x pinned/pageable): t = L + B * (1/BW)
//   copy engines     c = the engine count (1..the GPU's async engines) whose fit of the concurrent
//                    copies is best; with it, jointly over bidirectional and concurrent copies:
//                      concurrent:    t - ceil(k/c) L - k B/BW = O_ms
//                      bidirectional: t - L_slow = O_ms + (B/BW_slow) * (1/duplex)
//   zero copy        read: t = L + B * (1/BW) or L + (B / min(blocks, SMs)) * (1/per-SM rate), each
//                    item on the side that binds (re-classified until stable); write: t = L + B/BW
//   under load       H2D bypass size: the largest H2D copy measured not queued behind an H2D bulk
//                    copy, below the smallest one queued; per (small, bulk) direction pair the
//                    extra X = mean over the copies that do not queue of t - (L + B / rate), rate
//                    half the link (same direction) or duplex x the link (other direction)
//   host memory      the median aggregate rate sum(B) / t of the multi-GPU host copies that ran
//                    below 90% of their time without a shared limit
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <string>

#include "sim/calib/fitters.h"
#include "sim/calib/predictors.h"

namespace specsim::calib {
namespace {

// O_ms (multi-stream overhead) and 1/duplex for `engines` copy engines per direction (the rows
// of the law above, with the host classes fitted so far).
LinearProblem MultiStreamProblem(const FitContext& c, int engines) {
  LinearProblem p;
  p.names = {"fabric.multi_stream_overhead_ns", "fabric.inverse_duplex_factor"};
  p.defaults = {c.result.params.fabric.multi_stream_overhead_ns, 1 / c.result.params.fabric.duplex_factor};
  for (const trace::Item* it : c.items) {
    const trace::TransferParams& t = it->transfer();
    const double bytes = static_cast<double>(t.bytes()), ns = MeasuredNs(*it);
    if (it->kind() == trace::KIND_CONCURRENT_COPIES) {
      const TransferClass& cls = c.HostClass(t.direction(), t.host_memory());
      const int k = std::max(1, t.streams());
      const int rounds = (k + engines - 1) / engines;
      p.AddRow({1, 0}, ns - rounds * cls.latency_ns - k * bytes / cls.bandwidth_gbps, 1 / ns);
    } else if (it->kind() == trace::KIND_BIDIR_COPY) {
      const TransferClass& h = c.HostClass(trace::DIRECTION_H2D, t.host_memory());
      const TransferClass& d = c.HostClass(trace::DIRECTION_D2H, t.host_memory());
      const TransferClass& slow = h.TimeNs(bytes) >= d.TimeNs(bytes) ? h : d;
      p.AddRow({1, bytes / slow.bandwidth_gbps}, ns - slow.latency_ns, 1 / ns);
    }
  }
  return p;
}

// The engine count whose multi-stream problem leaves the smallest sum of residuals (the first of
// equals), recorded; without concurrent copies the count so far, listed as not fitted.
int FitCopyEngineCount(FitContext& c, int max_engines) {
  int concurrent = 0;
  for (const trace::Item* it : c.items) concurrent += it->kind() == trace::KIND_CONCURRENT_COPIES;
  FabricParams& f = c.result.params.fabric;
  int best = f.copy_engines_per_direction;
  if (concurrent == 0) {
    c.result.not_fitted.push_back("fabric.copy_engines_per_direction: no concurrent-copy items (default kept)");
    return best;
  }
  double best_err = INFINITY;
  for (int engines = 1; engines <= std::max(1, max_engines); ++engines) {
    auto s = SolveLeastSquares(MultiStreamProblem(c, engines), true, "copy engines");
    if (!s.ok()) continue;
    double err = 0;
    for (double r : s->residual_rms) err += r;
    if (err < best_err - 1e-9) {
      best_err = err;
      best = engines;
    }
  }
  f.copy_engines_per_direction = best;
  c.result.fitted.push_back({"fabric.copy_engines_per_direction", "engines", double(best), best_err, concurrent});
  return best;
}

// Starting rates of the zero-copy read fit: the best observed rate is the link; the best one-block
// rate the per-SM cap (else the cap so far, else the link).
std::pair<double, double> ZeroCopyReadStart(const FabricParams& f, const std::vector<const trace::Item*>& reads) {
  double link = 0, per_sm = 0;
  for (const trace::Item* it : reads) {
    const double gbps = it->transfer().bytes() / MeasuredNs(*it);
    link = std::max(link, gbps);
    if (it->transfer().blocks() == 1) per_sm = std::max(per_sm, gbps);
  }
  if (per_sm <= 0) per_sm = f.kernel_read_per_sm_gbps > 0 ? f.kernel_read_per_sm_gbps : link;
  return {link, per_sm};
}

// Zero-copy reads: each item a row of the side that binds under the current rates, refitted until
// the rates are stable (at most 20 rounds); then recorded.
Status FitZeroCopyRead(FitContext& c, const std::vector<const trace::Item*>& reads) {
  FabricParams& f = c.result.params.fabric;
  auto [link, per_sm] = ZeroCopyReadStart(f, reads);
  const int gpu = reads[0]->transfer().gpu();
  const int sms = gpu < c.topology.num_gpus() ? c.topology.gpu_spec(gpu).sm_count : 1;
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
  if (!s.determined[0] && !c.options.fix_undetermined)
    return InvalidArgumentError("zero-copy reads: cannot determine the latency (measure more sizes)");
  f.zero_copy_read.bandwidth_gbps = link;
  c.Record("fabric.zero_copy_read.latency_ns", "ns", f.zero_copy_read.latency_ns, s, 0);
  c.Record("fabric.zero_copy_read.bandwidth_gbps", "GB/s", link, s, 1);
  if (s.has_items[2]) {
    f.kernel_read_per_sm_gbps = per_sm;
    c.Record("fabric.kernel_read_per_sm_gbps", "GB/s", per_sm, s, 2);
  } else {
    c.result.not_fitted.push_back("fabric.kernel_read_per_sm_gbps: every read was link-limited (default kept)");
  }
  return OkStatus();
}

}  // namespace

Status FitHostCopies(FitContext& c) {
  std::map<std::string, SizeTimeRows> rows;
  for (const trace::Item* it : c.items) {
    if (it->kind() != trace::KIND_H2D_COPY && it->kind() != trace::KIND_D2H_COPY) continue;
    const trace::TransferParams& t = it->transfer();
    std::string cls = std::string(t.direction() == trace::DIRECTION_H2D ? "h2d" : "d2h") +
                      (t.host_memory() == trace::HOST_PAGEABLE ? "_pageable" : "_pinned");
    rows[cls].push_back({static_cast<double>(t.bytes()), MeasuredNs(*it)});
  }
  FabricParams& f = c.result.params.fabric;
  RETURN_IF_ERROR(c.FitTransferClass("fabric.h2d_pinned", rows["h2d_pinned"], &f.h2d_pinned));
  RETURN_IF_ERROR(c.FitTransferClass("fabric.d2h_pinned", rows["d2h_pinned"], &f.d2h_pinned));
  RETURN_IF_ERROR(c.FitTransferClass("fabric.h2d_pageable", rows["h2d_pageable"], &f.h2d_pageable));
  RETURN_IF_ERROR(c.FitTransferClass("fabric.d2h_pageable", rows["d2h_pageable"], &f.d2h_pageable));
  return OkStatus();
}

Status FitCopyEnginesAndDuplex(FitContext& c, int max_engines) {
  const int engines = FitCopyEngineCount(c, max_engines);
  FabricParams& f = c.result.params.fabric;
  LinearProblem p = MultiStreamProblem(c, engines);
  if (p.rows.empty()) {
    c.result.not_fitted.push_back(
        "fabric.duplex_factor, fabric.multi_stream_overhead_ns: no bidirectional or "
        "concurrent copies (defaults kept)");
    return OkStatus();
  }
  ASSIGN_OR_RETURN(LinearSolution s, SolveLeastSquares(p, c.options.fix_undetermined, "multi-stream copies"));
  if (s.determined[0]) f.multi_stream_overhead_ns = s.x[0];
  c.Record("fabric.multi_stream_overhead_ns", "ns", f.multi_stream_overhead_ns, s, 0);
  if (s.determined[1] && s.x[1] > 0) {
    f.duplex_factor = 1 / s.x[1];
    c.Record("fabric.duplex_factor", "", f.duplex_factor, s, 1);
  } else if (!s.has_items[1]) {
    c.result.not_fitted.push_back("fabric.duplex_factor: no bidirectional copies (default kept)");
  }
  return OkStatus();
}

Status FitZeroCopy(FitContext& c) {
  FabricParams& f = c.result.params.fabric;
  SizeTimeRows writes;
  for (const trace::Item* it : c.ItemsOfKind(trace::KIND_ZERO_COPY_WRITE))
    writes.push_back({double(it->transfer().bytes()), MeasuredNs(*it)});
  RETURN_IF_ERROR(c.FitTransferClass("fabric.zero_copy_write", writes, &f.zero_copy_write));
  const std::vector<const trace::Item*> reads = c.ItemsOfKind(trace::KIND_ZERO_COPY_READ);
  if (reads.empty()) {
    c.result.not_fitted.push_back(
        "fabric.zero_copy_read, fabric.kernel_read_per_sm_gbps: no zero-copy reads (default kept)");
    return OkStatus();
  }
  return FitZeroCopyRead(c, reads);
}

// Small copies under a bulk copy: which H2D sizes bypass the queue (the largest size measured
// not queued, below the smallest one queued), and per (small, bulk) direction pair the extra
// latency of copies that do not queue: the mean of measured - (L + B / rate) over them.
Status FitUnderLoad(FitContext& c) {
  FabricParams& f = c.result.params.fabric;
  double largest_bypass = 0, smallest_queued = 0;
  std::map<std::string, std::vector<double>> extra;
  const std::vector<const trace::Item*> loads = c.ItemsOfKind(trace::KIND_LATENCY_UNDER_LOAD);
  if (loads.empty()) {
    c.result.not_fitted.push_back(
        "fabric.h2d_bypass_max_bytes, fabric.under_load_extra_ns: no latency-under-load items (defaults kept)");
    return OkStatus();
  }
  for (const trace::Item* it : loads) {
    const trace::TransferParams& t = it->transfer();
    const double bytes = static_cast<double>(t.bytes()), ns = MeasuredNs(*it);
    const TransferClass& load = c.HostClass(t.load_direction(), t.host_memory());
    const bool queued =
        t.direction() == t.load_direction() && ns > 0.5 * load.TimeNs(static_cast<double>(t.load_bytes()));
    if (t.direction() == trace::DIRECTION_H2D && t.load_direction() == trace::DIRECTION_H2D) {
      if (queued)
        smallest_queued = smallest_queued == 0 ? bytes : std::min(smallest_queued, bytes);
      else
        largest_bypass = std::max(largest_bypass, bytes);
    }
    if (queued) continue;
    const TransferClass& cls = c.HostClass(t.direction(), t.host_memory());
    const double rate =
        t.direction() == t.load_direction() ? 0.5 * cls.bandwidth_gbps : f.duplex_factor * cls.bandwidth_gbps;
    extra[UnderLoadKey(t.direction(), t.load_direction())].push_back(ns - cls.latency_ns - bytes / rate);
  }
  if (largest_bypass > 0 && (smallest_queued == 0 || largest_bypass < smallest_queued)) {
    f.h2d_bypass_max_bytes = largest_bypass;
    c.result.fitted.push_back({"fabric.h2d_bypass_max_bytes", "B", largest_bypass, 0, static_cast<int>(loads.size())});
  } else {
    c.result.not_fitted.push_back(
        "fabric.h2d_bypass_max_bytes: no H2D copy bypassed a running H2D copy (every copy queues)");
  }
  for (auto& [key, values] : extra) {
    const double mean = std::accumulate(values.begin(), values.end(), 0.0) / values.size();
    f.under_load_extra_ns[key] = mean;
    c.result.fitted.push_back({"fabric.under_load_extra_ns." + key, "ns", mean, 0, static_cast<int>(values.size())});
  }
  return OkStatus();
}

// The shared host limit of copies on several GPUs and directions at once: the median aggregate
// rate of the items whose copies together ran below 90% of what they would alone.
Status FitHostMemory(FitContext& c) {
  FabricParams& f = c.result.params.fabric;
  const double saved = f.host_memory_gbps;
  f.host_memory_gbps = 0;
  const Predictor unlimited(c.trace, c.topology, c.result.params);
  std::vector<double> binding;
  const std::vector<const trace::Item*> multi = c.ItemsOfKind(trace::KIND_HOST_COPIES_MULTI);
  for (const trace::Item* it : multi) {
    const Prediction p = unlimited.Predict(*it);
    if (!p.simulated || p.predicted_us * 1e3 > 0.9 * MeasuredNs(*it)) continue;
    double total = 0;
    for (const trace::ConcurrentCopy& copy : it->transfer().copies()) total += static_cast<double>(copy.bytes());
    binding.push_back(total / MeasuredNs(*it));
  }
  f.host_memory_gbps = saved;
  if (multi.empty()) {
    c.result.not_fitted.push_back("fabric.host_memory_gbps: no host copies on several GPUs at once (default kept)");
    return OkStatus();
  }
  if (binding.empty()) {
    c.result.not_fitted.push_back(
        "fabric.host_memory_gbps: copies on several GPUs ran as fast as alone (no shared limit seen)");
    return OkStatus();
  }
  std::sort(binding.begin(), binding.end());
  f.host_memory_gbps = binding[binding.size() / 2];
  c.result.fitted.push_back(
      {"fabric.host_memory_gbps", "GB/s", f.host_memory_gbps, 0, static_cast<int>(binding.size())});
  return OkStatus();
}

}  // namespace specsim::calib
