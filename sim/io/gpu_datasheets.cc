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

std::vector<GpuDatasheet> Table() {
  std::vector<GpuDatasheet> t;
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
    t.push_back(g);
  }
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
    t.push_back(g);
  }
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
