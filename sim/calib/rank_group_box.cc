#include "sim/calib/rank_group_box.h"

#include <string>

namespace specsim::calib {

StatusOr<net::Topology> RankGroupBox(const net::Topology& box, int gpu, int ranks) {
  if (gpu < 0 || gpu >= box.num_gpus())
    return InvalidArgumentError("rank groups on GPU " + std::to_string(gpu) + ": '" + box.name + "' has " +
                                std::to_string(box.num_gpus()) + " GPUs");
  if (ranks < 2) return InvalidArgumentError("rank groups: " + std::to_string(ranks) + " ranks: must be >= 2");
  net::Topology t = box;
  t.name = box.name + " (" + std::to_string(ranks) + " rank groups on GPU " + std::to_string(gpu) + ")";
  const int hub = box.gpus[gpu];
  net::Node& end = t.nodes[hub];
  const int spec = end.gpu_spec;
  const int socket = end.socket;
  const std::string name = end.name;
  end.name = name + "-link";
  end.kind = net::NodeKind::kPcieSwitch;
  end.gpu_spec = -1;
  end.forward_latency_ns = 0;
  // The box's other GPUs stay as nodes of another kind (their links kept, nothing routes to them).
  for (int g = 0; g < box.num_gpus(); ++g) {
    if (g == gpu) continue;
    t.nodes[box.gpus[g]].kind = net::NodeKind::kPcieSwitch;
    t.nodes[box.gpus[g]].gpu_spec = -1;
  }
  t.gpus.clear();
  for (int r = 0; r < ranks; ++r) {
    net::Node n;
    n.name = name + ".rank" + std::to_string(r);
    n.kind = net::NodeKind::kGpu;
    n.socket = socket;
    n.gpu_spec = spec;
    t.nodes.push_back(n);
    const int node = static_cast<int>(t.nodes.size()) - 1;
    net::Link l;
    l.a = node;
    l.b = hub;
    l.kind = net::LinkKind::kPcie;
    l.bandwidth_gbps = 1e6;
    l.latency_ns = 0;
    t.links.push_back(l);
    t.gpus.push_back(node);
  }
  return t;
}

}  // namespace specsim::calib
