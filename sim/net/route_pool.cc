#include "sim/net/route_pool.h"

#include <algorithm>
#include <utility>

#include "sim/core/check.h"

namespace specsim::net {

RoutePool::RoutePool(const Topology* topology, const Router* router, std::vector<int> cpu_resource_of_node)
    : topology_(topology),
      router_(router),
      cpu_resource_of_node_(std::move(cpu_resource_of_node)),
      host_memory_of_node_(HostMemoryOfEachNode(*topology)),
      route_of_source_(topology->nodes.size()) {
  SPECSIM_CHECK_EQ(cpu_resource_of_node_.size(), topology->nodes.size());
}

const int* RoutePool::Pool(const std::vector<int>& resources) {
  if (resources.empty()) return nullptr;
  if (chunks_.empty() || chunk_used_ + resources.size() > kChunkInts) {
    chunks_.push_back(std::make_unique<int[]>(std::max(kChunkInts, resources.size())));
    chunk_used_ = 0;
  }
  int* pooled = chunks_.back().get() + chunk_used_;
  std::copy(resources.begin(), resources.end(), pooled);
  chunk_used_ += resources.size();
  return pooled;
}

RouteResources& RoutePool::Of(int src_node, int dst_node, bool host_staged) {
  const size_t n = topology_->nodes.size();
  std::unique_ptr<int32_t[]>& row = route_of_source_[src_node];
  if (row == nullptr) {
    row = std::make_unique<int32_t[]>(2 * n);
    std::fill_n(row.get(), 2 * n, -1);
  }
  int32_t& index = row[2 * static_cast<size_t>(dst_node) + (host_staged ? 1 : 0)];
  if (index >= 0) return routes_[index];
  RouteResources route;
  std::vector<int>& resources = scratch_;
  resources.clear();
  auto add_path = [&](const Path& path) {
    for (const Hop& hop : path.hops) resources.push_back(2 * hop.link + hop.direction);
    for (int cpu : path.forwarding_cpus) {
      if (cpu_resource_of_node_[cpu] >= 0) {
        resources.push_back(cpu_resource_of_node_[cpu]);
        route.forwarding_cpus.push_back(cpu_resource_of_node_[cpu]);
      }
    }
    route.latency_ns += path.latency_ns;
  };
  if (host_staged) {
    const int memory = host_memory_of_node_[dst_node];
    SPECSIM_CHECK_GE(memory, 0) << "host-staged transfer to " << topology_->nodes[dst_node].name
                                << " but its socket has no HOST_MEMORY node";
    add_path(router_->Route(src_node, memory));
    add_path(router_->Route(memory, dst_node));
  } else if (src_node != dst_node) {
    add_path(router_->Route(src_node, dst_node));
  }
  route.resources = Pool(resources);
  route.num_resources = static_cast<int>(resources.size());
  index = static_cast<int32_t>(routes_.size());
  routes_.push_back(std::move(route));
  return routes_.back();
}

}  // namespace specsim::net
