// What the run saw: host (CPU model, NUMA nodes, IOMMU state), GPUs (name, SMs, memory, clocks, PCIe generation and width,
// NUMA node, IOMMU group type), driver /
// CUDA / NCCL / cuBLAS versions, the GPU-to-GPU path classes and P2P access matrix, and the NCCL
// variables set. NVML is loaded at run time (dlopen of libnvidia-ml.so.1, the driver's library);
// without it PCIe links come from sysfs and path classes stay unspecified.
#pragma once

#include <vector>

#include "specsim/trace.pb.h"
#include "validate/status.h"

namespace specsim::validate {

// Sets NCCL_NVLS_ENABLE=0 when unset (NVLink multicast must stay off), before any NCCL call.
void EnsureNcclSafetyEnv();

// REQUIRES: devices are valid CUDA ordinals.
StatusOr<trace::Environment> CollectEnvironment(const std::vector<int>& devices);

}  // namespace specsim::validate
