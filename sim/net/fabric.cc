#include "sim/net/fabric.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "sim/core/check.h"

namespace specsim::net {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();

// Passes over the flows prefetch, this many flows ahead, what each flow's step reads out of line:
// its route's resources (a cache miss per flow past a few thousand flows: a 256-rank one-shot's
// completion pass spent 38% of its time on that load, perf) and, for a flow that finishes, its
// end data (another 23%). A prefetch never faults and changes no result.
constexpr size_t kFlowsAhead = 8;

// Per node, its P2P forwarding resource (a CPU root complex with a forwarding limit: numbered
// after the 2 x links link directions, in node order), else -1.
std::vector<int> CpuResourceOfEachNode(const Topology& t) {
  std::vector<int> out(t.nodes.size(), -1);
  int next = 2 * static_cast<int>(t.links.size());
  for (size_t n = 0; n < t.nodes.size(); ++n)
    if (t.nodes[n].kind == NodeKind::kCpuRootComplex && t.nodes[n].p2p_forward_bandwidth_gbps > 0) out[n] = next++;
  return out;
}
}  // namespace

Fabric::Fabric(EventQueue* queue, const Topology* topology, const Router* router)
    : queue_(queue),
      topology_(topology),
      router_(router),
      gpu_of_node_(GpuIndexOfEachNode(*topology)),
      host_memory_of_node_(HostMemoryOfEachNode(*topology)),
      cpu_resource_of_node_(CpuResourceOfEachNode(*topology)),
      routes_(topology, router, cpu_resource_of_node_) {
  const int num_links = static_cast<int>(topology->links.size());
  for (int l = 0; l < num_links; ++l) {
    double c = BytesPerPicoFromGbps(topology->links[l].payload_gbps());
    capacity_bytes_per_ps_.push_back(c);
    capacity_bytes_per_ps_.push_back(c);
    collapse_per_flow_.push_back(0);
    collapse_per_flow_.push_back(0);
  }
  for (size_t n = 0; n < topology->nodes.size(); ++n) {
    if (cpu_resource_of_node_[n] < 0) continue;
    SPECSIM_CHECK_EQ(cpu_resource_of_node_[n], static_cast<int>(capacity_bytes_per_ps_.size()));
    capacity_bytes_per_ps_.push_back(BytesPerPicoFromGbps(topology->nodes[n].p2p_forward_bandwidth_gbps));
    collapse_per_flow_.push_back(topology->nodes[n].p2p_forward_collapse_per_flow);
  }
  capacity_scratch_ = capacity_bytes_per_ps_;  // links' entries never change
  forwarded_scratch_.assign(capacity_bytes_per_ps_.size(), 0);
  resource_bytes_.assign(capacity_bytes_per_ps_.size(), 0.0);
  resource_rate_.assign(capacity_bytes_per_ps_.size(), 0.0);
  int engines = 0;
  for (int g = 0; g < topology->num_gpus(); ++g) {
    for (int dir = 0; dir < 2; ++dir) {
      engine_base_.push_back(engines);
      engines += std::max(1, topology->gpu_spec(g).copy_engines_per_direction);
    }
  }
  engine_base_.push_back(engines);
  engines_ = std::vector<CopyEngine>(engines);  // built in place: a CopyEngine's queue holds move-only callbacks
}

void Fabric::Reset() {
  SPECSIM_CHECK(flows_.empty() && !recompute_pending_ && !completion_pending_)
      << "resetting a fabric with " << flows_.size() << " flows active";
  for (const CopyEngine& ce : engines_) SPECSIM_CHECK(!ce.busy && ce.waiting() == 0) << "a copy engine is busy";
  std::fill(resource_bytes_.begin(), resource_bytes_.end(), 0.0);
  std::fill(resource_rate_.begin(), resource_rate_.end(), 0.0);
  last_update_ps_ = 0;
  completion_event_ = 0;
  labels_.clear();
  flows_started_ = 0;
  flow_records_.clear();
  rate_samples_.clear();
}

std::string Fabric::ResourceName(int resource) const {
  const int link_resources = 2 * static_cast<int>(topology_->links.size());
  if (resource < link_resources) return topology_->DirectedLinkName(resource / 2, resource % 2);
  for (int n = 0; n < static_cast<int>(cpu_resource_of_node_.size()); ++n)
    if (cpu_resource_of_node_[n] == resource) return topology_->nodes[n].name + " p2p-forwarding";
  return "?";
}

double Fabric::ResourceCapacityGbps(int resource) const {
  return GbpsFromBytesPerPico(capacity_bytes_per_ps_[resource]);
}

int Fabric::PickEngine(const TransferSpec& spec) {
  // The GPU that owns a copy: the source GPU, else the destination GPU (host-to-device).
  int gpu = GpuIndexOfNode(spec.src_node);
  int dir = 0;
  if (gpu < 0) {
    gpu = GpuIndexOfNode(spec.dst_node);
    dir = 1;
  }
  SPECSIM_CHECK_GE(gpu, 0) << "a copy-engine transfer needs a GPU at one end";
  int begin = engine_base_[gpu * 2 + dir], end = engine_base_[gpu * 2 + dir + 1];
  int best = begin;
  size_t best_load = std::numeric_limits<size_t>::max();
  for (int e = begin; e < end; ++e) {
    size_t load = engines_[e].waiting() + (engines_[e].busy ? 1 : 0);
    if (load < best_load) {
      best = e;
      best_load = load;
    }
  }
  return best;
}

void Fabric::Start(const TransferSpec& spec, DoneCallback done) {
  SPECSIM_CHECK_GE(spec.bytes, 0);
  SPECSIM_CHECK(spec.wire_efficiency > 0 && spec.wire_efficiency <= 1) << spec.wire_efficiency;
  SPECSIM_CHECK(spec.payload_cap_gbps >= 0) << spec.payload_cap_gbps;
  ++flows_started_;
  if (spec.mechanism != Mechanism::kCopyEngine) {
    BeginFlow(spec, std::move(done), -1);
    return;
  }
  int engine = PickEngine(spec);
  CopyEngine& ce = engines_[engine];
  if (ce.busy) {
    ce.queue.emplace_back(spec, std::move(done));
    return;
  }
  ce.busy = true;
  queue_->ScheduleAfter(CopySetupPs(spec), [this, spec, done = std::move(done), engine]() mutable {
    BeginFlow(spec, std::move(done), engine);
  });
}

SimTime Fabric::CopySetupPs(const TransferSpec& spec) const {
  int gpu = GpuIndexOfNode(spec.src_node);  // the GPU that owns the copy, as PickEngine
  if (gpu < 0) gpu = GpuIndexOfNode(spec.dst_node);
  return PicosFromNanos(topology_->gpu_spec(gpu).copy_engine_setup_ns);
}

void Fabric::EngineFree(int engine) {
  CopyEngine& ce = engines_[engine];
  if (ce.waiting() == 0) {
    ce.busy = false;
    ce.queue.clear();
    ce.head = 0;
    return;
  }
  auto [spec, done] = std::move(ce.queue[ce.head++]);
  const SimTime setup = CopySetupPs(spec);
  queue_->ScheduleAfter(setup, [this, spec = std::move(spec), done = std::move(done), engine]() mutable {
    BeginFlow(spec, std::move(done), engine);
  });
}

void Fabric::BeginFlow(const TransferSpec& spec, DoneCallback done, int engine) {
  // No advance here: the recompute this flow asks for (MarkDirty) runs at this same instant
  // and advances the other flows first, and the new one has moved nothing yet (rate 0).
  Flow& f = flows_.emplace_back();  // built in place: a flow is moved only when others finish
  if (free_flow_ends_.empty()) {
    f.end = static_cast<int>(flow_ends_.size());
    flow_ends_.emplace_back();
  } else {
    f.end = free_flow_ends_.back();
    free_flow_ends_.pop_back();
  }
  FlowEnd& end = flow_ends_[f.end];
  end.engine = engine;
  end.start_ps = queue_->now();
  double cap_bytes_per_ps = kInf;
  RouteResources& route = routes_.Of(spec.src_node, spec.dst_node, spec.mechanism == Mechanism::kHostStaged);
  f.resources = route.resources;
  f.num_resources = route.num_resources;
  const double latency_ns = route.latency_ns;
  if (spec.mechanism == Mechanism::kKernelRead) {
    int reader = GpuIndexOfNode(spec.dst_node);
    double outstanding = reader >= 0 ? topology_->gpu_spec(reader).kernel_read_outstanding_bytes_per_sm : 0;
    if (outstanding > 0 && spec.read_sms > 0 && latency_ns > 0) {
      // Little's law: rate <= bytes in flight / round trip.
      cap_bytes_per_ps = spec.read_sms * outstanding / (2 * latency_ns * kPicosPerNano);
    }
  }
  if (spec.payload_cap_gbps > 0)
    cap_bytes_per_ps = std::min(cap_bytes_per_ps, BytesPerPicoFromGbps(spec.payload_cap_gbps / spec.wire_efficiency));
  f.flow_class = ClassOf(route, cap_bytes_per_ps);
  AddToClass(f.flow_class);
  f.remaining_wire_bytes = static_cast<double>(spec.bytes) / spec.wire_efficiency;
  end.latency_ps = PicosFromNanos(latency_ns);
  end.src_node = spec.src_node;
  end.dst_node = spec.dst_node;
  end.bytes = spec.bytes;
  end.mechanism = spec.mechanism;
  end.label = -1;  // a reused FlowEnd may hold a label from a traced run
  if (record_trace_) {
    end.label = static_cast<int>(labels_.size());
    labels_.push_back(spec.label);
  }
  end.done = std::move(done);
  // The next flow's end data, as the previous one did for this one (a cache miss per flow once
  // the slab outgrows the cache).
  if (!free_flow_ends_.empty()) __builtin_prefetch(&flow_ends_[free_flow_ends_.back()]);
  MarkDirty();
}

int Fabric::ClassOf(RouteResources& route, double cap_bytes_per_ps) {
  if (route.last_class >= 0 && route.last_class_cap == cap_bytes_per_ps) return route.last_class;
  int found = -1;
  for (int c : route.classes) {
    if (classes_[c].cap_bytes_per_ps == cap_bytes_per_ps) {
      found = c;
      break;
    }
  }
  if (found < 0) {
    found = static_cast<int>(classes_.size());
    route.classes.push_back(found);
    FlowClass fc;
    fc.route = &route;
    fc.resources = route.resources;
    fc.num_resources = route.num_resources;
    fc.forwards = !route.forwarding_cpus.empty();
    fc.cap_bytes_per_ps = cap_bytes_per_ps;
    fc.mix_key_word = SolvedMixMemo::KeyWord(found);
    classes_.push_back(fc);
    class_rate_.push_back(0.0);
  }
  route.last_class = found;
  route.last_class_cap = cap_bytes_per_ps;
  return found;
}

void Fabric::AddToClass(int c) {
  FlowClass& fc = classes_[c];
  mix_key_ += fc.mix_key_word;
  if (fc.active++ > 0) return;
  fc.position = static_cast<int>(active_classes_.size());
  active_classes_.push_back(c);
}

void Fabric::RemoveFromClass(int c) {
  FlowClass& fc = classes_[c];
  mix_key_ -= fc.mix_key_word;
  if (--fc.active > 0) return;
  const int last = active_classes_.back();
  active_classes_[fc.position] = last;
  classes_[last].position = fc.position;
  active_classes_.pop_back();
  fc.position = -1;
}

[[gnu::always_inline]] inline void Fabric::AdvanceFlow(Flow& f, SimTime dt_ps) {
  if (f.rate <= 0 || std::isinf(f.rate)) return;
  const double moved = std::min(f.remaining_wire_bytes, f.rate * static_cast<double>(dt_ps));
  f.remaining_wire_bytes -= moved;
  for (int k = 0; k < f.num_resources; ++k) resource_bytes_[f.resources[k]] += moved;
}

void Fabric::MarkDirty() {
  if (recompute_pending_) return;
  recompute_pending_ = true;
  // Runs after every event already scheduled for this instant: one solve per instant.
  queue_->ScheduleAfter(0, [this] { Recompute(); });
}

void Fabric::Recompute() {
  recompute_pending_ = false;
  SolveActiveClasses();  // reads the classes' counts only

  const SimTime now = queue_->now();
  const SimTime dt_ps = now - last_update_ps_;  // 0 after a completion at this instant
  last_update_ps_ = now;
  SimTime next = kSimTimeMax;
  if (record_trace_) new_rate_scratch_.assign(resource_rate_.size(), 0.0);
  const size_t num_flows = flows_.size();
  for (size_t i = 0; i < num_flows; ++i) {
    if (dt_ps > 0 && i + kFlowsAhead < num_flows) __builtin_prefetch(flows_[i + kFlowsAhead].resources);
    Flow& f = flows_[i];
    if (dt_ps > 0) AdvanceFlow(f, dt_ps);  // at its old rate, up to now
    f.rate = class_rate_[f.flow_class];
    if (f.remaining_wire_bytes <= 0 || std::isinf(f.rate)) {
      f.finish_ps = now;
    } else {
      const FlowEnd& end = flow_ends_[f.end];
      SPECSIM_CHECK_GT(f.rate, 0.0) << "flow " << topology_->nodes[end.src_node].name << " -> "
                                    << topology_->nodes[end.dst_node].name << " "
                                    << (end.label >= 0 ? labels_[end.label] : "") << " starved";
      // Past the clock's horizon (a rate so small the flow would never end in range): at it.
      const double t = std::ceil(f.remaining_wire_bytes / f.rate);
      f.finish_ps = ClampedAdd(now, SaturatedPicos(std::max(t, 0.0)));
      if (record_trace_)
        for (int k = 0; k < f.num_resources; ++k) new_rate_scratch_[f.resources[k]] += f.rate;
    }
    next = std::min(next, f.finish_ps);
  }
  if (record_trace_) {
    for (size_t r = 0; r < new_rate_scratch_.size(); ++r) {
      if (new_rate_scratch_[r] != resource_rate_[r])
        rate_samples_.push_back({now, static_cast<int>(r), GbpsFromBytesPerPico(new_rate_scratch_[r])});
    }
    resource_rate_.swap(new_rate_scratch_);
  }
  if (completion_pending_) queue_->Cancel(completion_event_);
  completion_pending_ = false;
  if (next != kSimTimeMax) {
    completion_pending_ = true;
    completion_event_ = queue_->Schedule(next, [this] { OnCompletion(); });
  }
}

void Fabric::SolveActiveClasses() {
  auto active_of = [this](int c) { return classes_[c].active; };
  if (reuse_solved_mixes_ && memo_.Recall(mix_key_, active_classes_, active_of, &class_rate_)) return;
  // Capacities of collapsing CPU forwarding resources depend on how many flows they forward.
  const size_t first_cpu = 2 * topology_->links.size();
  std::fill(forwarded_scratch_.begin() + static_cast<std::ptrdiff_t>(first_cpu), forwarded_scratch_.end(), 0);
  for (int c : active_classes_) {
    if (!classes_[c].forwards) continue;
    for (int r : classes_[c].route->forwarding_cpus) forwarded_scratch_[r] += classes_[c].active;
  }
  for (size_t r = first_cpu; r < capacity_scratch_.size(); ++r) {
    capacity_scratch_[r] = capacity_bytes_per_ps_[r];
    if (collapse_per_flow_[r] > 0 && forwarded_scratch_[r] > 1)
      capacity_scratch_[r] /= 1.0 + collapse_per_flow_[r] * (forwarded_scratch_[r] - 1);
  }
  views_scratch_.clear();
  for (int c : active_classes_) {
    const FlowClass& fc = classes_[c];
    views_scratch_.push_back({fc.resources, fc.num_resources, fc.cap_bytes_per_ps, fc.active});
  }
  solver_.Solve(capacity_scratch_, views_scratch_, &rates_scratch_);
  for (size_t k = 0; k < active_classes_.size(); ++k) class_rate_[active_classes_[k]] = rates_scratch_[k];
  if (reuse_solved_mixes_) memo_.Store(mix_key_, active_classes_, active_of, rates_scratch_);
}

void Fabric::OnCompletion() {
  completion_pending_ = false;
  const SimTime now = queue_->now();
  const SimTime dt_ps = now - last_update_ps_;
  last_update_ps_ = now;
  // One pass in flow order: each flow advanced to now, then a finished one retired where it
  // stands (its class left, its copy engine freed, its callback scheduled: none of which
  // touches flows_ or the resources' bytes), the others compacted.
  size_t kept = 0;
  const size_t num_flows = flows_.size();
  for (size_t i = 0; i < num_flows; ++i) {
    if (i + kFlowsAhead < num_flows) {
      const Flow& ahead = flows_[i + kFlowsAhead];
      __builtin_prefetch(ahead.resources);
      if (ahead.finish_ps <= now) __builtin_prefetch(&flow_ends_[ahead.end]);
    }
    Flow& f = flows_[i];
    if (dt_ps > 0) AdvanceFlow(f, dt_ps);
    if (f.finish_ps > now) {
      if (kept != i) flows_[kept] = f;
      ++kept;
      continue;
    }
    RemoveFromClass(f.flow_class);
    FlowEnd& end = flow_ends_[f.end];  // no flow begins during this pass: the slab stays put
    // The last bytes were charged to the resources just above; a remainder below one
    // picosecond of transfer is rounding.
    if (record_trace_) {
      flow_records_.push_back({end.label >= 0 ? labels_[end.label] : std::string(), end.src_node, end.dst_node,
                               end.mechanism, end.bytes, end.start_ps, now + end.latency_ps});
    }
    if (end.engine >= 0) EngineFree(end.engine);
    queue_->ScheduleAfter(end.latency_ps, std::move(end.done));
    free_flow_ends_.push_back(f.end);
  }
  flows_.resize(kept);
  MarkDirty();
}

}  // namespace specsim::net
