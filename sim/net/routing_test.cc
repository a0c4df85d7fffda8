#include "sim/net/routing.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "sim/net/test_topologies.h"

namespace specsim::net {
namespace {

using testing::AddLink;
using testing::AddNode;

// Two sockets, each: cpu, memory, a switch with two GPUs, and one GPU on a root port.
Topology TwoSockets() {
  Topology t;
  t.gpu_specs.push_back(testing::TestGpu());
  for (int s = 0; s < 2; ++s) {
    std::string p = "s" + std::to_string(s);
    int cpu = AddNode(t, p + "cpu", NodeKind::kCpuRootComplex, s);
    int mem = AddNode(t, p + "mem", NodeKind::kHostMemory, s);
    AddLink(t, cpu, mem, 400, 50, LinkKind::kMemory);
    int sw = AddNode(t, p + "sw", NodeKind::kPcieSwitch, s);
    AddLink(t, sw, cpu, 63, 100);
    for (int g = 0; g < 2; ++g) AddLink(t, AddNode(t, p + "g" + std::to_string(g), NodeKind::kGpu, s), sw, 63, 100);
    AddLink(t, AddNode(t, p + "g2", NodeKind::kGpu, s), cpu, 63, 100);
    t.nodes[cpu].forward_latency_ns = 300;
    t.nodes[sw].forward_latency_ns = 100;
  }
  AddLink(t, t.FindNode("s0cpu"), t.FindNode("s1cpu"), 64, 200, LinkKind::kCpuInterconnect);
  return t;
}

TEST(Routing, PathClassesFollowNccl) {
  Topology t = TwoSockets();
  Router r(t);
  // GPU order: s0g0 s0g1 s0g2 s1g0 s1g1 s1g2
  EXPECT_EQ(r.GpuPathClass(0, 1), PathClass::kPix);  // same switch
  EXPECT_EQ(r.GpuPathClass(0, 2), PathClass::kPhb);  // switch -> cpu -> root port
  EXPECT_EQ(r.GpuPathClass(0, 3), PathClass::kSys);  // across sockets
  EXPECT_EQ(r.GpuPathClass(2, 5), PathClass::kSys);
}

TEST(Routing, LatencyAddsLinksAndForwardingNodes) {
  Topology t = TwoSockets();
  Router r(t);
  // s0g0 -> sw (100) -> cpu (100) -> s0g2 (100), crossing sw (100) and cpu (300): 700 ns.
  const Path& p = r.Route(t.gpus[0], t.gpus[2]);
  EXPECT_DOUBLE_EQ(p.latency_ns, 700);
  EXPECT_EQ(p.hops.size(), 3u);
  ASSERT_EQ(p.forwarding_cpus.size(), 1u);
  EXPECT_EQ(p.forwarding_cpus[0], t.FindNode("s0cpu"));
  // Two switch-local GPUs never go through the CPU.
  EXPECT_TRUE(r.Route(t.gpus[0], t.gpus[1]).forwarding_cpus.empty());
  // Traffic to host memory is not P2P forwarding.
  EXPECT_TRUE(r.Route(t.gpus[0], t.FindNode("s0mem")).forwarding_cpus.empty());
}

TEST(Routing, TrafficNeverCrossesAGpuOrMemory) {
  // gpuA - gpuB - gpuC in a line: A cannot reach C through B.
  Topology t;
  t.gpu_specs.push_back(testing::TestGpu());
  int a = AddNode(t, "a", NodeKind::kGpu), b = AddNode(t, "b", NodeKind::kGpu), c = AddNode(t, "c", NodeKind::kGpu);
  AddLink(t, a, b, 10, 1);
  AddLink(t, b, c, 10, 1);
  Router r(t);
  EXPECT_TRUE(r.Reachable(a, b));
  EXPECT_FALSE(r.Reachable(a, c));
}

// Reachability agrees with the router's searches on every node pair of boxes with and without a
// path: two sockets, a GPU line (no passing through a GPU), NVLink-only GPUs beside a PCIe box, a
// memory node on a GPU, and a switch cut off from the rest.
TEST(Reachability, AgreesWithTheRouterOnEveryPair) {
  std::vector<Topology> boxes;
  boxes.push_back(TwoSockets());
  {
    Topology t;
    t.gpu_specs.push_back(testing::TestGpu());
    int a = AddNode(t, "a", NodeKind::kGpu), b = AddNode(t, "b", NodeKind::kGpu), c = AddNode(t, "c", NodeKind::kGpu);
    AddLink(t, a, b, 10, 1);
    AddLink(t, b, c, 10, 1);
    boxes.push_back(t);
  }
  {
    Topology t = TwoSockets();
    int x = AddNode(t, "x", NodeKind::kGpu), y = AddNode(t, "y", NodeKind::kGpu);
    int nvs = AddNode(t, "nvs", NodeKind::kNvSwitch);
    AddLink(t, x, nvs, 450, 1, LinkKind::kNvLink);
    AddLink(t, y, nvs, 450, 1, LinkKind::kNvLink);
    AddLink(t, x, AddNode(t, "xmem", NodeKind::kHostMemory), 10, 1, LinkKind::kMemory);
    int lone = AddNode(t, "lone-sw", NodeKind::kPcieSwitch);
    AddLink(t, lone, AddNode(t, "z", NodeKind::kGpu), 63, 1);
    boxes.push_back(t);
  }
  for (const Topology& t : boxes) {
    const Router router(t);
    const Reachability reach(t);
    const int n = static_cast<int>(t.nodes.size());
    int reachable = 0, unreachable = 0;
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b) {
        ASSERT_EQ(reach.Reachable(a, b), router.Reachable(a, b)) << t.nodes[a].name << " -> " << t.nodes[b].name;
        (router.Reachable(a, b) ? reachable : unreachable)++;
      }
    EXPECT_GT(reachable, 0);
    if (&t != &boxes.front()) EXPECT_GT(unreachable, 0);  // the other boxes have pairs with no path
    EXPECT_FALSE(reach.Reachable(-1, 0));
  }
  // Every GPU and memory of the two-socket box touches one component; the cut-off GPU does not.
  const Reachability two(boxes[0]);
  std::vector<int> ends = boxes[0].gpus;
  ends.push_back(boxes[0].FindNode("s1mem"));
  EXPECT_GE(two.CommonComponent(ends), 0);
  const Reachability three(boxes[2]);
  EXPECT_EQ(three.CommonComponent(boxes[2].gpus), -1);
}

TEST(Routing, DirectionsFollowLinkOrientation) {
  Topology t = TwoSockets();
  Router r(t);
  const Path& up = r.Route(t.gpus[0], t.gpus[1]);
  const Path& down = r.Route(t.gpus[1], t.gpus[0]);
  ASSERT_EQ(up.hops.size(), 2u);
  // gpu0 is link.a of its link: a->b is direction 0 going up.
  EXPECT_EQ(up.hops[0].direction, 0);
  EXPECT_EQ(up.hops[1].direction, 1);
  EXPECT_EQ(down.hops[0].link, up.hops[1].link);
  EXPECT_EQ(down.hops[0].direction, 0);
}

// Issue 9: on the 2x H200 box (each GPU on its own root port and on an NVSwitch) a 64 MiB P2P copy
// was predicted over PCIe (1,225 us) while it ran over NVLink (175 us): the PCIe path listed first
// won the tie at 2 hops.
TEST(Routing, GpuPairsJoinedByNvlinkUseIt) {
  Topology t;
  t.gpu_specs.push_back(testing::TestGpu());
  int cpu = AddNode(t, "cpu0", NodeKind::kCpuRootComplex);
  int mem = AddNode(t, "mem0", NodeKind::kHostMemory);
  AddLink(t, cpu, mem, 400, 50, LinkKind::kMemory);
  int g0 = AddNode(t, "gpu0", NodeKind::kGpu), g1 = AddNode(t, "gpu1", NodeKind::kGpu);
  AddLink(t, g0, cpu, 63, 275);
  AddLink(t, g1, cpu, 63, 275);
  int nvs = AddNode(t, "nvswitch0", NodeKind::kNvSwitch);
  AddLink(t, g0, nvs, 450, 275, LinkKind::kNvLink);
  AddLink(t, g1, nvs, 450, 275, LinkKind::kNvLink);
  Router r(t);
  const Path& p = r.Route(g0, g1);
  ASSERT_EQ(p.hops.size(), 2u);
  for (const Hop& h : p.hops) EXPECT_EQ(t.links[h.link].kind, LinkKind::kNvLink);
  EXPECT_EQ(r.GpuPathClass(0, 1), PathClass::kNvLink);
  // Host traffic still takes the PCIe link: the NVSwitch does not reach host memory.
  const Path& h = r.Route(g0, mem);
  ASSERT_EQ(h.hops.size(), 2u);
  EXPECT_EQ(t.links[h.hops[0].link].kind, LinkKind::kPcie);
}

// Routes are built on first use: threads asking a fresh router for every pair at once get the
// same paths (same object per pair) as a router asked one pair at a time.
TEST(Routing, LazyRoutesAreTheSameFromManyThreads) {
  const Topology t = TwoSockets();
  const Router reference(t);
  const Router shared(t);
  const int n = static_cast<int>(t.nodes.size());
  std::vector<std::vector<const Path*>> got(4, std::vector<const Path*>(n * n, nullptr));
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k) {
    threads.emplace_back([&, k] {
      for (int i = 0; i < n * n; ++i) {
        const int pair = (i * 7 + k * 13) % (n * n);  // each thread in its own order
        const int src = pair / n, dst = pair % n;
        if (shared.Reachable(src, dst)) got[k][pair] = &shared.Route(src, dst);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int pair = 0; pair < n * n; ++pair) {
    const int src = pair / n, dst = pair % n;
    ASSERT_EQ(shared.Reachable(src, dst), reference.Reachable(src, dst)) << src << " " << dst;
    if (!reference.Reachable(src, dst)) continue;
    const Path& want = reference.Route(src, dst);
    for (int k = 0; k < 4; ++k) {
      ASSERT_EQ(got[k][pair], got[0][pair]);
      EXPECT_EQ(got[k][pair]->hops, want.hops);
      EXPECT_EQ(got[k][pair]->nodes, want.nodes);
      EXPECT_EQ(got[k][pair]->latency_ns, want.latency_ns);
      EXPECT_EQ(got[k][pair]->forwarding_cpus, want.forwarding_cpus);
    }
  }
}

// GpuPathClass reads the class off the search tree without building the path; it must agree with
// the class of the route itself (NCCL's rules applied to the path's links and intermediate nodes).
TEST(Routing, PathClassOffTheSearchTreeMatchesTheRoute) {
  auto class_of_route = [](const Topology& t, const Path& p) {
    bool all_nvlink = !p.hops.empty(), sys = false, cpu = false;
    int switches = 0;
    for (const Hop& h : p.hops) {
      all_nvlink = all_nvlink && t.links[h.link].kind == LinkKind::kNvLink;
      sys = sys || t.links[h.link].kind == LinkKind::kCpuInterconnect;
    }
    for (size_t i = 1; i + 1 < p.nodes.size(); ++i) {
      cpu = cpu || t.nodes[p.nodes[i]].kind == NodeKind::kCpuRootComplex;
      switches += t.nodes[p.nodes[i]].kind == NodeKind::kPcieSwitch;
    }
    if (all_nvlink) return PathClass::kNvLink;
    if (sys) return PathClass::kSys;
    if (cpu) return PathClass::kPhb;
    return switches <= 1 ? PathClass::kPix : PathClass::kPxb;
  };
  Topology nv = TwoSockets();
  // NVLink between the two switch GPUs of socket 0: that pair is NV, the others keep PCIe classes.
  testing::AddLink(nv, nv.FindNode("s0g0"), nv.FindNode("s0g1"), 400, 50, LinkKind::kNvLink);
  const Topology plain = TwoSockets();
  for (const Topology* t : std::vector<const Topology*>{&plain, &nv}) {
    const Router router(*t);
    const Router fresh(*t);
    int nvlink_pairs = 0;
    for (int i = 0; i < t->num_gpus(); ++i) {
      for (int j = 0; j < t->num_gpus(); ++j) {
        if (i == j) continue;
        const PathClass want = class_of_route(*t, fresh.Route(t->gpus[i], t->gpus[j]));
        EXPECT_EQ(router.GpuPathClass(i, j), want) << i << " " << j;
        nvlink_pairs += want == PathClass::kNvLink;
      }
    }
    EXPECT_EQ(nvlink_pairs, t == &nv ? 2 : 0);
  }
}

}  // namespace
}  // namespace specsim::net
