#include "sim/io/gpu_datasheets.h"

#include <algorithm>
#include <cctype>

namespace specsim::io {
namespace {

std::string Normalized(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  if (s.rfind("nvidia ", 0) == 0) s = s.substr(7);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  return s;
}

// Hopper: the H200 (the calibration GPU), the H100 SXM5 and PCIe.
void AddHopper(std::vector<GpuDatasheet>* t) {
  {
    GpuDatasheet g;
    g.names = {"H200", "H200 SXM", "H200 SXM 141GB"};
    g.model_name = "H200";
    g.arch = "sm90";
    g.sm_count = 132;
    g.memory_gib = 141;
    g.memory_bandwidth_gbps = 4800;
    g.l2_cache_mib = 60;
    g.bf16_dense_tflops = 989;
    g.fp8_dense_tflops = 1979;
    g.pcie_gen = 5;
    g.pcie_lanes = 16;
    g.nvlink_gbps_per_link = 25;  // NVLink 4: 900 GB/s over 18 links, both directions
    g.source = "docs/reference/hardware.md (NVIDIA H200 datasheet; SMs and L2 measured on the H200)";
    t->push_back(g);
  }
  for (bool sxm : {true, false}) {
    GpuDatasheet g;
    g.names = sxm ? std::vector<std::string>{"H100 80GB HBM3", "H100 SXM", "H100 SXM5", "H100 SXM5 80GB"}
                  : std::vector<std::string>{"H100 PCIe", "H100 80GB PCIe"};
    g.model_name = sxm ? "H100 SXM5" : "H100 PCIe";
    g.arch = "sm90";
    g.sm_count = sxm ? 132 : 114;
    g.memory_gib = 80;
    g.memory_bandwidth_gbps = sxm ? 3350 : 2000;
    g.l2_cache_mib = 50;
    g.bf16_dense_tflops = sxm ? 989.5 : 756.5;  // the datasheet's 1,979 / 1,513 with sparsity, halved
    g.fp8_dense_tflops = sxm ? 1979 : 1513;     // 3,958 / 3,026 with sparsity, halved
    g.pcie_gen = 5;
    g.pcie_lanes = 16;            // "PCIe Gen5: 128GB/s" both directions: x16
    g.nvlink_gbps_per_link = 25;  // per direction, NVLink 4's link (SXM5: 900 GB/s over 18; the PCIe bridge 600 GB/s)
    g.source = "docs/reference/hardware.md (NVIDIA H100 datasheet and whitepaper table as a reseller reproduces it)";
    t->push_back(g);
  }
}

// Blackwell workstation and server cards: the RTX PRO 6000 (the target boxes' GPU).
void AddRtxPro6000(std::vector<GpuDatasheet>* t) {
  for (bool server : {true, false}) {
    GpuDatasheet g;
    g.names =
        server ? std::vector<std::string>{"RTX PRO 6000 Blackwell Server Edition"}
               : std::vector<std::string>{"RTX PRO 6000 Blackwell Workstation Edition",
                                          "RTX PRO 6000 Blackwell Max-Q Workstation Edition", "RTX PRO 6000 Blackwell"};
    g.model_name = server ? "RTX PRO 6000 Blackwell Server Edition" : "RTX PRO 6000 Blackwell Workstation Edition";
    g.arch = "sm120";
    g.sm_count = 188;
    g.memory_gib = 96;
    g.memory_bandwidth_gbps = server ? 1597 : 1792;
    g.l2_cache_mib = 128;
    g.bf16_dense_tflops = 500;
    g.fp8_dense_tflops = 1000;
    g.fp4_dense_tflops = 2000;
    g.pcie_gen = 5;
    g.pcie_lanes = 16;
    g.source = "docs/reference/hardware.md (NVIDIA RTX PRO 6000 Blackwell datasheets; rates with sparsity halved)";
    t->push_back(g);
  }
}

// Ada data-center cards: the L40S and L40.
void AddL40(std::vector<GpuDatasheet>* t) {
  for (bool s_model : {true, false}) {
    GpuDatasheet g;
    g.names = {s_model ? "L40S" : "L40"};
    g.model_name = s_model ? "L40S" : "L40";
    g.arch = "sm89";
    g.sm_count = 142;  // 18,176 CUDA cores / 128 per Ada SM
    g.memory_gib = 48;
    g.memory_bandwidth_gbps = 864;
    g.l2_cache_mib = 0;  // not in the datasheet: unknown (used only by compare's L2-resident test)
    g.bf16_dense_tflops = s_model ? 362.05 : 181.05;  // the datasheet's dense figures (733 / 362.1 with sparsity)
    g.fp8_dense_tflops = s_model ? 733 : 362;
    g.pcie_gen = 4;
    g.pcie_lanes = 16;
    g.source = "docs/reference/hardware.md (NVIDIA L40 / L40S datasheets as a reseller reproduces them; L2 not given)";
    t->push_back(g);
  }
}

// Ampere: the A100 SXM4, 40 and 80 GB.
void AddA100(std::vector<GpuDatasheet>* t) {
  for (bool hbm2e : {true, false}) {
    GpuDatasheet g;
    g.names = hbm2e ? std::vector<std::string>{"A100-SXM4-80GB", "A100 SXM4 80GB", "A100 80GB SXM"}
                    : std::vector<std::string>{"A100-SXM4-40GB", "A100 SXM4 40GB", "A100 40GB SXM"};
    g.model_name = hbm2e ? "A100 SXM4 80GB" : "A100 SXM4 40GB";
    g.arch = "sm80";
    g.sm_count = 108;  // 7 GPCs, 54 TPCs of 2 SMs
    g.memory_gib = hbm2e ? 80 : 40;
    g.memory_bandwidth_gbps = hbm2e ? 2039 : 1555;
    g.l2_cache_mib = 40;        // 40,960 KB
    g.bf16_dense_tflops = 312;  // 624 with sparsity
    g.fp8_dense_tflops = 0;     // no FP8 tensor cores: FP8 math at the BF16 rate (kernel_cost.cc)
    g.pcie_gen = 4;             // "32+32 GB/s PCIe Gen4": x16
    g.pcie_lanes = 16;
    g.nvlink_gbps_per_link = 25;  // NVLink 3: 600 GB/s over 12 links, both directions
    g.source =
        "docs/reference/hardware.md (NVIDIA A100 datasheet and Ampere whitepaper as reproduced by G. Lockwood's notes "
        "and Fudzilla)";
    t->push_back(g);
  }
}

std::vector<GpuDatasheet> Table() {
  std::vector<GpuDatasheet> t;
  AddHopper(&t);
  AddRtxPro6000(&t);
  AddL40(&t);
  AddA100(&t);
  return t;
}

}  // namespace

const std::vector<GpuDatasheet>& GpuDatasheets() {
  static const std::vector<GpuDatasheet>* table = new std::vector<GpuDatasheet>(Table());
  return *table;
}

std::optional<GpuDatasheet> FindGpuDatasheet(const std::string& name) {
  const std::string want = Normalized(name);
  for (const GpuDatasheet& g : GpuDatasheets())
    for (const std::string& n : g.names)
      if (Normalized(n) == want) return g;
  return std::nullopt;
}

}  // namespace specsim::io
