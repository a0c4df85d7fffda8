#include "sim/calib/predictors.h"

#include <algorithm>
#include <cmath>

#include "sim/calib/host_op_predictors.h"
#include "sim/calib/loop_predictors.h"
#include "sim/calib/rank_group_box.h"
#include "sim/calib/trace_io.h"
#include "sim/coll/collective_planner.h"
#include "sim/coll/executor.h"
#include "sim/coll/nccl_transport.h"
#include "sim/compute/kernel_cost.h"
#include "sim/core/strings.h"
#include "sim/llm/decode_simulator.h"
#include "sim/io/model_loader.h"
#include "sim/net/routing.h"

namespace specsim::calib {
namespace {

Prediction NotSimulated(std::string reason) { return Prediction::NotSimulated(std::move(reason)); }
Prediction Us(double ns) { return Prediction::Of(ns * 1e-3); }

bool IsHostToDevice(trace::Direction d) { return d == trace::DIRECTION_H2D; }

std::string GpuRangeReason(int gpu, const net::Topology& t) {
  return "GPU " + std::to_string(gpu) + " is not in the hardware config '" + t.name + "' (" +
         std::to_string(t.num_gpus()) + " GPUs)";
}

}  // namespace

double TimedCallGapNs(const compute::KernelCostModel& cost, const BenchParams& bench) {
  return bench.timed_call_gap_ns > 0 ? bench.timed_call_gap_ns : NanosFromPicos(cost.EagerDeviceGap());
}

double TimedKernelNs(const compute::KernelCostModel& cost, const BenchParams& bench, double device_ns) {
  const compute::ComputeParams& p = cost.params();
  return std::max(p.launch_overhead_eager_ns + p.kernel_floor_ns, device_ns + TimedCallGapNs(cost, bench));
}

bool KernelTimeOnly(const trace::Item& item) {
  return (item.has_gemm() && item.gemm().kernel_time_only()) ||
         (item.has_attention() && item.attention().kernel_time_only()) ||
         (item.has_rmsnorm() && item.rmsnorm().kernel_time_only()) ||
         (item.has_sampling() && item.sampling().kernel_time_only()) ||
         (item.has_elementwise() && item.elementwise().kernel_time_only());
}

bool TimedKernelHostBound(const compute::KernelCostModel& cost, const BenchParams& bench, double device_ns) {
  const compute::ComputeParams& p = cost.params();
  return device_ns + TimedCallGapNs(cost, bench) < p.launch_overhead_eager_ns + p.kernel_floor_ns;
}

std::string DecodeCaptureOf(const trace::DecodeParams& d) {
  return d.capture().empty() ? (d.cuda_graph() ? "graph" : "eager") : d.capture();
}

std::string GemmLibraryOf(const trace::GemmParams& g) { return g.library().empty() ? "cublasGemmEx" : g.library(); }

std::string AttentionImplementationOf(const trace::AttentionParams& a) {
  return a.implementation().empty() ? "simt_reference" : a.implementation();
}

compute::Kernel GemmKernel16(double m, double n, double k) {
  compute::Kernel g;
  g.name = "gemm";
  g.kernel_class = compute::KernelClass::kGemm;
  g.flops = 2 * m * n * k;
  g.bytes = 2 * (n * k + m * k + m * n);
  g.m = m;
  g.n = n;
  g.k = k;
  g.weight_bytes = 2 * n * k;
  return g;
}

ItemKernel KernelOfItem(const trace::Item& item) {
  ItemKernel r;
  compute::Kernel& k = r.kernel;
  k.name = item.name();
  switch (item.kind()) {
    case trace::KIND_GEMM: {
      const trace::GemmParams& g = item.gemm();
      if (g.dtype() != trace::DTYPE_BF16 && g.dtype() != trace::DTYPE_FP16) {
        r.reason =
            "GEMM dtype " + trace::DType_Name(g.dtype()) + ": the cost model has tensor rates for bf16/fp8/fp4 only";
        return r;
      }
      k = GemmKernel16(g.m(), g.n(), g.k());
      k.name = item.name();
      r.ok = true;
      return r;
    }
    case trace::KIND_ATTENTION: {
      const trace::AttentionParams& a = item.attention();
      if (a.kv_shared() && AttentionImplementationOf(a) == "simt_reference") {
        r.reason =
            "MLA attention on validate's CUDA-core reference kernel over the latent cache: not a production "
            "MLA decode kernel (flash_mla, FlashMLA), which is what the cost model represents";
        return r;
      }
      const double tokens = double(a.batch()) * a.query_tokens();
      const double len = static_cast<double>(a.context());
      k.kernel_class = compute::KernelClass::kAttention;
      k.bytes = static_cast<double>(a.kv_bytes()) + tokens * a.q_heads() * (a.head_dim() + a.v_head_dim()) * 2.0;
      k.flops = 2 * tokens * a.q_heads() * len * (a.head_dim() + a.v_head_dim());
      k.has_attention_call =
          a.batch() >= 1 && a.query_tokens() >= 1 && a.q_heads() >= 1 && a.kv_heads() >= 1 && a.context() >= 1;
      k.attention.seqs = a.batch();
      k.attention.query_tokens = a.query_tokens();
      k.attention.q_heads = a.q_heads();
      k.attention.kv_heads = a.kv_heads();
      k.attention.context = a.context();
      k.attention.kv_bytes = static_cast<double>(a.kv_bytes());
      k.attention.splits = std::max(0, a.splits());
      k.attention.latent = a.kv_shared();
      r.ok = true;
      return r;
    }
    case trace::KIND_RMSNORM: {
      const trace::RmsNormParams& n = item.rmsnorm();
      k.kernel_class = compute::KernelClass::kNorm;
      k.bytes = (n.fused_residual() ? 4.0 : 2.0) * double(n.tokens()) * n.hidden() * 2 + n.hidden() * 2.0;
      r.ok = true;
      return r;
    }
    case trace::KIND_SAMPLING: {
      // One row of V logits per sampled token: read once (the argmax / sampler), indices written.
      const trace::SamplingParams& s = item.sampling();
      const int width = s.dtype() == trace::DTYPE_FP32 ? 4 : 2;
      k.kernel_class = compute::KernelClass::kSampling;
      k.bytes = double(s.rows()) * double(s.vocab()) * width + double(s.rows()) * 8;
      k.m = static_cast<double>(s.rows());
      k.n = static_cast<double>(s.vocab());
      r.ok = s.rows() >= 1 && s.vocab() >= 1;
      if (!r.ok) r.reason = "sampling item without rows or vocab";
      return r;
    }
    case trace::KIND_ELEMENTWISE: {
      const trace::ElementwiseParams& e = item.elementwise();
      k.kernel_class = compute::KernelClass::kElementwise;
      k.bytes = static_cast<double>(e.bytes());
      k.strided = e.strided();
      r.ok = e.bytes() >= 1;
      if (!r.ok) r.reason = "elementwise item without bytes";
      return r;
    }
    default: r.reason = "not a single-kernel item"; return r;
  }
}

bool L2Resident(const trace::Item& item, const compute::Kernel& kernel, const net::GpuSpec& gpu,
                const BenchParams& bench) {
  if (bench.l2_resident_bandwidth_gbps <= 0) return false;
  // Only RMSNorm: GEMM items rotate weight copies larger than the L2, and the attention kernel's time
  // is dominated by its fixed split/reduce cost (its own ramp), not by where its bytes come from.
  if (item.kind() != trace::KIND_RMSNORM) return false;
  return kernel.bytes <= gpu.l2_cache_mib * 1024 * 1024;
}

bool QueuesBehindBulk(const FabricParams& f, trace::Direction direction, double bytes) {
  if (f.copy_engines_per_direction > 1) return false;
  return !(direction == trace::DIRECTION_H2D && bytes <= f.h2d_bypass_max_bytes);
}

double UnderLoadExtraNs(const FabricParams& f, trace::Direction small, trace::Direction bulk) {
  auto it = f.under_load_extra_ns.find(UnderLoadKey(small, bulk));
  return it == f.under_load_extra_ns.end() ? 0.0 : it->second;
}

std::string UnderLoadKey(trace::Direction small, trace::Direction bulk) {
  auto name = [](trace::Direction d) { return d == trace::DIRECTION_H2D ? "h2d" : "d2h"; };
  return std::string(name(small)) + "/" + name(bulk);
}

double Predictor::HostCopiesTogetherNs(const trace::TransferParams& t) const {
  const FabricParams& f = params_.fabric;
  // Each copy at its class rate, times the duplex factor when its GPU moves both directions;
  // together never above the shared host limit (scaled down alike).
  std::map<int, int> directions_of_gpu;
  for (const trace::ConcurrentCopy& c : t.copies())
    directions_of_gpu[c.gpu()] |= c.direction() == trace::DIRECTION_H2D ? 1 : 2;
  std::vector<double> rate;
  double total = 0;
  for (const trace::ConcurrentCopy& c : t.copies()) {
    const TransferClass& cls = HostClass(
        c.direction(), c.host_memory() == trace::HOST_MEMORY_UNSPECIFIED ? trace::HOST_PINNED : c.host_memory());
    rate.push_back(cls.bandwidth_gbps * (directions_of_gpu[c.gpu()] == 3 ? f.duplex_factor : 1.0));
    total += rate.back();
  }
  const double scale = f.host_memory_gbps > 0 && total > f.host_memory_gbps ? f.host_memory_gbps / total : 1.0;
  double longest = 0;
  for (int i = 0; i < t.copies_size(); ++i) {
    const trace::ConcurrentCopy& c = t.copies(i);
    const TransferClass& cls = HostClass(c.direction(), trace::HOST_PINNED);
    longest = std::max(longest, cls.latency_ns + static_cast<double>(c.bytes()) / (rate[i] * scale));
  }
  // Each copy is timed on its own stream by its own events: no cross-stream overhead.
  return longest;
}

StatusOr<coll::CollectiveRequest> CollectiveRequestOf(const trace::CollectiveParams& c, const CalibParams& params) {
  coll::CollectiveRequest request;
  switch (c.op()) {
    case trace::ALLREDUCE: request.collective = coll::Collective::kAllReduce; break;
    case trace::ALLGATHER: request.collective = coll::Collective::kAllGather; break;
    case trace::REDUCESCATTER: request.collective = coll::Collective::kReduceScatter; break;
    case trace::ALLTOALL: request.collective = coll::Collective::kAllToAll; break;
    default: return InvalidArgumentError("collective op " + trace::CollectiveOp_Name(c.op()) + " is not modelled");
  }
  request.gpus.assign(c.gpus().begin(), c.gpus().end());
  request.bytes = c.bytes();
  if (c.implementation() == trace::IMPL_NCCL) {
    const std::string algo = AsciiLower(c.nccl_algo());
    auto a = coll::ParseAlgorithm(algo.empty() ? "auto" : algo);
    if (!a.ok() || *a == coll::Algorithm::kOneShot || *a == coll::Algorithm::kTwoShot)
      return InvalidArgumentError("NCCL_ALGO=" + c.nccl_algo() + " is not modelled (ring, tree or unset)");
    request.algorithm = *a;
    if (!c.nccl_proto().empty()) {
      auto p = coll::ParseNcclProto(c.nccl_proto());
      if (!p.ok()) return InvalidArgumentError("NCCL_PROTO=" + c.nccl_proto() + " is not modelled (LL, Simple)");
      request.protocol = *p;
    }
    if (!c.nccl_min_nchannels().empty()) request.min_channels = std::atoi(c.nccl_min_nchannels().c_str());
    if (!c.nccl_max_nchannels().empty()) request.max_channels = std::atoi(c.nccl_max_nchannels().c_str());
    if (!c.nccl_p2p_level().empty()) {
      auto l = coll::ParseP2pLevel(AsciiLower(c.nccl_p2p_level()));
      if (!l.ok()) return InvalidArgumentError("NCCL_P2P_LEVEL=" + c.nccl_p2p_level() + " is not modelled");
      request.p2p_level = *l;
    }
    request.p2p_disable = c.nccl_p2p_disable() == "1";
    // What NCCL ran, when the trace recorded it (validate --nccl-log): the measured configuration,
    // like the environment. The time is still the simulation's; NCCL's pick is checked separately.
    if (!c.nccl_chosen_algo().empty()) {
      auto chosen = coll::ParseAlgorithm(AsciiLower(c.nccl_chosen_algo()));
      if (!chosen.ok() || (*chosen != coll::Algorithm::kRing && *chosen != coll::Algorithm::kTree))
        return InvalidArgumentError("NCCL ran algorithm " + c.nccl_chosen_algo() +
                                    ", which specsim does not model (ring, tree)");
      request.algorithm = *chosen;
    }
    if (!c.nccl_chosen_proto().empty()) {
      auto p = coll::ParseNcclProto(c.nccl_chosen_proto());
      if (!p.ok())
        return InvalidArgumentError("NCCL ran protocol " + c.nccl_chosen_proto() + ", which specsim does not model");
      request.protocol = *p;
    }
    if (c.nccl_chosen_channels() > 0) request.channels = c.nccl_chosen_channels();
  } else {
    request.algorithm =
        c.implementation() == trace::IMPL_ONE_SHOT ? coll::Algorithm::kOneShot : coll::Algorithm::kTwoShot;
    if (c.blocks() > 0) request.custom_blocks = c.blocks();
    // validate's kernels stage the input into their exchange buffers (validate/allreduce_kernels.cu),
    // and its system-fence kernel (every item before the framework discipline) ends two-shot with a
    // third barrier.
    request.custom_stage_input = true;
    request.custom_fence_kernel = c.custom_barrier() != trace::BARRIER_FRAMEWORK;
    request.custom_host_mapped = c.transport() == trace::TRANSPORT_HOST_MAPPED;
    const bool host = request.custom_host_mapped;
    request.custom_flag_latency_ps =
        PicosFromMicros(host ? params.custom.host_flag_latency_us : params.custom.peer_flag_latency_us);
    request.custom_read_gbps_per_block =
        host ? params.custom.host_read_gbps_per_block : params.custom.peer_read_gbps_per_block;
  }
  request.protocol_overrides = params.nccl.protocol;
  request.nccl_step_work = params.nccl.step_work;
  return request;
}

std::string MeasuredOnlyReason(trace::Kind kind) {
  switch (kind) {
    case trace::KIND_HOST_FLAG_ROUNDTRIP:
      return "a flag round trip through mapped host memory (host_staged suite): an input of the host-staged custom "
             "allreduce model (the rank-group items take half the same-GPU round trip as a flag's one-way trip), "
             "not a prediction";
    case trace::KIND_HOST_SMALL_READS:
      return "small reads of mapped host memory with bounded reads in flight (host_staged suite): measured for the "
             "host-staged custom allreduce model, whose reads take the fabric's outstanding-bytes cap instead; not "
             "a prediction";
    default: return "";
  }
}

namespace {

// The trace's own one-way flag trip through host memory: half the median of its flag round trips
// answered by another block of the same GPU (host_staged suite); the planner's measured constant
// when it has none.
double HostFlagOneWayOfTrace(const trace::Trace& trace) {
  std::vector<double> rt;
  for (const trace::Item& it : trace.items())
    if (it.kind() == trace::KIND_HOST_FLAG_ROUNDTRIP && it.name().find("/same_gpu/") != std::string::npos &&
        it.stats().median_us() > 0)
      rt.push_back(it.stats().median_us());
  if (rt.empty()) return coll::kHostFlagOneWayUs;
  std::sort(rt.begin(), rt.end());
  return 0.5 * rt[rt.size() / 2];
}

}  // namespace

Predictor::Predictor(const trace::Trace& trace, const net::Topology& topology, CalibParams params)
    : trace_(trace),
      topology_(topology),
      params_(std::move(params)),
      host_flag_one_way_us_(HostFlagOneWayOfTrace(trace)) {}

const TransferClass& Predictor::HostClass(trace::Direction d, trace::HostMemory memory) const {
  const bool pageable = memory == trace::HOST_PAGEABLE;
  const FabricParams& f = params_.fabric;
  if (IsHostToDevice(d)) return pageable ? f.h2d_pageable : f.h2d_pinned;
  return pageable ? f.d2h_pageable : f.d2h_pinned;
}

P2pParams Predictor::P2pFor(const trace::TransferParams& t) const {
  auto it = params_.fabric.p2p.find(PathClassName(t.path_class()));
  if (it != params_.fabric.p2p.end()) return it->second;
  return P2pDefaults(topology_, t.src_gpu(), t.dst_gpu(), params_.compute);
}

Prediction Predictor::Predict(const trace::Item& item) const {
  switch (item.kind()) {
    case trace::KIND_H2D_COPY:
    case trace::KIND_D2H_COPY:
    case trace::KIND_BIDIR_COPY:
    case trace::KIND_CONCURRENT_COPIES:
    case trace::KIND_ZERO_COPY_READ:
    case trace::KIND_ZERO_COPY_WRITE:
    case trace::KIND_LATENCY_UNDER_LOAD:
    case trace::KIND_P2P_COPY:
    case trace::KIND_P2P_KERNEL_READ:
    case trace::KIND_P2P_KERNEL_WRITE:
    case trace::KIND_HOST_COPIES_MULTI: return PredictTransfer(item);
    case trace::KIND_GEMM:
    case trace::KIND_ATTENTION:
    case trace::KIND_RMSNORM:
    case trace::KIND_SAMPLING:
    case trace::KIND_ELEMENTWISE:
    case trace::KIND_LAUNCH_OVERHEAD: return PredictKernel(item);
    case trace::KIND_COLLECTIVE:
    case trace::KIND_CUSTOM_ALLREDUCE: return PredictCollective(item);
    case trace::KIND_DECODE_STEP:
    case trace::KIND_SPEC_CYCLE: return PredictDecode(item);
    case trace::KIND_LAYER_LOOP: return PredictLayerLoop(item, topology_, params_);
    case trace::KIND_COLLECTIVE_SKEW: return PredictSkewLoop(item, topology_, params_);
    case trace::KIND_HOST_OP: return PredictHostOp(item, params_);
    case trace::KIND_HOST_LOOP: return PredictHostLoop(trace_, item, params_);
    case trace::KIND_HOST_FLAG_ROUNDTRIP:
    case trace::KIND_HOST_SMALL_READS: return NotSimulated(MeasuredOnlyReason(item.kind()));
    default: return NotSimulated("item kind " + trace::Kind_Name(item.kind()) + " is not known to this specsim");
  }
}

Prediction Predictor::PredictTransfer(const trace::Item& item) const {
  if (!item.has_transfer()) return NotSimulated("transfer item without transfer parameters");
  const trace::TransferParams& t = item.transfer();
  const FabricParams& f = params_.fabric;
  const double bytes = static_cast<double>(t.bytes());
  const bool p2p = item.kind() == trace::KIND_P2P_COPY || item.kind() == trace::KIND_P2P_KERNEL_READ ||
                   item.kind() == trace::KIND_P2P_KERNEL_WRITE;
  if (p2p) {
    if (t.src_gpu() < 0 || t.src_gpu() >= topology_.num_gpus())
      return NotSimulated(GpuRangeReason(t.src_gpu(), topology_));
    if (t.dst_gpu() < 0 || t.dst_gpu() >= topology_.num_gpus())
      return NotSimulated(GpuRangeReason(t.dst_gpu(), topology_));
  } else if (item.kind() == trace::KIND_HOST_COPIES_MULTI) {
    if (t.copies_size() == 0) return NotSimulated("host copies item without its copies");
    for (const trace::ConcurrentCopy& c : t.copies())
      if (c.gpu() < 0 || c.gpu() >= topology_.num_gpus()) return NotSimulated(GpuRangeReason(c.gpu(), topology_));
  } else if (t.gpu() < 0 || t.gpu() >= topology_.num_gpus()) {
    return NotSimulated(GpuRangeReason(t.gpu(), topology_));
  }
  switch (item.kind()) {
    case trace::KIND_H2D_COPY:
    case trace::KIND_D2H_COPY: return Us(HostClass(t.direction(), t.host_memory()).TimeNs(bytes));
    case trace::KIND_BIDIR_COPY: {
      const TransferClass& h = HostClass(trace::DIRECTION_H2D, t.host_memory());
      const TransferClass& d = HostClass(trace::DIRECTION_D2H, t.host_memory());
      const double duplex = f.duplex_factor;
      return Us(f.multi_stream_overhead_ns + std::max(h.latency_ns + bytes / (duplex * h.bandwidth_gbps),
                                                      d.latency_ns + bytes / (duplex * d.bandwidth_gbps)));
    }
    case trace::KIND_CONCURRENT_COPIES: {
      const TransferClass& c = HostClass(t.direction(), t.host_memory());
      const int k = std::max(1, t.streams());
      const int engines = std::max(1, f.copy_engines_per_direction);
      const int rounds = (k + engines - 1) / engines;
      return Us(f.multi_stream_overhead_ns + rounds * c.latency_ns + k * bytes / c.bandwidth_gbps);
    }
    case trace::KIND_LATENCY_UNDER_LOAD: {
      const TransferClass& c = HostClass(t.direction(), t.host_memory());
      const TransferClass& load = HostClass(t.load_direction(), t.host_memory());
      const double lb = static_cast<double>(t.load_bytes());
      const double extra = UnderLoadExtraNs(f, t.direction(), t.load_direction());
      if (t.load_direction() == t.direction()) {
        if (QueuesBehindBulk(f, t.direction(), bytes)) return Us(load.TimeNs(lb) + c.TimeNs(bytes));
        return Us(c.latency_ns + extra + bytes / (0.5 * c.bandwidth_gbps));
      }
      return Us(c.latency_ns + extra + bytes / (f.duplex_factor * c.bandwidth_gbps));
    }
    case trace::KIND_HOST_COPIES_MULTI: return Us(HostCopiesTogetherNs(t));
    case trace::KIND_ZERO_COPY_READ: {
      double rate = f.zero_copy_read.bandwidth_gbps;
      const int sms = topology_.gpu_spec(t.gpu()).sm_count;
      if (f.kernel_read_per_sm_gbps > 0 && t.blocks() > 0)
        rate = std::min(rate, std::min(t.blocks(), sms) * f.kernel_read_per_sm_gbps);
      return Us(f.zero_copy_read.latency_ns + bytes / rate);
    }
    case trace::KIND_ZERO_COPY_WRITE: return Us(f.zero_copy_write.TimeNs(bytes));
    case trace::KIND_P2P_COPY: return Us(P2pFor(t).copy.TimeNs(bytes));
    case trace::KIND_P2P_KERNEL_WRITE: return Us(P2pFor(t).kernel_write.TimeNs(bytes));
    case trace::KIND_P2P_KERNEL_READ: {
      const TransferClass c = P2pFor(t).kernel_read;
      double rate = c.bandwidth_gbps;
      const int sms = topology_.gpu_spec(t.dst_gpu()).sm_count;
      if (f.kernel_read_per_sm_gbps > 0 && t.blocks() > 0)
        rate = std::min(rate, std::min(t.blocks(), sms) * f.kernel_read_per_sm_gbps);
      return Us(c.latency_ns + bytes / rate);
    }
    default: return NotSimulated("not a transfer");
  }
}

Prediction Predictor::PredictKernel(const trace::Item& item) const {
  int gpu = 0;
  if (item.has_gemm()) gpu = item.gemm().gpu();
  if (item.has_attention()) gpu = item.attention().gpu();
  if (item.has_rmsnorm()) gpu = item.rmsnorm().gpu();
  if (item.has_sampling()) gpu = item.sampling().gpu();
  if (item.has_elementwise()) gpu = item.elementwise().gpu();
  if (item.has_launch()) gpu = item.launch().gpu();
  if (gpu < 0 || gpu >= topology_.num_gpus()) return NotSimulated(GpuRangeReason(gpu, topology_));
  // A GEMM item takes its own library's GEMM costs (ComputeParams::WithGemmLibrary).
  const compute::ComputeParams compute =
      item.has_gemm() ? params_.compute.WithGemmLibrary(GemmLibraryOf(item.gemm())) : params_.compute;
  auto cost = compute::KernelCostModel::Create(topology_.gpu_spec(gpu), compute);
  if (!cost.ok()) return NotSimulated(cost.status().message());
  if (item.kind() == trace::KIND_LAUNCH_OVERHEAD) {
    const trace::LaunchParams& l = item.launch();
    compute::Kernel empty;
    empty.name = "empty";
    empty.kernel_class = compute::KernelClass::kElementwise;
    std::vector<compute::Kernel> ks(std::max(1, l.kernels()), empty);
    return Us(NanosFromPicos(cost->SequenceTime(ks, l.cuda_graph())));
  }
  ItemKernel k = KernelOfItem(item);
  if (!k.ok) return NotSimulated(k.reason);
  if (item.kind() == trace::KIND_ATTENTION && k.kernel.has_attention_call) {
    // The item's own implementation, with its fitted costs when the calibration has them, timed as
    // validate times a call (TimedKernelNs: the fit took the timed call's gap off the measurements,
    // fit_attention.cc AttentionRows).
    if (const compute::AttentionImplementation* impl =
            params_.compute.FindAttentionImplementation(AttentionImplementationOf(item.attention()))) {
      if (topology_.gpu_spec(gpu).sm_count > 0) {
        const double device_ns = compute::AttentionTime(*impl, k.kernel.attention, topology_.gpu_spec(gpu).sm_count,
                                                        topology_.gpu_spec(gpu).memory_bandwidth_gbps)
                                     .total_ns();
        if (KernelTimeOnly(item)) return Us(device_ns);
        return Us(TimedKernelNs(*cost, params_.bench, device_ns));
      }
    }
  }
  if (L2Resident(item, k.kernel, topology_.gpu_spec(gpu), params_.bench)) {
    // Same law as KernelTime, with the memory term at the L2-resident bandwidth.
    const compute::ComputeParams& cp = params_.compute;
    double device =
        std::max(cp.kernel_floor_ns, cp.memory_ramp_ns + k.kernel.bytes / params_.bench.l2_resident_bandwidth_gbps);
    const double e_c = cost->ComputeEfficiency(k.kernel);
    if (k.kernel.flops > 0 && e_c > 0)
      device = std::max(device, k.kernel.flops / (cost->PeakTflops(k.kernel.math_dtype) * 1e3 * e_c));
    if (KernelTimeOnly(item)) return Us(device);
    return Us(TimedKernelNs(*cost, params_.bench, device));
  }
  const double device_ns = NanosFromPicos(cost->KernelTime(k.kernel));
  if (KernelTimeOnly(item)) return Us(device_ns);
  return Us(TimedKernelNs(*cost, params_.bench, device_ns));
}

Prediction Predictor::PredictRankGroups(const trace::Item& item) const {
  const trace::CollectiveParams& c = item.collective();
  const int n = c.rank_groups_on_one_gpu();
  if (c.custom_barrier() != trace::BARRIER_FRAMEWORK || !c.custom_flags_block_major())
    return NotSimulated(
        "custom allreduce of " + std::to_string(n) + " ranks as block groups on one GPU with " +
        (c.custom_barrier() == trace::BARRIER_FRAMEWORK ? std::string("our rank-major flag layout")
                                                        : std::string("our system-fence barrier")) +
        ": the host-staged custom allreduce model prices vLLM's barrier and flag layout (the -vllmflags items)");
  if (c.gpus_size() < 1 || c.gpus(0) < 0 || c.gpus(0) >= topology_.num_gpus())
    return NotSimulated(GpuRangeReason(c.gpus_size() > 0 ? c.gpus(0) : -1, topology_));
  auto box = RankGroupBox(topology_, c.gpus(0), n);
  if (!box.ok()) return NotSimulated(box.status().message());
  auto request = CollectiveRequestOf(c, params_);
  if (!request.ok()) return NotSimulated(request.status().message());
  request->gpus.clear();
  for (int r = 0; r < n; ++r) request->gpus.push_back(r);
  // vLLM's kernel: inputs in the registered (here: mapped host) buffers, no staging; its barrier
  // flags priced from the trace's own flag trips and the measured line serialization; the reads by
  // the fabric's outstanding-bytes cap (kernel_read_outstanding_bytes_per_sm, from zero-copy reads).
  request->custom_stage_input = false;
  request->custom_host_mapped = true;
  request->custom_registered_host = true;
  const int blocks = c.blocks() > 0 ? c.blocks() : coll::FrameworkCustomBlocks(c.bytes());
  request->custom_flag_latency_ps = PicosFromMicros(coll::HostFlagFloorUs(n, blocks, host_flag_one_way_us_));
  request->custom_read_gbps_per_block = 0;
  const net::Router router(*box);
  auto plan = coll::PlanCollective(*box, router, *request);
  if (!plan.ok()) return NotSimulated(plan.status().message());
  const coll::CollectiveTiming timing = coll::CollectiveTimer(router).Time(plan->schedule, plan->rank_gpus);
  if (timing.duration_ps >= kMaxDurationPs)
    return NotSimulated("its simulated time passed specsim's clock range (a link rate out of range)");
  // One launch of the whole grid, timed as validate times a kernel (eager).
  return Us(NanosFromPicos(timing.duration_ps) + params_.compute.launch_overhead_eager_ns);
}

Prediction Predictor::PredictCollective(const trace::Item& item) const {
  if (!item.has_collective()) return NotSimulated("collective item without collective parameters");
  const trace::CollectiveParams& c = item.collective();
  if (c.rank_groups_on_one_gpu() > 0) return PredictRankGroups(item);
  for (int g : c.gpus())
    if (g < 0 || g >= topology_.num_gpus()) return NotSimulated(GpuRangeReason(g, topology_));
  const int gpu0 = c.gpus_size() > 0 ? c.gpus(0) : 0;
  auto cost = compute::KernelCostModel::Create(topology_.gpu_spec(gpu0), params_.compute);
  if (!cost.ok()) return NotSimulated(cost.status().message());
  const int ops = std::max(1, c.ops_per_graph());
  const double bytes = static_cast<double>(c.bytes());
  if (c.nranks() <= 1) {
    if (c.implementation() != trace::IMPL_NCCL)
      return NotSimulated("custom allreduce with one rank: the kernel reads its own buffer through " +
                          std::to_string(c.blocks()) +
                          " blocks; the simulator models custom allreduce as peer reads over the fabric (2+ ranks) "
                          "and has no occupancy-limited local-read model");
    // One rank: NCCL copies the send buffer into the receive buffer; in place it launches nothing
    // (NVIDIA/nccl src/device/onerank.cu @0e35f5d, ncclLaunchOneRank: dst == src returns before any copy or
    // kernel), so the call costs NCCL's host-side work alone (eager), or its share of the graph's
    // launch (replayed).
    if (c.in_place()) {
      if (c.cuda_graph()) return Us(params_.compute.graph_launch_ns / ops);
      return Us(params_.nccl.local_call_overhead_ns);
    }
    compute::Kernel copy;
    copy.name = "nccl_local_copy";
    copy.kernel_class = compute::KernelClass::kElementwise;
    copy.bytes = 2 * bytes;
    // NCCL's host-side per-call cost (argument checks, kernel plan) is paid when launching eagerly;
    // a replayed graph holds only the copy kernel.
    const double overhead = params_.nccl.local_call_overhead_ns;
    compute::ComputeParams cp = params_.compute;
    if (params_.nccl.local_copy_ramp_ns > 0 || params_.nccl.local_copy_memory_efficiency > 0) {
      if (params_.nccl.local_copy_ramp_ns > 0) cp.memory_ramp_ns = params_.nccl.local_copy_ramp_ns;
      if (params_.nccl.local_copy_memory_efficiency > 0)
        cp.memory_efficiency = params_.nccl.local_copy_memory_efficiency;
      auto local = compute::KernelCostModel::Create(topology_.gpu_spec(gpu0), cp);
      if (!local.ok()) return NotSimulated(local.status().message());
      cost = std::move(local);
    }
    // Re-running on the same buffers: a copy whose source and destination fit in L2 stays there.
    const bool resident = params_.bench.l2_resident_bandwidth_gbps > 0 &&
                          copy.bytes <= topology_.gpu_spec(gpu0).l2_cache_mib * 1024 * 1024;
    // Eager calls are timed like single kernels (TimedKernelNs), with NCCL's per-call cost on the
    // host's side: max(issue + floor + overhead, device + timed gap).
    auto eager = [&](double device) {
      return Us(std::max(TimedKernelNs(*cost, params_.bench, device),
                         cp.launch_overhead_eager_ns + cp.kernel_floor_ns + overhead));
    };
    if (resident) {
      const double device =
          std::max(cp.kernel_floor_ns, cp.memory_ramp_ns + copy.bytes / params_.bench.l2_resident_bandwidth_gbps);
      if (c.cuda_graph()) return Us(cp.graph_launch_ns / ops + device + cp.launch_overhead_graph_ns);
      return eager(device);
    }
    if (c.cuda_graph()) {
      std::vector<compute::Kernel> ks(ops, copy);
      return Us(NanosFromPicos(cost->SequenceTime(ks, true)) / ops);
    }
    return eager(NanosFromPicos(cost->KernelTime(copy)));
  }
  auto request = CollectiveRequestOf(c, params_);
  if (!request.ok()) return NotSimulated(request.status().message());
  net::Router router(topology_);
  auto plan = coll::PlanCollective(topology_, router, *request);
  if (!plan.ok()) return NotSimulated(plan.status().message());
  const coll::CollectiveTiming timing = coll::CollectiveTimer(router).Time(plan->schedule, plan->rank_gpus);
  // A saturated time is not a prediction (time.h): the item's or the calibration's rates are.
  if (timing.duration_ps >= kMaxDurationPs)
    return NotSimulated("its simulated time passed specsim's clock range (a link rate or NCCL cost out of range)");
  double ns = NanosFromPicos(timing.duration_ps);
  if (c.kernel_time_only()) return Us(ns);  // a profiler's kernel duration: no launch or call cost
  const compute::ComputeParams& k = params_.compute;
  ns += c.cuda_graph() ? k.graph_launch_ns / ops + k.launch_overhead_graph_ns : k.launch_overhead_eager_ns;
  if (c.implementation() == trace::IMPL_NCCL)
    ns += c.cuda_graph() ? params_.nccl.graph_call_extra_ns : params_.nccl.eager_call_extra_ns;
  return Us(ns);
}

namespace {

// The shape the trace records for the model (the last entry of that name).
StatusOr<const trace::ModelShape*> ShapeOfModel(const trace::Trace& trace, const std::string& model) {
  const trace::ModelShape* shape = nullptr;
  for (const trace::ModelShape& m : trace.models())
    if (m.name() == model) shape = &m;
  if (!shape) return InvalidArgumentError("model '" + model + "' has no shape in the trace's models list");
  return shape;
}

// A model from the shape fields alone (a trace that did not record the models/ file).
llm::ModelSpec ModelOfRecordedShape(const trace::ModelShape& shape) {
  llm::ModelSpec target;
  target.name = shape.name();
  target.family = shape.mla() ? llm::ModelFamily::kDeepseekV3 : llm::ModelFamily::kLlama;
  target.num_layers = shape.layers();
  target.hidden_size = shape.hidden();
  target.num_attention_heads = shape.heads();
  target.num_key_value_heads = shape.kv_heads();
  target.head_dim = shape.head_dim();
  target.intermediate_size = shape.intermediate();
  target.vocab_size = shape.vocab();
  target.moe.num_experts = shape.num_experts();
  target.moe.num_shared_experts = shape.num_shared_experts();
  target.moe.experts_per_token = shape.experts_per_token();
  target.moe.moe_intermediate_size = shape.moe_intermediate();
  target.moe.first_dense_layers = shape.first_dense_layers();
  if (shape.mla()) {
    target.mla.q_lora_rank = shape.q_lora_rank();
    target.mla.kv_lora_rank = shape.kv_lora_rank();
    target.mla.qk_nope_head_dim = shape.qk_nope_head_dim();
    target.mla.qk_rope_head_dim = shape.qk_rope_head_dim();
    target.mla.v_head_dim = shape.v_head_dim();
  }
  return target;
}

// The target model: the models/*.textproto the run used, as recorded in the trace (else the
// recorded shape), with the layers the loop ran (dense and MoE when it says).
StatusOr<llm::ModelSpec> TargetModelOf(const trace::ModelShape& shape, const trace::DecodeParams& d) {
  llm::ModelSpec target;
  if (shape.has_config()) {
    auto m = io::ModelFromProto(shape.config(), shape.file().empty() ? shape.name() : shape.file());
    if (!m.ok()) return InvalidArgumentError("model '" + d.model() + "': " + m.status().message());
    target = *m;
  } else {
    target = ModelOfRecordedShape(shape);
  }
  if (d.layers_run() > 0) target.num_layers = d.layers_run();
  if (target.is_moe() && d.dense_layers_run() + d.moe_layers_run() > 0)
    target.moe.first_dense_layers = d.dense_layers_run();
  return target;
}

// The trace's NCCL environment as the loop's allreduce settings: NCCL_P2P_DISABLE and NCCL_PROTO.
Status ApplyNcclEnvironment(const google::protobuf::Map<std::string, std::string>& nccl_env,
                            coll::CollectiveRequest* allreduce) {
  auto get = [&nccl_env](const char* name) {
    auto it = nccl_env.find(name);
    return it == nccl_env.end() ? std::string() : it->second;
  };
  allreduce->p2p_disable = get("NCCL_P2P_DISABLE") == "1";
  if (const std::string proto = get("NCCL_PROTO"); !proto.empty()) {
    auto p = coll::ParseNcclProto(proto);
    if (!p.ok()) return InvalidArgumentError("NCCL_PROTO=" + proto + " in the trace environment is not modelled");
    allreduce->protocol = *p;
  }
  return OkStatus();
}

// validate runs the routed experts as cuBLAS strided-batched GEMMs (one batch entry per distinct
// expert, ceil(T*k/D) rows each; validate/README.md), not a fused-MoE grouped kernel: the same
// cuBLAS kernels as its dense GEMMs, so the grouped-GEMM class takes the dense GEMM's (fitted)
// efficiencies here. Serving engines' fused MoE kernels keep their own defaults in simulate.
void UseDenseGemmCostsForRoutedExperts(compute::ComputeParams* compute) {
  compute->grouped_gemm_compute_efficiency = compute->gemm_compute_efficiency;
  compute->grouped_gemm_memory_efficiency = compute->skinny_gemm_memory_efficiency;
}

// The calibration's fitted costs of attention implementation `name`, with the loop's split
// workspace, as the only implementation of a decode and a verify regime; nothing when the
// calibration has no costs for it.
void UseFittedAttentionImplementation(const compute::ComputeParams& calibrated, const std::string& name,
                                      std::vector<compute::AttentionImplementation>* decode,
                                      std::vector<compute::AttentionImplementation>* verify) {
  if (const compute::AttentionImplementation* a = calibrated.FindAttentionImplementation(name)) {
    compute::AttentionImplementation loop = *a;
    // validate/decode_suite.cc kMaxSplits: the loop's workspace (a profiled kernel keeps its own policy).
    if (compute::SpecsimValidateKernel(name).ok()) loop.max_splits = 32;
    *decode = {loop};
    *verify = {loop};
  }
}

// The loop's attention kernel (simt_reference before the item recorded it), with its fitted costs
// when the calibration has them; else the roofline attention terms.
// The item names the target's kernel; an MLA target's GQA draft head ran validate's GQA kernel
// (validate/attention.cc ProductionAttentionImpl: flash_mma beside flash_mla; simt_reference for
// everything before flash_mla existed).
void UseLoopAttentionImplementation(const trace::DecodeParams& d, bool mla_target,
                                    const compute::ComputeParams& calibrated, compute::AttentionRegimes* r) {
  const std::string impl = d.attention_implementation().empty() ? "simt_reference" : d.attention_implementation();
  if (mla_target) {
    UseFittedAttentionImplementation(calibrated, impl, &r->mla_decode, &r->mla_verify);
    UseFittedAttentionImplementation(calibrated, impl == "flash_mla" ? "flash_mma" : impl, &r->decode, &r->verify);
  } else {
    UseFittedAttentionImplementation(calibrated, impl, &r->decode, &r->verify);
  }
}

// validate's "approximation": an EAGLE-3-shaped head from the recorded draft shapes.
llm::ModelSpec ApproximateEagle3Draft(const llm::ModelSpec& target, const trace::ModelShape& shape,
                                      const trace::DecodeParams& d) {
  llm::ModelSpec draft = target;
  draft.name = target.name + "-eagle3-approximation";
  draft.family = llm::ModelFamily::kEagle3;
  draft.num_layers = 1;
  draft.mla = {};
  draft.moe = {};
  if (shape.draft_heads() > 0) draft.num_attention_heads = shape.draft_heads();
  if (shape.draft_kv_heads() > 0) draft.num_key_value_heads = shape.draft_kv_heads();
  if (shape.draft_head_dim() > 0) draft.head_dim = shape.draft_head_dim();
  if (shape.draft_intermediate() > 0) draft.intermediate_size = shape.draft_intermediate();
  draft.eagle3.draft_vocab_size = d.draft_vocab() > 0 ? d.draft_vocab() : shape.draft_vocab();
  draft.eagle3.target = target.name;
  return draft;
}

// The draft head: the recorded draft models/ file, else the approximation.
StatusOr<llm::ModelSpec> DraftModelOf(const llm::ModelSpec& target, const trace::ModelShape& shape,
                                      const trace::DecodeParams& d) {
  if (!shape.has_draft_config()) return ApproximateEagle3Draft(target, shape, d);
  auto m = io::ModelFromProto(shape.draft_config(), shape.draft_file());
  if (!m.ok()) return InvalidArgumentError("draft of '" + d.model() + "': " + m.status().message());
  return *m;
}

// A speculative item's draft and EAGLE-3 settings: its draft steps and verify tokens, topk 1, the
// item's acceptance probability at every position and its seed, one cycle.
Status ApplySpeculation(const trace::ModelShape& shape, const trace::DecodeParams& d, llm::DecodeSetup* setup) {
  const int n = d.verify_tokens();
  const int s = d.draft_steps();
  if (s < 1 || n < 1) return InvalidArgumentError("speculative item without draft_steps / verify_tokens");
  ASSIGN_OR_RETURN(setup->draft, DraftModelOf(setup->target, shape, d));
  llm::SpeculationSettings& sp = setup->speculation;
  sp.method = llm::SpeculationMethod::kEagle3;
  sp.num_steps = s;
  sp.topk = 1;
  sp.num_draft_tokens = n;
  auto acc = llm::AcceptanceModel::FromPerPosition(std::vector<double>(s, d.acceptance_p()));
  if (!acc.ok()) return InvalidArgumentError(acc.status().message());
  sp.acceptance = *acc;
  sp.seed = d.seed();
  sp.cycles = 1;
  return OkStatus();
}

// validate's C++ loop as a framework of no costs of its own, every phase in the item's capture mode.
StatusOr<llm::FrameworkProfile> ValidateLoopFramework(const trace::DecodeParams& d) {
  llm::FrameworkProfile validate_loop;
  validate_loop.name = "specsim-validate";
  const std::string capture = DecodeCaptureOf(d);
  llm::CaptureMode mode = llm::CaptureMode::kEager;
  if (capture == "graph")
    mode = llm::CaptureMode::kFull;
  else if (capture == "piecewise")
    mode = llm::CaptureMode::kPiecewise;
  else if (capture != "eager")
    return InvalidArgumentError("decode capture '" + capture + "' is not known (graph, piecewise, eager)");
  validate_loop.capture = {mode, mode, mode, mode};
  return validate_loop;
}

}  // namespace

StatusOr<llm::DecodeSetup> DecodeSetupOfItem(const trace::Trace& trace, const trace::Item& item,
                                             const net::Topology& topology, const CalibParams& params) {
  if (!item.has_decode()) return InvalidArgumentError("decode item without decode parameters");
  const trace::DecodeParams& d = item.decode();
  ASSIGN_OR_RETURN(const trace::ModelShape* shape, ShapeOfModel(trace, d.model()));
  for (int g : d.gpus())
    if (g < 0 || g >= topology.num_gpus()) return InvalidArgumentError(GpuRangeReason(g, topology));
  llm::DecodeSetup setup;
  ASSIGN_OR_RETURN(setup.target, TargetModelOf(*shape, d));
  setup.topology = &topology;
  setup.parallel.tp = std::max(1, d.tp());
  setup.gpus.assign(d.gpus().begin(), d.gpus().end());
  setup.batch = d.batch();
  setup.context_length = static_cast<int>(d.context());
  setup.cuda_graphs = d.cuda_graph();
  // The loop's GEMM library's costs (cublasGemmEx before items recorded it).
  setup.compute = params.compute.WithGemmLibrary(d.gemm_library().empty() ? "cublasGemmEx" : d.gemm_library());
  // The decode loop's collectives run under the trace's NCCL environment with the calibrated costs.
  setup.allreduce.protocol_overrides = params.nccl.protocol;
  setup.allreduce.nccl_step_work = params.nccl.step_work;
  RETURN_IF_ERROR(ApplyNcclEnvironment(trace.environment().nccl_env(), &setup.allreduce));
  UseDenseGemmCostsForRoutedExperts(&setup.compute);
  UseLoopAttentionImplementation(d, setup.target.is_mla(), params.compute, &setup.compute.attention_regimes);
  if (d.speculative()) RETURN_IF_ERROR(ApplySpeculation(*shape, d, &setup));
  // The ranks' hosts: the calibrated driver costs (rank_timeline.h), no framework of its own:
  // validate is a C++ loop.
  setup.driver = params.host;
  ASSIGN_OR_RETURN(setup.framework, ValidateLoopFramework(d));
  return setup;
}

Prediction Predictor::PredictDecode(const trace::Item& item) const {
  return PredictDecodeLoop(trace_, item, topology_, params_);
}

}  // namespace specsim::calib
