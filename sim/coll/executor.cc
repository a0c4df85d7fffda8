#include "sim/coll/executor.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>

#include "sim/core/check.h"
#include "sim/net/routing.h"

namespace specsim::coll {

ScheduleExecutor::ScheduleExecutor(EventQueue* queue, net::Fabric* fabric, const net::Topology* topology,
                                   std::vector<int> rank_gpus)
    : queue_(queue), fabric_(fabric), topology_(topology), rank_gpus_(std::move(rank_gpus)) {
  for (int g : rank_gpus_) SPECSIM_CHECK(g >= 0 && g < topology_->num_gpus()) << "gpu " << g;
}

void ScheduleExecutor::Start(const Schedule* schedule, std::function<void()> done,
                             std::vector<std::pair<SimTime, SimTime>>* op_times) {
  SPECSIM_CHECK_LE(schedule->num_ranks, static_cast<int>(rank_gpus_.size()));
  auto run = std::make_unique<Run>();
  run->schedule = schedule;
  run->done = std::move(done);
  run->op_times = op_times;
  const int n = static_cast<int>(schedule->ops.size());
  if (op_times != nullptr) op_times->assign(n, {-1, -1});
  // The dependents as a flat array (CSR). One pass over the ops copies their deps into `flat`
  // (op order), counts op d's dependents into first_dependent[d + 2] and lists the ops with no
  // deps; the prefix sums make first_dependent[d + 1] the start of d's block, and placing each
  // dependent (read from `flat`, not the ops again) advances it to the start of d + 1's, leaving
  // first_dependent[d] = the start of d's block for every d. The ops are read once (a 256-rank
  // one-shot's are 25 MB: Start is linear in the schedule's size, one pass over it).
  run->pending_deps.resize(n);
  run->first_dependent.assign(n + 2, 0);
  run->remaining = n;
  std::vector<int> flat, roots;
  flat.reserve(2 * static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    const DepList& deps = schedule->ops[i].deps;
    run->pending_deps[i] = static_cast<int>(deps.size());
    if (deps.empty()) roots.push_back(i);
    for (int d : deps) {
      SPECSIM_CHECK(d >= 0 && d < i) << "op " << i << " depends on " << d;
      ++run->first_dependent[d + 2];
      flat.push_back(d);
    }
  }
  for (int i = 2; i <= n + 1; ++i) run->first_dependent[i] += run->first_dependent[i - 1];
  run->dependents.resize(run->first_dependent[n + 1]);
  const int* d = flat.data();
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < run->pending_deps[i]; ++k) run->dependents[run->first_dependent[*d++ + 1]++] = i;  // op order
  Run* r = run.get();
  runs_.push_back(std::move(run));
  if (n == 0) {
    queue_->ScheduleAfter(0, r->done);
    return;
  }
  for (int i : roots) StartOp(r, i);
}

void ScheduleExecutor::StartOp(Run* run, int index) {
  const ScheduleOp& op = run->schedule->ops[index];
  // The next op in the list is most often the next to start (a ring step's ops start in
  // position order): fetch its two cache lines now, while this one's transfer is set up (a
  // 256-rank schedule is 16 MB, and most of StartOp's time there was waiting for the op).
  // (A prefetch past the end is harmless: it never faults.)
  const uintptr_t next = reinterpret_cast<uintptr_t>(&op) + sizeof(ScheduleOp);
  __builtin_prefetch(reinterpret_cast<const void*>(next));
  __builtin_prefetch(reinterpret_cast<const void*>(next + 64));
  const SimTime start = queue_->now();
  if (run->op_times != nullptr) (*run->op_times)[index].first = start;
  switch (op.kind) {
    case OpKind::kDelay: queue_->ScheduleAfter(op.duration_ps, [this, run, index] { FinishOp(run, index); }); return;
    case OpKind::kLocal: {
      const double gbps = topology_->gpu_spec(rank_gpus_[op.dst_rank]).memory_bandwidth_gbps;
      const SimTime t = SaturatedPicos(std::ceil(static_cast<double>(op.bytes) / BytesPerPicoFromGbps(gbps)));
      queue_->ScheduleAfter(std::max(t, op.latency_floor_ps), [this, run, index] { FinishOp(run, index); });
      return;
    }
    case OpKind::kTransfer: {
      net::TransferSpec spec;
      spec.src_node = topology_->gpus[rank_gpus_[op.src_rank]];
      spec.dst_node = topology_->gpus[rank_gpus_[op.dst_rank]];
      // A buffer in host memory: the memory of its rank's socket (checked by the planner).
      if (op.host_end == HostEnd::kSrc) spec.src_node = fabric_->HostMemoryOfNode(spec.src_node);
      if (op.host_end == HostEnd::kDst) spec.dst_node = fabric_->HostMemoryOfNode(spec.dst_node);
      SPECSIM_CHECK(spec.src_node >= 0 && spec.dst_node >= 0) << "host-memory transfer on a socket without HOST_MEMORY";
      spec.bytes = op.bytes;
      spec.mechanism = op.mechanism;
      spec.wire_efficiency = op.wire_efficiency;
      spec.read_sms = op.rate_cap_is_measured_read_rate && op.rate_cap_gbps > 0 ? 0 : op.read_sms;
      spec.payload_cap_gbps = op.rate_cap_gbps;
      if (fabric_->record_trace()) {
        spec.label = run->schedule->algorithm + " ch" + std::to_string(op.channel) + " r" +
                     std::to_string(op.src_rank) + "->r" + std::to_string(op.dst_rank);
      }
      const SimTime floor_end = ClampedAdd(start, op.latency_floor_ps);
      fabric_->Start(spec, [this, run, index, floor_end] {
        if (queue_->now() >= floor_end) {
          FinishOp(run, index);
        } else {
          queue_->Schedule(floor_end, [this, run, index] { FinishOp(run, index); });
        }
      });
      return;
    }
  }
}

void ScheduleExecutor::FinishOp(Run* run, int index) {
  if (run->op_times != nullptr) (*run->op_times)[index].second = queue_->now();
  for (int k = run->first_dependent[index]; k < run->first_dependent[index + 1]; ++k) {
    const int next = run->dependents[k];
    if (--run->pending_deps[next] == 0) StartOp(run, next);
  }
  if (--run->remaining == 0) run->done();
}

CollectiveTimer::CollectiveTimer(const net::Router& router)
    : router_(&router), fabric_(&queue_, &router.topology(), &router) {
  for (int r = 0; r < fabric_.num_resources(); ++r) resource_names_.push_back(fabric_.ResourceName(r));
}

CollectiveTiming CollectiveTimer::Time(const Schedule& schedule, const std::vector<int>& rank_gpus, FabricTrace* trace,
                                       std::vector<std::pair<SimTime, SimTime>>* op_times) {
  const net::Topology& topology = router_->topology();
  queue_.Reset();
  fabric_.Reset();
  fabric_.set_record_trace(trace != nullptr);
  ScheduleExecutor executor(&queue_, &fabric_, &topology, rank_gpus);
  SimTime end = -1;
  executor.Start(
      &schedule, [&] { end = queue_.now(); }, op_times);
  queue_.Run();
  SPECSIM_CHECK_GE(end, 0) << "schedule did not complete (dependency cycle?)";
  CollectiveTiming timing;
  timing.duration_ps = end;
  timing.events = queue_.events_processed();
  timing.flows = fabric_.flows_started();
  timing.resource_bytes = fabric_.resource_bytes();
  timing.resource_names = resource_names_;
  for (int r = 0; r < fabric_.num_resources(); ++r) {
    double capacity_bytes = BytesPerPicoFromGbps(fabric_.ResourceCapacityGbps(r)) * static_cast<double>(end);
    double utilisation = capacity_bytes > 0 ? fabric_.resource_bytes()[r] / capacity_bytes : 0;
    if (utilisation > timing.busiest_utilisation) {
      timing.busiest_utilisation = utilisation;
      timing.busiest_resource = resource_names_[r];
      timing.busiest_bytes = fabric_.resource_bytes()[r];
    }
  }
  if (trace != nullptr) {
    trace->flows = fabric_.flow_records();
    trace->rates = fabric_.rate_samples();
    trace->resource_names = timing.resource_names;
  }
  return timing;
}

}  // namespace specsim::coll
