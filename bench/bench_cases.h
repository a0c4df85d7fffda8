// The workloads the Google Benchmark binary and the scale report both time (one definition, so
// their figures measure the same thing).
#pragma once

#include <cstdint>

#include "sim/coll/collective_planner.h"
#include "sim/coll/executor.h"
#include "sim/core/check.h"
#include "sim/llm/decode_simulator.h"

namespace specsim::bench {

struct AlgoAllTotals {
  int collectives = 0;
  uint64_t events = 0;
  int64_t flows = 0;
};

// `specsim collective --algo all --sizes 1K:256M` without the command layer: plan and simulate
// ring, tree, one-shot and two-shot allreduce at 19 sizes on the router's topology.
inline AlgoAllTotals RunAlgoAll(const net::Router& router) {
  AlgoAllTotals totals;
  coll::CollectivePlanner planner(router);
  coll::CollectiveTimer timer(router);
  for (int64_t bytes = 1024; bytes <= (256LL << 20); bytes *= 2) {
    for (coll::Algorithm a :
         {coll::Algorithm::kRing, coll::Algorithm::kTree, coll::Algorithm::kOneShot, coll::Algorithm::kTwoShot}) {
      coll::CollectiveRequest request;
      request.algorithm = a;
      request.bytes = bytes;
      auto plan = planner.Plan(request);
      SPECSIM_CHECK(plan.ok()) << plan.status().ToString();
      const coll::CollectiveTiming t = timer.Time(plan->schedule, plan->rank_gpus);
      ++totals.collectives;
      totals.events += t.events;
      totals.flows += t.flows;
    }
  }
  return totals;
}

// The scenario's framework with an exponential per-op host jitter of 2 us and the verify pass
// piecewise (its attention launched eagerly, so the jitter reaches the collectives): every
// cycle's passes run on every rank, nothing replayed.
inline llm::DecodeSetup WithJitteredRankTimelines(llm::DecodeSetup setup) {
  llm::FrameworkProfile f = setup.framework.value_or(llm::FrameworkProfile{});
  f.capture.verify = llm::CaptureMode::kPiecewise;
  f.jitter.kind = llm::Jitter::Kind::kExponential;
  f.jitter.mean_us = 2;
  setup.framework = f;
  return setup;
}

}  // namespace specsim::bench
