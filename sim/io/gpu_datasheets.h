// Datasheet figures of common NVIDIA GPUs, each with its source (for hardware-from-topo and the
// link-rate warning): a GpuModel's fields (hardware.proto) and the GPU's host interface. Dense
// tensor rates are the datasheet's figure, halved where the datasheet states it with sparsity.
// Fields a datasheet does not give (copy engines, outstanding read bytes per SM) are left for the
// caller to fill as guesses.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace specsim::io {

struct GpuDatasheet {
  std::vector<std::string> names;  // how nvidia-smi and people name it ("NVIDIA H200", "H200")
  std::string model_name;          // the GpuModel name written
  std::string arch;                // "sm90"
  int sm_count = 0;
  double memory_gib = 0;  // as marketed (GB), taken as GiB: nvidia-smi reports close to it
  double memory_bandwidth_gbps = 0;
  double l2_cache_mib = 0;
  double bf16_dense_tflops = 0, fp8_dense_tflops = 0, fp4_dense_tflops = 0;
  int pcie_gen = 0, pcie_lanes = 0;  // host interface
  double nvlink_gbps_per_link = 0;   // per direction per link; 0: no NVLink
  std::string source;                // where the figures come from
};

// The bundled table.
const std::vector<GpuDatasheet>& GpuDatasheets();

// The entry whose name matches `name` (case-insensitive; "NVIDIA " prefix optional), or nullopt.
std::optional<GpuDatasheet> FindGpuDatasheet(const std::string& name);

}  // namespace specsim::io
