#include "sim/io/hardware_checks.h"

#include <fmt/format.h>

#include <cmath>
#include <utility>

#include "sim/io/enum_names.h"
#include "sim/net/peer_access.h"
#include "sim/net/routing.h"

namespace specsim::io {

void ValidationErrors::Add(const std::string& path, const std::string& value, const std::string& rule) {
  lines_.push_back(fmt::format("{}: {} = {}: {}", filename_, path, value, rule));
}

void ValidationErrors::AddPlain(const std::string& text) { lines_.push_back(fmt::format("{}: {}", filename_, text)); }

void ValidationErrors::AddLines(const Status& status) {
  if (status.ok()) return;
  const std::string& m = status.message();
  for (size_t start = 0; start < m.size();) {
    size_t end = m.find('\n', start);
    if (end == std::string::npos) end = m.size();
    lines_.push_back(m.substr(start, end - start));
    start = end + 1;
  }
}

Status ValidationErrors::ToStatus(StatusCode code) const {
  SPECSIM_CHECK(!lines_.empty());
  std::string message;
  for (const std::string& line : lines_) message += (message.empty() ? "" : "\n") + line;
  return Status(code, message);
}

namespace {

namespace pb = google::protobuf;
using config::Hardware;

std::string Quoted(const std::string& s) { return "\"" + s + "\""; }

void CheckGpuModels(const Hardware& hw, ValidationErrors* errors, std::map<std::string, int>* model_index) {
  for (int i = 0; i < hw.gpu_models_size(); ++i) {
    const config::GpuModel& m = hw.gpu_models(i);
    const std::string path = fmt::format("gpu_models[{}] ({})", i, m.name().empty() ? "unnamed" : Quoted(m.name()));
    if (m.name().empty()) {
      errors->Add(path + ".name", "\"\"", "must be non-empty");
    } else if (!model_index->emplace(m.name(), i).second) {
      errors->Add(path + ".name", Quoted(m.name()),
                  fmt::format("duplicates gpu_models[{}]", model_index->at(m.name())));
    }
    if (m.arch().empty()) errors->Add(path + ".arch", "\"\"", "must be non-empty, e.g. \"sm90\"");
  }
}

std::string DefinedModels(const Hardware& hw) {
  if (hw.gpu_models_size() == 0) return "no gpu_models are defined";
  std::string out;
  for (const config::GpuModel& m : hw.gpu_models()) out += (out.empty() ? "" : ", ") + Quoted(m.name());
  return "defined gpu_models: " + out;
}

void CheckNodes(const Hardware& hw, const std::map<std::string, int>& model_index, ValidationErrors* errors,
                std::map<std::string, int>* node_index) {
  const pb::EnumDescriptor* kinds = config::Node::Kind_descriptor();
  int gpu_count = 0;
  std::map<int, int> memory_of_socket;
  for (int i = 0; i < hw.nodes_size(); ++i) {
    const config::Node& n = hw.nodes(i);
    const std::string path = fmt::format("nodes[{}] ({})", i, n.name().empty() ? "unnamed" : n.name());
    if (n.name().empty()) {
      errors->Add(path + ".name", "\"\"", "must be non-empty");
    } else if (!node_index->emplace(n.name(), i).second) {
      errors->Add(path + ".name", Quoted(n.name()), fmt::format("duplicates nodes[{}]", node_index->at(n.name())));
    }
    const std::string kind_name = EnumValueName(kinds, n.kind());
    if (n.kind() == config::Node::KIND_UNSPECIFIED || !config::Node::Kind_IsValid(n.kind())) {
      errors->Add(path + ".kind", kind_name, "must be one of " + AllowedEnumValues(kinds));
    }
    if (n.kind() == config::Node::GPU) {
      ++gpu_count;
      if (model_index.count(n.gpu_model()) == 0) {
        errors->Add(path + ".gpu_model", Quoted(n.gpu_model()), "must name a gpu_models entry; " + DefinedModels(hw));
      }
    } else if (!n.gpu_model().empty()) {
      errors->Add(path + ".gpu_model", Quoted(n.gpu_model()),
                  "only allowed on GPU nodes (this node is " + kind_name + ")");
    }
    if (n.kind() != config::Node::CPU_ROOT_COMPLEX) {
      const std::string rule = "only allowed on CPU_ROOT_COMPLEX nodes (this node is " + kind_name + ")";
      if (n.p2p_forward_bandwidth_gbps() != 0) {
        errors->Add(path + ".p2p_forward_bandwidth_gbps", fmt::format("{}", n.p2p_forward_bandwidth_gbps()), rule);
      }
      if (n.p2p_forward_collapse_per_flow() != 0) {
        errors->Add(path + ".p2p_forward_collapse_per_flow", fmt::format("{}", n.p2p_forward_collapse_per_flow()),
                    rule);
      }
    }
    if (n.kind() == config::Node::HOST_MEMORY) {
      const auto [it, inserted] = memory_of_socket.emplace(n.socket(), i);
      if (!inserted) {
        errors->Add(path + ".socket", std::to_string(n.socket()),
                    fmt::format("socket already has HOST_MEMORY nodes[{}] ({}); one per socket", it->second,
                                hw.nodes(it->second).name()));
      }
    }
  }
  if (gpu_count == 0) {
    errors->AddPlain(
        fmt::format("zero GPUs: nodes ({} given) must include at least one node with kind: GPU", hw.nodes_size()));
  }
}

// Whether a node of kind `node` may be an endpoint of a link of kind `link`.
bool EndpointAllowed(config::Link::Kind link, config::Node::Kind node) {
  switch (link) {
    case config::Link::PCIE:
      return node == config::Node::GPU || node == config::Node::PCIE_SWITCH || node == config::Node::CPU_ROOT_COMPLEX;
    case config::Link::NVLINK: return node == config::Node::GPU || node == config::Node::NVSWITCH;
    case config::Link::CPU_INTERCONNECT: return node == config::Node::CPU_ROOT_COMPLEX;
    case config::Link::MEMORY: return node == config::Node::HOST_MEMORY || node == config::Node::CPU_ROOT_COMPLEX;
    default: return true;  // kind errors are reported on their own
  }
}

constexpr const char* kEndpointRule[] = {"", "PCIE links join GPU, PCIE_SWITCH or CPU_ROOT_COMPLEX nodes",
                                         "CPU_INTERCONNECT links join two CPU_ROOT_COMPLEX nodes",
                                         "NVLINK links join GPU or NVSWITCH nodes",
                                         "MEMORY links join one HOST_MEMORY and one CPU_ROOT_COMPLEX node"};

void CheckLinks(const Hardware& hw, const std::map<std::string, int>& node_index, ValidationErrors* errors) {
  const pb::EnumDescriptor* kinds = config::Link::Kind_descriptor();
  const pb::EnumDescriptor* node_kinds = config::Node::Kind_descriptor();
  std::map<std::pair<int, int>, int> pairs;
  for (int j = 0; j < hw.links_size(); ++j) {
    const config::Link& l = hw.links(j);
    const std::string path = fmt::format("links[{}] ({}<->{})", j, l.a(), l.b());
    const auto a = node_index.find(l.a());
    const auto b = node_index.find(l.b());
    if (a == node_index.end()) errors->Add(path + ".a", Quoted(l.a()), "must name a node; no node has that name");
    if (b == node_index.end()) errors->Add(path + ".b", Quoted(l.b()), "must name a node; no node has that name");
    const bool kind_ok = l.kind() != config::Link::KIND_UNSPECIFIED && config::Link::Kind_IsValid(l.kind());
    if (!kind_ok) {
      errors->Add(path + ".kind", EnumValueName(kinds, l.kind()), "must be one of " + AllowedEnumValues(kinds));
    }
    if (a != node_index.end() && b != node_index.end()) {
      if (a->second == b->second) {
        errors->Add(path + ".b", Quoted(l.b()), "a link must join two different nodes");
      } else {
        const auto key = std::minmax(a->second, b->second);
        const auto [it, inserted] = pairs.emplace(key, j);
        if (!inserted) {
          errors->Add(path, "(" + l.a() + ", " + l.b() + ")",
                      fmt::format("duplicates links[{}]; give one link with the total bandwidth", it->second));
        }
      }
      for (const auto& [end, node] : {std::pair{"a", a->second}, std::pair{"b", b->second}}) {
        const config::Node::Kind node_kind = hw.nodes(node).kind();
        if (kind_ok && !EndpointAllowed(l.kind(), node_kind)) {
          errors->Add(fmt::format("{}.{}", path, end),
                      Quoted(hw.nodes(node).name()) + " (" + EnumValueName(node_kinds, node_kind) + ")",
                      kEndpointRule[l.kind()]);
        }
      }
      if (kind_ok && l.kind() == config::Link::MEMORY && hw.nodes(a->second).kind() == hw.nodes(b->second).kind()) {
        errors->Add(path + ".kind", "MEMORY", kEndpointRule[config::Link::MEMORY]);
      }
    }
    if (l.kind() == config::Link::PCIE) {
      if (l.pcie_gen() < 1 || l.pcie_gen() > 6) {
        errors->Add(path + ".pcie_gen", std::to_string(l.pcie_gen()), "PCIE links need 1..6");
      }
      const int w = l.pcie_lanes();
      if (w != 1 && w != 2 && w != 4 && w != 8 && w != 16) {
        errors->Add(path + ".pcie_lanes", std::to_string(w), "PCIE links need one of 1, 2, 4, 8, 16");
      }
    } else if (kind_ok) {
      const std::string rule = "only allowed on PCIE links (this link is " + EnumValueName(kinds, l.kind()) + ")";
      if (l.pcie_gen() != 0) errors->Add(path + ".pcie_gen", std::to_string(l.pcie_gen()), rule);
      if (l.pcie_lanes() != 0) errors->Add(path + ".pcie_lanes", std::to_string(l.pcie_lanes()), rule);
    }
    if (l.nvlinks() != 0 && l.kind() != config::Link::NVLINK) {
      errors->Add(path + ".nvlinks", std::to_string(l.nvlinks()),
                  "only on NVLINK links (the NV# of nvidia-smi topo -m), or 0 for unknown");
    }
  }
}

}  // namespace

// The driver's PCIe P2P mode: a known value; BAR1 only for GPUs that have BAR1 P2P (peer_access.h).
void CheckDriverP2pMode(const Hardware& hw, ValidationErrors* errors) {
  const auto* modes = Hardware::DriverP2pMode_descriptor();
  if (!Hardware::DriverP2pMode_IsValid(hw.driver_p2p_mode())) {
    errors->Add("driver_p2p_mode", EnumValueName(modes, hw.driver_p2p_mode()),
                "must be one of DRIVER_DEFAULT (the same as unset), " + AllowedEnumValues(modes));
    return;
  }
  if (hw.driver_p2p_mode() != Hardware::BAR1_FORCED) return;
  for (int i = 0; i < hw.gpu_models_size(); ++i) {
    const config::GpuModel& m = hw.gpu_models(i);
    if (!net::Bar1P2pSupported(m.arch()))
      errors->Add("driver_p2p_mode", "BAR1_FORCED",
                  fmt::format("gpu_models[{}] ({}) is arch \"{}\": the driver has BAR1 P2P only for sm90 and later "
                              "(docs/reference/peer-access.md); use DRIVER_DEFAULT or NO_PCIE_P2P",
                              i, m.name(), m.arch()));
  }
}

void CheckHardwareFields(const config::Hardware& hardware, ValidationErrors* errors, HardwareIndex* index) {
  CheckDriverP2pMode(hardware, errors);
  CheckGpuModels(hardware, errors, &index->models);
  CheckNodes(hardware, index->models, errors, &index->nodes);
  CheckLinks(hardware, index->nodes, errors);
}

void CheckHostMemory(const net::Topology& t, ValidationErrors* errors) {
  for (int i = 0; i < static_cast<int>(t.nodes.size()); ++i) {
    const net::Node& n = t.nodes[i];
    if (n.kind != net::NodeKind::kHostMemory) continue;
    const std::string path = fmt::format("nodes[{}] ({})", i, n.name);
    bool linked = false;
    for (const net::Link& l : t.links) {
      if (l.kind != net::LinkKind::kMemory || (l.a != i && l.b != i)) continue;
      const net::Node& cpu = t.nodes[l.a == i ? l.b : l.a];
      linked = true;
      if (cpu.socket != n.socket) {
        errors->Add(path + ".socket", std::to_string(n.socket),
                    fmt::format("must equal the socket of its root complex {} ({})", cpu.name, cpu.socket));
      }
    }
    if (!linked) {
      errors->AddPlain(path + ": HOST_MEMORY needs a MEMORY link to a CPU_ROOT_COMPLEX; none found");
    }
  }
  // Host copies and NCCL's SHM transport stage through the memory of the GPU's socket.
  for (int g = 0; g < t.num_gpus(); ++g) {
    const net::Node& n = t.nodes[t.gpus[g]];
    if (t.HostMemoryOfSocket(n.socket) >= 0) continue;
    errors->AddPlain(fmt::format(
        "nodes[{}] ({}): socket {} has no HOST_MEMORY node; host copies and NCCL's SHM transport go through "
        "the memory of the GPU's socket: add one (kind: HOST_MEMORY, socket: {}) with a MEMORY link to that "
        "socket's CPU_ROOT_COMPLEX",
        t.gpus[g], n.name, n.socket, n.socket));
  }
}

void CheckGpusConnected(const net::Topology& t, ValidationErrors* errors) {
  // Work in O(nodes + links) when one component joins every GPU and host memory (the usual box);
  // else pair by pair, each pair a look at two short lists (no search per GPU).
  const net::Reachability reach(t);
  std::vector<int> endpoints = t.gpus;
  for (int m = 0; m < static_cast<int>(t.nodes.size()); ++m)
    if (t.nodes[m].kind == net::NodeKind::kHostMemory) endpoints.push_back(m);
  if (reach.CommonComponent(endpoints) >= 0) return;
  constexpr int kMaxReported = 8;
  int missing = 0;
  for (int i = 0; i < t.num_gpus(); ++i) {
    for (int j = i + 1; j < t.num_gpus(); ++j) {
      if (reach.Reachable(t.gpus[i], t.gpus[j])) continue;
      if (++missing > kMaxReported) continue;
      errors->AddPlain(
          fmt::format("no route between GPUs {} and {} (nodes[{}] and nodes[{}]): every pair of GPUs must be "
                      "joined by links through PCIE_SWITCH, CPU_ROOT_COMPLEX or NVSWITCH nodes (traffic never "
                      "passes through a GPU or HOST_MEMORY)",
                      t.nodes[t.gpus[i]].name, t.nodes[t.gpus[j]].name, t.gpus[i], t.gpus[j]));
    }
  }
  if (missing > kMaxReported) {
    errors->AddPlain(fmt::format("... and {} more GPU pairs with no route", missing - kMaxReported));
  }
  // Every GPU sits on PCIe under a root complex: host copies, NCCL's SHM transport and mapped host
  // buffers go from any GPU to the memory of any socket (a box of GPUs joined only by NVLink once
  // loaded and failed a CHECK at its first SHM transfer).
  int unhosted = 0;
  for (int i = 0; i < t.num_gpus(); ++i) {
    for (int m = 0; m < static_cast<int>(t.nodes.size()); ++m) {
      if (t.nodes[m].kind != net::NodeKind::kHostMemory || reach.Reachable(t.gpus[i], m)) continue;
      if (++unhosted > kMaxReported) continue;
      errors->AddPlain(
          fmt::format("no route from GPU {} (nodes[{}]) to host memory {} (nodes[{}]): every GPU needs a PCIe path to "
                      "a CPU_ROOT_COMPLEX, and the sockets a CPU_INTERCONNECT between them (host copies and NCCL's SHM "
                      "transport reach every socket's memory)",
                      t.nodes[t.gpus[i]].name, t.gpus[i], t.nodes[m].name, m));
    }
  }
  if (unhosted > kMaxReported) {
    errors->AddPlain(fmt::format("... and {} more GPU-host memory pairs with no route", unhosted - kMaxReported));
  }
}

}  // namespace specsim::io
