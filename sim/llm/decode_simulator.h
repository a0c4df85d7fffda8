// The decode loop, plain and speculative, with every tensor-parallel rank its own timeline.
//
// A forward pass (forward_pass.h) is a list of kernels and communication points. Every TP rank
// runs it on its own host thread and GPU stream (rank_timeline.h): kernels take their roofline
// device time (sim/compute); a collective starts its transfer when the last rank's collective
// kernel starts, so the early ranks wait (skew) and then share the transfer. How each phase is
// launched comes from the framework profile (framework_profile.h): a full CUDA graph (one launch
// per pass, a gap before every kernel), piecewise graphs (attention launched eagerly between
// captured segments) or eager (the host issues every op: a raw kernel, a library call or a
// collective call, each at its calibrated host cost, plus the framework's own per-op cost); a
// kernel starts at the later of its issue and the previous op's end, so small kernels become
// host-bound. Between passes the loop does its host work and, when the framework reads tokens
// back, waits for its GPU (a host sync). Host costs vary per rank and op (seeded jitter); GPU
// time may vary per rank. Each distinct collective (kind, bytes) is planned as NCCL (or the chosen
// custom allreduce) would run it and executed once on the fabric (sim/coll/executor.h) of an
// otherwise idle box; later occurrences reuse that duration (exact for TP decode, where nothing
// else uses the links meanwhile). Compute/communication overlap is not modelled (SGLang's decode
// does not overlap them).
//
// With no jitter, no GPU variation and full graphs, the ranks are identical and the result equals
// the symmetric event-engine schedule of the pass (SimulatePassOnEventEngine, kept as the
// reference implementation: a test checks the two agree exactly).
//
// A speculative cycle (SGLang's EAGLE loop, docs/reference/speculative-decoding.md), per cycle:
//   verify:        one target pass over batch x num_draft_tokens tokens
//   draft extend:  one draft pass over batch x (accepted + 1) tokens (it also drafts token 1)
//   draft steps:   num_steps - 1 draft passes over batch x topk tokens
// The accepted count is drawn from the acceptance model (seeded); tokens per cycle = accepted + 1.
// Each distinct pass shape is simulated once and reused: cycles differ only in the accepted count.
// MTP (NEXTN) uses the target's extra layer as the draft (BuildMtpDraftPass); a standalone draft
// model (DRAFT_MODEL) runs its own full forward passes (BuildForwardPass of the draft, sharded over
// the target's TP group, with its own collectives). NGRAM has no draft passes: the host matches
// (ngram.h), then one verify pass.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "sim/coll/collective_planner.h"
#include "sim/coll/executor.h"
#include "sim/compute/kernel_cost.h"
#include "sim/core/status.h"
#include "sim/llm/acceptance.h"
#include "sim/llm/forward_pass.h"
#include "sim/llm/framework_profile.h"
#include "sim/llm/host_costs.h"
#include "sim/llm/rank_timeline.h"
#include "sim/llm/model.h"
#include "sim/net/routing.h"
#include "sim/net/topology.h"

namespace specsim::llm {

enum class SpeculationMethod { kNone, kEagle3, kMtp, kDraftModel, kNgram };
// "off", "EAGLE-3", "MTP", "draft model", "n-gram": for reports.
const char* SpeculationMethodName(SpeculationMethod method);

struct SpeculationSettings {
  SpeculationMethod method = SpeculationMethod::kNone;
  int num_steps = 0;         // --speculative-num-steps
  int topk = 1;              // --speculative-eagle-topk
  int num_draft_tokens = 1;  // --speculative-num-draft-tokens (tokens verified per sequence)
  std::optional<AcceptanceModel> acceptance;
  std::string acceptance_basis;         // where the acceptance comes from (AcceptanceForShape)
  bool acceptance_approximate = false;  // converted through the tree model (AcceptanceForShape)
  // NGRAM (ngram.h): `acceptance` is the cycle's (NgramCycleAcceptance), `proposed_acceptance` that
  // of proposed drafts; the match probability per sequence per cycle; the host's matching time per
  // sequence per cycle; whether every sequence verifies num_draft_tokens every cycle (SGLang) or an
  // unmatched one only its own token (vLLM).
  std::optional<AcceptanceModel> proposed_acceptance;
  double ngram_match_probability = 0;
  double ngram_host_match_us_per_sequence = 0;
  bool ngram_verify_padded = true;
  uint64_t seed = 0;
  int cycles = 1000;
};

struct DecodeSetup {
  const net::Topology* topology = nullptr;  // must outlive the simulator
  ModelSpec target;
  std::optional<ModelSpec> draft;  // EAGLE-3 head, or the standalone draft model (DRAFT_MODEL)
  ParallelSpec parallel;
  std::vector<int> gpus;  // rank -> GPU index; empty: 0..tp-1
  int batch = 1;
  int context_length = 0;
  compute::DType weight_dtype = compute::DType::kBf16;
  compute::DType activation_dtype = compute::DType::kBf16;
  compute::DType kv_dtype = compute::DType::kBf16;
  std::optional<compute::DType> expert_weight_dtype;  // unset: weight_dtype
  // The target's per-tensor weight formats (scenario serving.weight_source CHECKPOINT:
  // FormatsFromCheckpoint(target.quantization)); set, they replace weight_dtype and
  // expert_weight_dtype for the target's passes and its MTP layer (EAGLE-3 heads stay bf16).
  std::optional<WeightFormats> weight_formats;
  bool cuda_graphs = true;  // without a framework: every phase full graphs, else eager
  // How the ranks' hosts pace their GPUs. framework unset: capture from cuda_graphs, no framework
  // costs, no jitter.
  std::optional<FrameworkProfile> framework;
  // The driver-side host costs (calibrated; unset ones are the compute model's launch overheads:
  // host_costs.h): raw-kernel, library and collective issue, graph launch, sync wake, and the
  // natural per-op jitter used when the framework has none.
  HostCosts driver;
  GpuVariation gpu_variation;
  uint64_t pacing_seed = 1;
  // The allreduce choice: algorithm, protocol, channels, P2P level. collective, bytes and gpus are
  // filled in per communication point.
  coll::CollectiveRequest allreduce;
  compute::ComputeParams compute;
  SpeculationSettings speculation;
};

// The groups of the framework's cycle_ops the setup's speculative worker runs (CycleOps::RunBy):
// the n-gram worker's or the drafting ones', those of a reduced draft vocabulary only when the draft
// head has one (an EAGLE-3 head with draft_vocab_size below the target's vocab_size). Empty without
// a framework profile.
std::vector<CycleOps> CycleOpsOf(const DecodeSetup& setup);
// The framework's named cycle_host_waits the setup's speculative worker meets (HostWait::RunBy);
// empty without a framework profile.
std::vector<HostWait> CycleWaitsOf(const DecodeSetup& setup);

enum class PassKind { kTargetDecode, kVerify, kDraftExtend, kDraftStep };
const char* PassKindName(PassKind kind);

// One stage of a decode loop as each rank's host thread drives it. A loop is a list of stages,
// repeated: the serving loop's plain step and speculative cycle (from the framework profile) and
// specsim-validate's measured loops (sim/calib) are all written so, and run by DecodeSimulator.
struct LoopStage {
  enum class Kind {
    kPass,         // a forward pass, launched as its phase's capture mode (framework profile)
    kCopy,         // a copy the host issues on the stream (the token read-back, D2H): device_ps
    kTensorOp,     // a small tensor op the framework launches outside its passes (cycle_ops): device_ps,
                   // the host's per-call cost HostOpClass::kTensorOp's
    kHostSync,     // the host waits for its GPU (.item(), .tolist(), cudaStreamSynchronize); on_event:
                   // for the loop's last kEventRecord only (cudaEventSynchronize)
    kHostWork,     // host time between passes (scheduling, acceptance, draft tree): host_us
    kEventRecord,  // a CUDA event recorded on the stream after the stages before it
  };
  Kind kind = Kind::kPass;
  PassKind pass = PassKind::kTargetDecode;  // kPass
  int tokens_per_sequence = 1;              // kPass
  int narrow_sequences = 0;                 // kPass: a ragged batch's one-token sequences (PassShape)
  SimTime device_ps = 0;                    // kCopy, kTensorOp
  double host_us = 0;                       // kHostWork
  bool on_event = false;                    // kHostSync
  int phase = 0;                            // index into the loop's phases (accounts, slices)
  std::string label;                        // kCopy, kTensorOp, kHostSync, kHostWork (passes label their ops)

  static LoopStage Pass(PassKind kind, int tokens_per_sequence, int phase, int narrow_sequences = 0);
  static LoopStage Copy(SimTime device_ps, int phase, std::string label);
  static LoopStage TensorOp(SimTime device_ps, int phase, std::string label);
  static LoopStage HostSync(int phase, std::string label, bool on_event = false);
  static LoopStage EventRecord(int phase);
  static LoopStage HostWork(double host_us, int phase, std::string label);
};

struct LoopSpec {
  std::vector<std::string> phases;
  std::vector<LoopStage> stages;
};

struct PassTiming {
  SimTime total_ps = 0;
  SimTime compute_ps = 0;  // kernel device time
  SimTime comm_ps = 0;     // collectives as a profiler on rank 0 shows them: wait + transfer
  SimTime wait_ps = 0;     // of which rank 0 waited for the last rank
  SimTime launch_ps = 0;   // time not spent in kernels or collectives: launch gaps, host-bound issue, syncs
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

// Mean per cycle. comm = wait + transfer (what a profiler on rank 0 shows as the collectives).
struct CycleBreakdown {
  double draft_compute_ms = 0;
  double draft_comm_ms = 0;
  double draft_wait_ms = 0;  // rank 0's wait for the last rank at draft collectives
  double verify_compute_ms = 0;
  double verify_comm_ms = 0;
  double verify_wait_ms = 0;
  double launch_sync_ms = 0;    // launch gaps, host-bound issue, host work and syncs
  double wait_max_ms = 0;       // per collective the longest wait of any rank, summed
  double host_bound_share = 0;  // launch_sync / cycle
};

// One distinct collective of the run, as planned and simulated.
struct CollectiveInfo {
  CommKind kind = CommKind::kAllReduce;
  int64_t bytes = 0;
  std::string algorithm;  // what ran: "ring", "tree", "oneshot", ...
  std::string protocol;
  int channels = 0;
  double time_us = 0;
  std::string busiest_link;
  double busiest_utilisation = 0;
  std::string description;  // "allreduce 14336 B: ring/ll/2ch 35.1 us, busiest gpu0->cpu0 (12%)"
  // NCCL's: where its step costs came from (coll::PlannedCollective::step_costs) and the range of
  // the uncalibrated transport model around time_us (1, 1 when calibrated or a custom kernel).
  std::string step_costs;
  double range_low = 1, range_high = 1;
};

struct DecodeResult {
  PassTiming baseline_step;
  double baseline_step_ms = 0;
  double baseline_tokens_per_s = 0;
  bool speculative = false;
  double tau = 0;           // sampled mean tokens per cycle (bonus included)
  double tau_expected = 0;  // from the acceptance model
  double cycle_ms = 0;      // mean over cycles
  double speculative_tokens_per_s = 0;
  double speedup = 0;
  int cycles = 0;
  CycleBreakdown breakdown;  // mean per cycle
  PassTiming verify;
  PassTiming draft_step;
  // The distinct collectives that ran, in order of first use.
  std::vector<CollectiveInfo> collectives;
};

// The tokens/s of `r` (speculative when it speculated, else the baseline) at the two ends of the
// NCCL transport model's range (coll::NcclStepWork range_low .. range_high): every collective
// `factor` times its time. Given only when every collective of the run is priced by the
// uncalibrated transport model (CollectiveInfo range != 1: none calibrated, no custom kernel) and
// no rank waited at one: then a pass's time is its compute, comm and launch added, and each moves
// by (factor - 1) x comm. Exact for CUDA-graph passes; for eager passes whose host is the
// bottleneck it overstates the movement. `low` is the tokens/s at the range's high end (slower NCCL).
struct NcclRangeTokens {
  double low_tokens_per_s = 0, high_tokens_per_s = 0;
};
std::optional<NcclRangeTokens> NcclRangeOf(const DecodeResult& r);

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
  // Every rank's host and GPU slices over `steps` decode steps (or speculative cycles with
  // `accepted` draft tokens accepted each), after one warm-up, for a Perfetto timeline.
  StatusOr<std::vector<RankSlice>> LoopTimeline(int steps, bool speculative, int accepted);
  // The device time of one pass on rank 0 by kernel class (compute::KernelClassName: "gemm",
  // "attention", "norm", "elementwise", ...) and of its collectives' transfers ("collective"), ns:
  // what a profiler's busy time by class is compared with.
  StatusOr<std::map<std::string, double>> PassDeviceTimeByClass(PassKind kind, int tokens_per_sequence);
  // The host model the rank timelines use (driver costs, calibrated or from the compute model,
  // plus the framework's per-op costs).
  HostModel HostModelOf() const;
  // A loop given as stages (e.g. specsim-validate's decode loop, sim/calib), run on the rank
  // timelines: one warm-up iteration, then `iterations` (one when nothing varies), each timed on
  // every rank from its start to its end; per iteration the slowest rank's time.
  StatusOr<std::vector<SimTime>> RunLoop(const LoopSpec& loop, int iterations);

  const DecodeSetup& setup() const { return setup_; }

 private:
  // Tests reach the reference implementation and the replay switch through it.
  friend class DecodeSimulatorTestPeer;

  explicit DecodeSimulator(DecodeSetup setup);
  // The reference implementation of one pass with identical ranks, no jitter: the pass as a
  // schedule of delays on the event engine (sim/coll/executor.h). Full graphs or eager only.
  StatusOr<PassTiming> SimulatePassOnEventEngine(PassKind kind, int tokens_per_sequence);
  StatusOr<ForwardPass> BuildPass(PassKind kind, int tokens_per_sequence, int narrow_sequences = 0) const;
  StatusOr<SimTime> CollectiveTime(CommKind kind, int64_t bytes);
  StatusOr<PassTiming> SimulatePass(PassKind kind, int tokens_per_sequence, std::vector<TimelineSlice>* slices);
  CaptureMode CaptureOf(PassKind kind) const;
  // A ragged verify's capture (ngram.h): the less captured of the verify phase's and the
  // framework's ngram_ragged_verify_capture (the verify phase's where it states none).
  CaptureMode RaggedVerifyCapture() const;
  // NGRAM without padding (vLLM): a cycle's key is its matched sequences, its verify ragged.
  bool NgramRagged() const;
  // Appends one pass's steps (launched as its phase's capture mode) to `program`.
  // A pass's timeline steps (graph launches, kernels with their device times, collectives with
  // their transfer times), built once per (kind, tokens, narrow sequences) and kept; labels apart,
  // so programs that record no slices carry none.
  struct PassSegment {
    std::vector<TimelineStep> steps;  // labels empty, phase 0
    std::vector<std::string> labels;  // per step
  };
  StatusOr<const PassSegment*> Segment(PassKind kind, int tokens_per_sequence, int narrow_sequences = 0);
  // `stage` (a kPass) appended in its phase.
  Status AppendPass(const LoopStage& stage, TimelineProgram* program, bool labels = true);
  // The loop's host side after a pass: a sync (when the framework reads back: `sync`) and its host work.
  // After `pass` (of the loop's phase `pass_phase`) is issued: the framework's waits met there
  // (framework.proto HostWait) in phase `host_phase`, an event where a later wait needs one, and
  // the loop's host work after the first wait (`*host_work_us` then 0).
  static void AppendWaitsAfter(LoopPass pass, int pass_phase, int host_phase, const std::vector<HostWait>& waits,
                               double* host_work_us, std::vector<LoopStage>* stages);
  // The serving loop as the framework profile runs it: one plain decode step / one speculative
  // cycle with `accepted` draft tokens accepted.
  LoopSpec StepLoop() const;
  // A speculative cycle by its key: the accepted draft tokens, or a ragged NGRAM cycle's matched
  // sequences (NgramRagged).
  LoopSpec CycleLoop(int key) const;
  // The cycle's own launches met just before `before` is issued (FrameworkProfile::cycle_ops), in
  // phase `phase`: small tensor ops of a minimal kernel's device time (MinimalKernelPs), each
  // paying the host's per-call cost of one (HostOpClass::kTensorOp: tensor_op_host_us). `each_draft_step`: the groups met
  // before every draft step (CycleOps::every_draft_step), else those met once.
  void AppendCycleOps(LoopPass before, int phase, std::vector<LoopStage>* stages, bool each_draft_step = false) const;
  // A kernel that touches almost nothing (4 KiB, elementwise): the GPU's floor per kernel.
  SimTime MinimalKernelPs() const;
  // NGRAM's cycle (ngram.h): the host's matching, one verify (ragged: `matched` of the batch's
  // sequences num_draft_tokens wide, the others one token; padded: all of them wide), the waits.
  LoopSpec NgramCycleLoop(int matched) const;
  // A loop's timeline program: its passes' steps (capture modes applied) and its host side.
  StatusOr<TimelineProgram> BuildLoopProgram(const LoopSpec& loop, bool labels);
  StatusOr<TimelineProgram> BuildStepProgram(bool labels) { return BuildLoopProgram(StepLoop(), labels); }
  StatusOr<TimelineProgram> BuildCycleProgram(int key, bool labels) { return BuildLoopProgram(CycleLoop(key), labels); }
  // `p` with each graph segment's kernels merged (MergeGraphKernels) where that keeps the clocks
  // (no per-kernel GPU variation).
  TimelineProgram MergedForRuns(TimelineProgram p) const;
  // The built programs, merged where possible, memoized.
  StatusOr<const TimelineProgram*> StepProgram();
  StatusOr<const TimelineProgram*> CycleProgram(int key);
  bool Deterministic() const;
  // The plain decode step of Run: one warm-up (the loop's steady state), then the mean over steps.
  StatusOr<PassTiming> BaselineStep();
  // Sums over the speculative cycles of Run.
  struct CycleTotals {
    std::vector<PhaseAccount> accounts;  // per phase of the cycle's program
    double total_ps = 0;                 // the cycles' spans
    double tokens = 0;                   // tokens per sequence the cycles produced
  };
  // `speculation.cycles` cycles of sampled accepted counts after one warm-up (replayed from memos
  // where that is exact).
  StatusOr<CycleTotals> RunSpeculativeCycles();
  // Run's speculative figures (tau, cycle time, speedup, breakdown) from the cycles' sums.
  void SummariseCycles(CycleTotals totals, DecodeResult* result) const;

  DecodeSetup setup_;
  std::unique_ptr<net::Router> router_;
  // Plan and time this box's collectives and passes one after another: the ranks' view of the
  // fabric and the fabric's routes are built once (each result is that of a fresh planner / fabric).
  std::unique_ptr<coll::CollectivePlanner> planner_;
  std::unique_ptr<coll::CollectiveTimer> timer_;
  std::unique_ptr<compute::KernelCostModel> cost_;
  std::map<std::pair<int, int64_t>, SimTime> collective_ps_;
  std::map<std::tuple<int, int, int>, PassSegment> segments_;
  std::map<std::pair<int, int>, PassTiming> passes_;
  std::vector<CollectiveInfo> collective_infos_;
  std::optional<TimelineProgram> step_program_;
  std::map<int, TimelineProgram> cycle_programs_;  // by accepted count
  // Replay repeated speculative cycles from a memo when the run is deterministic (exact; see
  // Run). Off only in the test that holds the memo to running every cycle.
  bool replay_cycles_ = true;
};

}  // namespace specsim::llm
