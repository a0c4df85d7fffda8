// What `nvidia-smi` says of a box's topology, parsed: the GPU matrix of `nvidia-smi topo -m` (terminal
// escape codes stripped; NIC rows and columns ignored), and each GPU's name and PCIe link from
// `nvidia-smi -q` or `nvidia-smi --query-gpu=name,pcie.link.gen.max,pcie.link.width.max
// --format=csv`. The matrix's path classes (nvidia-smi's legend):
//   X    self
//   NV#  a bonded set of # NVLinks
//   PIX  at most one PCIe bridge (a switch between them)
//   PXB  several PCIe bridges, no host bridge
//   PHB  a PCIe host bridge (the CPU's root complex)
//   NODE PCIe host bridges within one NUMA node
//   SYS  the SMP interconnect between NUMA nodes (another socket)
#pragma once

#include <string>
#include <vector>

#include "sim/core/status.h"

namespace specsim::io {

enum class TopoPath { kSelf, kNvlink, kPix, kPxb, kPhb, kNode, kSys };
const char* TopoPathName(TopoPath p);

struct TopoMatrix {
  int num_gpus = 0;
  std::vector<std::vector<TopoPath>> path;  // [i][j]
  std::vector<std::vector<int>> nvlinks;    // [i][j]: # of NV#, 0 otherwise
  std::vector<int> numa_node;               // per GPU; -1 where nvidia-smi says N/A
  std::vector<std::string> cpu_affinity;    // per GPU, as printed ("0-15")
};

// InvalidArgument naming the line and the cell for a matrix it cannot read (no GPU rows, a row of
// another width, an unknown path class, a matrix that is not symmetric).
StatusOr<TopoMatrix> ParseNvidiaSmiTopo(const std::string& text);

struct GpuLinkInfo {
  std::string name;      // "NVIDIA H200"
  int pcie_gen_max = 0;  // 0: not given
  int pcie_width_max = 0;
};

// Per GPU, in order: `nvidia-smi -q` (Product Name; GPU Link Info's PCIe Generation Max and Link
// Width Max) or the --query-gpu CSV (a header naming name / pcie.link.gen.max /
// pcie.link.width.max). InvalidArgument when the text is neither.
StatusOr<std::vector<GpuLinkInfo>> ParseNvidiaSmiGpus(const std::string& text);

}  // namespace specsim::io
