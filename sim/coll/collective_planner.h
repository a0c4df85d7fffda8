// From a user's request ("allreduce of 1 MiB with ring/auto on GPUs 0-7") to a concrete
// Schedule, deciding what NCCL would decide:
//   1. the transport per GPU pair (P2P or SHM) from the path classes and the P2P level
//      (nccl_transport.h);
//   2. NCCL's ring graph (channels, per-channel bandwidth) from the links the ring crosses, in
//      NCCL's own bandwidth units (nccl_tuning.h: PCIe width*GT/s/80, inter-CPU constants);
//   3. for `auto`, NCCL's (algorithm, protocol) pick by its cost model; for an explicit algorithm
//      without --proto, NCCL's protocol pick restricted to that algorithm; channels from the
//      per-call shrink unless the user fixed them;
//   4. the schedule from the matching builder (ring.h, tree.h, custom_allreduce.h, alltoall.h).
// The ring order is the GPUs in request order (NCCL's search finds the same order on the boxes
// we model: GPUs numbered by PCIe position, so a 4+4 box crosses its socket or switch link twice).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/coll/nccl_step_model.h"
#include "sim/coll/protocol.h"
#include "sim/coll/schedule.h"
#include "sim/core/status.h"
#include "sim/net/routing.h"
#include "sim/net/topology.h"

namespace specsim::coll {

// Algorithms a user can ask for. kAuto = NCCL's choice among ring and tree.
enum class Algorithm { kAuto, kRing, kTree, kOneShot, kTwoShot, kDirect };

const char* AlgorithmName(Algorithm a);  // "auto", "ring", "tree", "oneshot", "twoshot", "direct"
// Parses one of the names above; InvalidArgument listing them otherwise.
StatusOr<Algorithm> ParseAlgorithm(std::string_view name);
// Parses "allreduce", "allgather", "reducescatter", "alltoall".
StatusOr<Collective> ParseCollective(std::string_view name);

struct CollectiveRequest {
  Collective collective = Collective::kAllReduce;
  Algorithm algorithm = Algorithm::kAuto;
  std::optional<NcclProto> protocol;        // NCCL_PROTO; unset: NCCL's choice
  int channels = 0;                         // fixed channel count; 0: NCCL's choice
  int min_channels = 0;                     // NCCL_MIN_NCHANNELS; 0 = unset
  int max_channels = 0;                     // NCCL_MAX_NCHANNELS; 0 = unset
  std::vector<int> gpus;                    // rank r runs on GPU gpus[r]; empty: all GPUs
  std::optional<net::PathClass> p2p_level;  // NCCL_P2P_LEVEL
  bool p2p_disable = false;                 // NCCL_P2P_DISABLE=1
  int custom_blocks = 0;                    // one-shot / two-shot thread blocks; 0: vLLM's rule (FrameworkCustomBlocks)
  SimTime custom_launch_ps = 0;             // one-shot / two-shot kernel launch before the barrier
  // One-shot / two-shot buffer layout (custom_allreduce.h): inputs staged into exchange buffers
  // first; exchange buffers and flags in mapped host memory (implied by p2p_disable, which leaves
  // no peer access); the floor of a barrier flag's trip (calibrated per transport).
  bool custom_stage_input = false;
  bool custom_host_mapped = false;
  // With custom_host_mapped: the inputs already lie in the mapped host buffers (vLLM's registered
  // path with host buffers; validate's framework-barrier kernels): no staging copy.
  bool custom_registered_host = false;
  // Validate's system-fence kernel (every thread fences around every barrier; two-shot ends with a
  // third barrier) instead of vLLM's and SGLang's (no third barrier; a release at two-shot's middle
  // barrier, which through host memory waits for the reduced block's stores: custom_allreduce.h).
  bool custom_fence_kernel = false;
  SimTime custom_flag_latency_ps = 0;
  double custom_read_gbps_per_block = 0;  // 0: the fabric's own read cap only
  ProtocolOverrides protocol_overrides;   // calibrated NCCL per-step costs (protocol.h)
  // NCCL's step and call costs where protocol_overrides has none: the transport model's protocol
  // work (nccl_step_model.h) over each pair's path. NCCL's tuning table only chooses.
  NcclStepWork nccl_step_work = DefaultNcclStepWork();
  int64_t bytes = 0;
};

struct PlannedCollective {
  Schedule schedule;
  std::vector<int> rank_gpus;
  std::string algorithm;  // what runs: "ring", "tree", ...
  std::string protocol;   // "ll", "simple", or "" for custom kernels
  int channels = 0;
  std::string choice;     // why: NCCL's cost-model comparison, or "fixed by --algo/--proto"
  std::string transport;  // the P2P/SHM decision
  // Where NCCL's step and call costs came from: the box's calibration, or the transport model
  // (nccl_step_model.h: which measured box, and the range its transfer check gives). Empty for
  // the custom kernels.
  std::string step_costs;
  // The transport model's range around the prediction (measured / predicted in its transfer
  // check); 1, 1 where every cost is calibrated or for the custom kernels.
  double range_low = 1, range_high = 1;
  // NCCL algorithms: the ring's worst transport (shm > p2p_pcie > p2p_nvlink), whose measured step
  // costs apply to the collective's base latency.
  NcclTransport worst_transport = NcclTransport::kP2pNvLink;
};

// A barrier flag's one-way trip through mapped host memory (a posted write of the flag, then the
// peer's poll seeing it), the floor of every such flag when no calibration sets one: half the round
// trip measured on an H200 with another block answering, 4.67 us (p10 4.66, p90 4.69;
// traces/h200-1x-host-staged-2026-12-03-b.json, host_staged/flag/gpu0/same_gpu; 4.80 us in the
// earlier run traces/h200-1x-host-staged-2026-12-03.json). The trip crosses
// the GPU's own link both ways where two GPUs of one socket cross one link each; a socket hop
// between them is not in it (not measured: the machine has one NUMA node).
inline constexpr double kHostFlagOneWayUs = 4.67 / 2;
// Flag writes that land in one 128-byte line of host memory serialize: each further flag written
// into the line in a barrier delays it by this much. Measured with our kernels as rank groups on one
// H200 with vLLM's flag layout (traces/h200-1x-host-staged-2026-12-03-g, `-vllmflags` items,
// phase_us[1], `scripts/host-flag-lines.py`): the start barrier of n = 1..8 groups of 1-2 blocks
// passes 0.00-0.48 us per extra flag in its line later than a lone block's (median 0.35 over 7
// items). Our own rank-major layout, whose lines are polled by up to 32 blocks, pays 0.6-0.9 us
// (runs e, f); grids of 8+ blocks per rank pay more (1-10 us) as the flags queue behind their
// reads of host memory, which this floor does not add. The writers were one GPU's blocks; writers
// on different GPUs meeting in a line at the host are assumed to serialize alike (not measured).
inline constexpr double kHostFlagLineWriteUs = 0.35;
// vLLM's Signal (csrc/custom_all_reduce.cuh v0.8.2, as copied in flashinfer-ai/flashinfer
// include/flashinfer/comm/vllm_custom_all_reduce.cuh @7db7cdd): peer_counter[2][kMaxBlocks][8]
// uint32, 128-byte aligned, so one line holds 4 blocks' 8 rank slots; a barrier writes every rank's
// flag for every block into each rank's area.
inline constexpr int kFrameworkFlagBlocksPerLine = 4;
// The floor of a barrier flag through host memory, uncalibrated: the one-way trip, then the other
// flags of its line: n ranks x min(blocks, 4) writes per line in each barrier.
double HostFlagFloorUs(int num_ranks, int blocks);
// The same with the one-way trip given (a trace's own flag round trips / 2).
double HostFlagFloorUs(int num_ranks, int blocks, double one_way_us);
// vLLM's grid for `bytes` (same source, CustomAllreduce::allreduce): 512 threads per block, one
// 16-byte pack per thread, min(36, ceil(packs / 512)) blocks, at least 1.
int FrameworkCustomBlocks(int64_t bytes);

// InvalidArgument for a GPU index out of range, a repeated GPU, fewer than 2 GPUs, an algorithm
// that does not implement the collective, or bad channel counts.
StatusOr<PlannedCollective> PlanCollective(const net::Topology& topology, const net::Router& router,
                                           const CollectiveRequest& request);

// Plans collectives one after another on the router's topology, keeping what depends only on the
// ranks between them: NCCL's view of the fabric (every GPU pair's transport and path class, the
// ring graph) and the custom kernels' peer-read mode, recomputed only when the GPUs, the P2P level
// or NCCL_P2P_DISABLE change. A sweep over sizes and algorithms computes them once (on 256 GPUs
// they cost a quarter of planning a ring). Each plan is exactly PlanCollective's (tested). Not
// thread-safe: one planner per thread.
class CollectivePlanner {
 public:
  // The router (and its topology) must outlive the planner.
  explicit CollectivePlanner(const net::Router& router);
  ~CollectivePlanner();
  CollectivePlanner(const CollectivePlanner&) = delete;
  CollectivePlanner& operator=(const CollectivePlanner&) = delete;

  StatusOr<PlannedCollective> Plan(const CollectiveRequest& request);

  struct RankView;  // what is kept (defined in the .cc)

 private:
  const net::Router* router_;
  std::unique_ptr<RankView> rank_view_;
};

// Why the custom allreduce's peer reads cannot go GPU to GPU between `gpus` (GPU indices) under the
// box's driver P2P mode (net::PeerAccessOf), e.g. "56 GPU pairs meet only at a CPU, where ...";
// "" when every pair's reads are direct. The planner then prices the kernels through mapped host
// memory (custom_allreduce.h, host_mapped).
std::string WhyPeerReadsAreNotDirect(const net::Topology& topology, const std::vector<int>& gpus);
// The same with the caller's router of `topology` (its routes are reused, not rebuilt).
std::string WhyPeerReadsAreNotDirect(const net::Topology& topology, const net::Router& router,
                                     const std::vector<int>& gpus);

// nccl-tests' bus-bandwidth factor: busBw = algBw * factor. Allreduce 2(n-1)/n; allgather,
// reducescatter, alltoall (n-1)/n.
double BusBandwidthFactor(Collective collective, int num_ranks);

}  // namespace specsim::coll
