// The server as the simulator sees it: nodes (GPUs, PCIe switches, CPU root complexes, host
// memory, NVSwitches) joined by split-duplex links. Plain data, built by sim/io from a hardware
// textproto and validated there; the simulator only CHECKs invariants.
//
// Link direction: direction 0 carries traffic a -> b, direction 1 carries b -> a. Each direction
// is an independent resource of bandwidth_gbps * payload_efficiency payload GB/s.
#pragma once

#include <string>
#include <vector>

#include "sim/core/gpu_spec.h"

namespace specsim::net {

enum class NodeKind { kGpu, kPcieSwitch, kCpuRootComplex, kHostMemory, kNvSwitch };
enum class LinkKind { kPcie, kCpuInterconnect, kNvLink, kMemory };
enum class CpuVendor { kUnknown, kAmd, kIntel, kArm };
// The NVIDIA driver's PCIe P2P setup (hardware.proto Hardware.DriverP2pMode; peer_access.h).
enum class DriverP2pMode { kDriverDefault, kBar1Forced, kNoPcieP2p };

const char* NodeKindName(NodeKind kind);
const char* LinkKindName(LinkKind kind);

// The GPU model of GPU nodes (Topology::gpu_specs): sim/core/gpu_spec.h, shared with sim/compute.
using GpuSpec = ::specsim::GpuSpec;

struct Node {
  std::string name;
  NodeKind kind = NodeKind::kGpu;
  int socket = 0;
  int gpu_spec = -1;                      // index into Topology::gpu_specs, GPUs only
  double forward_latency_ns = 0;          // crossing this node
  double p2p_forward_bandwidth_gbps = 0;  // CPU root complex; 0 = unlimited
  double p2p_forward_collapse_per_flow = 0;
};

struct Link {
  int a = -1;  // node index
  int b = -1;  // node index
  LinkKind kind = LinkKind::kPcie;
  double bandwidth_gbps = 0;      // raw, per direction
  double latency_ns = 0;          // one way
  double payload_efficiency = 1;  // (0, 1]
  int pcie_gen = 0;
  int pcie_lanes = 0;
  int nvlinks = 0;  // NVLINK links: bonded NVLink links (NV#), 0 = unknown

  double payload_gbps() const { return bandwidth_gbps * payload_efficiency; }
};

struct Topology {
  std::string name;
  CpuVendor cpu_vendor = CpuVendor::kUnknown;
  DriverP2pMode driver_p2p_mode = DriverP2pMode::kDriverDefault;
  std::vector<GpuSpec> gpu_specs;
  std::vector<Node> nodes;
  std::vector<Link> links;
  // gpus[i] is the node index of GPU i (GPUs numbered in the order they appear in the file).
  std::vector<int> gpus;

  int num_gpus() const { return static_cast<int>(gpus.size()); }
  const GpuSpec& gpu_spec(int gpu) const { return gpu_specs[nodes[gpus[gpu]].gpu_spec]; }
  // Node index by name, or -1.
  int FindNode(const std::string& name) const;
  // The HOST_MEMORY node of a socket, or -1 if the topology has none there. O(nodes): per-flow
  // callers look it up in HostMemoryOfEachNode's table instead.
  int HostMemoryOfSocket(int socket) const;
  // "a<->b" for link i, used in reports.
  std::string LinkName(int link) const;
  // "a->b" for one direction of link i.
  std::string DirectedLinkName(int link, int direction) const;
};

// Per node: the HOST_MEMORY node of the node's socket, or -1 (HostMemoryOfSocket for every node,
// in O(nodes)).
std::vector<int> HostMemoryOfEachNode(const Topology& t);
// Per node: its GPU index (t.gpus[index] == node), or -1 for nodes that are not GPUs.
std::vector<int> GpuIndexOfEachNode(const Topology& t);

}  // namespace specsim::net
