#include "sim/net/route_pool.h"

#include <gtest/gtest.h>

#include "sim/net/test_topologies.h"

namespace specsim::net {
namespace {

// Two GPUs under one CPU with host memory: gpu0 -> gpu1 is two link directions; host-staged it is
// gpu0 -> cpu -> mem and mem -> cpu -> gpu1, four, with both paths' latencies summed.
TEST(RoutePool, AHostStagedRouteSumsItsTwoPaths) {
  Topology t;
  t.gpu_specs.push_back(testing::TestGpu());
  const int cpu = testing::AddNode(t, "cpu", NodeKind::kCpuRootComplex);
  const int mem = testing::AddNode(t, "mem", NodeKind::kHostMemory);
  testing::AddLink(t, cpu, mem, 100, 50, LinkKind::kMemory);
  const int g0 = testing::AddNode(t, "g0", NodeKind::kGpu);
  const int g1 = testing::AddNode(t, "g1", NodeKind::kGpu);
  testing::AddLink(t, g0, cpu, 50, 300);
  testing::AddLink(t, g1, cpu, 50, 300);
  const Router router(t);
  RoutePool pool(&t, &router, std::vector<int>(t.nodes.size(), -1));
  const RouteResources& direct = pool.Of(g0, g1, false);
  EXPECT_EQ(direct.num_resources, 2);
  EXPECT_DOUBLE_EQ(direct.latency_ns, router.Route(g0, g1).latency_ns);
  const RouteResources& staged = pool.Of(g0, g1, true);
  EXPECT_EQ(staged.num_resources, 4);
  EXPECT_DOUBLE_EQ(staged.latency_ns, router.Route(g0, mem).latency_ns + router.Route(mem, g1).latency_ns);
  EXPECT_EQ(&pool.Of(g0, g1, false), &direct);  // built once
  EXPECT_EQ(pool.size(), 2u);
  EXPECT_EQ(pool.Of(g0, g0, false).num_resources, 0);  // to itself: no link
}

// Routes keep their addresses and resources while thousands more are built (a deque, chunks
// that never move): every GPU pair of a 96-GPU switch box, 9,120 routes over several chunks.
TEST(RoutePool, RoutesKeepTheirResourcesAsMoreAreBuilt) {
  const Topology t = testing::SwitchBox(96, 50, 100);
  const Router router(t);
  RoutePool pool(&t, &router, std::vector<int>(t.nodes.size(), -1));
  const RouteResources& first = pool.Of(t.gpus[0], t.gpus[1], false);
  const std::vector<int> first_resources(first.resources, first.resources + first.num_resources);
  for (int a : t.gpus)
    for (int b : t.gpus)
      if (a != b) pool.Of(a, b, false);
  EXPECT_EQ(pool.size(), 96u * 95u);
  EXPECT_EQ(std::vector<int>(first.resources, first.resources + first.num_resources), first_resources);
  for (int k = 0; k < first.num_resources; ++k) {
    const Hop& hop = router.Route(t.gpus[0], t.gpus[1]).hops[k];
    EXPECT_EQ(first.resources[k], 2 * hop.link + hop.direction);
  }
}

}  // namespace
}  // namespace specsim::net
