#include "validate/summary.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

namespace specsim::validate {
namespace {

std::string Fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), f, v);
  return buf;
}

std::string SizeLabel(int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB"};
  int u = 0;
  double v = static_cast<double>(bytes);
  while (u < 3 && v >= 1024) {
    v /= 1024;
    ++u;
  }
  return Fmt("%.0f", v) + units[u];
}

}  // namespace

std::string SummaryTable(const trace::Trace& t) {
  std::ostringstream o;
  const auto& env = t.environment();
  o << "== specsim-validate summary ==\n";
  for (const auto& g : env.gpus())
    o << "GPU " << g.index() << ": " << g.name() << ", " << g.sm_count() << " SMs, " << (g.memory_bytes() >> 20)
      << " MiB, PCIe gen " << g.pcie_generation_current() << " x" << g.pcie_width_current() << " (max gen "
      << g.pcie_generation_max() << " x" << g.pcie_width_max() << ", " << g.pcie_source() << ")\n";
  o << "driver " << env.driver_version() << ", CUDA " << env.cuda_runtime_version() << ", NCCL " << env.nccl_version()
    << ", " << t.items_size() << " items, " << Fmt("%.0f", t.wall_seconds()) << " s\n";

  // Per kind, the interesting rows.
  std::map<std::string, const trace::Item*> by_name;
  for (const auto& it : t.items()) by_name[it.name()] = &it;

  // PCIe: largest pinned copies, small-copy latency, zero-copy peaks.
  int64_t max_copy = 0;
  for (const auto& it : t.items())
    if (it.kind() == trace::KIND_H2D_COPY) max_copy = std::max(max_copy, it.transfer().bytes());
  bool pcie_header = false;
  auto pcie_row = [&](const std::string& label, const std::string& value) {
    if (!pcie_header) {
      o << "-- pcie --\n";
      pcie_header = true;
    }
    o << "  " << label << ": " << value << "\n";
  };
  for (const auto& g : env.gpus()) {
    const std::string gs = "gpu" + std::to_string(g.index());
    double zc_read = 0, zc_write = 0;
    for (const auto& it : t.items()) {
      if (it.transfer().gpu() != g.index() || it.transfer().blocks() == 0) continue;
      if (it.kind() == trace::KIND_ZERO_COPY_READ) zc_read = std::max(zc_read, it.gbps());
      if (it.kind() == trace::KIND_ZERO_COPY_WRITE) zc_write = std::max(zc_write, it.gbps());
    }
    for (const auto& it : t.items()) {
      if (it.transfer().gpu() != g.index()) continue;
      const auto& tp = it.transfer();
      const bool big = tp.bytes() == max_copy;
      if ((it.kind() == trace::KIND_H2D_COPY || it.kind() == trace::KIND_D2H_COPY ||
           it.kind() == trace::KIND_BIDIR_COPY) &&
          big)
        pcie_row(gs + " " + it.name().substr(5),
                 Fmt("%.1f GB/s", it.gbps()) + " (" + Fmt("%.0f us", it.stats().median_us()) + ")");
      if ((it.kind() == trace::KIND_H2D_COPY || it.kind() == trace::KIND_D2H_COPY) && tp.bytes() == 4)
        pcie_row(gs + " " + it.name().substr(5), Fmt("%.2f us median", it.stats().median_us()) +
                                                     Fmt(" (p10 %.2f", it.stats().p10_us()) +
                                                     Fmt(", p90 %.2f)", it.stats().p90_us()));
      if (it.kind() == trace::KIND_LATENCY_UNDER_LOAD && tp.bytes() == 4)
        pcie_row(gs + " " + it.name().substr(5), Fmt("%.2f us median", it.stats().median_us()) +
                                                     Fmt(" (p90 %.2f us", it.stats().p90_us()) +
                                                     ", n=" + std::to_string(it.stats().iterations()) + ")");
    }
    if (zc_read > 0) pcie_row(gs + " zero-copy kernel read, best over block counts", Fmt("%.1f GB/s", zc_read));
    if (zc_write > 0) pcie_row(gs + " zero-copy kernel write, best over block counts", Fmt("%.1f GB/s", zc_write));
  }
  for (const auto& it : t.items())
    if (it.kind() == trace::KIND_P2P_COPY && it.transfer().bytes() >= (64 << 20))
      pcie_row(it.name().substr(5), Fmt("%.1f GB/s", it.gbps()));
  // Host copies of several GPUs at once: the total, and each copy's rate over its own median.
  for (const auto& it : t.items()) {
    if (it.kind() != trace::KIND_HOST_COPIES_MULTI || it.transfer().bytes() < (64 << 20)) continue;
    std::string v = Fmt("%.1f GB/s total;", it.gbps());
    for (const auto& c : it.transfer().copies())
      v += " gpu" + std::to_string(c.gpu()) + (c.direction() == trace::DIRECTION_H2D ? " h2d " : " d2h ") +
           Fmt("%.1f", c.median_us() > 0 ? c.bytes() / (c.median_us() * 1e3) : 0.0);
    pcie_row(it.name().substr(5), v + " GB/s");
  }

  // Collectives: a few sizes.
  bool coll_header = false;
  for (const auto& it : t.items()) {
    if (it.kind() != trace::KIND_COLLECTIVE && it.kind() != trace::KIND_CUSTOM_ALLREDUCE) continue;
    const int64_t b = it.collective().bytes();
    if (b != 1024 && b != (1 << 20) && b != (64 << 20) && b != (256 << 20)) continue;
    if (it.collective().op() != trace::ALLREDUCE) continue;
    if (!coll_header) {
      o << "-- collectives (allreduce; time, algbw, busbw, check) --\n";
      coll_header = true;
    }
    o << "  " << it.name().substr(12) << ": " << Fmt("%.1f us", it.stats().median_us())
      << Fmt(", %.1f GB/s", it.algbw_gbps()) << Fmt(", %.1f GB/s", it.busbw_gbps())
      << (it.check().passed() ? ", ok" : ", CHECK FAILED") << "\n";
  }

  // GEMMs: per model and op, time at 1 and 256 tokens.
  bool gemm_header = false;
  for (const auto& it : t.items()) {
    if (it.kind() != trace::KIND_GEMM || it.gemm().m() != 1) continue;
    std::string key = it.name().substr(0, it.name().rfind('/')) + "/m256";
    auto other = by_name.find(key);
    if (!gemm_header) {
      o << "-- gemm (cuBLAS bf16; m=1 and m=256) --\n";
      gemm_header = true;
    }
    o << "  " << it.gemm().model() << " tp" << it.gemm().tp() << " " << it.gemm().op() << " [n=" << it.gemm().n()
      << ", k=" << it.gemm().k() << "]: m=1 " << Fmt("%.1f us", it.stats().median_us())
      << Fmt(" (%.0f GB/s)", it.gbps());
    if (other != by_name.end())
      o << ", m=256 " << Fmt("%.1f us", other->second->stats().median_us())
        << Fmt(" (%.0f TFLOP/s)", other->second->tflops());
    o << "\n";
  }
  bool k_header = false;
  for (const auto& it : t.items()) {
    bool att =
        it.kind() == trace::KIND_ATTENTION && it.attention().context() == 4096 && it.attention().query_tokens() == 1;
    bool launch = it.kind() == trace::KIND_LAUNCH_OVERHEAD && it.launch().kernels() == 100;
    if (!att && !launch) continue;
    if (!k_header) {
      o << "-- attention (ctx 4096) and launch overhead --\n";
      k_header = true;
    }
    if (att)
      o << "  " << it.name().substr(8) << ": " << Fmt("%.1f us", it.stats().median_us())
        << Fmt(", %.0f GB/s KV", it.gbps()) << "\n";
    else
      o << "  " << it.name().substr(8) << ": " << Fmt("%.2f us per kernel", it.us_per_kernel()) << "\n";
  }
  bool d_header = false;
  for (const auto& it : t.items()) {
    if (it.kind() != trace::KIND_DECODE_STEP && it.kind() != trace::KIND_SPEC_CYCLE) continue;
    if (!d_header) {
      o << "-- decode (host wall clock per step / cycle) --\n";
      d_header = true;
    }
    o << "  " << it.name().substr(7) << " (" << it.decode().layers_run() << "/" << it.decode().layers_model()
      << " layers): " << Fmt("%.0f us", it.stats().median_us()) << Fmt(", %.0f tok/s", it.tokens_per_s());
    if (it.kind() == trace::KIND_SPEC_CYCLE) o << Fmt(", %.2f tok/cycle", it.tokens_per_cycle());
    o << "\n";
  }
  // Pacing: skew items (the longest rank's allreduce, each rank's mean wait) and the layer loops of
  // GEMM + allreduce (the slowest rank per loop).
  bool p_header = false;
  for (const auto& it : t.items()) {
    const bool skew = it.kind() == trace::KIND_COLLECTIVE_SKEW;
    const bool loop =
        it.kind() == trace::KIND_LAYER_LOOP && it.layer_loop().gemm() && it.layer_loop().allreduce_bytes() > 0;
    if (!skew && !loop) continue;
    if (!p_header) {
      o << "-- pacing (skew: longest rank's allreduce, mean wait per rank; layers: slowest rank per loop) --\n";
      p_header = true;
    }
    o << "  " << it.name().substr(7) << ": " << Fmt("%.1f us", it.stats().median_us());
    if (skew) {
      o << ", wait";
      for (const auto& rt : it.rank_timing()) o << Fmt(" %.1f", rt.wait_mean_us());
      o << " us";
    }
    o << "\n";
  }
  // Host-staged latency: flag round trips (median, p10, p90) and small reads (per-step latency, rate).
  bool h_header = false;
  for (const auto& it : t.items()) {
    const bool flag = it.kind() == trace::KIND_HOST_FLAG_ROUNDTRIP;
    if (!flag && it.kind() != trace::KIND_HOST_SMALL_READS) continue;
    if (!h_header) {
      o << "-- host-staged (flag round trip: median [p10, p90]; small reads: per step, read rate) --\n";
      h_header = true;
    }
    o << "  " << it.name().substr(12) << ": " << Fmt("%.2f us", it.stats().median_us());
    if (flag)
      o << Fmt(" [%.2f, ", it.stats().p10_us()) << Fmt("%.2f]", it.stats().p90_us());
    else
      o << Fmt(", %.2f GB/s", it.gbps());
    o << "\n";
  }
  int errors = 0;
  for (const auto& n : t.notes()) errors += n.severity() == trace::Note::ERROR;
  if (t.notes_size() > 0) o << "-- notes: " << t.notes_size() << " (" << errors << " errors) --\n";
  for (const auto& n : t.notes()) o << "  [" << n.suite() << "] " << n.message() << "\n";
  (void)SizeLabel;
  return o.str();
}

}  // namespace specsim::validate
