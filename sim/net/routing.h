// Routing: the path between two nodes is the shortest path in hops over the topology graph (ties
// broken by link order, so routes are deterministic), as PCIe's tree routing and a socket link
// give on real servers, except that two GPUs joined by NVLink (directly or through NVSwitches)
// always talk over NVLink, even where a PCIe path of as few hops exists (the CUDA driver's and
// NCCL's choice; a 2-GPU NVLink box has both gpu0-cpu-gpu1 and gpu0-nvswitch-gpu1 at 2 hops). A
// path is a list of directed link hops.
//
// Path classes follow NCCL (src/graph/topo.h): between two GPUs,
//   kNvLink  only NVLink / NVSwitch hops
//   kPix     through at most one PCIe switch
//   kPxb     through several PCIe switches, no CPU
//   kPhb     through a CPU root complex (host bridge) of one socket
//   kSys     across the CPU interconnect between sockets
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/net/topology.h"

namespace specsim::net {

enum class PathClass { kNvLink = 0, kPix = 1, kPxb = 2, kPhb = 3, kSys = 4 };

const char* PathClassName(PathClass c);  // "NV", "PIX", "PXB", "PHB", "SYS"

struct Hop {
  int link = -1;
  int direction = 0;  // 0: a -> b, 1: b -> a
  bool operator==(const Hop&) const = default;
};

struct Path {
  int src = -1;  // node
  int dst = -1;  // node
  std::vector<Hop> hops;
  std::vector<int> nodes;  // src, intermediate nodes..., dst
  double latency_ns = 0;   // one way: link latencies + forward latency of intermediate nodes
  // Intermediate CPU root complexes the path is forwarded through between two non-memory links
  // (GPU-to-GPU P2P through a CPU): they charge its p2p forwarding resource.
  std::vector<int> forwarding_cpus;
  bool empty() const { return hops.empty(); }
};

// Routes are built on first use and kept (thread-safe): constructing a router costs
// O(nodes + links), a route's first lookup one breadth-first search from its source (kept for
// that source's other routes) and the path itself. A 1,024-GPU fabric never builds the all-pairs
// table it does not use.
class Router {
 public:
  explicit Router(const Topology& topology);
  Router(const Router&) = delete;
  Router& operator=(const Router&) = delete;

  // The route from node src to node dst; empty when src == dst. REQUIRES: Reachable(src, dst).
  const Path& Route(int src, int dst) const;
  bool Reachable(int src, int dst) const;
  // NCCL's path class between GPU i and GPU j (GPU indices, not nodes); kept per pair.
  PathClass GpuPathClass(int gpu_i, int gpu_j) const;

  const Topology& topology() const { return topology_; }

 private:
  // Breadth-first search from one source: per node the hop that reached it (link -1: not
  // reached), over any link and, from a GPU, over NVLink / NVSwitch links alone.
  struct SearchTree {
    std::vector<int> prev_node;
    std::vector<Hop> prev_hop;
    std::vector<int> nv_prev_node;  // empty unless the source is a GPU
    std::vector<Hop> nv_prev_hop;
  };
  const SearchTree& TreeOf(int src) const;  // REQUIRES: mu_ held
  bool ReachableLocked(int src, int dst) const;

  const Topology& topology_;
  std::vector<std::vector<std::pair<int, Hop>>> adjacency_;  // per node, in link order
  mutable std::mutex mu_;
  mutable std::vector<std::unique_ptr<SearchTree>> trees_;            // per source node
  mutable std::unordered_map<int64_t, std::unique_ptr<Path>> paths_;  // by src * nodes + dst
  mutable std::vector<int8_t> gpu_path_class_;                        // [gpu_i * gpus + gpu_j], -1 until asked
};

// Which nodes reach which, as the router's searches would find it, without a search per source:
// the forwarding nodes (PCIe switches, CPU root complexes, NVSwitches) joined by links among
// themselves form components, and two nodes reach each other when they are linked directly or
// touch a common component (traffic never passes through a GPU or HOST_MEMORY). Building it costs
// O(nodes + links); a query, the two nodes' adjacent components (a few). For the hardware
// loader's every-pair checks, whose router searches grew as GPUs squared in time and memory.
class Reachability {
 public:
  explicit Reachability(const Topology& topology);
  // Router(topology).Reachable(a, b), for any two nodes.
  bool Reachable(int a, int b) const;
  // A component every node of `nodes` touches, or -1: then every pair of them is reachable.
  int CommonComponent(const std::vector<int>& nodes) const;

 private:
  std::vector<int> component_;                  // per node: its component (forwarding nodes), else -1
  std::vector<std::vector<int>> touches_;       // per node: the components it is in or linked to, sorted
  std::vector<std::vector<int>> direct_peers_;  // per non-forwarding node: non-forwarding nodes linked to it
};

}  // namespace specsim::net
