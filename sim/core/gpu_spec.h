// One GPU model's datasheet figures and fitted copy-engine facts: what the compute model
// (sim/compute: rooflines, launch costs) and the fabric (sim/net: copy engines, kernel reads over
// PCIe) both read. Plain data, filled by sim/io from a hardware textproto's gpu_models and
// validated there (sim/io/hardware_checks.cc); calibration updates the fitted fields.
#pragma once

#include <string>

namespace specsim {

struct GpuSpec {
  std::string name;
  std::string arch;  // "sm90", "sm120"
  int sm_count = 0;
  double memory_gib = 0;
  double memory_bandwidth_gbps = 0;
  double l2_cache_mib = 0;
  double bf16_dense_tflops = 0;
  double fp8_dense_tflops = 0;
  double fp4_dense_tflops = 0;
  int copy_engines_per_direction = 1;
  double copy_engine_setup_ns = 0;
  double kernel_read_outstanding_bytes_per_sm = 0;
};

}  // namespace specsim
