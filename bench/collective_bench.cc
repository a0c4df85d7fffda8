// The whole of `specsim collective --algo all --sizes 1K:256M` on the dual-socket RTX PRO 6000
// box: plan + simulate 4 algorithms x 19 sizes. Target (issue 2): under 1 s on one core.
#include <benchmark/benchmark.h>

#include "sim/coll/collective_planner.h"
#include "sim/coll/executor.h"
#include "sim/core/check.h"
#include "sim/io/hardware_loader.h"

namespace specsim {
namespace {

void BM_CollectiveAllDualSocket(benchmark::State& state) {
  auto topology = io::LoadHardwareFile("configs/hardware/rtxpro6000-8x-dual-socket.textproto");
  SPECSIM_CHECK(topology.ok()) << topology.status().ToString();
  net::Router router(*topology);
  uint64_t events = 0;
  int64_t flows = 0;
  for (auto _ : state) {
    for (int64_t bytes = 1024; bytes <= (256LL << 20); bytes *= 2) {
      for (coll::Algorithm a : {coll::Algorithm::kRing, coll::Algorithm::kTree, coll::Algorithm::kOneShot,
                                coll::Algorithm::kTwoShot}) {
        coll::CollectiveRequest request;
        request.algorithm = a;
        request.bytes = bytes;
        auto plan = coll::PlanCollective(*topology, router, request);
        SPECSIM_CHECK(plan.ok()) << plan.status().ToString();
        coll::CollectiveTiming t = coll::TimeCollective(plan->schedule, router, plan->rank_gpus);
        events += t.events;
        flows += t.flows;
      }
    }
  }
  state.counters["events_per_s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["events_per_run"] = static_cast<double>(events) / static_cast<double>(state.iterations());
  state.counters["flows_per_run"] = static_cast<double>(flows) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_CollectiveAllDualSocket)->Unit(benchmark::kMillisecond)->MinTime(2.0);

}  // namespace
}  // namespace specsim
