// Small hand-built topologies for tests (header-only, test use only).
#pragma once

#include <string>

#include "sim/net/topology.h"

namespace specsim::net::testing {

inline GpuSpec TestGpu() {
  GpuSpec g;
  g.name = "test-gpu";
  g.arch = "sm90";
  g.sm_count = 100;
  g.memory_gib = 80;
  g.memory_bandwidth_gbps = 3000;
  g.bf16_dense_tflops = 1000;
  g.copy_engines_per_direction = 1;
  return g;
}

inline int AddNode(Topology& t, std::string name, NodeKind kind, int socket = 0) {
  Node n;
  n.name = std::move(name);
  n.kind = kind;
  n.socket = socket;
  if (kind == NodeKind::kGpu) {
    n.gpu_spec = 0;
    t.gpus.push_back(static_cast<int>(t.nodes.size()));
  }
  t.nodes.push_back(n);
  return static_cast<int>(t.nodes.size()) - 1;
}

inline int AddLink(Topology& t, int a, int b, double gbps, double latency_ns, LinkKind kind = LinkKind::kPcie) {
  Link l;
  l.a = a;
  l.b = b;
  l.kind = kind;
  l.bandwidth_gbps = gbps;
  l.latency_ns = latency_ns;
  l.payload_efficiency = 1.0;
  t.links.push_back(l);
  return static_cast<int>(t.links.size()) - 1;
}

// n GPUs joined in a directed-friendly cycle: gpu i <-> gpu (i+1) % n (n >= 3), each link of
// `gbps` and `latency_ns`. Kernel writes between neighbours use only their own link.
inline Topology RingOfGpus(int n, double gbps, double latency_ns) {
  Topology t;
  t.name = "ring";
  t.gpu_specs.push_back(TestGpu());
  for (int i = 0; i < n; ++i) AddNode(t, "gpu" + std::to_string(i), NodeKind::kGpu);
  for (int i = 0; i < n; ++i) AddLink(t, i, (i + 1) % n, gbps, latency_ns, LinkKind::kNvLink);
  return t;
}

// k GPUs under one PCIe switch, the switch on a CPU root complex with host memory.
inline Topology SwitchBox(int k, double gbps, double latency_ns) {
  Topology t;
  t.name = "switch-box";
  t.gpu_specs.push_back(TestGpu());
  int cpu = AddNode(t, "cpu0", NodeKind::kCpuRootComplex);
  int mem = AddNode(t, "mem0", NodeKind::kHostMemory);
  AddLink(t, cpu, mem, 400, 50, LinkKind::kMemory);
  int sw = AddNode(t, "sw0", NodeKind::kPcieSwitch);
  AddLink(t, sw, cpu, gbps, latency_ns);
  for (int i = 0; i < k; ++i) {
    int g = AddNode(t, "gpu" + std::to_string(i), NodeKind::kGpu);
    AddLink(t, g, sw, gbps, latency_ns);
  }
  return t;
}

}  // namespace specsim::net::testing
