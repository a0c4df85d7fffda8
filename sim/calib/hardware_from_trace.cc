#include "sim/calib/hardware_from_trace.h"

#include <google/protobuf/text_format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

namespace specsim::calib {
namespace {

// [LAT] docs/reference/pcie.md and configs/hardware/*: GPU link 275 ns, switch 100 ns, root
// complex 500 ns; [PCIE-EFF] 256 / (256 + 24) = 0.914.
constexpr double kGpuLinkLatencyNs = 275;
constexpr double kSwitchForwardNs = 100;
constexpr double kRootComplexForwardNs = 500;
constexpr double kPciePayloadEfficiency = 0.914;
constexpr double kDramGbps = 460.8;               // [PLACEHOLDER] 12-channel DDR5-4800 socket
constexpr double kSocketLinkGbps = 64;            // [PLACEHOLDER] xGMI / UPI order of magnitude
constexpr double kSocketLinkLatencyNs = 300;      // [PLACEHOLDER]
constexpr double kOutstandingBytesPerSm = 29600;  // measured on the H200s, as in the bundled configs

double PcieRawGbps(int gen, int lanes) {
  static const double gts[] = {0, 2.5, 5, 8, 16, 32, 64};
  const int g = std::clamp(gen, 1, 6);
  const double encoding = g <= 2 ? 0.8 : (g <= 5 ? 128.0 / 130.0 : 242.0 / 256.0);
  return gts[g] * lanes * encoding / 8.0;
}

// Disjoint sets of GPUs; Find gives the root of a GPU's set.
struct UnionFind {
  std::vector<int> parent;
  explicit UnionFind(int n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  int Find(int x) const {
    while (parent[x] != x) x = parent[x];
    return x;
  }
  void Join(int a, int b) { parent[Find(a)] = Find(b); }
};

}  // namespace

const std::vector<KnownGpu>& KnownGpus() {
  static const std::vector<KnownGpu> table = {
      {"H200", "H200", 4800, 989, 1979, 0, 450,
       "NVIDIA H200 datasheet (docs/reference/hardware.md): 4.8 TB/s HBM3e, 989 dense BF16, 3958 sparse FP8 / 2; "
       "NVLink 4 900 GB/s total "
       "over 18 links (nvidia-smi topo -m on the 2x H200 box: NV18)",
       18},
      {"H100 PCIe", "H100 PCIe", 2000, 756, 1513, 0, 0,
       "NVIDIA H100 datasheet, PCIe column: 2 TB/s, 1513 sparse BF16 / 2, 3026 sparse FP8 / 2"},
      {"H100", "H100 SXM", 3350, 989, 1979, 0, 450,
       "NVIDIA H100 datasheet, SXM column: 3.35 TB/s, 1979 sparse BF16 / 2, 3958 sparse FP8 / 2; NVLink 4 (18 links, "
       "900 GB/s)",
       18},
      {"RTX PRO 6000 Blackwell Server", "RTX PRO 6000 Blackwell Server Edition", 1597, 500, 1000, 2000, 0,
       "docs/reference/hardware.md: 1597 GB/s (Server Edition), ~0.5 / 1 / 2 PF dense BF16 / FP8 / FP4"},
      {"RTX PRO 6000", "RTX PRO 6000 Blackwell Workstation Edition", 1792, 500, 1000, 2000, 0,
       "docs/reference/hardware.md: 1792 GB/s (Workstation), ~0.5 / 1 / 2 PF dense BF16 / FP8 / FP4"},
      {"L40S", "L40S", 864, 362, 733, 0, 0,
       "NVIDIA L40S datasheet: 864 GB/s GDDR6, 733 sparse BF16 / 2, 1466 sparse FP8 / 2"},
      {"RTX 4090", "RTX 4090", 1008, 165, 330, 0, 0,
       "NVIDIA Ada (AD102) whitepaper: 1008 GB/s; dense BF16 / FP8 with FP32 accumulate 165 / 330 (GeForce rate)"},
      {"RTX 5090", "RTX 5090", 1792, 209.5, 419, 838, 0,
       "NVIDIA RTX Blackwell (GB202) whitepaper: 1792 GB/s; dense BF16 / FP8 / FP4 with FP32 accumulate "
       "209.5 / 419 / 838 (from the whitepaper's table as remembered: verify)"},
  };
  return table;
}

namespace {

// The environment fields the box is built from, each in the range a real GPU reports (what
// specsim-validate reads through the CUDA runtime and NVML): a value outside it is bad trace data,
// named here, not a hardware config that fails to load later.
Status CheckEnvironmentGpus(const trace::Environment& env) {
  for (int i = 0; i < env.gpus_size(); ++i) {
    const trace::Gpu& g = env.gpus(i);
    const std::string at = "environment.gpus[" + std::to_string(i) + "].";
    auto range = [&](const char* field, int64_t v, int64_t lo, int64_t hi, const char* why) -> Status {
      if (v >= lo && v <= hi) return OkStatus();
      return InvalidArgumentError(at + field + " = " + std::to_string(v) + ": must be in [" + std::to_string(lo) +
                                  ", " + std::to_string(hi) + "] (" + why + ")");
    };
    RETURN_IF_ERROR(range("sm_count", g.sm_count(), 1, 4096, "streaming multiprocessors"));
    RETURN_IF_ERROR(range("memory_bytes", g.memory_bytes(), 1, int64_t{1} << 44, "device memory, at most 16 TiB"));
    RETURN_IF_ERROR(range("l2_cache_bytes", g.l2_cache_bytes(), 0, int64_t{1} << 34, "at most 16 GiB"));
    RETURN_IF_ERROR(range("compute_capability_major", g.compute_capability_major(), 1, 99, "CUDA compute capability"));
    RETURN_IF_ERROR(range("compute_capability_minor", g.compute_capability_minor(), 0, 99, "CUDA compute capability"));
    RETURN_IF_ERROR(range("pcie_generation_current", g.pcie_generation_current(), 0, 6, "0: not read; PCIe 1..6"));
    RETURN_IF_ERROR(range("pcie_generation_max", g.pcie_generation_max(), 0, 6, "0: not read; PCIe 1..6"));
    RETURN_IF_ERROR(range("pcie_width_current", g.pcie_width_current(), 0, 32, "lanes; 0: not read"));
    RETURN_IF_ERROR(range("pcie_width_max", g.pcie_width_max(), 0, 32, "lanes; 0: not read"));
    RETURN_IF_ERROR(range("numa_node", g.numa_node(), -1, 1023, "-1: not known"));
  }
  return OkStatus();
}

// The name, the description naming the trace, and the CPU vendor from the CPU model string.
config::Hardware HardwareHeader(const trace::Trace& trace, const std::string& name) {
  const trace::Environment& env = trace.environment();
  config::Hardware hw;
  hw.set_name(name);
  const std::string gpu_names = env.gpus(0).name();
  hw.set_description(std::to_string(env.gpus_size()) + "x " + gpu_names + " (from trace " + env.hostname() + ", " +
                     trace.started_at_utc() + ")");
  if (env.cpu_model().find("AMD") != std::string::npos)
    hw.set_cpu_vendor(config::Hardware::AMD);
  else if (env.cpu_model().find("Intel") != std::string::npos)
    hw.set_cpu_vendor(config::Hardware::INTEL);
  return hw;
}

// The first entry of the table whose match is in the CUDA device name; nullptr when none is.
const KnownGpu* FindKnownGpu(const std::string& device_name) {
  for (const KnownGpu& k : KnownGpus())
    if (device_name.find(k.match) != std::string::npos) return &k;
  return nullptr;
}

Status UnknownGpuError(const std::string& device_name) {
  std::string list;
  for (const KnownGpu& k : KnownGpus()) list += (list.empty() ? "" : ", ") + std::string(k.match);
  return InvalidArgumentError("GPU '" + device_name + "' is not in specsim's table of known GPUs (" + list +
                              "): the trace gives its SMs and memory, but memory_bandwidth_gbps, "
                              "bf16_dense_tflops, fp8_dense_tflops and fp4_dense_tflops must come from its "
                              "datasheet; write the gpu_models entry by hand");
}

// A gpu_models entry: the trace's arch, SMs, memory and L2; the table's rates; placeholders.
void AddGpuModel(const trace::Gpu& g, const KnownGpu& known, config::Hardware* hw) {
  config::GpuModel* m = hw->add_gpu_models();
  m->set_name(known.model_name);
  m->set_arch("sm" + std::to_string(g.compute_capability_major()) + std::to_string(g.compute_capability_minor()));
  m->set_sm_count(g.sm_count());
  m->set_memory_gib(static_cast<double>(g.memory_bytes()) / (1024.0 * 1024 * 1024));
  m->set_memory_bandwidth_gbps(known.memory_bandwidth_gbps);
  m->set_l2_cache_mib(static_cast<double>(g.l2_cache_bytes()) / (1024.0 * 1024));
  m->set_bf16_dense_tflops(known.bf16_dense_tflops);
  m->set_fp8_dense_tflops(known.fp8_dense_tflops);
  m->set_fp4_dense_tflops(known.fp4_dense_tflops);
  m->set_copy_engines_per_direction(1);
  m->set_copy_engine_setup_ns(0);
  m->set_kernel_read_outstanding_bytes_per_sm(kOutstandingBytesPerSm);
}

using KnownGpuOfName = std::map<std::string, const KnownGpu*>;  // device name -> table entry

// GPU models, one per distinct device name (in the order the trace lists them); returns the table
// entry of every device name.
StatusOr<KnownGpuOfName> AddGpuModels(const trace::Environment& env, config::Hardware* hw) {
  KnownGpuOfName known_of;
  for (const trace::Gpu& g : env.gpus()) {
    if (known_of.count(g.name())) continue;
    const KnownGpu* known = FindKnownGpu(g.name());
    if (!known) return UnknownGpuError(g.name());
    AddGpuModel(g, *known, hw);
    known_of[g.name()] = known;
  }
  return known_of;
}

// Every GPU's socket: its NUMA node, -1 (not known) as socket 0.
std::vector<int> SocketOfEachGpu(const trace::Environment& env) {
  std::vector<int> socket(env.gpus_size());
  for (int i = 0; i < env.gpus_size(); ++i) socket[i] = std::max(0, env.gpus(i).numa_node());
  return socket;
}

// The P2P path classes that shape the fabric: PIX groups (one switch), PXB components (switches
// under a switch) and the GPUs with NVLink peers.
struct PeerPaths {
  UnionFind pix, pxb;
  bool any_nvlink = false;
  std::vector<bool> nvlinked;
  explicit PeerPaths(int n) : pix(n), pxb(n), nvlinked(n, false) {}
};

PeerPaths PeerPathsOf(const trace::Environment& env) {
  const int n = env.gpus_size();
  PeerPaths paths(n);
  for (const trace::PeerPair& p : env.peers()) {
    if (p.src() < 0 || p.src() >= n || p.dst() < 0 || p.dst() >= n) continue;
    switch (p.path_class()) {
      case trace::PATH_PIX:
        paths.pix.Join(p.src(), p.dst());
        paths.pxb.Join(p.src(), p.dst());
        break;
      case trace::PATH_PXB: paths.pxb.Join(p.src(), p.dst()); break;
      case trace::PATH_NVLINK:
        paths.any_nvlink = true;
        paths.nvlinked[p.src()] = paths.nvlinked[p.dst()] = true;
        break;
      default: break;
    }
  }
  return paths;
}

config::Node* AddNode(const std::string& node_name, config::Node::Kind kind, int socket, double forward_latency_ns,
                      config::Hardware* hw) {
  config::Node* node = hw->add_nodes();
  node->set_name(node_name);
  node->set_kind(kind);
  node->set_socket(socket);
  node->set_forward_latency_ns(forward_latency_ns);
  return node;
}

// A link's rate and latency; pcie_gen and pcie_lanes are 0 for links that are not PCIe.
struct LinkSpec {
  double bandwidth_gbps;
  double latency_ns;
  double payload_efficiency;
  int pcie_gen;
  int pcie_lanes;
};

config::Link* AddLink(const std::string& a, const std::string& b, config::Link::Kind kind, const LinkSpec& spec,
                      config::Hardware* hw) {
  config::Link* l = hw->add_links();
  l->set_a(a);
  l->set_b(b);
  l->set_kind(kind);
  l->set_bandwidth_gbps(spec.bandwidth_gbps);
  l->set_latency_ns(spec.latency_ns);
  l->set_payload_efficiency(spec.payload_efficiency);
  l->set_pcie_gen(spec.pcie_gen);
  l->set_pcie_lanes(spec.pcie_lanes);
  return l;
}

std::string CpuNodeName(int socket) { return "cpu" + std::to_string(socket); }

// Per socket a root complex and its host memory; sockets other than the first joined to the first.
void AddSockets(const std::set<int>& sockets, config::Hardware* hw) {
  for (int s : sockets) {
    AddNode(CpuNodeName(s), config::Node::CPU_ROOT_COMPLEX, s, kRootComplexForwardNs, hw);
    AddNode("mem" + std::to_string(s), config::Node::HOST_MEMORY, s, 0, hw);
  }
  const int first_socket = *sockets.begin();
  for (int s : sockets) {
    AddLink(CpuNodeName(s), "mem" + std::to_string(s), config::Link::MEMORY, {kDramGbps, 0, 1, 0, 0}, hw);
    if (s != first_socket)
      AddLink(CpuNodeName(first_socket), CpuNodeName(s), config::Link::CPU_INTERCONNECT,
              {kSocketLinkGbps, kSocketLinkLatencyNs, 1, 0, 0}, hw);
  }
}

// The GPU's PCIe generation: the current link's, else the maximum (at least 1).
int PcieGenOf(const trace::Gpu& g) {
  return g.pcie_generation_current() > 0 ? g.pcie_generation_current() : std::max(1, g.pcie_generation_max());
}

// The GPU's PCIe lanes (current, else maximum), rounded down to a link width; 16 when not read.
int PcieLanesOf(const trace::Gpu& g) {
  int w = g.pcie_width_current() > 0 ? g.pcie_width_current() : g.pcie_width_max();
  for (int allowed : {16, 8, 4, 2, 1})
    if (w >= allowed) return allowed;
  return 16;
}

// A PCIe link of the GPU's generation and width.
LinkSpec PcieLinkOf(const trace::Gpu& g) {
  const int gen = PcieGenOf(g), lanes = PcieLanesOf(g);
  return {PcieRawGbps(gen, lanes), kGpuLinkLatencyNs, kPciePayloadEfficiency, gen, lanes};
}

// The switches of one PXB component (GPUs `gpus`, on the socket of its first GPU): a top switch on
// the root complex when it has several PIX groups, a leaf switch per PIX group (none for a lone GPU
// on its root complex); links at the first GPU's PCIe rate. Sets the parent node of each GPU.
void AddSwitchesOfComponent(const std::vector<int>& gpus, const trace::Environment& env, const PeerPaths& paths,
                            const std::vector<int>& socket, int* switches, std::vector<std::string>* gpu_parent,
                            config::Hardware* hw) {
  std::map<int, std::vector<int>> groups;  // pix root -> GPUs
  for (int g : gpus) groups[paths.pix.Find(g)].push_back(g);
  const int s = socket[gpus[0]];
  const std::string cpu = CpuNodeName(s);
  const LinkSpec link = PcieLinkOf(env.gpus(gpus[0]));
  std::string top = cpu;
  if (groups.size() > 1) {
    top = "sw" + std::to_string((*switches)++);
    AddNode(top, config::Node::PCIE_SWITCH, s, kSwitchForwardNs, hw);
    AddLink(top, cpu, config::Link::PCIE, link, hw);
  }
  for (auto& [proot, members] : groups) {
    if (members.size() == 1 && groups.size() == 1) {
      (*gpu_parent)[members[0]] = cpu;
      continue;
    }
    const std::string leaf = "sw" + std::to_string((*switches)++);
    AddNode(leaf, config::Node::PCIE_SWITCH, s, kSwitchForwardNs, hw);
    AddLink(leaf, top, config::Link::PCIE, link, hw);
    for (int g : members) (*gpu_parent)[g] = leaf;
  }
}

// Switch hierarchy: PIX groups within PXB components. Returns the node each GPU's link goes to.
std::vector<std::string> AddPcieSwitches(const trace::Environment& env, const PeerPaths& paths,
                                         const std::vector<int>& socket, config::Hardware* hw) {
  const int n = env.gpus_size();
  std::map<int, std::vector<int>> components;  // pxb root -> GPUs
  for (int i = 0; i < n; ++i) components[paths.pxb.Find(i)].push_back(i);
  std::vector<std::string> gpu_parent(n);
  int switches = 0;
  for (const auto& [root, gpus] : components)
    AddSwitchesOfComponent(gpus, env, paths, socket, &switches, &gpu_parent, hw);
  return gpu_parent;
}

// A node per GPU (of its model) and its PCIe link to its parent, at its own generation and width.
void AddGpus(const trace::Environment& env, const std::vector<int>& socket, const KnownGpuOfName& known_of,
             const std::vector<std::string>& gpu_parent, config::Hardware* hw) {
  const int n = env.gpus_size();
  for (int i = 0; i < n; ++i) {
    config::Node* node = AddNode("gpu" + std::to_string(i), config::Node::GPU, socket[i], 0, hw);
    node->set_gpu_model(known_of.at(env.gpus(i).name())->model_name);
  }
  for (int i = 0; i < n; ++i)
    AddLink("gpu" + std::to_string(i), gpu_parent[i], config::Link::PCIE, PcieLinkOf(env.gpus(i)), hw);
}

// One NVSwitch (on the first socket) joined to every GPU with NVLink peers at the table's rate;
// InvalidArgument for a GPU the table has no NVLink rate for.
Status AddNvSwitch(const trace::Environment& env, const PeerPaths& paths, int first_socket,
                   const KnownGpuOfName& known_of, config::Hardware* hw) {
  AddNode("nvswitch0", config::Node::NVSWITCH, first_socket, kSwitchForwardNs, hw);
  for (int i = 0; i < env.gpus_size(); ++i) {
    if (!paths.nvlinked[i]) continue;
    const KnownGpu& known = *known_of.at(env.gpus(i).name());
    const double gbps = known.nvlink_gbps_per_direction;
    if (gbps <= 0)
      return InvalidArgumentError("GPU " + std::to_string(i) + " ('" + env.gpus(i).name() +
                                  "') has NVLink peers but specsim's table has no NVLink rate for it");
    AddLink("gpu" + std::to_string(i), "nvswitch0", config::Link::NVLINK, {gbps, kGpuLinkLatencyNs, 1, 0, 0}, hw)
        ->set_nvlinks(known.nvlinks);
  }
  return OkStatus();
}

}  // namespace

StatusOr<config::Hardware> HardwareFromTrace(const trace::Trace& trace, const std::string& name) {
  const trace::Environment& env = trace.environment();
  if (env.gpus_size() == 0) return InvalidArgumentError("the trace's environment lists no GPUs");
  config::Hardware hw = HardwareHeader(trace, name);
  ASSIGN_OR_RETURN(const KnownGpuOfName known_of, AddGpuModels(env, &hw));
  // After the GPU names: an unknown GPU is the more useful message.
  RETURN_IF_ERROR(CheckEnvironmentGpus(env));
  const std::vector<int> socket = SocketOfEachGpu(env);
  const std::set<int> sockets(socket.begin(), socket.end());
  const PeerPaths paths = PeerPathsOf(env);
  AddSockets(sockets, &hw);
  const std::vector<std::string> gpu_parent = AddPcieSwitches(env, paths, socket, &hw);
  AddGpus(env, socket, known_of, gpu_parent, &hw);
  if (paths.any_nvlink) RETURN_IF_ERROR(AddNvSwitch(env, paths, *sockets.begin(), known_of, &hw));
  return hw;
}

std::string HardwareTextProto(const config::Hardware& hw, const trace::Trace& trace) {
  std::string body;
  google::protobuf::TextFormat::Printer printer;
  printer.PrintToString(hw, &body);
  std::string sources;
  for (const KnownGpu& k : KnownGpus())
    for (const config::GpuModel& m : hw.gpu_models())
      if (m.name() == k.model_name) sources += "#   " + std::string(k.model_name) + ": " + k.source + "\n";
  return "# proto-file: proto/specsim/hardware.proto\n"
         "# proto-message: specsim.config.Hardware\n"
         "#\n"
         "# Written by `specsim hardware-from-trace` from a trace by " +
         trace.tool() + " " + trace.tool_version() + " started " + trace.started_at_utc() + " on '" +
         trace.environment().hostname() +
         "'.\n"
         "# From the trace: GPU count, names, arch (compute capability), SMs, memory, L2, PCIe generation and width,\n"
         "#   NUMA nodes (sockets), CPU vendor, P2P path classes (switch hierarchy, NVLink).\n"
         "# From specsim's table of known GPUs (memory bandwidth, dense tensor rates, NVLink rate):\n" +
         sources +
         "# [LAT] docs/reference/pcie.md: GPU link 275 ns, switch 100 ns, root complex 500 ns; [PCIE-EFF] 0.914.\n"
         "# [MEASURED] outstanding read bytes per SM (29600: one block's read rate of host memory on the H200s x the\n"
         "#   model's host round trip; the bundled configs' comment says which traces).\n"
         "# [PLACEHOLDER] copy engines (1 per direction), copy setup (0), DRAM (460.8 GB/s), socket link (64 GB/s,\n"
         "#   300 ns): run `specsim calibrate` and pass --calibration.\n" +
         body;
}

}  // namespace specsim::calib
