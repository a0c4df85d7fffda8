// How a serving framework drives the GPUs of one tensor-parallel group: which phases of the decode
// loop run as CUDA graphs, what its host does per op and per step, and how that host time varies.
// Plain data; loaded from configs/frameworks/*.textproto by sim/io (framework_loader.h), named by a
// scenario, fed to the decode loop's rank timelines (decode_simulator.h, rank_timeline.h).
//
// Capture modes (per phase of the loop):
//   kFull       the whole forward pass is one captured CUDA graph (one launch per pass);
//   kPiecewise  every run of kernels between attention kernels is a captured graph, attention is
//               launched eagerly between them (vLLM's piecewise CUDA graphs; SGLang's piecewise
//               mode): a pass of L layers is L + 1 graph launches and L eager attention launches;
//   kEager      every kernel and collective is launched from the host.
// Host costs: the driver's launch of a raw kernel, a library call (cuBLAS) and a collective call
// (NCCL) are the calibration's (HostModel in rank_timeline.h); the framework adds its own cost per
// eager op (Python dispatch), per graph replay, and per step / cycle (scheduling, sampling
// bookkeeping, the speculative loop's acceptance processing and draft tree building).
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/llm/forward_pass.h"
#include "sim/llm/graph_pool.h"
#include "sim/llm/model.h"
#include "sim/llm/rank_timeline.h"

namespace specsim::llm {

enum class CaptureMode { kFull, kPiecewise, kEager };

// The framework's own host costs (FrameworkProfile::HostCostUs).
enum class HostCost { kEagerOp, kGraphReplay, kDecodeStep, kSpecCycle, kTensorOp };
inline constexpr HostCost kHostCosts[] = {HostCost::kEagerOp, HostCost::kGraphReplay, HostCost::kDecodeStep,
                                          HostCost::kSpecCycle, HostCost::kTensorOp};
// The profile's field name: "eager_op_host_us", "graph_replay_host_us", "decode_step_host_us",
// "spec_cycle_host_us", "tensor_op_host_us".
const char* HostCostName(HostCost cost);

// Where one host cost comes from (framework.proto HostCostSource).
struct HostCostSource {
  enum class Kind { kUnstated, kFitted, kUnmeasured, kDefinition, kScenarioOverride };
  Kind kind = Kind::kUnstated;
  std::string fitted_from, host;  // kFitted: the traces and the host (CPU model) they came from
  std::string citation;           // kUnmeasured: the public figure of the range
  std::string definition;         // kDefinition: why the value is what it is
  bool has_range = false;         // kUnmeasured always; kFitted when the runs' spread is stated
  double low_us = 0, high_us = 0;
};
const char* HostCostKindName(HostCostSource::Kind kind);  // "fitted", "unmeasured", ...

const char* CaptureModeName(CaptureMode mode);  // "full", "piecewise", "eager"

// The decode loop's passes, in the speculative cycle's order (framework.proto LoopPass).
enum class LoopPass { kDecode, kVerify, kDraftExtend, kDraft };
const char* LoopPassName(LoopPass pass);  // "decode", "verify", "draft_extend", "draft"

// One place where the framework's host waits for the GPU (framework.proto HostWait): met after
// issuing `after`, it waits until `waits_for` has ended on the GPU (the same pass: a stream sync;
// an earlier one: an event, while the passes issued since keep running).
struct HostWait {
  std::string name;  // as the source writes it, e.g. "accept_index.tolist()"
  LoopPass after = LoopPass::kVerify;
  LoopPass waits_for = LoopPass::kVerify;
  std::string source;
  bool drafting = true;  // the drafting workers meet it (a cycle's wait)
  bool ngram = true;     // the n-gram worker meets it (after its verify: its cycle has no draft)
  bool RunBy(bool ngram_worker) const { return ngram_worker ? ngram : drafting; }
};

// A group of the speculative cycle's own kernel launches outside its passes (framework.proto
// CycleOps): `kernels` eager launches met just before `before` is issued.
struct CycleOps {
  std::string name;
  LoopPass before = LoopPass::kVerify;
  int kernels = 0;
  std::string source;
  bool drafting = true;           // the drafting workers (EAGLE-3, MTP, a draft model) run it
  bool ngram = false;             // the n-gram worker runs it (before its verify, right after, or after its waits)
  int kernels_per_sequence = 0;   // launches per sequence of the batch, on top of `kernels`
  bool every_draft_step = false;  // met before each draft step (num_steps - 1), not once: before == kDraft
  bool draft_vocab_map = false;   // only with a draft head whose reduced vocabulary maps to the target's
  // Launches each time the group is met.
  int Launches(int batch) const { return kernels + kernels_per_sequence * batch; }
  // Launches per cycle: each time met x the times met (num_steps - 1 draft steps when every_draft_step).
  int LaunchesPerCycle(int batch, int num_steps) const {
    return every_draft_step ? Launches(batch) * std::max(num_steps - 1, 0) : Launches(batch);
  }
  // Whether the scenario's worker runs the group: the n-gram one or a drafting one, whose head maps
  // a reduced vocabulary to the target's (`draft_vocab_mapped`) or not.
  bool RunBy(bool ngram_worker, bool draft_vocab_mapped) const {
    if (draft_vocab_map && !draft_vocab_mapped) return false;
    return ngram_worker ? ngram : drafting;
  }
};

// The attention backend a framework picks for a GPU architecture, cache kind and tree width, with
// its kernels and the capture it gives the phases it decides (framework.proto AttentionBackendRule).
struct AttentionBackendRule {
  enum class Topk { kAny, kOne, kAboveOne };
  std::vector<std::string> gpu_archs;  // "sm90", ...
  bool mla = false;                    // MLA's latent cache, else GQA / MHA
  Topk topk = Topk::kAny;
  std::string backend, decode_kernel, verify_kernel, source;
  // MLA rules: the GQA kernels the backend runs for a GQA draft head (empty: the profile's labels).
  std::string gqa_draft_decode_kernel, gqa_draft_verify_kernel;
  // The capture it decides per phase (nullopt: the profile's).
  std::optional<CaptureMode> decode, draft, verify, draft_extend;
  bool Matches(const std::string& gpu_arch, bool mla_cache, int topk_width) const;
};

struct PhaseCapture {
  CaptureMode decode = CaptureMode::kFull;        // plain decode step (the baseline)
  CaptureMode draft = CaptureMode::kFull;         // EAGLE-3 / MTP draft steps
  CaptureMode verify = CaptureMode::kFull;        // target verify of N tokens per sequence
  CaptureMode draft_extend = CaptureMode::kFull;  // the draft's pass over the accepted tokens
};

struct FrameworkProfile {
  std::string name;    // e.g. "sglang", "vllm", "cpp-graph"
  std::string source;  // where its values come from (file and version), for reports
  PhaseCapture capture;
  double eager_op_host_us = 0;      // the framework's own host time per eagerly launched op
  double graph_replay_host_us = 0;  // its own host time around each graph replay
  double decode_step_host_us = 0;   // host work per plain decode step (scheduling, bookkeeping)
  double spec_cycle_host_us = 0;    // host work per speculative cycle (acceptance, draft tree)
  double tensor_op_host_us = 0;     // its own host time per small tensor op outside the passes (cycle_ops)
  // The cost `cost` (one of the five above).
  double& HostCostUs(HostCost cost);
  double HostCostUs(HostCost cost) const;
  // Where each cost comes from, indexed by HostCost; and the jitter's provenance.
  HostCostSource host_cost_sources[std::size(kHostCosts)];
  const HostCostSource& SourceOf(HostCost cost) const { return host_cost_sources[static_cast<int>(cost)]; }
  HostCostSource& SourceOf(HostCost cost) { return host_cost_sources[static_cast<int>(cost)]; }
  std::string jitter_source;
  // The plain decode loop waits for the GPU once per step (token read-back: .tolist(), .item());
  // false: the host runs ahead (overlapped scheduling, SGLang's default for plain decode).
  bool sync_each_step = true;
  // The speculative loop waits for the GPU once per cycle (acceptance read-back).
  bool sync_each_cycle = true;
  // Every host op's jitter. When set (not kNone) it replaces the driver's natural jitter (the
  // calibration's), which applies otherwise.
  Jitter jitter;
  // The attention kernels it runs for decode (q = 1) and verify (q > 1), as calibrations name
  // attention implementations, for GQA / MHA caches and for MLA's latent cache; empty: not stated.
  std::string attention_decode, attention_verify;
  std::string attention_mla_decode, attention_mla_verify;
  // When it runs its own custom allreduce instead of NCCL (framework.proto CustomAllreduceRule).
  struct CustomAllreduceRule {
    bool stated = false;           // false: the profile states no rule
    std::vector<int> world_sizes;  // supported at all
    int max_world_size_without_full_nvlink = 0;
    int64_t max_bytes = 0;  // 0: no limit
    std::string source;
    std::vector<int> one_shot_only_world_sizes;  // always one-shot there (else by message size)
    // Whether it runs on `world_size` GPUs, NVLink between every pair or not.
    bool RunsOn(int world_size, bool full_nvlink) const;
  } custom_allreduce;
  // Which NCCL_* variables reach NCCL (framework.proto NcclEnvironment).
  struct NcclEnvironment {
    bool stated = false;
    bool passes_user_environment = true;
    std::vector<std::pair<std::string, std::string>> sets;           // name, value: set by the framework itself
    std::vector<std::pair<std::string, std::string>> sets_if_unset;  // set only where the user has not
    std::string source;
    // The value the framework sets for `name`, or nullptr.
    const std::string* SetsItself(const std::string& name) const;
  } nccl_environment;
  // Launch flags that switch CUDA-graph capture (framework.proto GraphCaptureFlags); "" = none known.
  struct GraphFlags {
    std::string disable_all, max_batch_size;  // max_batch_size: "{n}" the size
    struct PhaseModeFlag {
      std::string phase;  // decode, draft, verify, draft_extend
      CaptureMode mode = CaptureMode::kFull;
      std::string flag;
    };
    std::vector<PhaseModeFlag> phase_flags;
    std::string source;
    // The flag giving `phase` the capture `mode`, or "".
    std::string FlagFor(const std::string& phase, CaptureMode mode) const;
  } graph_flags;
  // The source version the profile follows (framework.proto `version`).
  std::string version;
  // framework.proto SpeculationMethods: DRAFT_MODEL and NGRAM as the framework runs them (stated
  // false: not stated; the launch texts empty).
  struct SpeculationMethods {
    bool stated = false;
    std::string draft_model_launch, ngram_launch;
    bool draft_model_chain_only = false;
    bool ngram_verify_padded = true;
    // The capture of an unpadded NGRAM verify that is not uniform (ngram.h); the verify phase's
    // where unstated.
    std::optional<CaptureMode> ngram_ragged_verify_capture;
    std::string source;
  } speculation_methods;
  // framework.proto GraphPool: what the CUDA-graph pool keeps and the capture list's formula.
  struct GraphPool {
    bool stated = false;
    GraphPoolSpec::Outputs outputs = GraphPoolSpec::Outputs::kNotKept;
    enum class Output { kLogitsFp32, kLogitsBf16, kHiddenBf16 } output = Output::kHiddenBf16;
    std::vector<int> small_sizes;
    int step = 8;
    std::string source;
  } graph_pool;
  // Where the loops wait for the GPU, by name, when sync_each_step / sync_each_cycle hold (empty:
  // one unnamed wait after the decode or the verify pass). The cycle's host work follows its
  // first wait.
  std::vector<HostWait> step_host_waits, cycle_host_waits;
  // The cycle's own launches outside its passes, in the cycle's order (empty: all in
  // spec_cycle_host_us, which is otherwise the scheduler's remaining work).
  std::vector<CycleOps> cycle_ops;
  // Backends per GPU architecture, cache kind and tree width; the first match decides.
  std::vector<AttentionBackendRule> attention_backends;
  // The first rule matching, or nullptr.
  const AttentionBackendRule* BackendFor(const std::string& gpu_arch, bool mla_cache, int topk_width) const;
  // The largest pass replayed as a graph (framework.proto CaptureBound); larger passes run eagerly.
  struct CaptureBound {
    bool stated = false;
    bool tokens = false;  // the pass's tokens (batch x tokens per sequence), else the batch
    int default_max = 0, default_max_from_tp4 = 0;
    double min_gpu_memory_gb = 0, max_gpu_memory_gb = 0;  // where those defaults hold
    std::string flag, source;
    int MaxFor(int tp) const { return tp >= 4 ? default_max_from_tp4 : default_max; }
  } capture_bound;
  // The speculative shape and request cap it takes when the user gives none.
  struct SpeculativeDefaults {
    bool stated = false;
    struct Shape {
      std::vector<ModelFamily> families;  // empty: the fallback
      int num_steps = 0, topk = 0, num_draft_tokens = 0;
    };
    std::vector<Shape> shapes;     // first match; the fallback last
    int max_running_requests = 0;  // 0: no cap
    std::string max_running_requests_flag, source;
    // The shape for a target of `family`. REQUIRES: stated.
    const Shape& For(ModelFamily family) const;
  } speculative_defaults;
  // How it launches a layer's small ops (fused by default; framework.proto KernelInventory) and
  // where that was read ("" when the profile states none).
  KernelInventory kernel_inventory;
  std::string kernel_inventory_source;
  // What the profile's rules decided for the scenario it runs in, one line each, for reports
  // (ApplyFrameworkDecisions, framework_decisions.h); empty for a profile not yet applied.
  std::vector<std::string> decisions;
  // How EP is enabled and what it communicates (framework.proto ExpertParallelRule).
  enum class EpCommunication { kUnstated, kAllReduce, kAllGatherReduceScatter, kAllToAll };
  struct ExpertParallelRule {
    bool stated = false;
    std::string enable_flag;  // "{n}" the EP size
    EpCommunication default_communication = EpCommunication::kUnstated;
    struct AllToAllBackend {
      std::string name, flag, env;  // selected by `flag` or by the environment `env` (NAME=VALUE)
      bool needs_full_nvlink = false;
      std::string source;
    };
    std::vector<AllToAllBackend> all_to_all_backends;
    std::string source;
  } expert_parallel;
};

// "allreduce", "all-gather + reduce-scatter", "all-to-all", "not stated".
const char* EpCommunicationName(FrameworkProfile::EpCommunication c);
// `pattern` with every "{n}" replaced by `n`.
std::string WithNumber(const std::string& pattern, int n);

}  // namespace specsim::llm
