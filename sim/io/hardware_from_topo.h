// A hardware config (proto/specsim/hardware.proto, as text with comments) built from what
// nvidia-smi says of a box (sim/io/nvidia_smi_topo.h) and a table of GPU datasheets
// (sim/io/gpu_datasheets.h). The topology, from the matrix's path classes:
//   sockets      one per NUMA node the GPUs name (N/A: one socket); each a CPU root complex and its
//                host memory; sockets joined by one CPU interconnect link;
//   PCIe         GPUs whose pairs are PIX or PXB share a PCIe switch (one per such group, PXB's
//                several bridge levels folded into one switch: simplified), its x16 uplink to the
//                socket's root complex; any other GPU on its own root port (PHB, NODE, SYS);
//   NVLink       GPUs joined by NV# meet at an NVSwitch node (listed first, so GPU-to-GPU traffic
//                takes it as NCCL does), each GPU's link carrying its NV# count x the per-link rate.
// Values nothing measured: the GPU's figures from the datasheet table (cited there), each GPU's link
// rate from its own PCIe generation and width (nvidia-smi's Max for that GPU, else the datasheet's
// host interface, said so; a switch's uplink at the widest link below it, a guess),
// latencies from docs/reference/pcie.md, host memory, CPU interconnect and NVLink per-link rate
// written as guesses ([GUESS] beside each) to replace or calibrate.
#pragma once

#include <string>
#include <vector>

#include "sim/core/status.h"
#include "sim/io/nvidia_smi_topo.h"

namespace specsim::io {

struct TopoInputs {
  TopoMatrix matrix;
  std::vector<GpuLinkInfo> gpus;  // per GPU (may be empty: then gpu_name names them all)
  std::string gpu_name;           // overrides the names nvidia-smi gave
  std::string name;               // the config's name
  std::string sources;            // the input files, for the header comment
};

// The config's text, or InvalidArgument naming what is missing or inconsistent (no GPU name, a GPU
// not in the datasheet table: the table's names are listed; a GPU list of another length than the
// matrix).
StatusOr<std::string> HardwareConfigFromTopo(const TopoInputs& in);

}  // namespace specsim::io
