// Every rank its own timeline: per tensor-parallel rank a host thread that issues the GPU work and
// a GPU stream that runs it; collectives are rendezvous (rank-timelines design note,
// docs/reference/rank-skew.md).
//
// A program is the ordered list of steps every rank runs (a decode step, a speculative cycle, a
// micro-benchmark loop). Rank r keeps two clocks: H_r, when its host thread is free, and G_r, when
// its GPU stream is free. Step by step:
//   eager op (kernel, library call, collective): the host spends its issue cost c_r (the class's
//       mean plus the framework's per-op cost plus a jitter draw, per rank and op): H_r += c_r; the
//       GPU inserts its eager gap: ready_r = max(G_r + eager_gap, H_r).
//   graph launch: the host spends the launch cost (plus jitter): H_r += g_r; the segment's ops
//       may start from then on (L_r = H_r).
//   graph op (captured in the last launched segment): ready_r = max(G_r, L_r) + graph_gap.
//   kernel: G_r = ready_r + d * f_r, d the kernel's device time, f_r the rank's GPU factor (a
//       per-rank constant and a per-kernel lognormal draw).
//   collective: arrival_r = ready_r; the transfer starts when the last rank arrives, A = max_r
//       arrival_r, and ends at A + T (T: the fabric simulation of the collective alone, see
//       decode_simulator.h); G_r = A + T on every rank. What a profiler on rank r shows as the
//       collective is A + T - arrival_r: its wait A - arrival_r, then the transfer T.
//   host sync (token read-back, .item()): the host waits for its GPU, then wakes: H_r = max(H_r,
//       G_r) + wake.
//   host work (scheduling, draft tree building, acceptance): H_r += h (+ jitter).
// A step may belong to one rank only (a slower rank's extra kernel). Ranks interact only at
// collectives, so the order of events is known in advance: the engine evaluates these recurrences
// step by step (O(steps x ranks), no event queue), which is what the event engine would produce
// for the same dependency graph: the test RankTimeline.MatchesTheEventEngineWithoutJitter checks it
// against sim/coll's executor on the same program. Runs of consecutive graph kernels are merged
// into one step when no per-kernel GPU jitter is asked (exact: a graph kernel after another starts
// at the other's end plus the gap, whatever the first waited for).
//
// Jitter (per eager op, graph launch and host work, per rank): none; exponential of mean m;
// lognormal with mean m and sigma s of the underlying normal; or an empirical distribution given
// by equally spaced quantiles (linear interpolation between them). Seeded: the same seed gives the
// same draws, whatever the thread.
#pragma once

#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "sim/core/status.h"
#include "sim/core/time.h"
#include "sim/llm/pass_quantiles.h"

namespace specsim::llm {

// How a host-side cost varies around its mean.
struct Jitter {
  enum class Kind { kNone, kExponential, kLognormal, kEmpirical };
  Kind kind = Kind::kNone;
  double mean_us = 0;                // kExponential, kLognormal: the jitter's own mean (added)
  double sigma = 0;                  // kLognormal: sigma of ln(x)
  std::vector<double> quantiles_us;  // kEmpirical: equally spaced quantiles q_0..q_k (k >= 1)
};

// InvalidArgument naming the field: negative or non-finite values, an empirical list of fewer
// than 2 or decreasing quantiles.
Status ValidateJitter(const Jitter& jitter, const std::string& where);

// What the host spends per op and what the GPU inserts between ops (sim/compute's launch model,
// calibrated by the layer loops of the pacing suite).
struct HostModel {
  SimTime kernel_issue_ps = 0;      // an eager raw kernel launch (cudaLaunchKernel)
  SimTime library_issue_ps = 0;     // an eager library call (cuBLAS GEMM)
  SimTime collective_issue_ps = 0;  // an eager collective call (ncclAllReduce, ...)
  // The serving framework's per-op host cost in eager mode, the whole call (Python, dispatcher,
  // launch): it replaces kernel_issue_ps / library_issue_ps where set (> 0) and adds to
  // collective_issue_ps (NCCL's own host work).
  SimTime framework_op_ps = 0;
  SimTime tensor_op_ps = 0;     // ... per small tensor op outside its passes (HostOpClass::kTensorOp), the same way
  SimTime graph_launch_ps = 0;  // one cudaGraphLaunch of a captured segment
  SimTime sync_wake_ps = 0;     // a host sync: from the GPU finishing to the host running on
  SimTime eager_gap_ps = 0;     // GPU gap before an eagerly launched op
  SimTime graph_gap_ps = 0;     // GPU gap before an op inside a replayed graph
  Jitter jitter;                // on every host issue, graph launch and host work
  // A Python framework's host time per eager call, by HostOpClass (kKernel, kLibrary, kCollective),
  // as equally spaced quantiles q_0..q_k (llm::HostOpCost, fitted on the PyTorch probe's single
  // ops): when a class has them, each eager op of the class costs its rank a draw from them (the
  // whole call: Python, dispatcher, launch) in place of the class's issue cost and
  // framework_op_ps; the op's own host_ps and the jitter still add. Empty: the fixed issue cost.
  // A kTensorOp draws from kKernel's (its draws are the probe's one-kernel ops: host_costs.cc).
  std::array<std::vector<double>, 3> call_quantiles_us;
  // The correlation of one Run's (one pass's) draws from call_quantiles_us, on every rank
  // (pass_quantiles.h): the host's speed of the moment, drawn once per Run and shared by the ranks
  // (one machine's host; not measured with 2 ranks). 0: independent draws. REQUIRES: [0, 1).
  double call_correlation = 0;
  // Whether the ranks' host times are drawn (jitter or per-call distributions): ranks can differ.
  bool Random() const;
};

// Per-rank GPU time variation: a constant factor per rank (empty: 1 everywhere) and a per-kernel
// lognormal factor with median 1 and sigma kernel_sigma (0: none).
struct GpuVariation {
  std::vector<double> rank_factor;
  double kernel_sigma = 0;
};

// How the host pays an eager op's issue: a raw kernel (the driver's kernel_issue_ps, or the
// framework's framework_op_ps, the whole call, where a framework sets it), a library call (the same
// with library_issue_ps), a collective (collective_issue_ps plus framework_op_ps), or a framework's
// small tensor op outside its passes (tensor_op_ps, else kernel_issue_ps).
enum class HostOpClass { kKernel, kLibrary, kCollective, kTensorOp };

struct TimelineStep {
  // kEventRecord: the GPU's position in the stream at this point (a CUDA event recorded after the
  // ops before it), for a later kHostSync with on_event; no host or GPU time.
  enum class Kind { kKernel, kCollective, kGraphLaunch, kHostSync, kHostWork, kEventRecord };
  Kind kind = Kind::kKernel;
  // kHostSync: wait for the last kEventRecord of this run (cudaEventSynchronize on an event
  // recorded earlier: the ops issued after it keep running) instead of for every op issued so far
  // (a stream sync: .item(), .tolist(), .cpu()). REQUIRES: a kEventRecord before it in the program.
  bool on_event = false;
  bool graph = false;                             // kKernel / kCollective: inside the last launched segment
  HostOpClass host_class = HostOpClass::kKernel;  // eager ops: which issue cost
  SimTime device_ps = 0;                          // kKernel: device time (scaled by the rank's GPU factor)
  SimTime fixed_gpu_ps = 0;                       // kKernel: further GPU time not scaled (merged graph gaps)
  SimTime transfer_ps = 0;                        // kCollective: the transfer once every rank arrived
  SimTime host_ps = 0;                            // kHostWork: host time; eager ops: extra host time of this op
  double host_exp_mean_us = 0;                    // kHostWork: plus an Exp(mean) draw of its own (an injected cost)
  int rank = -1;                                  // -1: every rank; else only this rank runs the step
  int phase = 0;                                  // index into TimelineProgram::phases
  std::string label;                              // for traces (may be empty)
};

struct TimelineProgram {
  std::vector<std::string> phases;  // e.g. "draft", "verify", "draft_extend"
  std::vector<TimelineStep> steps;
};

// InvalidArgument for a graph op with no graph launch before it, a step of a rank out of range, a
// collective restricted to one rank, negative times or a phase index out of range.
Status ValidateProgram(const TimelineProgram& program, int num_ranks);

// Where the time of one run went, per phase (indices as in the program), summed over runs.
struct PhaseAccount {
  double compute_ps = 0;   // rank 0's kernel device time
  double transfer_ps = 0;  // collectives: the transfers
  double wait_ps = 0;      // collectives: rank 0's wait for the last rank
  double wait_max_ps = 0;  // collectives: the longest wait of any rank, summed per collective
  double span_ps = 0;      // the phase's share of the run on rank 0 (its steps' GPU and host advance)
  int collectives = 0;

  PhaseAccount& operator+=(const PhaseAccount& o) {
    compute_ps += o.compute_ps;
    transfer_ps += o.transfer_ps;
    wait_ps += o.wait_ps;
    wait_max_ps += o.wait_max_ps;
    span_ps += o.span_ps;
    collectives += o.collectives;
    return *this;
  }
  PhaseAccount& operator-=(const PhaseAccount& o) {
    compute_ps -= o.compute_ps;
    transfer_ps -= o.transfer_ps;
    wait_ps -= o.wait_ps;
    wait_max_ps -= o.wait_max_ps;
    span_ps -= o.span_ps;
    collectives -= o.collectives;
    return *this;
  }
};

// One slice of a rank's host or GPU track, for Perfetto.
struct RankSlice {
  int rank = 0;
  bool host = false;  // host thread track, else GPU stream track
  std::string name;
  std::string category;  // "compute", "comm-wait", "comm-transfer", "launch", "host", "sync"
  SimTime start_ps = 0, end_ps = 0;
};

struct RunResult {
  std::vector<SimTime> start_ps;    // per rank: H_r when the run began
  std::vector<SimTime> end_ps;      // per rank: max(H_r, G_r) when the run ended
  std::vector<SimTime> gpu_end_ps;  // per rank: G_r when the run ended
  SimTime span_ps = 0;              // max_r end - min_r start
  std::vector<double> wait_ps;      // per rank: total collective wait in this run
  // The least any rank's GPU clock led its host clock right after the host advanced (issue,
  // launch, host work), over the run; kSimTimeMax when the host never advanced. Positive, with no
  // host sync: the host never held the GPU back, so the GPU clocks did not depend on the host's,
  // and the same program from a state where the GPU leads by more ends the same way.
  SimTime min_gpu_lead_ps = kSimTimeMax;
  bool host_synced = false;  // a host sync step ran
};

class RankTimelines {
 public:
  // REQUIRES: num_ranks >= 1, ValidateJitter(host.jitter) ok, rank_factor empty or num_ranks long.
  RankTimelines(int num_ranks, HostModel host, GpuVariation gpu, uint64_t seed);

  // Runs `program` from the ranks' current clocks (REQUIRES: ValidateProgram ok). A launch clock
  // the GPU clock has passed can no longer delay anything (graph ops start at max(G, L)): the run
  // leaves it equal to the GPU clock, so equal states compare equal. `accounts`
  // (sized to the program's phases, or null) accumulates where the time went; `slices` (or null)
  // receives every rank's host and GPU slices.
  RunResult Run(const TimelineProgram& program, std::vector<PhaseAccount>* accounts = nullptr,
                std::vector<RankSlice>* slices = nullptr);

  // Sets every rank's clocks to the latest of them (a barrier before a measured loop).
  void AlignClocks();

  int num_ranks() const { return static_cast<int>(host_.size()); }
  SimTime host_clock(int rank) const { return host_[rank]; }
  SimTime gpu_clock(int rank) const { return gpu_clk_[rank]; }
  SimTime launch_clock(int rank) const { return launched_[rank]; }
  // True when every rank's host, GPU and launch clocks are those of rank 0.
  bool RanksAgree() const;
  // Sets every rank's host, GPU and launch clocks (a run replayed from a memo: the recurrences
  // only add and compare clocks, so a run from clocks shifted by t ends shifted by t).
  void SetClocks(SimTime host, SimTime gpu, SimTime launched);

 private:
  // One Run's state and the steps' recurrences (rank_timeline.cc).
  class ProgramRun;

  void gpu_clock_init(int num_ranks);
  SimTime Draw(int rank);  // one host-jitter draw for `rank`
  // One draw for `rank` from equally spaced quantiles (linear between them), capped like Draw.
  SimTime DrawQuantiles(const std::vector<double>& quantiles_us, int rank);
  // One eager call's host time for `rank` from its class's quantiles, at the Run's next quantile
  // (pass_quantiles_, HostModel::call_correlation).
  SimTime DrawCall(const std::vector<double>& quantiles_us, int rank);
  double KernelFactor(int rank);  // rank factor x the per-kernel draw

  HostModel host_model_;
  GpuVariation gpu_;
  std::vector<SimTime> host_, gpu_clk_, launched_;
  std::vector<SimTime> ready_;        // scratch: each rank's arrival at a collective
  std::vector<SimTime> event_;        // scratch: each rank's GPU clock at the run's last kEventRecord
  bool uniform_gpu_ = true;           // equal rank factors and no per-kernel draws (lockstep allowed)
  std::vector<std::mt19937_64> rng_;  // one stream per rank
  PassQuantiles pass_quantiles_;      // the Run's shared score of the host's speed
  std::mt19937_64 pass_rng_;          // its draws, one per Run
};

// Merges, in a copy of `program`, runs of consecutive graph kernels of every rank (and of one
// phase) into one step: device time summed, the graph gaps between them as fixed_gpu_ps. Identical
// results when GpuVariation::kernel_sigma is 0; far fewer steps.
TimelineProgram MergeGraphKernels(const TimelineProgram& program, SimTime graph_gap_ps);

}  // namespace specsim::llm
