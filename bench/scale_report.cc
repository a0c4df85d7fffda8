// Issue 14's report, as one run (`build/bench/specsim_scale_report`, from the repository root):
//   1. `collective --algo all` over 1K..256M (19 sizes, 76 collectives) on the 8-GPU dual-socket
//      box, per collective after start-up;
//   2. 1,000 decode cycles of the default scenario with 8 jittered rank timelines;
//   3. advise on the default scenario, pruned and exhaustive, on the CPUs the process may use
//      (`taskset -c 0,1 build/bench/specsim_scale_report` for 2);
//   4. per-collective cost against the GPU count N = 8..256 for ring, tree and one-shot allreduce
//      of 1 MiB on configs/hardware/scale/pcie-Nx.textproto (scripts/gen-scale-box.py; 8 GPUs:
//      the 8-GPU switch box): planning and simulation time, flows, events, cost per flow, and
//      the exponent of cost and cost per flow against N (least squares on log-log). Each after
//      start-up, as in a sweep: planned by a CollectivePlanner after a first, untimed plan has
//      filled the router's tables and the planner's view of the ranks, simulated on a
//      CollectiveTimer whose routes a first, untimed run has built;
//   5. events per second over those runs;
//   6. the schedule checker (sim/coll/schedule_check.h) against the rank count, 64..1,024, for
//      ring, tree, one-shot, two-shot allreduce and direct alltoall (two-shot to 512: ~20 s at
//      1,024), with the fitted exponent.
// Each time is the least of several repeats (the machine's noise only adds). `--quick` stops at
// 64 GPUs (item 6: 128 ranks) and skips the exhaustive search.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <sched.h>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_cases.h"
#include "sim/advise/advisor.h"
#include "sim/coll/alltoall.h"
#include "sim/coll/collective_planner.h"
#include "sim/coll/custom_allreduce.h"
#include "sim/coll/executor.h"
#include "sim/coll/ring.h"
#include "sim/coll/schedule_check.h"
#include "sim/coll/tree.h"
#include "sim/core/allocator_tuning.h"
#include "sim/core/check.h"
#include "sim/io/hardware_loader.h"
#include "sim/io/scenario_loader.h"
#include "sim/scenario/scenario.h"

namespace specsim {
namespace {

double Seconds(const std::function<void()>& f, int repeats) {
  double best = 1e30;
  for (int i = 0; i < repeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

// Slope of log(y) against log(x), least squares.
double Exponent(const std::vector<double>& x, const std::vector<double>& y) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  const double n = static_cast<double>(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const double lx = std::log(x[i]), ly = std::log(y[i]);
    sx += lx;
    sy += ly;
    sxx += lx * lx;
    sxy += lx * ly;
  }
  return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

std::string BoxOf(int gpus) {
  if (gpus == 8) return "configs/hardware/rtxpro6000-8x-pcie-switch.textproto";
  return "configs/hardware/scale/pcie-" + std::to_string(gpus) + "x.textproto";
}

// `only_algo` / `only_n`: one case only (`--case oneshot:256`, for profiling), else all.
void CollectiveScaling(bool quick, const char* only_algo = nullptr, int only_n = 0) {
  std::printf("4. allreduce of 1 MiB against the GPU count (cost = plan + simulate, least of repeats)\n");
  std::printf("%-8s %5s %10s %10s %9s %9s %12s %12s\n", "algo", "N", "plan ms", "sim ms", "flows", "events", "us/flow",
              "events/s");
  uint64_t all_events = 0;
  double all_seconds = 0;
  for (coll::Algorithm algo : {coll::Algorithm::kRing, coll::Algorithm::kTree, coll::Algorithm::kOneShot}) {
    if (only_algo != nullptr && std::strcmp(only_algo, coll::AlgorithmName(algo)) != 0) continue;
    std::vector<double> ns, cost, per_flow;
    for (int n = only_n > 0 ? only_n : 8; n <= (only_n > 0 ? only_n : quick ? 64 : 256); n *= 2) {
      auto topology = io::LoadHardwareFile(BoxOf(n));
      SPECSIM_CHECK(topology.ok()) << topology.status().ToString();
      const net::Router router(*topology);
      coll::CollectiveRequest request;
      request.algorithm = algo;
      request.bytes = 1 << 20;
      StatusOr<coll::PlannedCollective> plan = InvalidArgumentError("not planned");
      const int repeats = n <= 32 ? 20 : 3;  // 256 ranks: 3 x 0.2 s of one-shot
      // A first, untimed plan fills the router's per-topology tables (search trees, path classes)
      // and the planner's view of the ranks' fabric, as the first collective of a sweep does for
      // all that follow.
      coll::CollectivePlanner planner(router);
      plan = planner.Plan(request);
      // Each timed plan drops the previous one first, as a sweep's loop does: the new schedule
      // (16 MB of ops for a 256-rank ring) then reuses the freed memory. Planning while the
      // previous plan is held put the kernel's first-touch page faults of fresh memory in the
      // figure: 4.7x the cost per op of 8 ranks at 256 (29 ms against 6 ms, 2-core machine).
      const double plan_s = Seconds(
          [&] {
            plan = InvalidArgumentError("replanned");
            plan = planner.Plan(request);
          },
          repeats);
      SPECSIM_CHECK(plan.ok()) << plan.status().ToString();
      coll::CollectiveTiming timing;
      // As a sweep times its collectives: the timer's routes are built by a first, untimed run.
      coll::CollectiveTimer timer(router);
      timer.Time(plan->schedule, plan->rank_gpus);
      const double sim_s = Seconds([&] { timing = timer.Time(plan->schedule, plan->rank_gpus); }, repeats);
      const double total = plan_s + sim_s;
      ns.push_back(n);
      cost.push_back(total);
      per_flow.push_back(total / static_cast<double>(timing.flows));
      all_events += timing.events;
      all_seconds += sim_s;
      std::printf("%-8s %5d %10.3f %10.3f %9lld %9llu %12.3f %12.0f\n", coll::AlgorithmName(algo), n, plan_s * 1e3,
                  sim_s * 1e3, static_cast<long long>(timing.flows), static_cast<unsigned long long>(timing.events),
                  per_flow.back() * 1e6, static_cast<double>(timing.events) / sim_s);
    }
    if (ns.size() < 2) continue;
    std::printf("%-8s cost ~ N^%.2f, cost per flow ~ N^%.2f, per flow at N=%d / N=8: %.2fx\n",
                coll::AlgorithmName(algo), Exponent(ns, cost), Exponent(ns, per_flow), static_cast<int>(ns.back()),
                per_flow.back() / per_flow.front());
  }
  std::printf("5. events per second over the simulations above: %.2f M/s\n\n",
              static_cast<double>(all_events) / all_seconds / 1e6);
}

// Item 6: CheckSchedule on builders' schedules of n ranks (64 bytes per rank and segment: the
// check reads the op list only, so the size does not matter).
void CheckerScaling(bool quick) {
  std::printf("6. schedule checker against the rank count (check only, least of repeats)\n");
  std::printf("%-8s %5s %10s %10s %12s\n", "algo", "ranks", "ops", "check ms", "ns/op");
  struct Builder {
    const char* name;
    int max_ranks;
    std::function<coll::Schedule(int)> build;
  };
  coll::CustomAllReduceOptions staged;
  staged.stage_input = true;
  const std::vector<Builder> builders = {
      {"ring", 1024, [](int n) { return coll::BuildRingAllReduce(n, int64_t{n} * 64, coll::RingOptions{}); }},
      {"tree", 1024, [](int n) { return coll::BuildTreeAllReduce(n, int64_t{n} * 64, coll::TreeOptions{}); }},
      {"oneshot", 1024, [&](int n) { return coll::BuildOneShotAllReduce(n, int64_t{n} * 64, staged); }},
      {"twoshot", 512, [&](int n) { return coll::BuildTwoShotAllReduce(n, int64_t{n} * 64, staged); }},
      {"alltoall", 1024,
       [](int n) { return coll::BuildDirectAllToAll(n, int64_t{n} * n * 64, coll::AllToAllOptions{}); }},
  };
  for (const Builder& b : builders) {
    std::vector<double> ns, cost;
    for (int n = 64; n <= (quick ? 128 : b.max_ranks); n *= 2) {
      const coll::Schedule schedule = b.build(n);
      Status status;
      const double s = Seconds([&] { status = coll::CheckSchedule(schedule); }, n <= 256 ? 3 : 1);
      SPECSIM_CHECK(status.ok()) << status.ToString();
      ns.push_back(n);
      cost.push_back(s);
      std::printf("%-8s %5d %10zu %10.1f %12.1f\n", b.name, n, schedule.ops.size(), s * 1e3,
                  s * 1e9 / static_cast<double>(schedule.ops.size()));
    }
    std::printf("%-8s check ~ ranks^%.2f\n", b.name, Exponent(ns, cost));
  }
  std::printf("\n");
}

void AlgoAllOnEight() {
  auto topology = io::LoadHardwareFile("configs/hardware/rtxpro6000-8x-dual-socket.textproto");
  SPECSIM_CHECK(topology.ok()) << topology.status().ToString();
  const net::Router router(*topology);
  int collectives = 0;
  const double s = Seconds([&] { collectives = bench::RunAlgoAll(router).collectives; }, 10);
  std::printf(
      "1. --algo all, 19 sizes on the 8-GPU dual-socket box: %d collectives in %.2f ms, %.3f ms per collective\n\n",
      collectives, s * 1e3, s * 1e3 / collectives);
}

void DecodeCycles() {
  auto loaded = scenario::LoadScenario("", {"speculation.cycles=1000"}, "");
  SPECSIM_CHECK(loaded.ok()) << loaded.status().ToString();
  const llm::DecodeSetup setup = bench::WithJitteredRankTimelines(loaded->setup);
  const double jittered = Seconds([&] { SPECSIM_CHECK(scenario::EvaluateSetup(setup).ok()); }, 3);
  const double plain = Seconds([&] { SPECSIM_CHECK(scenario::EvaluateSetup(loaded->setup).ok()); }, 3);
  std::printf(
      "2. 1,000 decode cycles of the default scenario, TP%d: %.1f ms with 8 jittered rank timelines (verify "
      "piecewise, 2 us exponential jitter per op), %.1f ms as the scenario stands (no jitter: repeated cycles "
      "replayed)\n\n",
      setup.parallel.tp, jittered * 1e3, plain * 1e3);
}

// The CPUs this process may run on (its affinity: `taskset -c 2,3` gives 2), which is what the
// advisor's workers share; std::thread::hardware_concurrency counts the machine's.
int UsableCpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return static_cast<int>(std::thread::hardware_concurrency());
  return CPU_COUNT(&set);
}

void AdviseDefault(bool quick) {
  auto base = io::LoadScenarioFile("configs/scenarios/kimi-k2-eagle3-rtxpro6000-8x.textproto");
  SPECSIM_CHECK(base.ok()) << base.status().ToString();
  auto built = scenario::BuildScenario(*base, "advise", {"speculation.method=NONE"}, "");
  SPECSIM_CHECK(built.ok()) << built.status().ToString();
  const advise::SearchSpace space = advise::DefaultSearchSpace(
      *base, built->setup.target, advise::BoxFactsOf(*built->topology, built->setup.parallel.tp, built->setup.gpus));
  advise::AdviseOptions options;
  options.threads = UsableCpus();
  options.acceptance.assign(base->speculation().acceptance_probabilities().begin(),
                            base->speculation().acceptance_probabilities().end());
  for (bool exhaustive : {false, true}) {
    if (exhaustive && quick) continue;
    options.exhaustive = exhaustive;
    int evaluated = 0;
    std::ostringstream progress;
    const double s = Seconds(
        [&] {
          auto r = advise::Advise(*base, space, options, progress);
          SPECSIM_CHECK(r.ok()) << r.status().ToString();
          evaluated = r->evaluated;
        },
        2);
    std::printf("3. advise on the default scenario, %s: %d configurations in %.2f s on %d cores\n",
                exhaustive ? "exhaustive" : "pruned", evaluated, s, options.threads);
  }
}

}  // namespace
}  // namespace specsim

int main(int argc, char** argv) {
  const bool quick = argc == 2 && std::strcmp(argv[1], "--quick") == 0;
  const bool one_case = argc == 3 && std::strcmp(argv[1], "--case") == 0;
  char algo[16] = "";
  int n = 0;
  if ((argc > 1 && !quick && !one_case) ||
      (one_case &&
       (std::sscanf(argv[2], "%15[a-z]:%d", algo, &n) != 2 || n < 8 || (n & (n - 1)) != 0 || n > 256 ||
        (std::strcmp(algo, "ring") != 0 && std::strcmp(algo, "tree") != 0 && std::strcmp(algo, "oneshot") != 0)))) {
    std::fprintf(stderr,
                 "usage: specsim_scale_report [--quick | --case ALGO:N]   (run from the repository root)\n"
                 "  --case ring:256   item 4 for one algorithm (ring, tree, oneshot) and GPU count (8..256, a "
                 "power of 2), for profiling\n");
    return 2;
  }
  specsim::KeepFreedMemoryForReuse();  // as specsim itself runs
  if (one_case) {
    specsim::CollectiveScaling(false, algo, n);
    return 0;
  }
  // The small, cache-sensitive figures first, on a fresh heap as a command has it: after the
  // 256-GPU runs the same decode cycles measured up to a third slower (the heap they leave).
  specsim::AlgoAllOnEight();
  specsim::DecodeCycles();
  specsim::AdviseDefault(quick);
  specsim::CollectiveScaling(quick);
  specsim::CheckerScaling(quick);
  return 0;
}
