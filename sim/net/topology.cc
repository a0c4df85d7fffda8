// Plain data helpers of net::Topology (see topology.h).
#include "sim/net/topology.h"

#include <map>

#include "sim/core/check.h"

namespace specsim::net {

const char* NodeKindName(NodeKind kind) {
  switch (kind) {
    case NodeKind::kGpu: return "GPU";
    case NodeKind::kPcieSwitch: return "PCIE_SWITCH";
    case NodeKind::kCpuRootComplex: return "CPU_ROOT_COMPLEX";
    case NodeKind::kHostMemory: return "HOST_MEMORY";
    case NodeKind::kNvSwitch: return "NVSWITCH";
  }
  return "UNKNOWN";
}

const char* LinkKindName(LinkKind kind) {
  switch (kind) {
    case LinkKind::kPcie: return "PCIE";
    case LinkKind::kCpuInterconnect: return "CPU_INTERCONNECT";
    case LinkKind::kNvLink: return "NVLINK";
    case LinkKind::kMemory: return "MEMORY";
  }
  return "UNKNOWN";
}

int Topology::FindNode(const std::string& node_name) const {
  for (int i = 0; i < static_cast<int>(nodes.size()); ++i) {
    if (nodes[i].name == node_name) return i;
  }
  return -1;
}

int Topology::HostMemoryOfSocket(int socket) const {
  for (int i = 0; i < static_cast<int>(nodes.size()); ++i) {
    if (nodes[i].kind == NodeKind::kHostMemory && nodes[i].socket == socket) return i;
  }
  return -1;
}

std::vector<int> HostMemoryOfEachNode(const Topology& t) {
  std::map<int, int> memory_of_socket;  // the first HOST_MEMORY node of each socket, as HostMemoryOfSocket
  for (int i = 0; i < static_cast<int>(t.nodes.size()); ++i)
    if (t.nodes[i].kind == NodeKind::kHostMemory) memory_of_socket.emplace(t.nodes[i].socket, i);
  std::vector<int> out(t.nodes.size(), -1);
  for (int i = 0; i < static_cast<int>(t.nodes.size()); ++i) {
    auto it = memory_of_socket.find(t.nodes[i].socket);
    if (it != memory_of_socket.end()) out[i] = it->second;
  }
  return out;
}

std::vector<int> GpuIndexOfEachNode(const Topology& t) {
  std::vector<int> out(t.nodes.size(), -1);
  // The first GPU index of a node, as a search from 0 finds it.
  for (int g = t.num_gpus() - 1; g >= 0; --g) {
    SPECSIM_CHECK(t.gpus[g] >= 0 && t.gpus[g] < static_cast<int>(t.nodes.size())) << "gpu " << g;
    out[t.gpus[g]] = g;
  }
  return out;
}

std::string Topology::LinkName(int link) const {
  SPECSIM_CHECK(link >= 0 && link < static_cast<int>(links.size())) << "link " << link;
  const Link& l = links[link];
  return nodes[l.a].name + "<->" + nodes[l.b].name;
}

std::string Topology::DirectedLinkName(int link, int direction) const {
  SPECSIM_CHECK(link >= 0 && link < static_cast<int>(links.size())) << "link " << link;
  SPECSIM_CHECK(direction == 0 || direction == 1) << "direction " << direction;
  const Link& l = links[link];
  const int from = direction == 0 ? l.a : l.b;
  const int to = direction == 0 ? l.b : l.a;
  return nodes[from].name + "->" + nodes[to].name;
}

}  // namespace specsim::net
