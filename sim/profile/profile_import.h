// From PyTorch profiler traces of every rank of a run (kineto_trace.h) to what specsim compares:
// the passes of the decode loop and their GPU time by kernel class, and every NCCL collective with
// each rank's arrival, so that waiting for the last rank and the transfer itself are apart.
//
// Passes. A pass is one occurrence of a host range that the pass name map (pass_names.h,
// ImportOptions::names) gives a kind other than ignore ("decode_step" -> decode, vLLM's
// "gpu_model_runner: forward" -> target, ...); each group records the rule that gave it its kind,
// and the import counts the range names no rule matched (unmatched_ranges). A kernel belongs to the innermost phase range
// that encloses, on the same host thread, the call that launched it (CUPTI correlation: a kernel
// launched eagerly correlates with its cudaLaunchKernel / cuLaunchKernelEx, a kernel replayed from
// a CUDA graph with its cudaGraphLaunch). Passes are grouped by phase, by the enclosing run range
// when there is one (a range whose name starts with `run_prefix`), by graph or eager, and by their
// kernel count (a verify of 4 and one of 8 tokens launch alike but are kept apart by their run; without
// run ranges they stay apart when their kernel counts differ). Per group: the median over its passes
// of the GPU span (first kernel start to last kernel end), the host span (the range), the GPU idle
// time inside the span (no kernel of the pass running: the host did not keep the GPU fed) and the
// busy time per kernel class (kernel_class.h).
//
// Without phase ranges (a framework that names none), each CUDA-graph replay outside every phase
// range is a pass of phase kGraphReplayPhase: serving engines replay one graph per forward (decode,
// verify, the draft's steps), so the replays' groups (by kernel count and run) are the passes;
// eager kernels outside phase ranges belong to none.
//
// Tokens per pass: a pass's allreduces carry [tokens, hidden] (dense TP layers), so PassGroup
// records the count of allreduce kernels per pass and the first one's elements; torch records the
// elements for eager launches only. A graph replay's NCCL calls take them, call by call, from the
// eager passes of the same phase and kernel count when those agree (a graph replays what an eager
// pass launched), else from the eager calls of the same op, algorithm, protocol and channels when
// those have one size (below); a note says which.
//
// Collectives. The i-th NCCL kernel of every rank is the same collective (SPMD: every rank issues
// the same sequence); the ranks must agree on its op and size. The last rank to start it sets the
// start of the transfer: per rank, wait = last start - own start, and the collective's transfer
// time is the last-arriving rank's kernel duration (what a gated, skew-free measurement of the
// same call would see). Rank clocks are compared directly: Kineto puts every GPU's timestamps on
// its host's clock, so this holds for ranks of one host (all ranks here must come from one host:
// ranks of several hosts would need clock alignment, which is not done).
//
// GEMMs. An eagerly launched kernel carries the External id of the operator that launched it; the
// kernels of one aten::mm / aten::addmm call (cuBLASLt's main kernel and, for split-K, its reduce
// kernel) are one GEMM call of the operator's shape (Input Dims: mm [[m, k], [k, n]], addmm [bias,
// [m, k], [k, n]]; the profiler must have run with record_shapes=True). A call's time is the sum of
// its kernels' durations (device time: no launch, no gap). Calls are grouped by shape and dtype
// over all ranks. Kernels replayed from a CUDA graph carry the graph launch's id and no shape: they
// are not GEMM items (their time is in the passes).
//
// The measurement trace (trace.proto) holds, per distinct NCCL call (op, bytes, dtype, eager or
// graph, algorithm and protocol from the kernel name, channels from its grid), one KIND_COLLECTIVE
// item of the collectives suite: median transfer time, and per rank every instance's kernel
// duration and wait (RankTiming), so that `specsim compare` and `calibrate` use it as they use
// specsim-validate's collectives.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "sim/core/status.h"
#include "sim/profile/kernel_calls.h"
#include "sim/profile/host_ops.h"
#include "sim/profile/kineto_trace.h"
#include "sim/profile/pass_names.h"
#include "specsim/trace.pb.h"

namespace specsim::profile {

// The phase of a pass found as a CUDA-graph replay outside every phase range.
inline constexpr const char* kGraphReplayPhase = "graph_replay";

struct ImportOptions {
  // Which host ranges are passes, and of which kind (default: the built-in "auto" map, whose
  // pytorch words take the old phase names decode, draft, verify, draft_extend, extend, prefill).
  PassNameMap names = DefaultPassNameMap();
  std::string run_prefix = "specsim.run/";
  // The NCCL_* variables the run had (a profile does not record them): written to the trace's
  // environment and to every NCCL item (NCCL_ALGO, NCCL_PROTO, NCCL_MIN/MAX_NCHANNELS,
  // NCCL_P2P_LEVEL, NCCL_P2P_DISABLE, NCCL_SHM_DISABLE), which the predictors read.
  std::map<std::string, std::string> nccl_env;
  // Eager calls (GEMM, attention, norm, argmax, elementwise items) only from inside host ranges whose
  // name matches this ECMAScript regex (searched); empty: every call. A call is inside a range when
  // its operator starts within the range on the range's thread.
  std::string call_ranges;
};

struct PassGroup {
  std::string phase;       // the range's name (kGraphReplayPhase for a replay outside every range)
  std::string kind;        // the name map's kind (PassNameKindName); "" for graph replays
  std::string rule;        // the rule that gave the kind (PassNameRule::Describe), or why none
  std::string run;         // the enclosing run range's name after the prefix ("" when none)
  bool graph = false;      // launched by graph replays
  int kernels = 0;         // kernels per pass
  int passes = 0;          // over all ranks
  double gpu_span_us = 0;  // medians over the passes
  double host_span_us = 0;
  double gpu_idle_us = 0;                 // within the GPU span, no kernel of the pass running (host gaps)
  std::map<std::string, double> busy_us;  // by kernel class name
  double busy_total_us = 0;               // median of the union of the pass's kernel intervals (span - idle)
  // NCCL allreduce kernels per pass (a dense TP layer has two) and the elements of the first one
  // when torch recorded them (eager launches; -1 otherwise): tokens per pass = elements / hidden.
  int allreduces = 0;
  int64_t allreduce_elements = -1;
  int name_tokens = 0;      // tokens per sequence its range's name states (PassNameRule::tokens_group), 0: none
  std::string Key() const;  // e.g. "verify [spec.graph/n4] graph, 42 kernels"
};

struct CollectiveGroup {
  std::string name;  // the trace item's name, e.g. "profile/nccl/allreduce/graph/n2/8KiB"
  std::string op;    // NCCL's: AllReduce, AllGather, ...
  std::string algorithm, protocol, dtype;
  int64_t bytes = 0;  // nccl-tests' size
  int channels = 0;
  bool graph = false;
  int instances = 0;
  double transfer_us = 0;   // median over instances
  double wait_us_mean = 0;  // mean over instances and ranks
  double wait_us_max = 0;
  std::map<std::string, int> phases;  // instances by the phase they ran in (rank 0's attribution)
};

struct GemmGroup {
  std::string name;  // the trace item's name, e.g. "profile/gemm/aten/m1/n3072/k4096"
  std::string op;    // aten::mm or aten::addmm
  int64_t m = 0, n = 0, k = 0;
  std::string dtype;         // torch's, e.g. "BFloat16"
  int calls = 0;             // over all ranks
  int kernels_per_call = 0;  // the most any call launched (2: split-K main + reduce)
  std::string main_kernel;   // the longest kernel's name of the first call
  double median_us = 0;      // per call: its kernels' summed durations
};

struct ProfileImport {
  int ranks = 0;
  std::vector<PassGroup> passes;
  std::vector<CollectiveGroup> collectives;
  std::vector<GemmGroup> gemms;
  // aten::mm / addmm calls whose kernels were seen but whose shape could not be read (no Input
  // Dims: record_shapes off, or a dtype the GEMM model has not), by reason.
  std::map<std::string, int64_t> gemms_skipped;
  // Eager attention, RMSNorm, argmax and elementwise calls with their shapes (kernel_calls.h), and
  // those skipped by reason.
  KernelCallGroups kernel_call_groups;
  std::map<std::string, int64_t> kernel_calls_skipped;
  int64_t kernels = 0;  // over all ranks
  int64_t kernels_in_passes = 0;
  int64_t kernels_without_launch = 0;      // no correlated host call in the trace
  std::map<std::string, int64_t> ignored;  // events not kept, by category, summed over ranks
  // Events dropped for a field that failed its check (KinetoTrace::dropped), by category then
  // reason, summed over ranks.
  std::map<std::string, std::map<std::string, int64_t>> dropped;
  // Host range names that no rule of the name map matched (not passes), with their occurrences
  // over all ranks: what a user adds to a --name-map file.
  std::map<std::string, int64_t> unmatched_ranges;
  // Eager passes' top-level operators (host_ops.h): per op their host cost, and per eager pass
  // group its ops in order; written to the trace as KIND_HOST_OP / KIND_HOST_LOOP items.
  std::vector<HostOpGroup> host_ops;
  std::vector<HostLoopGroup> host_loops;
  trace::Trace trace;
};

// `ranks`: one trace per rank, any order. InvalidArgument when ranks are missing or repeated
// (naming them), when world sizes disagree, or when the ranks' NCCL kernel sequences differ.
StatusOr<ProfileImport> ImportProfile(std::vector<KinetoTrace> ranks, const ImportOptions& options = {});

// The GEMM library name of the items written from a profile's aten::mm / addmm kernels
// (GemmParams.library): PyTorch's dispatch to cuBLAS / cuBLASLt, whichever torch chose.
inline constexpr const char* kTorchGemmLibrary = "aten";

// Bytes per element of a Kineto / torch dtype name ("BFloat16" 2, "Float" 4, ...); 0 when unknown.
int DtypeBytes(const std::string& dtype);

}  // namespace specsim::profile
