// The route pool: the fabric resources and one-way latency of every route a flow has taken,
// built once per fabric and looked up in O(1) per flow.
//
// A route is (source node, destination node, host-staged or not). Its resources are the directed
// links of its path (2 * link + direction) and the P2P forwarding resource of each CPU root
// complex it is forwarded through (those with a forwarding limit); a host-staged route goes
// source -> the HOST_MEMORY of the destination's socket -> destination (NCCL_SHM_LOCALITY's
// default, receiver side) and sums both paths. Routes are stored in a deque (their addresses are
// stable: flows and flow classes point at them) and their resources one after another in chunks
// that never move, in the order the routes were built: routes built as a schedule's flows start
// lie in start order, so a pass over the flows reads them in order.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "sim/net/routing.h"
#include "sim/net/topology.h"

namespace specsim::net {

struct RouteResources {
  const int* resources = nullptr;  // num_resources of them, in the pool's chunks
  int num_resources = 0;
  std::vector<int> forwarding_cpus;  // resources whose capacity depends on the flow count
  double latency_ns = 0;
  // The fabric's flow classes on this route (one per rate cap met), and the class found last with
  // its cap, checked first: flows of one route mostly share a cap, and this saves reading
  // `classes` and a class per flow (two cache misses on a 256-rank fabric).
  std::vector<int> classes;
  int last_class = -1;
  double last_class_cap = 0;
};

class RoutePool {
 public:
  // `cpu_resource_of_node`: per node, its P2P forwarding resource or -1. The topology and router
  // must outlive the pool.
  RoutePool(const Topology* topology, const Router* router, std::vector<int> cpu_resource_of_node);

  // The route's resources, built on first use. REQUIRES: a route exists (the hardware loader
  // checks every GPU reaches every other and host memory); for a host-staged route, the
  // destination's socket has a HOST_MEMORY node.
  RouteResources& Of(int src_node, int dst_node, bool host_staged);

  size_t size() const { return routes_.size(); }

 private:
  // A copy of `resources` in the chunks (nullptr for none).
  const int* Pool(const std::vector<int>& resources);

  static constexpr size_t kChunkInts = size_t{1} << 14;
  const Topology* topology_;
  const Router* router_;
  std::vector<int> cpu_resource_of_node_;
  std::vector<int> host_memory_of_node_;
  std::deque<RouteResources> routes_;
  // Per source node, per (dst, staged) the route's index in routes_ or -1: a dense row of
  // 2 x nodes ints allocated at the source's first lookup (null until then), so a lookup is two
  // array accesses and the memory grows with the sources used, not with the box's nodes squared.
  std::vector<std::unique_ptr<int32_t[]>> route_of_source_;
  std::vector<std::unique_ptr<int[]>> chunks_;
  size_t chunk_used_ = 0;
  std::vector<int> scratch_;
};

}  // namespace specsim::net
