// Issue 3's targets: 1,000 decode cycles of the default scenario (< 1 s) and a 1,000-point sweep
// (< 30 s on the 2-core development machine).
#include <benchmark/benchmark.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_cases.h"
#include "sim/core/check.h"
#include "sim/scenario/scenario.h"

namespace specsim {
namespace {

// Load the scenario once; each iteration builds a fresh simulator (no memoized passes) and runs
// the baseline step plus 1,000 sampled speculative cycles.
void BM_DefaultScenario1000Cycles(benchmark::State& state) {
  auto loaded = scenario::LoadScenario("", {"speculation.cycles=1000"}, "");
  SPECSIM_CHECK(loaded.ok()) << loaded.status().ToString();
  for (auto _ : state) {
    auto r = scenario::EvaluateSetup(loaded->setup);
    SPECSIM_CHECK(r.ok());
    benchmark::DoNotOptimize(r->speculative_tokens_per_s);
  }
}
BENCHMARK(BM_DefaultScenario1000Cycles)->Unit(benchmark::kMillisecond);

// Issue 10's target: 1,000 cycles of the default scenario with 8 rank timelines whose hosts
// jitter (every cycle's passes run on every rank, no memoized pass), < 0.5 s on one core. The
// framework is the scenario's, with an exponential per-op jitter of 2 us and the verify pass
// piecewise (its attention launched eagerly, so the jitter reaches the collectives).
void BM_DefaultScenario1000CyclesRankTimelines(benchmark::State& state) {
  auto loaded = scenario::LoadScenario("", {"speculation.cycles=1000"}, "");
  SPECSIM_CHECK(loaded.ok()) << loaded.status().ToString();
  const llm::DecodeSetup setup = bench::WithJitteredRankTimelines(loaded->setup);
  SPECSIM_CHECK_EQ(setup.parallel.tp, 8);
  for (auto _ : state) {
    auto r = scenario::EvaluateSetup(setup);
    SPECSIM_CHECK(r.ok());
    benchmark::DoNotOptimize(r->speculative_tokens_per_s);
  }
}
BENCHMARK(BM_DefaultScenario1000CyclesRankTimelines)->Unit(benchmark::kMillisecond);

// What `specsim sweep` does for 10 batch sizes x 10 contexts x 10 allreduce choices (5
// algorithms x 2 protocols) = 1,000 points, through the library: each point's scenario loaded
// with its overrides and evaluated (memory plan, then 1,000 speculative cycles), on all cores.
// oneshot/twoshot ignore the protocol, so half of those points repeat a configuration: still 1,000
// simulated points.
void BM_Sweep1000Points(benchmark::State& state) {
  std::vector<std::vector<std::string>> points;
  for (const char* b : {"1", "2", "3", "4", "6", "8", "12", "16", "24", "32"})
    for (const char* c : {"512", "1024", "2048", "3072", "4096", "6144", "8192", "12288", "16384", "24576"})
      for (const char* a : {"auto", "ring", "tree", "oneshot", "twoshot"})
        for (const char* p : {"ll", "simple"})
          points.push_back({"speculation.cycles=1000", std::string("serving.batch_size=") + b,
                            std::string("serving.context_length=") + c,
                            std::string("communication.allreduce_algorithm=") + a,
                            std::string("communication.protocol=") + p});
  SPECSIM_CHECK_EQ(points.size(), 1000u);
  const int threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  for (auto _ : state) {
    std::atomic<size_t> next{0}, simulated{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&] {
        for (size_t i = next++; i < points.size(); i = next++) {
          auto loaded = scenario::LoadScenario("", points[i], "");
          SPECSIM_CHECK(loaded.ok()) << loaded.status().ToString();
          auto e = scenario::Evaluate(*loaded);
          SPECSIM_CHECK(e.ok()) << e.status().ToString();
          if (e->result) ++simulated;
        }
      });
    }
    for (auto& th : pool) th.join();
    state.counters["simulated_points"] = static_cast<double>(simulated.load());
  }
}
BENCHMARK(BM_Sweep1000Points)->Unit(benchmark::kSecond)->Iterations(1);

}  // namespace
}  // namespace specsim
