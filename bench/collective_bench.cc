// The whole of `specsim collective --algo all --sizes 1K:256M` on the dual-socket RTX PRO 6000
// box: plan + simulate 4 algorithms x 19 sizes. Target (issue 2): under 1 s on one core.
#include <benchmark/benchmark.h>

#include "bench/bench_cases.h"
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
    const bench::AlgoAllTotals t = bench::RunAlgoAll(router);
    events += t.events;
    flows += t.flows;
  }
  state.counters["events_per_s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["events_per_run"] = static_cast<double>(events) / static_cast<double>(state.iterations());
  state.counters["flows_per_run"] = static_cast<double>(flows) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_CollectiveAllDualSocket)->Unit(benchmark::kMillisecond)->MinTime(2.0);

}  // namespace
}  // namespace specsim
