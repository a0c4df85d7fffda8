#include "sim/calib/params.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "sim/core/check.h"
#include "sim/net/routing.h"

namespace specsim::calib {
namespace {

// The narrowest payload rate and the one-way latency of a routed path.
TransferClass PathClass(const net::Topology& t, const net::Router& router, int src_node, int dst_node,
                        double extra_latency_ns) {
  const net::Path& path = router.Route(src_node, dst_node);
  double rate = std::numeric_limits<double>::infinity();
  for (const net::Hop& hop : path.hops) rate = std::min(rate, t.links[hop.link].payload_gbps());
  if (!std::isfinite(rate)) rate = t.gpu_spec(0).memory_bandwidth_gbps;  // same node
  return {path.latency_ns + extra_latency_ns, rate};
}

TransferClass FromProto(TransferClass base, const config::TransferClassCalibration& c) {
  if (c.latency_ns() != 0) base.latency_ns = c.latency_ns();
  if (c.bandwidth_gbps() != 0) base.bandwidth_gbps = c.bandwidth_gbps();
  return base;
}

void ToProto(const TransferClass& c, config::TransferClassCalibration* out) {
  out->set_latency_ns(c.latency_ns);
  out->set_bandwidth_gbps(c.bandwidth_gbps);
}

}  // namespace

P2pParams P2pDefaults(const net::Topology& t, int src_gpu, int dst_gpu, const compute::ComputeParams& compute) {
  net::Router router(t);
  const net::GpuSpec& spec = t.gpu_spec(dst_gpu);
  P2pParams p;
  p.copy = PathClass(t, router, t.gpus[src_gpu], t.gpus[dst_gpu],
                     t.gpu_spec(src_gpu).copy_engine_setup_ns + compute.launch_overhead_eager_ns);
  p.kernel_write = PathClass(t, router, t.gpus[src_gpu], t.gpus[dst_gpu], compute.launch_overhead_eager_ns);
  p.kernel_read = p.kernel_write;
  // A whole GPU of readers: the per-SM cap times all SMs, never above the link.
  const double rtt = 2 * router.Route(t.gpus[src_gpu], t.gpus[dst_gpu]).latency_ns;
  if (rtt > 0 && spec.kernel_read_outstanding_bytes_per_sm > 0)
    p.kernel_read.bandwidth_gbps =
        std::min(p.kernel_read.bandwidth_gbps, spec.sm_count * spec.kernel_read_outstanding_bytes_per_sm / rtt);
  return p;
}

CalibParams DefaultParams(const net::Topology& t, int gpu) {
  SPECSIM_CHECK(gpu >= 0 && gpu < t.num_gpus()) << gpu;
  CalibParams p;
  net::Router router(t);
  const int gpu_node = t.gpus[gpu];
  const int memory = t.HostMemoryOfSocket(t.nodes[gpu_node].socket);
  const net::GpuSpec& spec = t.gpu_spec(gpu);
  const double launch = p.compute.launch_overhead_eager_ns;
  FabricParams& f = p.fabric;
  f.copy_engines_per_direction = std::max(1, spec.copy_engines_per_direction);
  f.copy_engine_setup_ns = spec.copy_engine_setup_ns;
  if (memory >= 0 && router.Reachable(gpu_node, memory)) {
    f.h2d_pinned = PathClass(t, router, memory, gpu_node, spec.copy_engine_setup_ns + launch);
    f.d2h_pinned = PathClass(t, router, gpu_node, memory, spec.copy_engine_setup_ns + launch);
    f.zero_copy_write = PathClass(t, router, gpu_node, memory, launch);
    f.zero_copy_read = PathClass(t, router, memory, gpu_node, launch);
    const double rtt = 2 * router.Route(memory, gpu_node).latency_ns;
    if (rtt > 0) f.kernel_read_per_sm_gbps = spec.kernel_read_outstanding_bytes_per_sm / rtt;
  } else {
    // No host memory in the config: host transfers at the GPU's first link.
    f.h2d_pinned = {launch, t.links.empty() ? 1.0 : t.links[0].payload_gbps()};
    f.d2h_pinned = f.zero_copy_read = f.zero_copy_write = f.h2d_pinned;
  }
  f.h2d_pageable = f.h2d_pinned;  // pageable staging is not modelled: same as pinned
  f.d2h_pageable = f.d2h_pinned;
  return p;
}

CalibParams ApplyCalibrationProto(CalibParams p, const config::Calibration& c) {
  p.compute = compute::ApplyCalibration(p.compute, c.compute());
  const config::FabricCalibration& fc = c.fabric();
  FabricParams& f = p.fabric;
  f.h2d_pinned = FromProto(f.h2d_pinned, fc.h2d_pinned());
  f.d2h_pinned = FromProto(f.d2h_pinned, fc.d2h_pinned());
  f.h2d_pageable = FromProto(f.h2d_pageable, fc.h2d_pageable());
  f.d2h_pageable = FromProto(f.d2h_pageable, fc.d2h_pageable());
  if (fc.duplex_factor() != 0) f.duplex_factor = fc.duplex_factor();
  if (fc.multi_stream_overhead_ns() != 0) f.multi_stream_overhead_ns = fc.multi_stream_overhead_ns();
  if (fc.copy_engines_per_direction() != 0) f.copy_engines_per_direction = fc.copy_engines_per_direction();
  if (fc.copy_engine_setup_ns() != 0) f.copy_engine_setup_ns = fc.copy_engine_setup_ns();
  f.zero_copy_read = FromProto(f.zero_copy_read, fc.zero_copy_read());
  f.zero_copy_write = FromProto(f.zero_copy_write, fc.zero_copy_write());
  if (fc.kernel_read_per_sm_gbps() != 0) f.kernel_read_per_sm_gbps = fc.kernel_read_per_sm_gbps();
  for (const config::P2pPathCalibration& pc : fc.p2p()) {
    P2pParams& pp = f.p2p[pc.path_class()];
    pp.copy = FromProto(pp.copy, pc.copy());
    pp.kernel_write = FromProto(pp.kernel_write, pc.kernel_write());
    pp.kernel_read = FromProto(pp.kernel_read, pc.kernel_read());
  }
  if (c.compute().l2_resident_bandwidth_gbps() != 0)
    p.bench.l2_resident_bandwidth_gbps = c.compute().l2_resident_bandwidth_gbps();
  if (c.nccl().local_call_overhead_ns() != 0) p.nccl.local_call_overhead_ns = c.nccl().local_call_overhead_ns();
  auto set = [](std::optional<double>& field, double value) {
    if (value != 0) field = value;
  };
  set(p.nccl.protocol.base_latency_ll_us, c.nccl().base_latency_ll_us());
  set(p.nccl.protocol.base_latency_simple_us, c.nccl().base_latency_simple_us());
  set(p.nccl.protocol.hop_latency_ll_us, c.nccl().hop_latency_ll_us());
  set(p.nccl.protocol.hop_latency_simple_us, c.nccl().hop_latency_simple_us());
  set(p.nccl.protocol.ll_wire_efficiency, c.nccl().ll_wire_efficiency());
  return p;
}

config::Calibration ToCalibrationProto(const CalibParams& p) {
  config::Calibration c;
  config::ComputeCalibration* cc = c.mutable_compute();
  const compute::ComputeParams& k = p.compute;
  cc->set_gemm_compute_efficiency(k.gemm_compute_efficiency);
  cc->set_memory_efficiency(k.memory_efficiency);
  cc->set_skinny_gemm_memory_efficiency(k.skinny_gemm_memory_efficiency);
  cc->set_attention_memory_efficiency(k.attention_memory_efficiency);
  cc->set_kernel_floor_ns(k.kernel_floor_ns);
  cc->set_launch_overhead_eager_ns(k.launch_overhead_eager_ns);
  cc->set_launch_overhead_graph_ns(k.launch_overhead_graph_ns);
  cc->set_graph_launch_ns(k.graph_launch_ns);
  cc->set_memory_ramp_ns(k.memory_ramp_ns);
  cc->set_gemm_m_half(k.gemm_m_half);
  cc->set_eager_device_gap_ns(k.eager_device_gap_ns);
  cc->set_l2_resident_bandwidth_gbps(p.bench.l2_resident_bandwidth_gbps);
  cc->set_gemm_memory_ramp_ns(k.RampNs(compute::KernelClass::kGemm));
  cc->set_attention_memory_ramp_ns(k.RampNs(compute::KernelClass::kAttention));
  cc->set_attention_compute_efficiency(k.attention_compute_efficiency);
  cc->set_gemm_column_rate_gbps(k.gemm_column_rate_gbps);
  config::FabricCalibration* fc = c.mutable_fabric();
  const FabricParams& f = p.fabric;
  ToProto(f.h2d_pinned, fc->mutable_h2d_pinned());
  ToProto(f.d2h_pinned, fc->mutable_d2h_pinned());
  ToProto(f.h2d_pageable, fc->mutable_h2d_pageable());
  ToProto(f.d2h_pageable, fc->mutable_d2h_pageable());
  fc->set_duplex_factor(f.duplex_factor);
  fc->set_multi_stream_overhead_ns(f.multi_stream_overhead_ns);
  fc->set_copy_engines_per_direction(f.copy_engines_per_direction);
  fc->set_copy_engine_setup_ns(f.copy_engine_setup_ns);
  ToProto(f.zero_copy_read, fc->mutable_zero_copy_read());
  ToProto(f.zero_copy_write, fc->mutable_zero_copy_write());
  fc->set_kernel_read_per_sm_gbps(f.kernel_read_per_sm_gbps);
  for (const auto& [name, pp] : f.p2p) {
    config::P2pPathCalibration* pc = fc->add_p2p();
    pc->set_path_class(name);
    ToProto(pp.copy, pc->mutable_copy());
    ToProto(pp.kernel_write, pc->mutable_kernel_write());
    ToProto(pp.kernel_read, pc->mutable_kernel_read());
  }
  c.mutable_nccl()->set_local_call_overhead_ns(p.nccl.local_call_overhead_ns);
  const coll::ProtocolOverrides& o = p.nccl.protocol;
  if (o.base_latency_ll_us) c.mutable_nccl()->set_base_latency_ll_us(*o.base_latency_ll_us);
  if (o.base_latency_simple_us) c.mutable_nccl()->set_base_latency_simple_us(*o.base_latency_simple_us);
  if (o.hop_latency_ll_us) c.mutable_nccl()->set_hop_latency_ll_us(*o.hop_latency_ll_us);
  if (o.hop_latency_simple_us) c.mutable_nccl()->set_hop_latency_simple_us(*o.hop_latency_simple_us);
  if (o.ll_wire_efficiency) c.mutable_nccl()->set_ll_wire_efficiency(*o.ll_wire_efficiency);
  return c;
}

Status ApplyFabricCalibration(const config::FabricCalibration& fc, net::Topology* t) {
  auto check = [](const char* field, double v) -> Status {
    if (!std::isfinite(v) || v < 0)
      return InvalidArgumentError(std::string("fabric.") + field + " = " + std::to_string(v) + ": must be >= 0");
    return OkStatus();
  };
  RETURN_IF_ERROR(check("copy_engines_per_direction", fc.copy_engines_per_direction()));
  RETURN_IF_ERROR(check("copy_engine_setup_ns", fc.copy_engine_setup_ns()));
  RETURN_IF_ERROR(check("kernel_read_outstanding_bytes_per_sm", fc.kernel_read_outstanding_bytes_per_sm()));
  RETURN_IF_ERROR(check("h2d_pinned.bandwidth_gbps", fc.h2d_pinned().bandwidth_gbps()));
  RETURN_IF_ERROR(check("d2h_pinned.bandwidth_gbps", fc.d2h_pinned().bandwidth_gbps()));
  for (net::GpuSpec& g : t->gpu_specs) {
    if (fc.copy_engines_per_direction() > 0) g.copy_engines_per_direction = fc.copy_engines_per_direction();
    if (fc.copy_engine_setup_ns() > 0) g.copy_engine_setup_ns = fc.copy_engine_setup_ns();
    if (fc.kernel_read_outstanding_bytes_per_sm() > 0)
      g.kernel_read_outstanding_bytes_per_sm = fc.kernel_read_outstanding_bytes_per_sm();
  }
  double rate = 0;
  if (fc.h2d_pinned().bandwidth_gbps() > 0 && fc.d2h_pinned().bandwidth_gbps() > 0)
    rate = std::min(fc.h2d_pinned().bandwidth_gbps(), fc.d2h_pinned().bandwidth_gbps());
  else
    rate = std::max(fc.h2d_pinned().bandwidth_gbps(), fc.d2h_pinned().bandwidth_gbps());
  if (rate > 0) {
    for (net::Link& l : t->links) {
      if (l.kind != net::LinkKind::kPcie) continue;
      const net::NodeKind ka = t->nodes[l.a].kind, kb = t->nodes[l.b].kind;
      const bool host_link = (ka == net::NodeKind::kGpu && kb == net::NodeKind::kCpuRootComplex) ||
                             (kb == net::NodeKind::kGpu && ka == net::NodeKind::kCpuRootComplex);
      if (!host_link) continue;
      if (rate > l.bandwidth_gbps) l.bandwidth_gbps = rate;
      l.payload_efficiency = rate / l.bandwidth_gbps;
    }
  }
  return OkStatus();
}

}  // namespace specsim::calib
