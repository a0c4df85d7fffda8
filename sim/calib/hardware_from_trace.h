// A hardware config (proto/specsim/hardware.proto) for the box a trace was measured on, so that a
// user with an unknown box gets a config (`specsim hardware-from-trace`).
//
// From the trace environment: GPUs (name, compute capability -> arch, SMs, memory, L2, PCIe
// generation and width: the current link, else the maximum), their NUMA nodes (-> sockets; -1 is
// socket 0), the CPU vendor (from the CPU model string) and the P2P path class of every GPU pair:
//   PIX  GPUs under one PCIe switch        -> one switch node per PIX group
//   PXB  switches joined by a switch       -> a top switch over the PIX groups of a component
//   PHB / NODE                             -> GPUs (or their switches) on their socket's root complex
//   SYS                                    -> root complexes of different sockets, joined by a
//                                             CPU_INTERCONNECT link
//   NV                                     -> one NVSwitch node joined to every NVLink GPU
// Each socket gets a CPU_ROOT_COMPLEX and a HOST_MEMORY node. The GPU model's memory bandwidth and
// tensor rates are not in the trace: they come from a small table of known GPUs (KnownGpus, with
// sources); an unknown GPU name is an error that names the missing numbers. Numbers that no trace
// or datasheet gives (latencies, copy engines, outstanding read bytes, DRAM and socket-link
// bandwidth) use the bundled configs' values and are marked [PLACEHOLDER] in the written file:
// `specsim calibrate` replaces the fabric ones.
#pragma once

#include <string>
#include <vector>

#include "sim/core/status.h"
#include "specsim/hardware.pb.h"
#include "specsim/trace.pb.h"

namespace specsim::calib {

struct KnownGpu {
  const char* match;       // substring of the CUDA device name
  const char* model_name;  // GpuModel.name written
  double memory_bandwidth_gbps;
  double bf16_dense_tflops;
  double fp8_dense_tflops;           // 0: none
  double fp4_dense_tflops;           // 0: none
  double nvlink_gbps_per_direction;  // 0: no NVLink
  const char* source;
  int nvlinks = 0;  // NVLink links per GPU on the SXM boards (NV#), 0: none / unknown
};

// The table, most specific names first.
const std::vector<KnownGpu>& KnownGpus();

// InvalidArgument when the trace has no GPUs, or a GPU name is not in the table (naming the GPU
// and the fields that would be needed: memory_bandwidth_gbps, bf16_dense_tflops, ...).
StatusOr<config::Hardware> HardwareFromTrace(const trace::Trace& trace, const std::string& name);

// Text format with a header comment naming the trace and the sources; `io::ParseHardware`
// accepts it.
std::string HardwareTextProto(const config::Hardware& hardware, const trace::Trace& trace);

}  // namespace specsim::calib
