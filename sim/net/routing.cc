#include "sim/net/routing.h"

#include <algorithm>
#include <deque>
#include <tuple>

#include "sim/core/check.h"

namespace specsim::net {

const char* PathClassName(PathClass c) {
  switch (c) {
    case PathClass::kNvLink: return "NV";
    case PathClass::kPix: return "PIX";
    case PathClass::kPxb: return "PXB";
    case PathClass::kPhb: return "PHB";
    case PathClass::kSys: return "SYS";
  }
  return "?";
}

namespace {

// GPUs and host memory are endpoints: traffic never passes through them.
bool Forwards(NodeKind kind) {
  return kind == NodeKind::kPcieSwitch || kind == NodeKind::kCpuRootComplex || kind == NodeKind::kNvSwitch;
}

}  // namespace

Router::Router(const Topology& topology) : topology_(topology) {
  const int n = static_cast<int>(topology.nodes.size());
  // adjacency in link order: (neighbour, hop)
  std::vector<std::vector<std::pair<int, Hop>>> adj(n);
  for (int l = 0; l < static_cast<int>(topology.links.size()); ++l) {
    const Link& link = topology.links[l];
    SPECSIM_CHECK(link.a >= 0 && link.a < n && link.b >= 0 && link.b < n) << "link " << l;
    adj[link.a].push_back({link.b, Hop{l, 0}});
    adj[link.b].push_back({link.a, Hop{l, 1}});
  }
  routes_.assign(n, std::vector<Path>(n));
  reachable_.assign(n, std::vector<bool>(n, false));
  // Breadth-first search from src over the links `usable` admits: shortest in hops, first-listed
  // link wins ties. Returns, per node, the hop that reached it (link -1: not reached).
  auto search = [&](int src, auto usable) {
    std::vector<int> prev_node(n, -1);
    std::vector<Hop> prev_hop(n, Hop{-1, 0});
    std::vector<bool> seen(n, false);
    std::deque<int> frontier{src};
    seen[src] = true;
    while (!frontier.empty()) {
      int u = frontier.front();
      frontier.pop_front();
      if (u != src && !Forwards(topology.nodes[u].kind)) continue;
      for (const auto& [v, hop] : adj[u]) {
        if (seen[v] || !usable(topology.links[hop.link])) continue;
        seen[v] = true;
        prev_node[v] = u;
        prev_hop[v] = hop;
        frontier.push_back(v);
      }
    }
    return std::make_pair(prev_node, prev_hop);
  };
  auto any_link = [](const Link&) { return true; };
  auto nvlink_only = [](const Link& l) { return l.kind == LinkKind::kNvLink; };
  for (int src = 0; src < n; ++src) {
    auto [prev_node, prev_hop] = search(src, any_link);
    // GPU-to-GPU traffic over NVLink when the two GPUs are joined by NVLink / NVSwitch alone, as the
    // CUDA driver and NCCL route it, even where a PCIe path of as few hops exists.
    const bool src_gpu = topology.nodes[src].kind == NodeKind::kGpu;
    std::vector<int> nv_prev_node;
    std::vector<Hop> nv_prev_hop;
    if (src_gpu) std::tie(nv_prev_node, nv_prev_hop) = search(src, nvlink_only);
    for (int dst = 0; dst < n; ++dst) {
      const bool nv = src_gpu && dst != src && topology.nodes[dst].kind == NodeKind::kGpu && nv_prev_hop[dst].link >= 0;
      const std::vector<int>& pn = nv ? nv_prev_node : prev_node;
      const std::vector<Hop>& ph = nv ? nv_prev_hop : prev_hop;
      if (dst != src && ph[dst].link < 0) continue;
      reachable_[src][dst] = true;
      Path& path = routes_[src][dst];
      path.src = src;
      path.dst = dst;
      for (int v = dst; v != src; v = pn[v]) {
        path.hops.push_back(ph[v]);
        path.nodes.push_back(v);
      }
      path.nodes.push_back(src);
      std::reverse(path.hops.begin(), path.hops.end());
      std::reverse(path.nodes.begin(), path.nodes.end());
      const bool peer_to_peer = topology.nodes[src].kind != NodeKind::kHostMemory &&
                                topology.nodes[dst].kind != NodeKind::kHostMemory;
      for (const Hop& hop : path.hops) path.latency_ns += topology.links[hop.link].latency_ns;
      for (size_t i = 1; i + 1 < path.nodes.size(); ++i) {
        const Node& node = topology.nodes[path.nodes[i]];
        path.latency_ns += node.forward_latency_ns;
        if (peer_to_peer && node.kind == NodeKind::kCpuRootComplex) path.forwarding_cpus.push_back(path.nodes[i]);
      }
    }
  }
}

const Path& Router::Route(int src, int dst) const {
  SPECSIM_CHECK(Reachable(src, dst)) << "no route from node " << src << " to node " << dst;
  return routes_[src][dst];
}

bool Router::Reachable(int src, int dst) const {
  const int n = static_cast<int>(routes_.size());
  return src >= 0 && dst >= 0 && src < n && dst < n && reachable_[src][dst];
}

PathClass Router::GpuPathClass(int gpu_i, int gpu_j) const {
  const Path& path = Route(topology_.gpus[gpu_i], topology_.gpus[gpu_j]);
  bool all_nvlink = !path.hops.empty();
  bool crosses_sockets = false;
  bool through_cpu = false;
  int switches = 0;
  for (const Hop& hop : path.hops) {
    LinkKind kind = topology_.links[hop.link].kind;
    if (kind != LinkKind::kNvLink) all_nvlink = false;
    if (kind == LinkKind::kCpuInterconnect) crosses_sockets = true;
  }
  for (size_t i = 1; i + 1 < path.nodes.size(); ++i) {
    NodeKind kind = topology_.nodes[path.nodes[i]].kind;
    if (kind == NodeKind::kCpuRootComplex) through_cpu = true;
    if (kind == NodeKind::kPcieSwitch) ++switches;
  }
  if (all_nvlink) return PathClass::kNvLink;
  if (crosses_sockets) return PathClass::kSys;
  if (through_cpu) return PathClass::kPhb;
  return switches <= 1 ? PathClass::kPix : PathClass::kPxb;
}

}  // namespace specsim::net
