#include "sim/io/hardware_from_topo.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include "sim/io/gpu_datasheets.h"

namespace specsim::io {
namespace {

// Per-lane raw rate of a PCIe generation (GT/s) and its encoding efficiency (docs/reference/pcie.md):
// Gen1-2 8b/10b, Gen3-5 128b/130b; Gen6's FLIT mode taken at 242/256.
double PcieGbps(int gen, int lanes) {
  static const double kGts[] = {0, 2.5, 5, 8, 16, 32, 64};
  const double enc = gen <= 2 ? 0.8 : gen <= 5 ? 128.0 / 130 : 242.0 / 256;
  return kGts[std::clamp(gen, 1, 6)] * 1e9 * lanes * enc / 8 / 1e9;
}

// Union-find over GPUs that share a PCIe switch (PIX / PXB pairs).
int Find(std::vector<int>& parent, int i) {
  while (parent[i] != i) i = parent[i] = parent[parent[i]];
  return i;
}

struct Box {
  std::vector<int> socket;  // per GPU
  int sockets = 1;
  std::vector<std::vector<int>> switches;  // GPU groups behind a switch (2 or more)
  std::vector<int> switch_of;              // per GPU, -1: its own root port
  std::vector<int> nvlink_gpus;            // GPUs with NVLink
};

Box Shape(const TopoMatrix& m) {
  Box b;
  const int n = m.num_gpus;
  std::map<int, int> socket_of_numa;
  for (int i = 0; i < n; ++i) {
    const int numa = std::max(0, m.numa_node[i]);
    if (!socket_of_numa.count(numa)) {
      const int next = static_cast<int>(socket_of_numa.size());
      socket_of_numa[numa] = next;
    }
    b.socket.push_back(socket_of_numa[numa]);
  }
  b.sockets = std::max<int>(1, static_cast<int>(socket_of_numa.size()));
  std::vector<int> parent(n);
  std::iota(parent.begin(), parent.end(), 0);
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j)
      if (m.path[i][j] == TopoPath::kPix || m.path[i][j] == TopoPath::kPxb) parent[Find(parent, i)] = Find(parent, j);
  std::map<int, std::vector<int>> groups;
  for (int i = 0; i < n; ++i) groups[Find(parent, i)].push_back(i);
  b.switch_of.assign(n, -1);
  for (const auto& [root, members] : groups) {
    if (members.size() < 2) continue;
    for (int g : members) b.switch_of[g] = static_cast<int>(b.switches.size());
    b.switches.push_back(members);
  }
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (m.nvlinks[i][j] > 0) {
        b.nvlink_gpus.push_back(i);
        break;
      }
  return b;
}

// The gpu_models block: the datasheet's figures, the rest guesses.
std::string GpuModelBlock(const GpuDatasheet& sheet) {
  std::string t;
  t += fmt::format("# {}: {}\n", sheet.model_name, sheet.source);
  t += "gpu_models {\n";
  t += fmt::format("  name: \"{}\"\n  arch: \"{}\"\n  sm_count: {}\n  memory_gib: {:g}\n", sheet.model_name, sheet.arch,
                   sheet.sm_count, sheet.memory_gib);
  t += fmt::format(
      "  memory_bandwidth_gbps: {:g}\n  l2_cache_mib: {:g}{}\n  bf16_dense_tflops: {:g}\n", sheet.memory_bandwidth_gbps,
      sheet.l2_cache_mib,
      sheet.l2_cache_mib > 0 ? "" : "   # not in the datasheet: unknown (0: compare treats no item as L2-resident)",
      sheet.bf16_dense_tflops);
  t += fmt::format("  fp8_dense_tflops: {:g}\n  fp4_dense_tflops: {:g}\n", sheet.fp8_dense_tflops,
                   sheet.fp4_dense_tflops);
  t += "  copy_engines_per_direction: 1   # [GUESS] not published: calibrate\n";
  t += "  copy_engine_setup_ns: 0   # [GUESS]\n";
  t += "  kernel_read_outstanding_bytes_per_sm: 29600   # [GUESS] the H200's measured figure "
       "(configs/hardware/h200-2x-nvlink.textproto)\n";
  t += "}\n\n";
  return t;
}

// A GPU's PCIe link: nvidia-smi's Max generation and width for it, else the datasheet's host interface.
struct PcieLink {
  int gen = 0, lanes = 0;
  bool from_smi = false;
  double Gbps() const { return PcieGbps(gen, lanes); }
};

// Per GPU, in the matrix's order (nvidia-smi lists -q and --query-gpu in the same index order as
// topo -m): the GPU's own reported link, or the datasheet's where it reported none.
std::vector<PcieLink> LinksOf(const TopoInputs& in, const GpuDatasheet& sheet) {
  std::vector<PcieLink> links(in.matrix.num_gpus, PcieLink{sheet.pcie_gen, sheet.pcie_lanes, false});
  for (size_t i = 0; i < in.gpus.size() && i < links.size(); ++i)
    if (in.gpus[i].pcie_gen_max > 0 && in.gpus[i].pcie_width_max > 0)
      links[i] = PcieLink{in.gpus[i].pcie_gen_max, in.gpus[i].pcie_width_max, true};
  return links;
}

// The PCIe link lines: each GPU's own, and each switch's uplink at the widest of its GPUs' links.
std::string PcieLinks(const TopoMatrix& m, const Box& box, const std::vector<PcieLink>& links) {
  std::string t;
  std::string last;
  for (int i = 0; i < m.num_gpus; ++i) {
    const PcieLink& l = links[i];
    const std::string source =
        fmt::format("# PCIe Gen{} x{} ({}): {:.3f} GB/s per direction [PCIE-EFF] [LAT]\n", l.gen, l.lanes,
                    l.from_smi ? "nvidia-smi's PCIe Generation / Link Width Max"
                               : "the datasheet's host interface (nvidia-smi gave no link)",
                    l.Gbps());
    if (source != last) t += source;  // said once for a run of GPUs with the same link
    last = source;
    const std::string up =
        box.switch_of[i] >= 0 ? fmt::format("sw{}", box.switch_of[i]) : fmt::format("cpu{}", box.socket[i]);
    t += fmt::format(
        "links {{ a: \"gpu{}\" b: \"{}\" kind: PCIE bandwidth_gbps: {:.3f} latency_ns: 275 payload_efficiency: 0.914 "
        "pcie_gen: {} pcie_lanes: {} }}\n",
        i, up, l.Gbps(), l.gen, l.lanes);
  }
  for (size_t k = 0; k < box.switches.size(); ++k) {
    PcieLink widest = links[box.switches[k].front()];
    for (int g : box.switches[k])
      if (links[g].Gbps() > widest.Gbps()) widest = links[g];
    t += fmt::format(
        "links {{ a: \"sw{}\" b: \"cpu{}\" kind: PCIE bandwidth_gbps: {:.3f} latency_ns: 0 payload_efficiency: 0.914 "
        "pcie_gen: {} pcie_lanes: {} }}   # [GUESS] an x{} uplink of the widest GPU link below it\n",
        k, box.socket[box.switches[k].front()], widest.Gbps(), widest.gen, widest.lanes, widest.lanes);
  }
  return t;
}

// The nodes and links of `box` (NVLink first), each GPU's PCIe link from `links`.
std::string NodesAndLinks(const TopoMatrix& m, const Box& box, const GpuDatasheet& sheet,
                          const std::vector<PcieLink>& links) {
  std::string t;
  for (int s = 0; s < box.sockets; ++s) {
    t += fmt::format(
        "nodes {{ name: \"cpu{}\" kind: CPU_ROOT_COMPLEX socket: {} forward_latency_ns: 500 }}   # [LAT]\n", s, s);
    t += fmt::format("nodes {{ name: \"mem{}\" kind: HOST_MEMORY socket: {} }}\n", s, s);
  }
  for (size_t k = 0; k < box.switches.size(); ++k)
    t += fmt::format("nodes {{ name: \"sw{}\" kind: PCIE_SWITCH socket: {} forward_latency_ns: 100 }}   # [LAT]\n", k,
                     box.socket[box.switches[k].front()]);
  if (!box.nvlink_gpus.empty())
    t +=
        "nodes { name: \"nvswitch0\" kind: NVSWITCH socket: 0 forward_latency_ns: 100 }   # [GUESS] = a switch [LAT]\n";
  for (int i = 0; i < m.num_gpus; ++i)
    t += fmt::format("nodes {{ name: \"gpu{}\" kind: GPU socket: {} gpu_model: \"{}\" }}\n", i, box.socket[i],
                     sheet.model_name);
  t += "\n";
  if (!box.nvlink_gpus.empty()) {
    const double per_link = sheet.nvlink_gbps_per_link > 0 ? sheet.nvlink_gbps_per_link : 25;
    t += fmt::format(
        "# NVLink first (GPU-to-GPU traffic takes it, as NCCL does): NV# links x {:g} GB/s per direction{}\n", per_link,
        sheet.nvlink_gbps_per_link > 0 ? " (datasheet)" : " [GUESS]: NVLink 4's rate");
    for (int i : box.nvlink_gpus) {
      int links = 0;
      for (int j = 0; j < m.num_gpus; ++j) links = std::max(links, m.nvlinks[i][j]);
      t += fmt::format(
          "links {{ a: \"gpu{}\" b: \"nvswitch0\" kind: NVLINK bandwidth_gbps: {:g} latency_ns: 275 "
          "payload_efficiency: 1 "
          "nvlinks: {} }}\n",
          i, per_link * links, links);
    }
  }
  t += PcieLinks(m, box, links);
  for (int s = 1; s < box.sockets; ++s)
    t += fmt::format(
        "links {{ a: \"cpu0\" b: \"cpu{}\" kind: CPU_INTERCONNECT bandwidth_gbps: 128 latency_ns: 0 "
        "payload_efficiency: 1 }}   # [GUESS] 4 UPI 2.0 links (configs/hardware/h200-8x-nvlink.textproto)\n",
        s);
  for (int s = 0; s < box.sockets; ++s)
    t += fmt::format(
        "links {{ a: \"cpu{}\" b: \"mem{}\" kind: MEMORY bandwidth_gbps: 460.8 latency_ns: 0 "
        "payload_efficiency: 1 }}   # [GUESS] 12 channels of DDR5-4800\n",
        s, s);
  return t;
}

}  // namespace

StatusOr<std::string> HardwareConfigFromTopo(const TopoInputs& in) {
  const TopoMatrix& m = in.matrix;
  std::string name = in.gpu_name;
  for (const GpuLinkInfo& g : in.gpus)
    if (name.empty() && !g.name.empty()) name = g.name;
  if (name.empty())
    return InvalidArgumentError(
        "no GPU name: give --gpu NAME, or `nvidia-smi -q` / `--query-gpu=name,...` output with --smi");
  for (const GpuLinkInfo& g : in.gpus)
    if (in.gpu_name.empty() && !g.name.empty() && g.name != name)
      return InvalidArgumentError("the GPUs are not all one model (" + name + ", " + g.name +
                                  "): hardware-from-topo writes one GPU model; give --gpu to name the one to use");
  const std::optional<GpuDatasheet> sheet = FindGpuDatasheet(name);
  if (!sheet) {
    std::string known;
    for (const GpuDatasheet& g : GpuDatasheets()) known += (known.empty() ? "" : ", ") + g.names.front();
    return InvalidArgumentError("GPU '" + name + "' is not in the datasheet table (sim/io/gpu_datasheets.cc: " + known +
                                "): give --gpu with one of those, or write its gpu_models block by hand");
  }
  if (!in.gpus.empty() && static_cast<int>(in.gpus.size()) != m.num_gpus)
    return InvalidArgumentError(
        fmt::format("nvidia-smi's GPU list names {} GPU(s) and the topo -m matrix {}: give the two outputs of one box",
                    in.gpus.size(), m.num_gpus));
  const Box box = Shape(m);
  std::string t;
  t += "# proto-file: proto/specsim/hardware.proto\n# proto-message: specsim.config.Hardware\n#\n";
  t += fmt::format("# Written by `specsim hardware-from-topo` from {}.\n", in.sources);
  t += "# [GUESS] marks a value nothing measured or published for this box: replace it, or calibrate\n";
  t += "# (`specsim calibrate`); [LAT] docs/reference/pcie.md's latencies (GPU link 275 ns, switch 100 ns,\n";
  t += "# root complex 500 ns); [PCIE-EFF] 256 B payloads with 24 B of TLP overhead: 0.914.\n";
  t += fmt::format("name: \"{}\"\n", in.name);
  t +=
      fmt::format("description: \"{}x {}, {} socket(s), {} PCIe switch(es){} (from nvidia-smi topo -m)\"\n", m.num_gpus,
                  sheet->model_name, box.sockets, box.switches.size(), box.nvlink_gpus.empty() ? "" : ", NVLink");
  t += "cpu_vendor: CPU_VENDOR_UNSPECIFIED   # [GUESS] unknown: set AMD or INTEL (lscpu's Vendor ID)\n";
  t += "driver_p2p_mode: DRIVER_DEFAULT   # the driver as installed (hardware.proto DriverP2pMode)\n\n";
  t += GpuModelBlock(*sheet);
  t += NodesAndLinks(m, box, *sheet, LinksOf(in, *sheet));
  return t;
}

}  // namespace specsim::io
