// Plain data helpers of net::Topology (see topology.h).
#include "sim/net/topology.h"

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
