// Runs a Schedule (schedule.h) on the fabric (sim/net/fabric.h).
//
// An op starts when all its dependencies have completed. Transfers become fabric flows between
// the GPUs the ranks are mapped to; a transfer completes at the later of its fabric completion and
// start + latency_floor_ps (a protocol's per-step minimum). Local ops take
// bytes / device memory bandwidth (at least their floor); delays take duration_ps.
// Several schedules may run on one fabric and queue at once: they then contend for links.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sim/coll/schedule.h"
#include "sim/core/event_queue.h"
#include "sim/net/fabric.h"
#include "sim/net/routing.h"
#include "sim/net/topology.h"

namespace specsim::coll {

class ScheduleExecutor {
 public:
  // rank_gpus[r] is the GPU index (Topology::gpus) that rank r runs on. All pointers must outlive
  // the executor and the run.
  ScheduleExecutor(EventQueue* queue, net::Fabric* fabric, const net::Topology* topology, std::vector<int> rank_gpus);

  // Starts `schedule` now (the schedule must outlive the run); `done` runs when every op has
  // completed. When `op_times` is not null it receives (start, end) of every op, by index.
  void Start(const Schedule* schedule, std::function<void()> done,
             std::vector<std::pair<SimTime, SimTime>>* op_times = nullptr);

 private:
  struct Run {
    const Schedule* schedule = nullptr;
    std::vector<int> pending_deps;
    // The ops that wait for op i: dependents[first_dependent[i] .. first_dependent[i + 1])
    // (first_dependent has n + 2 entries; the last is not used).
    std::vector<int> first_dependent;
    std::vector<int> dependents;
    int remaining = 0;
    std::function<void()> done;
    std::vector<std::pair<SimTime, SimTime>>* op_times = nullptr;
  };
  void StartOp(Run* run, int op);
  void FinishOp(Run* run, int op);

  EventQueue* queue_;
  net::Fabric* fabric_;
  const net::Topology* topology_;
  std::vector<int> rank_gpus_;
  std::vector<std::unique_ptr<Run>> runs_;
};

// Result of running one collective alone on an idle fabric.
struct CollectiveTiming {
  SimTime duration_ps = 0;
  std::string busiest_resource;    // e.g. "cpu0->cpu1"
  double busiest_utilisation = 0;  // wire bytes / (payload capacity x duration), in [0, 1]
  double busiest_bytes = 0;
  uint64_t events = 0;
  int64_t flows = 0;
  // Wire bytes per fabric resource (see Fabric::ResourceName) over the run.
  std::vector<double> resource_bytes;
  std::vector<std::string> resource_names;
};

// What the fabric recorded during one run, for Perfetto traces.
struct FabricTrace {
  std::vector<net::FlowRecord> flows;
  std::vector<net::ResourceRateSample> rates;
  std::vector<std::string> resource_names;
};

// Times collectives one after another, each alone on an idle fabric of the router's topology. One
// timer keeps its event queue and fabric between collectives (reset after each), so the fabric's
// routes are built once per timer and its scratch is reused: after the first collectives, timing
// another allocates only for what is larger than all before. Each result is exactly that of a
// fresh fabric (tested). Not thread-safe: one timer per thread.
class CollectiveTimer {
 public:
  // The router (and its topology) must outlive the timer.
  explicit CollectiveTimer(const net::Router& router);

  // Runs `schedule`, ranks on `rank_gpus`. When `trace` is not null, every flow and resource rate
  // change is recorded into it; `op_times`, when not null, receives every op's (start, end).
  CollectiveTiming Time(const Schedule& schedule, const std::vector<int>& rank_gpus, FabricTrace* trace = nullptr,
                        std::vector<std::pair<SimTime, SimTime>>* op_times = nullptr);

 private:
  const net::Router* router_;
  EventQueue queue_;
  net::Fabric fabric_;
  std::vector<std::string> resource_names_;  // per fabric resource, built once
};

}  // namespace specsim::coll
