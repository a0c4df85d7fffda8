#include "sim/calib/calibration_loader.h"

#include <fmt/format.h>

#include <cmath>
#include <utility>

#include "sim/coll/collective_planner.h"
#include "sim/io/field_ranges.h"
#include "sim/io/file_io.h"
#include "sim/io/textproto.h"
#include "sim/net/routing.h"

namespace specsim::calib {
namespace {

// "SOURCE: PATH = VALUE: RULE".
Status FieldError(const std::string& source, const std::string& path, const std::string& value,
                  const std::string& rule) {
  return InvalidArgumentError(fmt::format("{}: {} = {}: {}", source, path, value, rule));
}

std::string Quoted(const std::string& s) { return "\"" + s + "\""; }

// The compute block on the compute model's defaults, checked as the model needs it.
StatusOr<compute::ComputeParams> ComputeOf(const config::ComputeCalibration& c, const std::string& source) {
  for (int i = 0; i < c.gemm_libraries_size(); ++i)
    if (c.gemm_libraries(i).library().empty())
      return FieldError(source, fmt::format("compute.gemm_libraries[{}].library", i), "\"\"",
                        "must name the GEMM library its costs were fitted on, e.g. \"cublasLt\"");
  for (int i = 0; i < c.attention_implementations_size(); ++i)
    if (c.attention_implementations(i).name().empty())
      return FieldError(source, fmt::format("compute.attention_implementations[{}].name", i), "\"\"",
                        "must name the kernel, e.g. \"flash_mma\"");
  compute::ComputeParams p = compute::ApplyCalibration(compute::ComputeParams{}, c);
  RETURN_IF_ERROR(compute::ValidateComputeParams(p).WithPrefix(source + ": compute"));
  return p;
}

// The fabric block's names: P2P path classes and under-load keys the predictors know.
Status CheckFabricNames(const config::FabricCalibration& f, const std::string& source) {
  const std::string path_classes = "NV, PIX, PXB, PHB, SYS";
  for (int i = 0; i < f.p2p_size(); ++i) {
    const config::P2pPathCalibration& p = f.p2p(i);
    bool known = false;
    for (net::PathClass c : {net::PathClass::kNvLink, net::PathClass::kPix, net::PathClass::kPxb, net::PathClass::kPhb,
                             net::PathClass::kSys})
      known = known || p.path_class() == net::PathClassName(c);
    if (!known)
      return FieldError(source, fmt::format("fabric.p2p[{}].path_class", i), Quoted(p.path_class()),
                        "allowed values are " + path_classes);
  }
  for (const auto& [key, ns] : f.under_load_extra_ns())
    if (key != "h2d/h2d" && key != "h2d/d2h" && key != "d2h/h2d" && key != "d2h/d2h")
      return FieldError(source, "fabric.under_load_extra_ns[" + Quoted(key) + "]", fmt::format("{}", ns),
                        "keys are SMALL/BULK directions: h2d/h2d, h2d/d2h, d2h/h2d, d2h/d2h");
  return OkStatus();
}

// One protocols entry's costs, the entry's own fields only (0 rates: not set; latencies when
// present, 0 included: a fit's value).
coll::ProtocolCost ProtocolCostOf(const config::NcclProtocolCalibration& e) {
  coll::ProtocolCost cost;
  if (e.has_base_latency_us()) cost.base_latency_us = e.base_latency_us();
  if (e.has_hop_latency_us()) cost.hop_latency_us = e.hop_latency_us();
  if (e.channel_gbps() > 0) cost.channel_gbps = e.channel_gbps();
  if (e.wire_efficiency() > 0) cost.wire_efficiency = e.wire_efficiency();
  return cost;
}

// Fields of `from` that are set replace those of `to`.
void Merge(const coll::ProtocolCost& from, coll::ProtocolCost* to) {
  if (from.base_latency_us) to->base_latency_us = from.base_latency_us;
  if (from.hop_latency_us) to->hop_latency_us = from.hop_latency_us;
  if (from.channel_gbps) to->channel_gbps = from.channel_gbps;
  if (from.wire_efficiency) to->wire_efficiency = from.wire_efficiency;
}

// The older all-transport fields: one entry per transport for LL and for Simple.
void AddAllTransportFields(const config::NcclCalibration& n, coll::ProtocolOverrides* o) {
  auto set = [](std::optional<double>& field, double v) {
    if (v != 0) field = v;  // these fields cannot tell a 0 from absent: 0 keeps NCCL's value
  };
  for (coll::NcclTransport t :
       {coll::NcclTransport::kP2pNvLink, coll::NcclTransport::kP2pPcie, coll::NcclTransport::kShm}) {
    coll::ProtocolCost ll, simple;
    set(ll.base_latency_us, n.base_latency_ll_us());
    set(ll.hop_latency_us, n.hop_latency_ll_us());
    set(ll.wire_efficiency, n.ll_wire_efficiency());
    set(simple.base_latency_us, n.base_latency_simple_us());
    set(simple.hop_latency_us, n.hop_latency_simple_us());
    if (!ll.empty()) o->per_transport[{t, coll::NcclProto::kLl}] = ll;
    if (!simple.empty()) o->per_transport[{t, coll::NcclProto::kSimple}] = simple;
  }
}

StatusOr<NcclParams> NcclOf(const config::NcclCalibration& n, const std::string& source) {
  NcclParams p;
  p.local_call_overhead_ns = n.local_call_overhead_ns();
  p.local_copy_ramp_ns = n.local_copy_ramp_ns();
  p.local_copy_memory_efficiency = n.local_copy_memory_efficiency();
  // eager_call_extra_ns and graph_call_extra_ns correct a call's time against an empty kernel's
  // launch and may be negative (a fit of the 2x H200 LL trace gives a graph call 388 ns below it).
  p.eager_call_extra_ns = n.eager_call_extra_ns();
  p.graph_call_extra_ns = n.graph_call_extra_ns();
  AddAllTransportFields(n, &p.protocol);
  for (int i = 0; i < n.protocols_size(); ++i) {
    const config::NcclProtocolCalibration& e = n.protocols(i);
    const std::string path = fmt::format("nccl.protocols[{}]", i);
    auto transport = coll::ParseNcclTransport(e.transport());
    if (!transport.ok())
      return FieldError(source, path + ".transport", Quoted(e.transport()),
                        "allowed values are p2p_nvlink, p2p_pcie, shm");
    auto proto = coll::ParseNcclProto(e.protocol());
    if (!proto.ok())
      return FieldError(source, path + ".protocol", Quoted(e.protocol()), "allowed values are ll, ll128, simple");
    const coll::ProtocolCost cost = ProtocolCostOf(e);
    if (e.op().empty()) {
      Merge(cost, &p.protocol.per_transport[{*transport, *proto}]);
      continue;
    }
    auto op = coll::ParseCollective(e.op());
    if (!op.ok() || *op == coll::Collective::kAllToAll)
      return FieldError(source, path + ".op", Quoted(e.op()),
                        "allowed values are \"\" (every op), allreduce, allgather, reducescatter");
    Merge(cost, &p.protocol.per_op[{*transport, *proto, static_cast<int>(*op)}]);
  }
  return p;
}

StatusOr<llm::HostCosts> HostOf(const config::HostPacingCalibration& h, const std::string& source) {
  llm::HostCosts host;
  // A field present is the fit's value, 0 included; one absent keeps the compute model's default.
  if (h.has_kernel_issue_us()) host.kernel_issue_us = h.kernel_issue_us();
  if (h.has_library_issue_us()) host.library_issue_us = h.library_issue_us();
  if (h.has_collective_issue_us()) host.collective_issue_us = h.collective_issue_us();
  if (h.has_graph_launch_us()) host.graph_launch_us = h.graph_launch_us();
  if (h.has_sync_wake_us()) host.sync_wake_us = h.sync_wake_us();
  host.jitter = llm::ExponentialJitter(h.jitter_mean_us());
  host.call_correlation = h.call_correlation();
  for (int i = 0; i < h.ops_size(); ++i) {
    const config::HostOpCostCalibration& o = h.ops(i);
    const std::string path = fmt::format("host.ops[{}]", i);
    if (o.op().empty()) return FieldError(source, path + ".op", "\"\"", "must name the op, e.g. \"linear_qkv\"");
    if (host.ops.count(o.op()))
      return FieldError(source, path + ".op", Quoted(o.op()), "listed twice: one entry per op");
    llm::HostOpCost cost{o.op_class(), o.kernels(), {o.quantiles_us().begin(), o.quantiles_us().end()}};
    RETURN_IF_ERROR(llm::ValidateHostOpCost(cost, source + ": " + path + ".quantiles_us"));
    host.ops[o.op()] = std::move(cost);
  }
  return host;
}

StatusOr<CustomAllreduceParams> CustomOf(const config::Calibration& c, const std::string& source) {
  CustomAllreduceParams p;
  for (int i = 0; i < c.custom_allreduce_size(); ++i) {
    const config::CustomAllreduceCalibration& ca = c.custom_allreduce(i);
    const std::string path = fmt::format("custom_allreduce[{}]", i);
    if (ca.transport() != "peer" && ca.transport() != "host")
      return FieldError(source, path + ".transport", Quoted(ca.transport()),
                        "allowed values are peer (peer device memory), host (mapped host memory)");
    const bool host = ca.transport() == "host";
    if (ca.flag_latency_us() > 0) (host ? p.host_flag_latency_us : p.peer_flag_latency_us) = ca.flag_latency_us();
    if (ca.read_gbps_per_block() > 0)
      (host ? p.host_read_gbps_per_block : p.peer_read_gbps_per_block) = ca.read_gbps_per_block();
  }
  return p;
}

TransferClass Override(TransferClass base, const config::TransferClassCalibration& c) {
  if (c.latency_ns() != 0) base.latency_ns = c.latency_ns();
  if (c.bandwidth_gbps() != 0) base.bandwidth_gbps = c.bandwidth_gbps();
  return base;
}

}  // namespace

StatusOr<LoadedCalibration> CalibrationFromProto(config::Calibration c, const std::string& source) {
  LoadedCalibration out;
  out.source = source;
  // Every number in the unit and range calibration.proto declares (finite, sign, representable).
  RETURN_IF_ERROR(io::CheckFieldRanges(c, source, &out.warnings));
  ASSIGN_OR_RETURN(out.compute, ComputeOf(c.compute(), source));
  RETURN_IF_ERROR(CheckFabricNames(c.fabric(), source));
  ASSIGN_OR_RETURN(out.nccl, NcclOf(c.nccl(), source));
  ASSIGN_OR_RETURN(out.host, HostOf(c.host(), source));
  ASSIGN_OR_RETURN(out.custom, CustomOf(c, source));
  out.bench.l2_resident_bandwidth_gbps = c.compute().l2_resident_bandwidth_gbps();
  out.bench.timed_call_gap_ns = c.compute().timed_call_gap_ns();
  out.proto = std::move(c);
  return out;
}

StatusOr<LoadedCalibration> LoadCalibration(const std::string& path) {
  ASSIGN_OR_RETURN(io::ConfigText text, io::ReadConfigFile(path));
  ASSIGN_OR_RETURN(config::Calibration c, io::ParseTextProto<config::Calibration>(text.text, text.display_name));
  return CalibrationFromProto(std::move(c), text.display_name);
}

CalibParams CalibParamsOf(const LoadedCalibration& cal, CalibParams p) {
  p.compute = cal.compute;
  p.nccl = cal.nccl;
  p.host = cal.host;
  p.custom = cal.custom;
  p.bench = cal.bench;
  const config::FabricCalibration& fc = cal.fabric();
  FabricParams& f = p.fabric;
  f.h2d_pinned = Override(f.h2d_pinned, fc.h2d_pinned());
  f.d2h_pinned = Override(f.d2h_pinned, fc.d2h_pinned());
  f.h2d_pageable = Override(f.h2d_pageable, fc.h2d_pageable());
  f.d2h_pageable = Override(f.d2h_pageable, fc.d2h_pageable());
  f.zero_copy_read = Override(f.zero_copy_read, fc.zero_copy_read());
  f.zero_copy_write = Override(f.zero_copy_write, fc.zero_copy_write());
  if (fc.duplex_factor() != 0) f.duplex_factor = fc.duplex_factor();
  if (fc.multi_stream_overhead_ns() != 0) f.multi_stream_overhead_ns = fc.multi_stream_overhead_ns();
  if (fc.copy_engines_per_direction() != 0) f.copy_engines_per_direction = fc.copy_engines_per_direction();
  if (fc.copy_engine_setup_ns() != 0) f.copy_engine_setup_ns = fc.copy_engine_setup_ns();
  if (fc.kernel_read_per_sm_gbps() != 0) f.kernel_read_per_sm_gbps = fc.kernel_read_per_sm_gbps();
  for (const config::P2pPathCalibration& pc : fc.p2p()) {
    P2pParams& pp = f.p2p[pc.path_class()];
    pp.copy = Override(pp.copy, pc.copy());
    pp.kernel_write = Override(pp.kernel_write, pc.kernel_write());
    pp.kernel_read = Override(pp.kernel_read, pc.kernel_read());
  }
  if (fc.h2d_bypass_max_bytes() > 0) f.h2d_bypass_max_bytes = fc.h2d_bypass_max_bytes();
  for (const auto& [key, ns] : fc.under_load_extra_ns()) f.under_load_extra_ns[key] = ns;
  if (fc.host_memory_gbps() > 0) f.host_memory_gbps = fc.host_memory_gbps();
  return p;
}

}  // namespace specsim::calib
