// The decode loop, plain and speculative, on the event engine.
//
// A forward pass (forward_pass.h) is a list of kernels and communication points. It runs as a
// schedule (sim/coll/schedule.h) on the event engine: on every TP rank a chain of kernels (device
// time from the roofline model in sim/compute), and at every communication point a barrier
// followed by the collective. Launch overhead: with CUDA graphs, one graph launch per pass and a
// fixed gap before every kernel; eager, a CPU thread per rank issues kernels one after another
// (launch_overhead_eager each) and a kernel starts at the later of its issue and the previous
// kernel's end, so small kernels become CPU-bound while long ones hide the CPU. Each
// distinct collective (kind, bytes) is planned as NCCL (or the chosen custom allreduce) would run
// it and executed once on the fabric (sim/coll/executor.h) of an otherwise idle box; later
// occurrences reuse that duration. This is exact for TP decode, where nothing else uses the links
// while a collective runs (the simulation is deterministic), and it is what makes 1,000 cycles
// take milliseconds. Compute/communication overlap is not modelled (SGLang's decode does not
// overlap them).
//
// A speculative cycle (SGLang's EAGLE loop, reference.md section 6), per cycle:
//   verify:        one target pass over batch x num_draft_tokens tokens
//   draft extend:  one draft pass over batch x (accepted + 1) tokens (it also drafts token 1)
//   draft steps:   num_steps - 1 draft passes over batch x topk tokens
// The accepted count is drawn from the acceptance model (seeded); tokens per cycle = accepted + 1.
// Each distinct pass shape is simulated once and reused: cycles differ only in the accepted count.
// MTP (NEXTN) uses the target's extra layer as the draft (BuildMtpDraftPass).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/coll/collective_planner.h"
#include "sim/compute/kernel_cost.h"
#include "sim/core/status.h"
#include "sim/llm/acceptance.h"
#include "sim/llm/forward_pass.h"
#include "sim/llm/model.h"
#include "sim/net/routing.h"
#include "sim/net/topology.h"

namespace specsim::llm {

enum class SpeculationMethod { kNone, kEagle3, kMtp };

struct SpeculationSettings {
  SpeculationMethod method = SpeculationMethod::kNone;
  int num_steps = 0;          // --speculative-num-steps
  int topk = 1;               // --speculative-eagle-topk
  int num_draft_tokens = 1;   // --speculative-num-draft-tokens (tokens verified per sequence)
  std::optional<AcceptanceModel> acceptance;
  uint64_t seed = 0;
  int cycles = 1000;
};

struct DecodeSetup {
  const net::Topology* topology = nullptr;  // must outlive the simulator
  ModelSpec target;
  std::optional<ModelSpec> draft;           // EAGLE-3 head
  ParallelSpec parallel;
  std::vector<int> gpus;                    // rank -> GPU index; empty: 0..tp-1
  int batch = 1;
  int context_length = 0;
  compute::DType weight_dtype = compute::DType::kBf16;
  compute::DType activation_dtype = compute::DType::kBf16;
  compute::DType kv_dtype = compute::DType::kBf16;
  std::optional<compute::DType> expert_weight_dtype;  // unset: weight_dtype
  bool cuda_graphs = true;
  // The allreduce choice: algorithm, protocol, channels, P2P level. collective, bytes and gpus are
  // filled in per communication point.
  coll::CollectiveRequest allreduce;
  compute::ComputeParams compute;
  SpeculationSettings speculation;
};

enum class PassKind { kTargetDecode, kVerify, kDraftExtend, kDraftStep };
const char* PassKindName(PassKind kind);

struct PassTiming {
  SimTime total_ps = 0;
  SimTime compute_ps = 0;   // kernel device time
  SimTime comm_ps = 0;      // collectives
  SimTime launch_ps = 0;    // time not spent in kernels or collectives: launch gaps, CPU-bound issue
  int kernels = 0;
  int collectives = 0;
};

// One slice of a pass timeline, for traces.
struct TimelineSlice {
  std::string name;
  std::string category;  // "compute", "comm", "launch"
  SimTime start_ps = 0;
  SimTime end_ps = 0;
};

struct CycleBreakdown {
  double draft_compute_ms = 0;
  double draft_comm_ms = 0;
  double verify_compute_ms = 0;
  double verify_comm_ms = 0;
  double launch_sync_ms = 0;
};

// One distinct collective of the run, as planned and simulated.
struct CollectiveInfo {
  CommKind kind = CommKind::kAllReduce;
  int64_t bytes = 0;
  std::string algorithm;       // what ran: "ring", "tree", "oneshot", ...
  std::string protocol;
  int channels = 0;
  double time_us = 0;
  std::string busiest_link;
  double busiest_utilisation = 0;
  std::string description;     // "allreduce 14336 B: ring/ll/2ch 35.1 us, busiest gpu0->cpu0 (12%)"
};

struct DecodeResult {
  PassTiming baseline_step;
  double baseline_step_ms = 0;
  double baseline_tokens_per_s = 0;
  bool speculative = false;
  double tau = 0;             // sampled mean tokens per cycle (bonus included)
  double tau_expected = 0;    // from the acceptance model
  double cycle_ms = 0;        // mean over cycles
  double speculative_tokens_per_s = 0;
  double speedup = 0;
  int cycles = 0;
  CycleBreakdown breakdown;   // mean per cycle
  PassTiming verify;
  PassTiming draft_step;
  // The distinct collectives that ran, in order of first use.
  std::vector<CollectiveInfo> collectives;
};

class DecodeSimulator {
 public:
  // InvalidArgument for inconsistent settings (no draft model for EAGLE-3, TP larger than the
  // GPUs, an acceptance model longer than num_steps, ...).
  static StatusOr<std::unique_ptr<DecodeSimulator>> Create(DecodeSetup setup);

  // The timing of one pass (memoized by kind and tokens per sequence).
  StatusOr<PassTiming> Pass(PassKind kind, int tokens_per_sequence);
  // Baseline and (when speculation is on) the speculative loop over `cycles` sampled cycles.
  StatusOr<DecodeResult> Run();
  // The slices of one pass on rank 0, for a Perfetto timeline.
  StatusOr<std::vector<TimelineSlice>> PassTimeline(PassKind kind, int tokens_per_sequence);

  const DecodeSetup& setup() const { return setup_; }

 private:
  explicit DecodeSimulator(DecodeSetup setup);
  StatusOr<ForwardPass> BuildPass(PassKind kind, int tokens_per_sequence) const;
  StatusOr<SimTime> CollectiveTime(CommKind kind, int64_t bytes);
  StatusOr<PassTiming> SimulatePass(PassKind kind, int tokens_per_sequence, std::vector<TimelineSlice>* slices);

  DecodeSetup setup_;
  std::unique_ptr<net::Router> router_;
  std::unique_ptr<compute::KernelCostModel> cost_;
  std::map<std::pair<int, int64_t>, SimTime> collective_ps_;
  std::map<std::pair<int, int>, PassTiming> passes_;
  std::vector<CollectiveInfo> collective_infos_;
};

}  // namespace specsim::llm
