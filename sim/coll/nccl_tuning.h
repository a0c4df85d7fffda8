// NCCL's own cost model (src/graph/tuning.cc and search.cc, NCCL 2.30.7, checked against 2.28.3,
// the calibration box's version; docs/reference/nccl-cost-model.md),
// to predict which algorithm and protocol NCCL picks on a one-node PCIe (or NVLink) box and what
// it expects them to cost. This is NCCL's estimate, not specsim's simulation: comparing the two
// shows where NCCL's choice is wrong for a machine.
//
// 1. Ring graph search (simplified). Every ring channel consumes bw_intra on each link it crosses
//    (once per direction), so at per-channel speed s, floor(bottleneck / s) channels fit (at most
//    max_channels, default MAXCHANNELS/2 = 16). Speeds are tried from the arch's list, highest
//    first, skipping those above the bottleneck; the best channels * s wins (ties: the higher
//    speed) and the search stops once channels * s reaches the GPU's own link bandwidth. If no
//    speed fits, NCCL "falls back to simple order": 1 channel at 0.1 GB/s.
//      sm100+: 90 80 70 60 50 45 40 30 24 20 19 18 (docs/reference/nccl-cost-model.md)
//      sm90:   60 50 40 30 24 20 15 12 11 6 3       (sm90SpeedArrayIntra, NCCL 2.28.3 and 2.30.7
//                                                     search.cc)
//      older:  40 30 20 18 15 12 10 9 7 6 5 4 3
//    Then duplication: if bw_intra >= 25, channels = min(2 * channels, max) and bw_intra is
//    divided by ceil(new / old). The communicator runs 2 * graph channels (NCCL doubles them at
//    init), clamped to [NCCL_MIN_NCHANNELS, NCCL_MAX_NCHANNELS] (default max 32).
// 2. Per (algo, proto), with nsteps = 2(n-1) for allreduce, n-1 for allgather/reducescatter:
//      Ring: lat = baseLat + nsteps * hwLat;  busBw = graph_channels * bw_intra, LL:
//            min(llMaxBw, 0.5 busBw), LL128: min(0.92 busBw, graph_channels * perChMaxRingLL128Bw);
//            algBw = busBw * n / nsteps.
//      Tree (allreduce only; one node = a chain): lat = baseLat + 2(n-1) hwLat;
//            busBw = min(0.92 busBw, channels * perChMaxTreeBw), LL: min(busBw / 3.8, llMaxBw),
//            then * 0.85; algBw = 0.5 busBw, times treeCorrectionFactor[proto][log2(bytes/64)]
//            for 64 B <= bytes < 512 MiB.
//      time_us = lat + bytes / (1000 * algBw)   (latCount = 1 for a single call)
//    hwLat is NCCL_HW_NVLINK when the ring's worst path is NVLink, else NCCL_HW_PCI.
//    llMaxBw (one node): Volta 39, Ampere 87.7, Hopper 141, Blackwell (sm100, sm120) 282 GB/s.
//    LL128 is a candidate only when the ring's worst path is NVLink (tuning.cc: LL128 needs
//    typeIntra <= PATH_NVB); perChMaxRingLL128Bw: Volta/Ampere 20, Hopper 36.7, Blackwell 40;
//    Tree LL128: min(7/9 busBw, channels * perChMaxTreeLL128Bw (Hopper 36.7, Blackwell 55.6)).
//    NVLS and CollNet are not candidates (NVLS is kept off on the calibration box; PCIe nodes have
//    neither).
// 3. auto = argmin time over the allowed (algo, proto) pairs (NCCL's loop order: tree before
//    ring, LL before Simple; a later candidate must be strictly faster).
// 4. The chosen call then shrinks its channels and threads for small messages (this does not
//    enter NCCL's time estimate; it sets how many channels the call really runs):
//      while bytes < nc * nt * threshold: if nc >= 2: nc--, elif nt % 128 == 0: nt /= 2, else stop
//    threshold bytes/thread: LL 8 (times n for Ring), LL128 8, Simple 64; nt: 512, LL128 640,
//    Tree Simple 640.
// 5. NCCL 2.28 then spreads the call over at most those channels in 16 KiB-of-traffic cells
//    (enqueue.cc scheduleCollTasksToPlan, MinTrafficPerChannel = 16 KiB): traffic = bytes *
//    trafficPerByte (allreduce 2, all-gather / reduce-scatter n; x4 for LL), per channel
//    max(16 KiB, traffic / nc); cells of ceil(16 KiB / trafficPerByte) bytes, each channel takes
//    ceil(per-channel traffic / cell traffic) cells, so a call can use fewer channels than step 4
//    gave (a 256 KiB LL allreduce on 24 channels runs on 22). NcclChannelsUsed reproduces it for a
//    single collective.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/coll/protocol.h"
#include "sim/coll/schedule.h"
#include "sim/core/status.h"
#include "sim/net/routing.h"

namespace specsim::coll {

// NCCL's PCIe link bandwidth: lanes * gen_value / 80, gen_value 15, 30, 60, 120, 240, 480 for
// Gen1..6 (xml.cc kvDictPciGen): Gen5 x16 = 48 GB/s, Gen4 x16 = 24. REQUIRES: gen in 1..6.
double NcclPcieBandwidthGbps(int pcie_gen, int lanes);

// NCCL's inter-CPU link bandwidths (topo.h), GB/s. Intel adds 1.2x cost to P2P through a root
// complex; that belongs to the caller's bottleneck computation.
inline constexpr double kNcclAmdInterCpuGbps = 16;
inline constexpr double kNcclIntelSkylakeInterCpuGbps = 10;
inline constexpr double kNcclIntelSapphireRapidsInterCpuGbps = 22;
inline constexpr double kNcclIntelEmeraldRapidsInterCpuGbps = 40;

// "sm90", "sm_90", "sm120" -> 90, 90, 120; otherwise InvalidArgument.
StatusOr<int> ParseSmArch(std::string_view arch);

// The per-channel speeds NCCL's ring search tries on this arch, highest first.
std::vector<double> NcclSearchSpeedsGbps(int sm);

struct NcclGraphInput {
  int sm = 90;                       // compute capability * 10 (90 Hopper, 120 RTX Blackwell)
  double gpu_link_gbps = 48;         // the GPU's own link as NCCL models it: search target
  double ring_bottleneck_gbps = 48;  // narrowest link (per direction) a ring crosses, NCCL's model
  int max_channels = 0;              // NCCL_MAX_NCHANNELS; 0 = unset
  int min_channels = 0;              // NCCL_MIN_NCHANNELS; 0 = unset
};

struct NcclGraph {
  int search_channels = 0;  // as the search found them
  double search_speed_gbps = 0;
  int graph_channels = 0;    // after duplication: the nChannels of busBw
  double bw_intra_gbps = 0;  // after duplication
  int comm_channels = 0;     // channels the communicator runs (before per-call shrinking)
  bool fell_back = false;    // no speed fitted: 1 channel at 0.1 GB/s
  std::string reason;
};

StatusOr<NcclGraph> SearchNcclRingGraph(const NcclGraphInput& input);

struct NcclTuningInput {
  Collective collective = Collective::kAllReduce;  // allreduce, allgather or reducescatter
  int num_ranks = 8;
  net::PathClass worst_path = net::PathClass::kPhb;  // worst GPU-GPU path class of the ring
  NcclGraphInput graph;
  std::vector<NcclAlgo> algos = {NcclAlgo::kRing, NcclAlgo::kTree};                         // NCCL_ALGO
  std::vector<NcclProto> protos = {NcclProto::kLl, NcclProto::kLl128, NcclProto::kSimple};  // NCCL_PROTO
  bool tree_correction = true;  // apply NCCL's size-dependent Tree correction table
};

struct NcclCandidate {
  NcclAlgo algo = NcclAlgo::kRing;
  NcclProto proto = NcclProto::kLl;
  bool allowed = false;  // false: filtered by algos/protos or unavailable for the collective
  double latency_us = 0;
  double bus_bw_gbps = 0;
  double alg_bw_gbps = 0;
  double time_us = 0;
};

struct NcclTuningResult {
  NcclGraph graph;
  std::vector<NcclCandidate> candidates;  // ring/ll, ring/ll128, ring/simple, tree/ll, tree/ll128, tree/simple
  NcclAlgo algo = NcclAlgo::kRing;        // the pick
  NcclProto proto = NcclProto::kLl;
  double time_us = 0;
  int channels = 0;  // after the per-call shrink and NCCL 2.28's split over channels
  int threads = 0;
  // e.g. "picked ring/ll: ring/ll 21.6 us < ring/simple 88.7 us < tree/ll ... (2 x 24 GB/s graph, 4 channels)".
  std::string reason;
};

// InvalidArgument for num_ranks < 2, bytes < 0, an unsupported collective, bad graph input or no
// allowed candidate.
StatusOr<NcclTuningResult> TuneNccl(const NcclTuningInput& input, int64_t bytes);

// The per-call shrink of rule 4: {channels, threads}.
struct NcclCallShape {
  int channels = 0;
  int threads = 0;
};
NcclCallShape ShrinkNcclChannels(NcclAlgo algo, NcclProto proto, int num_ranks, int comm_channels, int64_t bytes);

// Rule 5: the channels one collective of `bytes` (nccl-tests size: the full buffer) really runs on,
// given the per-call channel count `call_channels` and the communicator's `comm_channels`.
// REQUIRES: 1 <= call_channels <= comm_channels, num_ranks >= 1, bytes >= 0.
int NcclChannelsUsed(Collective collective, NcclProto proto, int num_ranks, int call_channels, int comm_channels,
                     int64_t bytes);

// NCCL's NVLink bandwidth per link (topo.h SMxx_NVLINK_BW): sm80 20, sm90 20.6, sm100+ 40.1 GB/s.
double NcclNvLinkPerLinkGbps(int sm);

}  // namespace specsim::coll
