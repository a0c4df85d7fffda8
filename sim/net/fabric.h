// The fabric: transfers as flows over routed paths, sharing bandwidth max-min fairly.
//
// Every transfer becomes a flow over its routed path (routing.h). Resources are the two
// directions of every link (capacity = raw bandwidth x payload efficiency) and, for each CPU root
// complex with a P2P forwarding limit, that limit (capacity shrinks with the number of forwarded
// flows: bw / (1 + collapse * (f - 1))). Rates are recomputed by the max-min solver (maxmin.h)
// whenever a flow starts or ends (changes at one instant are coalesced into one recompute), over
// flow classes (the flows of one route and one cap get one rate; the solver counts them), and a
// mix of classes solved before is not solved again (solved_mix_memo.h). Each route's resources
// and latency are built once (route_pool.h). A flow of B
// payload bytes puts B / wire_efficiency bytes on the wire; it completes when its last byte has
// left the source plus the path's one-way latency. Completion times round up to the next
// picosecond, so time always advances.
//
// A transfer may carry its own payload rate cap (an NCCL channel's throughput); it then never
// runs faster than that, whatever the links leave it.
// Mechanisms (transfer.h): copy-engine transfers queue FIFO on the least-loaded copy engine of the
// GPU that owns the copy (the source GPU, or the destination GPU for host-to-device) and pay its
// setup time; kernel reads are capped at read_sms * outstanding_bytes_per_sm / round-trip latency
// of the reader's GPU; host-staged transfers route src -> host memory of the receiver's socket ->
// dst (NCCL_SHM_LOCALITY's default, receiver side) as one pipelined flow.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/event_queue.h"
#include "sim/core/inline_function.h"
#include "sim/net/maxmin.h"
#include "sim/net/route_pool.h"
#include "sim/net/routing.h"
#include "sim/net/solved_mix_memo.h"
#include "sim/net/topology.h"
#include "sim/net/transfer.h"

namespace specsim::net {

struct TransferSpec {
  int src_node = -1;
  int dst_node = -1;
  int64_t bytes = 0;  // payload
  Mechanism mechanism = Mechanism::kKernelWrite;
  double wire_efficiency = 1.0;  // payload share of wire bytes, (0, 1]
  double read_sms = 0;           // kKernelRead: SMs issuing reads
  double payload_cap_gbps = 0;   // the most payload GB/s the issuer moves (0: no cap beyond links)
  std::string label;             // shown in traces (callers fill it only when record_trace())
};

// One finished flow, for traces.
struct FlowRecord {
  std::string label;
  int src_node = -1;
  int dst_node = -1;
  Mechanism mechanism = Mechanism::kKernelWrite;
  int64_t bytes = 0;
  SimTime start_ps = 0;  // first byte on the wire
  SimTime end_ps = 0;    // last byte delivered
};

// The aggregate rate of one resource from `time_ps` on, for traces.
struct ResourceRateSample {
  SimTime time_ps = 0;
  int resource = -1;
  double gbps = 0;
};

class Fabric {
 public:
  using DoneCallback = InlineFunction;

  // The queue, topology and router must outlive the fabric.
  Fabric(EventQueue* queue, const Topology* topology, const Router* router);

  // Back to an idle fabric with nothing moved yet, keeping the routes built so far and the
  // scratch: for timing many collectives one after another on one topology (the queue is reset
  // by its owner). Tracing stays as set. REQUIRES: no flow active or waiting for a copy engine.
  void Reset();

  // Starts a transfer now; `done` runs when its last byte has arrived. Zero-byte transfers take the
  // path latency. REQUIRES: a route exists (validated by the hardware loader).
  void Start(const TransferSpec& spec, DoneCallback done);

  // Resources: [0, 2*links) are link directions (2*link + direction), then one per CPU root complex
  // that has a P2P forwarding limit.
  int num_resources() const { return static_cast<int>(capacity_bytes_per_ps_.size()); }
  std::string ResourceName(int resource) const;
  double ResourceCapacityGbps(int resource) const;  // nominal (no collapse)
  // Wire bytes that crossed each resource so far.
  const std::vector<double>& resource_bytes() const { return resource_bytes_; }
  int active_flows() const { return static_cast<int>(flows_.size()); }
  int64_t flows_started() const { return flows_started_; }
  // The HOST_MEMORY node of `node`'s socket, or -1 (net::HostMemoryOfEachNode, looked up in O(1)).
  int HostMemoryOfNode(int node) const { return host_memory_of_node_[node]; }

  void set_record_trace(bool on) { record_trace_ = on; }
  bool record_trace() const { return record_trace_; }
  const std::vector<FlowRecord>& flow_records() const { return flow_records_; }
  const std::vector<ResourceRateSample>& rate_samples() const { return rate_samples_; }

 private:
  // Tests reach the memo's switches through it (fabric_test.cc): whether solved mixes are reused
  // and the key mask that makes every mix a candidate for every other.
  friend class FabricTestPeer;

  // The flows of one route and one cap: max-min fairness gives them one rate, so the solver sees
  // each class once, with its count of active flows (maxmin.h, MaxMinFlowView::count). The
  // route's resources are repeated here: a solve reads them for every active class.
  struct FlowClass {
    const RouteResources* route = nullptr;
    const int* resources = nullptr;  // route->resources
    int num_resources = 0;
    bool forwards = false;  // the route crosses a CPU with a forwarding limit
    double cap_bytes_per_ps = 0;
    uint64_t mix_key_word = 0;  // SolvedMixMemo::KeyWord
    int active = 0;             // flows of the class now active
    int position = -1;          // in active_classes_ while active
  };
  // An active flow, in two parts: what the clock and the solve read at every instant (Flow: 48
  // bytes, so that a pass over 65k flows of a 256-rank one-shot reads 3 MB, not 9.4), kept in
  // start order, and what its start and end need (FlowEnd), in a slab that never moves it
  // (compacting the flows moves 48 bytes per flow, not a callback too).
  struct Flow {
    double remaining_wire_bytes = 0;
    double rate = 0;  // bytes per ps
    SimTime finish_ps = kSimTimeMax;
    const int* resources = nullptr;  // its route's
    int num_resources = 0;
    int flow_class = -1;  // in classes_
    int end = -1;         // in flow_ends_
  };
  struct FlowEnd {
    // User-provided, so that emplace_back() runs the member initializers only: value-initializing
    // an aggregate first zeroes all of it (a `rep stos` that was a third of BeginFlow's time).
    FlowEnd() {}  // NOLINT(modernize-use-equals-default): `= default` would bring the zeroing back
    SimTime latency_ps = 0;
    SimTime start_ps = 0;
    int engine = -1;  // copy engine index in engines_, or -1
    int src_node = -1;
    int dst_node = -1;
    int label = -1;     // in labels_ (kept only when tracing), or -1
    int64_t bytes = 0;  // payload
    Mechanism mechanism = Mechanism::kKernelWrite;
    DoneCallback done;
  };
  // A FIFO of waiting copies: queue[head..] (a vector, not a deque: a deque allocates when
  // constructed, and a fabric has engines on every GPU, built per collective).
  struct CopyEngine {
    bool busy = false;
    std::vector<std::pair<TransferSpec, DoneCallback>> queue;
    size_t head = 0;
    size_t waiting() const { return queue.size() - head; }
  };

  void BeginFlow(const TransferSpec& spec, DoneCallback done, int engine);
  int ClassOf(RouteResources& route, double cap_bytes_per_ps);
  // A flow of class `c` begins or ends (active_classes_ and mix_key_ kept in O(1) per flow).
  void AddToClass(int c);
  void RemoveFromClass(int c);
  // Fills class_rate_ for the active classes: from the memo, else by a solve.
  void SolveActiveClasses();
  void EngineFree(int engine);
  // Moves `f` on by `dt_ps` at its rate, charging the wire bytes to its resources. Each pass
  // over the flows (completion, recompute) advances every flow in flow order as it goes, so each
  // resource's bytes are summed in flow order (deterministic, whatever the passes).
  void AdvanceFlow(Flow& f, SimTime dt_ps);
  void MarkDirty();
  void Recompute();
  void OnCompletion();
  int PickEngine(const TransferSpec& spec);
  int GpuIndexOfNode(int node) const { return gpu_of_node_[node]; }  // -1: not a GPU
  // The copy engine's setup time of the GPU that owns the copy (the source GPU, else the destination).
  SimTime CopySetupPs(const TransferSpec& spec) const;

  EventQueue* queue_;
  const Topology* topology_;
  const Router* router_;
  std::vector<int> gpu_of_node_;           // GpuIndexOfEachNode: per-flow lookups in O(1)
  std::vector<int> host_memory_of_node_;   // HostMemoryOfEachNode
  std::vector<int> cpu_resource_of_node_;  // node -> its P2P forwarding resource or -1
  std::vector<double> capacity_bytes_per_ps_;
  std::vector<double> collapse_per_flow_;  // per resource, CPU forwarding only
  std::vector<double> resource_bytes_;
  std::vector<double> resource_rate_;  // current aggregate, for trace samples
  std::vector<Flow> flows_;
  std::vector<FlowEnd> flow_ends_;  // a slab: Flow::end, and free_flow_ends_ free
  std::vector<int> free_flow_ends_;
  RoutePool routes_;  // kept across Reset: flows and classes point into it
  // Scratch kept between events (no allocation per event in steady state).
  std::vector<FlowClass> classes_;   // every class met, kept across Reset
  std::vector<int> active_classes_;  // classes with active flows, in no order
  std::vector<double> class_rate_;   // per class, valid for the active ones after a recompute
  uint64_t mix_key_ = 0;             // of the active classes' mix (SolvedMixMemo)
  SolvedMixMemo memo_;
  MaxMinSolver solver_;
  std::vector<double> capacity_scratch_;
  std::vector<int> forwarded_scratch_;
  std::vector<MaxMinFlowView> views_scratch_;
  std::vector<double> rates_scratch_;
  std::vector<double> new_rate_scratch_;
  std::vector<CopyEngine> engines_;  // [gpu][direction][engine] flattened
  std::vector<int> engine_base_;     // first engine of (gpu, direction): gpu*2+dir
  SimTime last_update_ps_ = 0;
  bool recompute_pending_ = false;
  EventId completion_event_ = 0;
  bool completion_pending_ = false;
  int64_t flows_started_ = 0;
  bool record_trace_ = false;
  bool reuse_solved_mixes_ = true;
  std::vector<std::string> labels_;  // of the flows, when tracing
  std::vector<FlowRecord> flow_records_;
  std::vector<ResourceRateSample> rate_samples_;
};

}  // namespace specsim::net
