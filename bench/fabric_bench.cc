// Micro-benchmarks of the engine's hot parts: the event queue and the max-min solver.
#include <benchmark/benchmark.h>

#include <random>

#include "sim/core/event_queue.h"
#include "sim/net/maxmin.h"

namespace specsim {
namespace {

void BM_EventQueueScheduleRun(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  for (auto _ : state) {
    EventQueue q;
    int64_t sum = 0;
    for (int i = 0; i < n; ++i) q.Schedule((i * 7919) % n, [&sum, i] { sum += i; });
    q.Run();
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_EventQueueScheduleRun)->Arg(1 << 10)->Arg(1 << 16);

// flows over paths of 4 resources out of 40, as in an 8-GPU box.
void BM_MaxMin(benchmark::State& state) {
  const int flows = static_cast<int>(state.range(0));
  std::mt19937 rng(1);
  net::MaxMinProblem p;
  for (int r = 0; r < 40; ++r) p.capacity.push_back(50.0 + rng() % 20);
  for (int f = 0; f < flows; ++f) {
    net::MaxMinFlow flow;
    for (int k = 0; k < 4; ++k) flow.resources.push_back(rng() % 40);
    p.flows.push_back(flow);
  }
  for (auto _ : state) benchmark::DoNotOptimize(net::SolveMaxMin(p));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_MaxMin)->Arg(8)->Arg(64)->Arg(256);

}  // namespace
}  // namespace specsim
