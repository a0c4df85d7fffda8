#include "sim/io/hardware_loader.h"

#include <fmt/format.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "sim/io/field_ranges.h"
#include "sim/io/file_io.h"
#include "sim/io/gpu_datasheets.h"
#include "sim/io/hardware_checks.h"
#include "sim/io/textproto.h"

namespace specsim::io {
namespace {

using config::Hardware;

net::NodeKind ToNodeKind(config::Node::Kind kind) {
  switch (kind) {
    case config::Node::GPU: return net::NodeKind::kGpu;
    case config::Node::PCIE_SWITCH: return net::NodeKind::kPcieSwitch;
    case config::Node::CPU_ROOT_COMPLEX: return net::NodeKind::kCpuRootComplex;
    case config::Node::HOST_MEMORY: return net::NodeKind::kHostMemory;
    case config::Node::NVSWITCH: return net::NodeKind::kNvSwitch;
    default: break;
  }
  SPECSIM_CHECK(false) << "unvalidated node kind " << kind;
  return net::NodeKind::kGpu;
}

net::LinkKind ToLinkKind(config::Link::Kind kind) {
  switch (kind) {
    case config::Link::PCIE: return net::LinkKind::kPcie;
    case config::Link::CPU_INTERCONNECT: return net::LinkKind::kCpuInterconnect;
    case config::Link::NVLINK: return net::LinkKind::kNvLink;
    case config::Link::MEMORY: return net::LinkKind::kMemory;
    default: break;
  }
  SPECSIM_CHECK(false) << "unvalidated link kind " << kind;
  return net::LinkKind::kPcie;
}

net::CpuVendor ToCpuVendor(Hardware::CpuVendor vendor) {
  switch (vendor) {
    case Hardware::AMD: return net::CpuVendor::kAmd;
    case Hardware::INTEL: return net::CpuVendor::kIntel;
    case Hardware::ARM: return net::CpuVendor::kArm;
    default: return net::CpuVendor::kUnknown;
  }
}

net::DriverP2pMode ToDriverP2pMode(Hardware::DriverP2pMode mode) {
  switch (mode) {
    case Hardware::BAR1_FORCED: return net::DriverP2pMode::kBar1Forced;
    case Hardware::NO_PCIE_P2P: return net::DriverP2pMode::kNoPcieP2p;
    default: return net::DriverP2pMode::kDriverDefault;  // DRIVER_DEFAULT (others rejected by the checks)
  }
}

// REQUIRES: hardware passed the field checks.
net::Topology Convert(const Hardware& hw, const std::map<std::string, int>& model_index,
                      const std::map<std::string, int>& node_index) {
  net::Topology t;
  t.name = hw.name();
  t.cpu_vendor = ToCpuVendor(hw.cpu_vendor());
  t.driver_p2p_mode = ToDriverP2pMode(hw.driver_p2p_mode());
  for (const config::GpuModel& m : hw.gpu_models()) {
    t.gpu_specs.push_back(net::GpuSpec{
        .name = m.name(),
        .arch = m.arch(),
        .sm_count = m.sm_count(),
        .memory_gib = m.memory_gib(),
        .memory_bandwidth_gbps = m.memory_bandwidth_gbps(),
        .l2_cache_mib = m.l2_cache_mib(),
        .bf16_dense_tflops = m.bf16_dense_tflops(),
        .fp8_dense_tflops = m.fp8_dense_tflops(),
        .fp4_dense_tflops = m.fp4_dense_tflops(),
        .copy_engines_per_direction = m.copy_engines_per_direction(),
        .copy_engine_setup_ns = m.copy_engine_setup_ns(),
        .kernel_read_outstanding_bytes_per_sm = m.kernel_read_outstanding_bytes_per_sm(),
    });
  }
  for (const config::Node& n : hw.nodes()) {
    net::Node node;
    node.name = n.name();
    node.kind = ToNodeKind(n.kind());
    node.socket = n.socket();
    node.gpu_spec = n.kind() == config::Node::GPU ? model_index.at(n.gpu_model()) : -1;
    node.forward_latency_ns = n.forward_latency_ns();
    node.p2p_forward_bandwidth_gbps = n.p2p_forward_bandwidth_gbps();
    node.p2p_forward_collapse_per_flow = n.p2p_forward_collapse_per_flow();
    if (node.kind == net::NodeKind::kGpu) t.gpus.push_back(static_cast<int>(t.nodes.size()));
    t.nodes.push_back(std::move(node));
  }
  for (const config::Link& l : hw.links()) {
    t.links.push_back(net::Link{
        .a = node_index.at(l.a()),
        .b = node_index.at(l.b()),
        .kind = ToLinkKind(l.kind()),
        .bandwidth_gbps = l.bandwidth_gbps(),
        .latency_ns = l.latency_ns(),
        .payload_efficiency = l.payload_efficiency(),
        .pcie_gen = l.pcie_gen(),
        .pcie_lanes = l.pcie_lanes(),
        .nvlinks = l.nvlinks(),
    });
  }
  return t;
}

// A GPU's PCIe link faster than its datasheet allows (a Gen5 link left in a Gen4 GPU's config):
// one warning per link, naming the datasheet (gpu_datasheets.h); GPUs the table lacks are not
// checked.
void WarnLinksPastTheDatasheet(const config::Hardware& hardware, std::string_view filename,
                               std::vector<std::string>* warnings) {
  if (warnings == nullptr) return;
  std::map<std::string, std::string> model_of_node;
  for (const config::Node& n : hardware.nodes())
    if (n.kind() == config::Node::GPU) model_of_node[n.name()] = n.gpu_model();
  for (int i = 0; i < hardware.links_size(); ++i) {
    const config::Link& l = hardware.links(i);
    if (l.kind() != config::Link::PCIE) continue;
    for (const std::string& end : {l.a(), l.b()}) {
      auto it = model_of_node.find(end);
      if (it == model_of_node.end()) continue;
      const std::optional<GpuDatasheet> sheet = FindGpuDatasheet(it->second);
      if (!sheet || sheet->pcie_gen == 0) continue;
      if (l.pcie_gen() > sheet->pcie_gen || l.pcie_lanes() > sheet->pcie_lanes)
        warnings->push_back(fmt::format(
            "{}: links[{}] ({}<->{}) is PCIe Gen{} x{}, past {}'s Gen{} x{} host interface ({}): the link runs at "
            "most at the GPU's",
            filename, i, l.a(), l.b(), l.pcie_gen(), l.pcie_lanes(), sheet->model_name, sheet->pcie_gen,
            sheet->pcie_lanes, sheet->source));
    }
  }
}

}  // namespace

StatusOr<net::Topology> TopologyFromHardware(const config::Hardware& hardware, std::string_view filename,
                                             std::vector<std::string>* warnings) {
  ValidationErrors errors(filename);
  // Bounded work: the routing and transport tables are per GPU pair.
  int64_t gpus = 0;
  for (const config::Node& n : hardware.nodes()) gpus += n.kind() == config::Node::GPU;
  if (gpus > kMaxHardwareGpus)
    return InvalidArgumentError(fmt::format(
        "{}: {} GPU nodes: at most {} per hardware file (the tables per GPU pair grow as GPUs squared: 8192 "
        "GPUs took 2.4 GB and 7 s to load)",
        filename, gpus, kMaxHardwareGpus));
  errors.AddLines(CheckFieldRanges(hardware, filename, warnings));
  HardwareIndex index;
  CheckHardwareFields(hardware, &errors, &index);
  if (!errors.empty()) return errors.ToStatus();

  WarnLinksPastTheDatasheet(hardware, filename, warnings);
  net::Topology topology = Convert(hardware, index.models, index.nodes);
  CheckHostMemory(topology, &errors);
  if (!errors.empty()) return errors.ToStatus();
  CheckGpusConnected(topology, &errors);
  if (!errors.empty()) return errors.ToStatus(StatusCode::kFailedPrecondition);
  return topology;
}

StatusOr<net::Topology> ParseHardware(std::string_view text, std::string_view filename,
                                      std::vector<std::string>* warnings) {
  ASSIGN_OR_RETURN(config::Hardware hardware, ParseTextProto<config::Hardware>(text, filename));
  return TopologyFromHardware(hardware, filename, warnings);
}

StatusOr<net::Topology> LoadHardwareFile(const std::string& path, std::vector<std::string>* warnings) {
  ASSIGN_OR_RETURN(ConfigText config, ReadConfigFile(path));
  return ParseHardware(config.text, config.display_name, warnings);
}

}  // namespace specsim::io
