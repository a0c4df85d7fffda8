#include "sim/calib/params.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "sim/core/check.h"
#include "sim/coll/collective_planner.h"
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

namespace {

// A fitted time of exactly 0 (a gap or ramp the items show none of) cannot be written as 0, which
// a reader takes for "unset, use the default": 0.001 ns stands for it.
double WrittenTimeNs(double v) { return v == 0 ? 1e-3 : v; }

void ToProto(const compute::ComputeParams::GemmLibraryCosts& g, config::GemmLibraryCalibration* out) {
  out->set_library(g.library);
  out->set_skinny_gemm_memory_efficiency(g.skinny_gemm_memory_efficiency);
  out->set_gemm_compute_efficiency(g.gemm_compute_efficiency);
  out->set_gemm_memory_ramp_ns(WrittenTimeNs(g.gemm_memory_ramp_ns));
  out->set_gemm_column_rate_gbps(g.gemm_column_rate_gbps);
  out->set_gemm_overlap(g.gemm_overlap);
}

void ToProto(const compute::AttentionImplementation& a, config::AttentionImplementationCalibration* out) {
  out->set_name(a.name);
  out->set_row_tile(a.row_tile);
  out->set_max_rows_per_block(a.max_rows_per_block);
  out->set_kv_tile_tokens(a.kv_tile_tokens);
  out->set_blocks_per_sm(a.blocks_per_sm);
  out->set_split_blocks_per_sm(a.split_blocks_per_sm);
  out->set_splits_round_down(a.splits_round_down);
  out->set_combine_value_blocks(a.combine_value_blocks);
  out->set_per_head_blocks(a.per_head_blocks);
  using C = config::AttentionImplementationCalibration;
  out->set_split_policy(a.split_policy == compute::SplitPolicy::kSglangTriton      ? C::SPLIT_POLICY_SGLANG_TRITON
                        : a.split_policy == compute::SplitPolicy::kFixed           ? C::SPLIT_POLICY_FIXED
                        : a.split_policy == compute::SplitPolicy::kFlashAttention2 ? C::SPLIT_POLICY_FLASH_ATTENTION_2
                        : a.split_policy == compute::SplitPolicy::kFlashInfer      ? C::SPLIT_POLICY_FLASH_INFER
                        : a.split_policy == compute::SplitPolicy::kFlashAttention3 ? C::SPLIT_POLICY_FLASH_ATTENTION_3
                                                                                   : C::SPLIT_POLICY_OCCUPANCY);
  out->set_planned_for_graph(a.planned_for_graph);
  out->set_combine_splits_per_step(a.combine_splits_per_step);
  out->set_merge_always(a.merge_always);
  out->set_gqa_rows_at_q1(a.gqa_rows_at_q1);
  out->set_combine_rows_per_block(a.combine_rows_per_block);
  out->set_min_split_tokens(a.min_split_tokens);
  out->set_max_splits(a.max_splits);
  out->set_ramp_ns(a.ramp_ns);
  out->set_memory_efficiency(a.memory_efficiency);
  out->set_tile_ns(a.tile_ns);
  out->set_row_ns(a.row_ns);
  out->set_combine_ns(a.combine_ns);
  for (auto [rows, blocks] : a.blocks_per_sm_by_rows) {
    auto* rr = out->add_blocks_per_sm_by_rows();
    rr->set_rows_per_block(rows);
    rr->set_blocks_per_sm(blocks);
  }
  for (auto [rows, tokens] : a.kv_tile_tokens_by_rows) {
    auto* rt = out->add_kv_tile_tokens_by_rows();
    rt->set_rows_per_block(rows);
    rt->set_kv_tile_tokens(tokens);
  }
  out->set_combine_blocks_per_sm(a.combine_blocks_per_sm);
  out->set_block_ns(a.block_ns);
  out->set_tile_latency_ns(a.tile_latency_ns);
  out->set_row_latency_ns(a.row_latency_ns);
  out->set_block_row_latency_ns(a.block_row_latency_ns);
  out->set_block_row_ns(a.block_row_ns);
  out->set_combine_block_ns(a.combine_block_ns);
  out->set_combine_split_ns(a.combine_split_ns);
}

// The compute model's parameters and the benchmark's L2-resident rate and timed-call gap.
void ToProto(const compute::ComputeParams& k, const BenchParams& bench, config::ComputeCalibration* out) {
  out->set_gemm_compute_efficiency(k.gemm_compute_efficiency);
  out->set_memory_efficiency(k.memory_efficiency);
  out->set_skinny_gemm_memory_efficiency(k.skinny_gemm_memory_efficiency);
  out->set_attention_memory_efficiency(k.attention_memory_efficiency);
  out->set_kernel_floor_ns(WrittenTimeNs(k.kernel_floor_ns));
  out->set_launch_overhead_eager_ns(k.launch_overhead_eager_ns);
  out->set_launch_overhead_graph_ns(WrittenTimeNs(k.launch_overhead_graph_ns));
  out->set_graph_launch_ns(k.graph_launch_ns);
  out->set_memory_ramp_ns(WrittenTimeNs(k.memory_ramp_ns));
  out->set_gemm_m_half(k.gemm_m_half);
  out->set_eager_device_gap_ns(WrittenTimeNs(k.eager_device_gap_ns));
  out->set_l2_resident_bandwidth_gbps(bench.l2_resident_bandwidth_gbps);
  if (bench.timed_call_gap_ns > 0) out->set_timed_call_gap_ns(bench.timed_call_gap_ns);
  out->set_gemm_memory_ramp_ns(WrittenTimeNs(k.RampNs(compute::KernelClass::kGemm)));
  out->set_attention_memory_ramp_ns(WrittenTimeNs(k.RampNs(compute::KernelClass::kAttention)));
  out->set_attention_compute_efficiency(k.attention_compute_efficiency);
  out->set_gemm_column_rate_gbps(k.gemm_column_rate_gbps);
  out->set_sampling_row_rate_glogits(k.sampling_row_rate_glogits);
  if (k.elementwise_memory_ramp_ns >= 0)
    out->set_elementwise_memory_ramp_ns(WrittenTimeNs(k.elementwise_memory_ramp_ns));
  out->set_elementwise_memory_efficiency(k.elementwise_memory_efficiency);
  if (k.strided_elementwise_memory_ramp_ns >= 0)
    out->set_strided_elementwise_memory_ramp_ns(WrittenTimeNs(k.strided_elementwise_memory_ramp_ns));
  out->set_gemm_overlap(k.gemm_overlap);
  out->set_gemm_library(k.gemm_library);
  for (const compute::ComputeParams::GemmLibraryCosts& g : k.gemm_libraries) ToProto(g, out->add_gemm_libraries());
  for (const compute::AttentionImplementation& a : k.attention_implementations)
    ToProto(a, out->add_attention_implementations());
}

void ToProto(const FabricParams& f, config::FabricCalibration* out) {
  ToProto(f.h2d_pinned, out->mutable_h2d_pinned());
  ToProto(f.d2h_pinned, out->mutable_d2h_pinned());
  ToProto(f.h2d_pageable, out->mutable_h2d_pageable());
  ToProto(f.d2h_pageable, out->mutable_d2h_pageable());
  out->set_duplex_factor(f.duplex_factor);
  out->set_multi_stream_overhead_ns(f.multi_stream_overhead_ns);
  out->set_copy_engines_per_direction(f.copy_engines_per_direction);
  out->set_copy_engine_setup_ns(f.copy_engine_setup_ns);
  ToProto(f.zero_copy_read, out->mutable_zero_copy_read());
  ToProto(f.zero_copy_write, out->mutable_zero_copy_write());
  out->set_kernel_read_per_sm_gbps(f.kernel_read_per_sm_gbps);
  for (const auto& [name, pp] : f.p2p) {
    config::P2pPathCalibration* pc = out->add_p2p();
    pc->set_path_class(name);
    ToProto(pp.copy, pc->mutable_copy());
    ToProto(pp.kernel_write, pc->mutable_kernel_write());
    ToProto(pp.kernel_read, pc->mutable_kernel_read());
  }
  if (f.h2d_bypass_max_bytes > 0) out->set_h2d_bypass_max_bytes(f.h2d_bypass_max_bytes);
  for (const auto& [key, ns] : f.under_load_extra_ns) (*out->mutable_under_load_extra_ns())[key] = ns;
  if (f.host_memory_gbps > 0) out->set_host_memory_gbps(f.host_memory_gbps);
}

// One protocols entry (op "": every collective on the transport); nothing for an empty cost.
void AddProtocolCost(coll::NcclTransport transport, coll::NcclProto proto, const char* op,
                     const coll::ProtocolCost& cost, config::NcclCalibration* out) {
  if (cost.empty()) return;
  config::NcclProtocolCalibration* e = out->add_protocols();
  e->set_transport(coll::NcclTransportName(transport));
  e->set_protocol(coll::NcclProtoName(proto));
  e->set_op(op);
  if (cost.base_latency_us) e->set_base_latency_us(*cost.base_latency_us);
  if (cost.hop_latency_us) e->set_hop_latency_us(*cost.hop_latency_us);
  if (cost.channel_gbps) e->set_channel_gbps(*cost.channel_gbps);
  if (cost.wire_efficiency) e->set_wire_efficiency(*cost.wire_efficiency);
}

// The set overrides of NCCL's per-step costs: per transport and protocol, per op.
void ToProto(const coll::ProtocolOverrides& o, config::NcclCalibration* out) {
  for (const auto& [key, cost] : o.per_transport) AddProtocolCost(key.first, key.second, "", cost, out);
  for (const auto& [key, cost] : o.per_op)
    AddProtocolCost(std::get<0>(key), std::get<1>(key),
                    coll::CollectiveName(static_cast<coll::Collective>(std::get<2>(key))), cost, out);
}

void ToProto(const NcclParams& n, config::NcclCalibration* out) {
  out->set_local_call_overhead_ns(n.local_call_overhead_ns);
  if (n.local_copy_ramp_ns > 0) out->set_local_copy_ramp_ns(n.local_copy_ramp_ns);
  if (n.local_copy_memory_efficiency > 0) out->set_local_copy_memory_efficiency(n.local_copy_memory_efficiency);
  ToProto(n.protocol, out);
  if (n.eager_call_extra_ns != 0) out->set_eager_call_extra_ns(n.eager_call_extra_ns);
  if (n.graph_call_extra_ns != 0) out->set_graph_call_extra_ns(n.graph_call_extra_ns);
}

void ToProto(const llm::HostCosts& host, config::HostPacingCalibration* out) {
  if (host.kernel_issue_us) out->set_kernel_issue_us(*host.kernel_issue_us);
  if (host.library_issue_us) out->set_library_issue_us(*host.library_issue_us);
  if (host.collective_issue_us) out->set_collective_issue_us(*host.collective_issue_us);
  if (host.graph_launch_us) out->set_graph_launch_us(*host.graph_launch_us);
  if (host.sync_wake_us) out->set_sync_wake_us(*host.sync_wake_us);
  // The file states an exponential jitter only (the fits draw no other).
  SPECSIM_CHECK(host.jitter.kind == llm::Jitter::Kind::kNone || host.jitter.kind == llm::Jitter::Kind::kExponential)
      << "a calibration file holds an exponential host jitter only";
  if (host.jitter.kind == llm::Jitter::Kind::kExponential && host.jitter.mean_us > 0)
    out->set_jitter_mean_us(host.jitter.mean_us);
  if (host.call_correlation > 0) out->set_call_correlation(host.call_correlation);
  for (const auto& [op, cost] : host.ops) {
    config::HostOpCostCalibration* o = out->add_ops();
    o->set_op(op);
    o->set_op_class(cost.op_class);
    o->set_kernels(cost.kernels);
    for (double q : cost.quantiles_us) o->add_quantiles_us(q);
  }
}

// One custom_allreduce entry per transport (peer, then host) with a flag latency or read rate.
void AddCustomAllreduce(const CustomAllreduceParams& custom, config::Calibration* out) {
  for (bool host : {false, true}) {
    const double us = host ? custom.host_flag_latency_us : custom.peer_flag_latency_us;
    const double rate = host ? custom.host_read_gbps_per_block : custom.peer_read_gbps_per_block;
    if (us <= 0 && rate <= 0) continue;
    config::CustomAllreduceCalibration* ca = out->add_custom_allreduce();
    ca->set_transport(host ? "host" : "peer");
    ca->set_flag_latency_us(us);
    ca->set_read_gbps_per_block(rate);
  }
}

}  // namespace

config::Calibration ToCalibrationProto(const CalibParams& p) {
  config::Calibration c;
  ToProto(p.compute, p.bench, c.mutable_compute());
  ToProto(p.fabric, c.mutable_fabric());
  ToProto(p.nccl, c.mutable_nccl());
  ToProto(p.host, c.mutable_host());
  AddCustomAllreduce(p.custom, &c);
  return c;
}

void ApplyFabricCalibration(const config::FabricCalibration& fc, net::Topology* t) {
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
}

}  // namespace specsim::calib
