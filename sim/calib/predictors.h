// Re-simulating one measured trace item on a topology with a set of parameters.
//
// Per item kind (trace.proto), the prediction of its median time:
//   H2D / D2H copy        the copy class (direction x pinned/pageable) alone: L + B / BW
//   bidirectional         O_ms + max over directions of (L_d + B / (duplex * BW_d))
//   k concurrent copies   O_ms + ceil(k / c) * L + k * B / BW   (c copy engines per direction,
//                         FIFO per engine as in sim/net/fabric.h; the copies share the link)
//   latency under load    same direction and one engine: queued behind the bulk copy (the trace
//                         then times bulk start to small end): L + LB/BW + L + B/BW, except H2D
//                         copies of at most h2d_bypass_max_bytes, which the driver carries in the
//                         command stream; otherwise L + X + B / (half the link, same direction; or
//                         the duplex rate, other direction), X the fitted extra of that pair
//   host copies together  every copy at its class rate (x duplex factor when its GPU moves both
//                         directions), all of them scaled down alike to the shared host limit;
//                         the longest L + B / rate (each copy has its own events: no O_ms)
//   zero-copy read        L + B / min(BW, min(blocks, SMs) * per-SM read rate)
//   zero-copy write       L + B / BW
//   P2P copy / kernel     the item's path class: fitted P2P parameters, else a lone flow on the
//                         routed path (P2pDefaults)
//   GEMM / attention /    one eagerly launched kernel: KernelCostModel::SequenceTime({kernel},
//   RMSNorm               eager) = eager issue + roofline time (sim/compute/kernel_cost.h); a working
//                         set that fits in L2 (attention, RMSNorm) streams at the L2-resident rate
//   launch overhead       SequenceTime of k empty kernels, eager or as one graph
//   NCCL, 1 rank          NCCL copies send to receive buffer: one copy kernel (2 x bytes through
//                         memory, at the L2-resident rate when they fit in L2) plus NCCL's host
//                         per-call overhead when eager; graph: per replay / ops
//   NCCL / custom, >= 2   the collective planner and executor (sim/coll) on the topology, plus one
//                         eager launch (or the graph replay cost / ops_per_graph)
//   decode step,          validate's loop on rank timelines (loop_predictors.h): passes launched as
//   speculative cycle     the item's capture mode, token read-back, host syncs
//   layer loop, skew loop the pacing suite's loops on rank timelines (loop_predictors.h)
//   host flag round trip, not simulated (MeasuredOnlyReason): the host-staged suite's latency
//   host small reads      items, measured for a model of host-staged allreduces not yet in specsim
// Items the simulator cannot represent yet are returned with simulated = false and a reason; they
// are never dropped silently and never given a made-up number.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>

#include "sim/calib/params.h"
#include "sim/coll/collective_planner.h"
#include "sim/llm/decode_simulator.h"
#include "sim/compute/kernel.h"
#include "sim/net/topology.h"
#include "specsim/trace.pb.h"

namespace specsim::calib {

// Kinds measured for a model specsim does not have yet: why they are not simulated (compare) and
// not fitted (calibrate); "" for every other kind.
std::string MeasuredOnlyReason(trace::Kind kind);

struct Prediction {
  bool simulated = false;
  double predicted_us = 0;
  std::string reason;  // when !simulated

  static Prediction Of(double us) { return {true, us, ""}; }
  static Prediction NotSimulated(std::string why) { return {false, 0, std::move(why)}; }
};

// A single-kernel item as specsim-validate times it: cuda events around each of back-to-back eager
// calls (validate/timing.cc). The host issues one call per period; the GPU runs the kernel for
// device_ns. GPU-bound (device + the timed call's gap above the host's period) the GPU runs the
// calls back to back and each measures device + gap, the gap being the GPU time from the start
// event to the kernel and from the kernel to the stop event (BenchParams.timed_call_gap_ns; unset:
// the compute model's eager device gap); host-bound each waits for its launch and measures about
// the host's period per call: issue + floor (the launch items' per-call cost: one launch and the
// event pair). So
//   t = max(launch_overhead_eager + kernel_floor, device + timed_call_gap).
// The issue cost is not added to the device time: a device-bound item's time is its device time
// plus the gap, so the device times the fit learns are those graphs replay back to back.
double TimedKernelNs(const compute::KernelCostModel& cost, const BenchParams& bench, double device_ns);
// True when the law above is host-bound for `device_ns` (the item says nothing of the device time).
bool TimedKernelHostBound(const compute::KernelCostModel& cost, const BenchParams& bench, double device_ns);
// The gap of the law above: bench.timed_call_gap_ns, else the cost model's eager device gap.
double TimedCallGapNs(const compute::KernelCostModel& cost, const BenchParams& bench);
// True for a single-kernel item that a profiler timed (kernel_time_only of its GEMM, attention or
// RMSNorm parameters): its
// measurement is the kernels' device time; the timed-call law above does not apply.
bool KernelTimeOnly(const trace::Item& item);

// How a decode item was launched: DecodeParams.capture ("graph", "piecewise", "eager"), or for
// traces before it was recorded "graph" / "eager" by cuda_graph.
std::string DecodeCaptureOf(const trace::DecodeParams& d);

// The library a GEMM item ran: GemmParams.library, or "cublasGemmEx" for traces before it mattered.
std::string GemmLibraryOf(const trace::GemmParams& g);

// The implementation an attention item ran: AttentionParams.implementation, or "simt_reference"
// for traces before it was recorded (validate's only kernel then).
std::string AttentionImplementationOf(const trace::AttentionParams& a);

// The kernel a GEMM, attention or RMSNorm item runs, or the reason it is not simulated.
struct ItemKernel {
  bool ok = false;
  compute::Kernel kernel;
  std::string reason;
};
ItemKernel KernelOfItem(const trace::Item& item);
// A 16-bit GEMM of (m x k) by (k x n) as the items run it: 2mnk flops, weights, activations and
// output moved once (2 bytes each), the weights n x k.
compute::Kernel GemmKernel16(double m, double n, double k);

// Small copies under load (predictors.cc): whether a copy of `bytes` in `direction` queues behind a
// bulk copy of the same direction, and the fitted extra latency of (small, bulk) directions.
bool QueuesBehindBulk(const FabricParams& f, trace::Direction direction, double bytes);
std::string UnderLoadKey(trace::Direction small, trace::Direction bulk);  // "h2d/d2h", ...
double UnderLoadExtraNs(const FabricParams& f, trace::Direction small, trace::Direction bulk);

// The collective request a multi-rank NCCL or custom-allreduce item describes: op, GPUs, size, the
// NCCL environment recorded on the item, what NCCL ran when recorded (nccl_chosen_*), validate's
// staged custom kernels with the calibrated flag latency and read rate, and the calibrated NCCL
// per-step costs. InvalidArgument for what the simulator does not model (naming it).
StatusOr<coll::CollectiveRequest> CollectiveRequestOf(const trace::CollectiveParams& c, const CalibParams& params);

// The decode setup a decode-suite item describes: the model (the trace's recorded models/ file),
// TP, GPUs, batch, context, speculation (validate's EAGLE-3 head or its approximation), the trace's
// NCCL environment and calibrated NCCL costs, the compute parameters (routed experts at the dense
// GEMM's efficiencies: validate runs them as cuBLAS GEMMs), the calibrated host costs, and a
// framework of no costs of its own whose capture mode is the item's.
StatusOr<llm::DecodeSetup> DecodeSetupOfItem(const trace::Trace& trace, const trace::Item& item,
                                             const net::Topology& topology, const CalibParams& params);

// RMSNorm items re-run one kernel on the same buffers: when the bytes it moves fit in the GPU's L2
// and bench.l2_resident_bandwidth_gbps is set, its memory term runs at that bandwidth (GEMM items
// rotate weight copies larger than the L2; attention time is dominated by its own fixed cost).
bool L2Resident(const trace::Item& item, const compute::Kernel& kernel, const net::GpuSpec& gpu,
                const BenchParams& bench);

class Predictor {
 public:
  // `trace` and `topology` must outlive the predictor.
  Predictor(const trace::Trace& trace, const net::Topology& topology, CalibParams params);
  Prediction Predict(const trace::Item& item) const;
  const CalibParams& params() const { return params_; }

  // The transfer class of a host copy item (direction and host memory), for the fits.
  const TransferClass& HostClass(trace::Direction direction, trace::HostMemory memory) const;

 private:
  Prediction PredictTransfer(const trace::Item& item) const;
  Prediction PredictKernel(const trace::Item& item) const;
  Prediction PredictCollective(const trace::Item& item) const;
  // A custom allreduce run as rank groups on one GPU (rank_group_box.h).
  Prediction PredictRankGroups(const trace::Item& item) const;
  Prediction PredictDecode(const trace::Item& item) const;
  P2pParams P2pFor(const trace::TransferParams& t) const;
  double HostCopiesTogetherNs(const trace::TransferParams& t) const;

  const trace::Trace& trace_;
  const net::Topology& topology_;
  CalibParams params_;
  double host_flag_one_way_us_;  // the trace's own flag trip through host memory (predictors.cc)
};

}  // namespace specsim::calib
