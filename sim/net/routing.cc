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
  adjacency_.resize(n);
  for (int l = 0; l < static_cast<int>(topology.links.size()); ++l) {
    const Link& link = topology.links[l];
    SPECSIM_CHECK(link.a >= 0 && link.a < n && link.b >= 0 && link.b < n) << "link " << l;
    adjacency_[link.a].push_back({link.b, Hop{l, 0}});
    adjacency_[link.b].push_back({link.a, Hop{l, 1}});
  }
  trees_.resize(n);
}

const Router::SearchTree& Router::TreeOf(int src) const {
  std::unique_ptr<SearchTree>& slot = trees_[src];
  if (slot != nullptr) return *slot;
  const int n = static_cast<int>(topology_.nodes.size());
  // Breadth-first search from src over the links `usable` admits: shortest in hops, first-listed
  // link wins ties.
  auto search = [&](auto usable, std::vector<int>* prev_node, std::vector<Hop>* prev_hop) {
    prev_node->assign(n, -1);
    prev_hop->assign(n, Hop{-1, 0});
    std::vector<bool> seen(n, false);
    std::deque<int> frontier{src};
    seen[src] = true;
    while (!frontier.empty()) {
      int u = frontier.front();
      frontier.pop_front();
      if (u != src && !Forwards(topology_.nodes[u].kind)) continue;
      for (const auto& [v, hop] : adjacency_[u]) {
        if (seen[v] || !usable(topology_.links[hop.link])) continue;
        seen[v] = true;
        (*prev_node)[v] = u;
        (*prev_hop)[v] = hop;
        frontier.push_back(v);
      }
    }
  };
  auto tree = std::make_unique<SearchTree>();
  search([](const Link&) { return true; }, &tree->prev_node, &tree->prev_hop);
  // GPU-to-GPU traffic over NVLink when the two GPUs are joined by NVLink / NVSwitch alone, as the
  // CUDA driver and NCCL route it, even where a PCIe path of as few hops exists.
  if (topology_.nodes[src].kind == NodeKind::kGpu)
    search([](const Link& l) { return l.kind == LinkKind::kNvLink; }, &tree->nv_prev_node, &tree->nv_prev_hop);
  slot = std::move(tree);
  return *slot;
}

bool Router::ReachableLocked(int src, int dst) const {
  const int n = static_cast<int>(topology_.nodes.size());
  if (src < 0 || dst < 0 || src >= n || dst >= n) return false;
  if (src == dst) return true;
  return TreeOf(src).prev_hop[dst].link >= 0;
}

bool Router::Reachable(int src, int dst) const {
  std::lock_guard<std::mutex> lock(mu_);
  return ReachableLocked(src, dst);
}

const Path& Router::Route(int src, int dst) const {
  std::lock_guard<std::mutex> lock(mu_);
  SPECSIM_CHECK(ReachableLocked(src, dst)) << "no route from node " << src << " to node " << dst;
  const int64_t key = static_cast<int64_t>(src) * static_cast<int64_t>(topology_.nodes.size()) + dst;
  std::unique_ptr<Path>& slot = paths_[key];
  if (slot != nullptr) return *slot;
  const SearchTree& tree = TreeOf(src);
  const bool nv = !tree.nv_prev_hop.empty() && dst != src && topology_.nodes[dst].kind == NodeKind::kGpu &&
                  tree.nv_prev_hop[dst].link >= 0;
  const std::vector<int>& pn = nv ? tree.nv_prev_node : tree.prev_node;
  const std::vector<Hop>& ph = nv ? tree.nv_prev_hop : tree.prev_hop;
  auto path = std::make_unique<Path>();
  path->src = src;
  path->dst = dst;
  for (int v = dst; v != src; v = pn[v]) {
    path->hops.push_back(ph[v]);
    path->nodes.push_back(v);
  }
  path->nodes.push_back(src);
  std::reverse(path->hops.begin(), path->hops.end());
  std::reverse(path->nodes.begin(), path->nodes.end());
  const bool peer_to_peer =
      topology_.nodes[src].kind != NodeKind::kHostMemory && topology_.nodes[dst].kind != NodeKind::kHostMemory;
  for (const Hop& hop : path->hops) path->latency_ns += topology_.links[hop.link].latency_ns;
  for (size_t i = 1; i + 1 < path->nodes.size(); ++i) {
    const Node& node = topology_.nodes[path->nodes[i]];
    path->latency_ns += node.forward_latency_ns;
    if (peer_to_peer && node.kind == NodeKind::kCpuRootComplex) path->forwarding_cpus.push_back(path->nodes[i]);
  }
  slot = std::move(path);
  return *slot;
}

PathClass Router::GpuPathClass(int gpu_i, int gpu_j) const {
  // Read off the search tree (the route's hops and nodes, walked back from the destination)
  // without building the path: planning asks for every pair.
  const int gpus = topology_.num_gpus();
  const size_t cell = static_cast<size_t>(gpu_i) * gpus + gpu_j;
  const int src = topology_.gpus[gpu_i], dst = topology_.gpus[gpu_j];
  std::lock_guard<std::mutex> lock(mu_);
  if (gpu_path_class_.empty()) gpu_path_class_.assign(static_cast<size_t>(gpus) * gpus, -1);
  if (gpu_path_class_[cell] >= 0) return static_cast<PathClass>(gpu_path_class_[cell]);
  SPECSIM_CHECK(ReachableLocked(src, dst)) << "no route from node " << src << " to node " << dst;
  const SearchTree& tree = TreeOf(src);
  const bool nv = !tree.nv_prev_hop.empty() && dst != src && tree.nv_prev_hop[dst].link >= 0;
  const std::vector<int>& pn = nv ? tree.nv_prev_node : tree.prev_node;
  const std::vector<Hop>& ph = nv ? tree.nv_prev_hop : tree.prev_hop;
  bool all_nvlink = dst != src;
  bool crosses_sockets = false;
  bool through_cpu = false;
  int switches = 0;
  for (int v = dst; v != src; v = pn[v]) {
    const LinkKind kind = topology_.links[ph[v].link].kind;
    if (kind != LinkKind::kNvLink) all_nvlink = false;
    if (kind == LinkKind::kCpuInterconnect) crosses_sockets = true;
    const int u = pn[v];
    if (u == src) continue;  // intermediate nodes only
    const NodeKind node = topology_.nodes[u].kind;
    if (node == NodeKind::kCpuRootComplex) through_cpu = true;
    if (node == NodeKind::kPcieSwitch) ++switches;
  }
  PathClass c;
  if (all_nvlink)
    c = PathClass::kNvLink;
  else if (crosses_sockets)
    c = PathClass::kSys;
  else if (through_cpu)
    c = PathClass::kPhb;
  else
    c = switches <= 1 ? PathClass::kPix : PathClass::kPxb;
  gpu_path_class_[cell] = static_cast<int8_t>(c);
  return c;
}

Reachability::Reachability(const Topology& t) {
  const int n = static_cast<int>(t.nodes.size());
  // Union-find over the forwarding nodes, joined by the links between two of them.
  std::vector<int> parent(n);
  for (int v = 0; v < n; ++v) parent[v] = v;
  auto find = [&](int v) {
    while (parent[v] != v) v = parent[v] = parent[parent[v]];
    return v;
  };
  for (const Link& l : t.links)
    if (Forwards(t.nodes[l.a].kind) && Forwards(t.nodes[l.b].kind)) parent[find(l.a)] = find(l.b);
  component_.assign(n, -1);
  touches_.assign(n, {});
  direct_peers_.assign(n, {});
  for (int v = 0; v < n; ++v) {
    if (!Forwards(t.nodes[v].kind)) continue;
    component_[v] = find(v);
    touches_[v].push_back(component_[v]);
  }
  for (const Link& l : t.links) {
    const bool fa = Forwards(t.nodes[l.a].kind), fb = Forwards(t.nodes[l.b].kind);
    if (fa && !fb) touches_[l.b].push_back(component_[l.a]);
    if (fb && !fa) touches_[l.a].push_back(component_[l.b]);
    if (!fa && !fb) {
      direct_peers_[l.a].push_back(l.b);
      direct_peers_[l.b].push_back(l.a);
    }
  }
  for (std::vector<int>& c : touches_) {
    std::sort(c.begin(), c.end());
    c.erase(std::unique(c.begin(), c.end()), c.end());
  }
}

bool Reachability::Reachable(int a, int b) const {
  const int n = static_cast<int>(component_.size());
  if (a < 0 || b < 0 || a >= n || b >= n) return false;
  if (a == b) return true;
  const std::vector<int>& peers = direct_peers_[a];
  if (std::find(peers.begin(), peers.end(), b) != peers.end()) return true;
  // A forwarding node reaches its own component's nodes and what they touch; so does an endpoint
  // through the components it touches.
  const std::vector<int>& x = touches_[a];
  const std::vector<int>& y = touches_[b];
  for (size_t i = 0, j = 0; i < x.size() && j < y.size();) {
    if (x[i] == y[j]) return true;
    if (x[i] < y[j])
      ++i;
    else
      ++j;
  }
  return false;
}

int Reachability::CommonComponent(const std::vector<int>& nodes) const {
  if (nodes.empty()) return -1;
  for (int c : touches_[nodes.front()]) {
    bool all = true;
    for (size_t k = 1; k < nodes.size() && all; ++k)
      all = std::binary_search(touches_[nodes[k]].begin(), touches_[nodes[k]].end(), c);
    if (all) return c;
  }
  return -1;
}

}  // namespace specsim::net
