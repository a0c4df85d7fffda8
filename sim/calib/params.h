// The parameters `specsim calibrate` fits and `specsim compare` predicts with, as plain structs,
// and their conversion to proto/specsim/calibration.proto (the file is read back by
// calibration_loader.h).
//
// Transfer classes follow one law: a transfer of B bytes measured alone takes
//   t = latency_ns + B / bandwidth_gbps                  (GB/s = bytes per ns)
// where the latency is everything it pays once (API call or kernel launch, copy-engine setup, path
// latency). Mechanisms on top (sim/net/transfer.h):
//   both directions at once   each direction runs at duplex_factor of its lone rate;
//   k copies of one direction FIFO on c copy engines: ceil(k/c) latencies, k*B bytes at the rate;
//   kernel reads              rate = min(link rate, min(blocks, SMs) * kernel_read_per_sm_gbps);
//   several streams           items timed across streams pay multi_stream_overhead_ns once.
// Defaults (DefaultParams) come from the hardware config, so an uncalibrated comparison is the
// simulator's own prediction: a lone flow over the host path (sim/net/fabric.h: bytes at the
// narrowest payload rate plus the path latency plus the copy-engine setup) plus one eager launch.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "sim/coll/nccl_step_model.h"
#include "sim/coll/protocol.h"
#include "sim/compute/kernel_cost.h"
#include "sim/core/status.h"
#include "sim/llm/decode_simulator.h"
#include "sim/llm/host_costs.h"
#include "sim/net/topology.h"
#include "specsim/calibration.pb.h"

namespace specsim::calib {

struct TransferClass {
  double latency_ns = 0;
  double bandwidth_gbps = 0;  // > 0
  double TimeNs(double bytes) const { return latency_ns + bytes / bandwidth_gbps; }
};

struct P2pParams {
  TransferClass copy, kernel_write, kernel_read;
};

struct FabricParams {
  TransferClass h2d_pinned, d2h_pinned, h2d_pageable, d2h_pageable;
  double duplex_factor = 1.0;
  double multi_stream_overhead_ns = 0;
  int copy_engines_per_direction = 1;
  double copy_engine_setup_ns = 0;
  TransferClass zero_copy_read, zero_copy_write;
  double kernel_read_per_sm_gbps = 0;    // 0: no per-SM cap
  std::map<std::string, P2pParams> p2p;  // by path class name ("PIX", ...)
  // Host-to-device copies of at most this many bytes do not queue behind a running H2D copy
  // (carried in the command stream); 0: every copy queues.
  double h2d_bypass_max_bytes = 0;
  // A small copy issued while a bulk copy runs pays this much beyond its lone latency, per
  // (small direction, bulk direction) when it does not queue behind it: "h2d/h2d" (bypassing),
  // "d2h/h2d", "h2d/d2h". Missing: 0.
  std::map<std::string, double> under_load_extra_ns;
  // Host copies of all GPUs and both directions together, GB/s; 0: no shared limit.
  double host_memory_gbps = 0;
};

struct NcclParams {
  double local_call_overhead_ns = 0;
  // One-rank calls: the fill time of NCCL's local copy kernel (ns); 0 = compute memory_ramp_ns.
  // NCCL's copy is not the norm kernels that set memory_ramp_ns: in graph replays one-rank calls
  // measure ~3.3 us per call on an H200 where the norm ramp alone predicts 6-8 us.
  double local_copy_ramp_ns = 0;
  double local_copy_memory_efficiency = 0;  // its fraction of memory bandwidth; 0 = memory_efficiency
  // 2+ ranks: NCCL's cost per call beyond an empty kernel's launch, eager and in a graph (ns).
  double eager_call_extra_ns = 0;
  double graph_call_extra_ns = 0;
  // Per transport and protocol: base and per-step latency, channel cap, wire efficiency replacing
  // NCCL's tuning table and the fabric-only defaults (unset: those).
  coll::ProtocolOverrides protocol;
  // The transport model's protocol work where `protocol` sets no cost (coll/nccl_step_model.h):
  // the shipped transport calibration unless a fit replaces it (nccl_transport_fit.h).
  coll::NcclStepWork step_work = coll::DefaultNcclStepWork();
};

// Our one-shot / two-shot kernels (validate/allreduce_kernels.cu): the floor of a barrier flag's
// trip per transport (write + fence + the peer's poll seeing it), us; 0 = the path latency only.
// And the most one of its thread blocks reads, GB/s (its loads in flight / the round trip: the
// kernel keeps one 16-byte load per peer in flight per thread); 0 = the fabric's own read cap.
struct CustomAllreduceParams {
  double peer_flag_latency_us = 0;
  double host_flag_latency_us = 0;
  double peer_read_gbps_per_block = 0;
  double host_read_gbps_per_block = 0;
};

// Micro-benchmark effects that exist only because a trace item re-runs one kernel on the same
// buffers (not in a decode step): a working set no larger than the L2 stays resident.
struct BenchParams {
  double l2_resident_bandwidth_gbps = 0;  // 0: no L2 residency (every byte from device memory)
  // GPU time a timed single-kernel call adds to its kernel: from the start event to the kernel and
  // from the kernel to the stop event (predictors.h TimedKernelNs). 0: the compute model's eager
  // device gap. Fitted (fit_kernels.cc FitTimedCallGap) from loops that run the same kernels back
  // to back without events (CUDA-graph decode forwards and layer loops): the kernel items alone
  // cannot tell it from the kernels' fill times.
  double timed_call_gap_ns = 0;
};

struct CalibParams {
  FabricParams fabric;
  compute::ComputeParams compute;
  NcclParams nccl;
  CustomAllreduceParams custom;
  llm::HostCosts host;  // the ranks' host costs (sim/llm/host_costs.h)
  BenchParams bench;
};

// The simulator's defaults on `topology` for GPU `gpu`: compute::ComputeParams{}; host copies as a
// lone copy-engine flow GPU <-> the host memory of its socket (path latency + copy_engine_setup_ns +
// one eager launch; narrowest payload rate on the path, pinned and pageable alike); kernel reads
// capped per SM at kernel_read_outstanding_bytes_per_sm / round trip; P2P classes filled by
// P2pDefaults. REQUIRES: 0 <= gpu < topology.num_gpus() and the GPU reaches host memory.
CalibParams DefaultParams(const net::Topology& topology, int gpu);

// P2P transfer defaults for GPUs src -> dst over the routed path (same law as host copies).
P2pParams P2pDefaults(const net::Topology& topology, int src_gpu, int dst_gpu, const compute::ComputeParams& compute);

// All fields of `params` as a Calibration (compute, fabric, nccl); `fitted` is left empty.
config::Calibration ToCalibrationProto(const CalibParams& params);

// The fabric part of a calibration on a topology, for every command that simulates a calibrated
// box: every GPU model's copy_engines_per_direction, copy_engine_setup_ns and
// kernel_read_outstanding_bytes_per_sm (non-zero fields only), and the payload rate of every PCIe
// link between a GPU and a CPU root complex (the host link) to the slower of the two pinned
// directions (payload_efficiency = rate / raw bandwidth, raising the raw bandwidth when the rate
// exceeds it). REQUIRES: `fabric` checked (LoadedCalibration, calibration_loader.h, or a fit's).
void ApplyFabricCalibration(const config::FabricCalibration& fabric, net::Topology* topology);

}  // namespace specsim::calib
