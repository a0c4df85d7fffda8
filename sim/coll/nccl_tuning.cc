#include "sim/coll/nccl_tuning.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "sim/core/check.h"
#include "sim/core/strings.h"

namespace specsim::coll {
namespace {

constexpr int kNcclMaxChannels = 32;  // MAXCHANNELS
constexpr int kNcclSearchMaxChannels = kNcclMaxChannels / 2;
constexpr double kFallbackBwGbps = 0.1;

// treeCorrectionFactor[proto][log2i(bytes >> 6)], NCCL 2.28.3 tuning.cc (the same in 2.30.7).
constexpr double kTreeCorrectionLl[23] = {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7,  .7,  .7,  .6, .5,
                                          .4,  .4,  .5,  .6,  .7, .8, .9, 1.0, 1.0, 1.0, 1.0};
constexpr double kTreeCorrectionLl128[23] = {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7,  .6, .6,
                                             .6,  .6,  .6,  .6,  .8,  .9, .9, .9, .9, 1.0, 1.0};
constexpr double kTreeCorrectionSimple[23] = {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5,
                                              .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9};

double LlMaxBwGbps(int sm) {
  if (sm >= 100) return 282;  // Blackwell, sm120 included
  if (sm >= 90) return 141;   // Hopper
  if (sm >= 80) return 87.7;  // Ampere
  return 39.0;                // Volta
}

// perChMaxTreeBw for one node: Volta 26.5, Ampere 24.0, Hopper 38.7, Blackwell 70.0 (tuning.cc
// ncclTunerConstantsDefaults perChMaxTreeBws, NCCL 2.30.7; docs/reference/nccl-cost-model.md). It
// binds only where 0.92 x bw_intra exceeds it: never on PCIe (bw_intra <= 24), and not with the
// search speeds modelled here (duplication halves them: at most 45 on sm100+, 30 on Hopper).
double PerChannelMaxTreeBwGbps(int sm) {
  if (sm >= 100) return 70.0;
  if (sm >= 90) return 38.7;
  if (sm >= 80) return 24.0;
  return 26.5;
}

// perChMaxRingLL128Bws / perChMaxTreeLL128Bws, one node (tuning.cc).
double PerChannelMaxRingLl128BwGbps(int sm) {
  if (sm >= 100) return 40.0;
  if (sm >= 90) return 36.7;
  return 20.0;
}
double PerChannelMaxTreeLl128BwGbps(int sm) {
  if (sm >= 100) return 55.6;
  if (sm >= 90) return 36.7;
  return 20.0;
}

int64_t DivUp(int64_t a, int64_t b) { return (a + b - 1) / b; }

int Log2Floor(int64_t x) {
  int l = -1;
  while (x > 0) {
    x >>= 1;
    ++l;
  }
  return l;
}

std::string Fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f", v);
  return buf;
}

std::string Name(NcclAlgo a, NcclProto p) { return std::string(NcclAlgoName(a)) + "/" + NcclProtoName(p); }

// Ring: lat = base + nsteps hops; bus from the graph, capped for LL and LL128; alg = bus n / nsteps.
void EstimateRing(const NcclTuningInput& in, const NcclGraph& g, NcclHw hw, NcclCandidate* c) {
  const int n = in.num_ranks;
  const int nsteps = in.collective == Collective::kAllReduce ? 2 * (n - 1) : n - 1;
  double bus = g.graph_channels * g.bw_intra_gbps;
  c->latency_us = NcclBaseLatencyUs(c->algo, c->proto) + nsteps * NcclHopLatencyUs(hw, c->algo, c->proto);
  if (c->proto == NcclProto::kLl) bus = std::min(LlMaxBwGbps(in.graph.sm), 0.5 * bus);
  if (c->proto == NcclProto::kLl128)
    bus = std::min(0.92 * bus, g.graph_channels * PerChannelMaxRingLl128BwGbps(in.graph.sm));
  c->bus_bw_gbps = bus;
  c->alg_bw_gbps = bus * n / nsteps;
}

// Tree (one node: a chain): lat = base + 2(n-1) hops; bus capped per channel and protocol, then
// x 0.85; alg = bus / 2 times the size's correction.
void EstimateTree(const NcclTuningInput& in, const NcclGraph& g, NcclHw hw, int64_t bytes, NcclCandidate* c) {
  const int n = in.num_ranks;
  const NcclProto proto = c->proto;
  double bus = g.graph_channels * g.bw_intra_gbps;
  c->latency_us = NcclBaseLatencyUs(c->algo, proto) + 2 * (n - 1) * NcclHopLatencyUs(hw, c->algo, proto);
  bus = std::min(0.92 * bus, g.graph_channels * PerChannelMaxTreeBwGbps(in.graph.sm));
  if (proto == NcclProto::kLl) bus = std::min(bus / 3.8, LlMaxBwGbps(in.graph.sm));
  if (proto == NcclProto::kLl128)
    bus = std::min(bus * 7.0 / 9.0, g.graph_channels * PerChannelMaxTreeLl128BwGbps(in.graph.sm));
  bus *= 0.85;
  c->bus_bw_gbps = bus;
  double alg = 0.5 * bus;
  const int log_size = Log2Floor(bytes >> 6);
  if (in.tree_correction && log_size >= 0 && log_size < 23) {
    alg *= proto == NcclProto::kLl      ? kTreeCorrectionLl[log_size]
           : proto == NcclProto::kLl128 ? kTreeCorrectionLl128[log_size]
                                        : kTreeCorrectionSimple[log_size];
  }
  c->alg_bw_gbps = alg;
}

// LL128 only over NVLink (tuning.cc: typeIntra <= PATH_NVB), Volta or newer.
bool Ll128Possible(const NcclTuningInput& in) { return in.worst_path == net::PathClass::kNvLink && in.graph.sm >= 70; }

// Every (algorithm, protocol) pair with NCCL's estimate of its time, allowed or not.
std::vector<NcclCandidate> EstimateCandidates(const NcclTuningInput& in, const NcclGraph& g, int64_t bytes) {
  const NcclHw hw = in.worst_path == net::PathClass::kNvLink ? NcclHw::kNvLink : NcclHw::kPci;
  const bool allreduce = in.collective == Collective::kAllReduce;
  std::vector<NcclCandidate> candidates;
  for (NcclAlgo algo : {NcclAlgo::kRing, NcclAlgo::kTree}) {
    for (NcclProto proto : {NcclProto::kLl, NcclProto::kLl128, NcclProto::kSimple}) {
      NcclCandidate c;
      c.algo = algo;
      c.proto = proto;
      c.allowed = std::count(in.algos.begin(), in.algos.end(), algo) > 0 &&
                  std::count(in.protos.begin(), in.protos.end(), proto) > 0 && (algo == NcclAlgo::kRing || allreduce) &&
                  (proto != NcclProto::kLl128 || Ll128Possible(in));
      if (algo == NcclAlgo::kRing) {
        EstimateRing(in, g, hw, &c);
      } else {
        EstimateTree(in, g, hw, bytes, &c);
      }
      c.time_us = c.latency_us + static_cast<double>(bytes) / (1000.0 * c.alg_bw_gbps);
      candidates.push_back(c);
    }
  }
  return candidates;
}

// NCCL's selection loop: algorithms in NCCL's order (tree = 0, ring = 1), LL before Simple; a later
// candidate must be strictly faster. InvalidArgument when none is allowed.
StatusOr<const NcclCandidate*> PickLikeNccl(const NcclTuningInput& in, const std::vector<NcclCandidate>& candidates) {
  const NcclCandidate* best = nullptr;
  for (NcclAlgo algo : {NcclAlgo::kTree, NcclAlgo::kRing}) {
    for (const NcclCandidate& c : candidates) {
      if (c.algo != algo || !c.allowed) continue;
      if (best == nullptr || c.time_us < best->time_us) best = &c;
    }
  }
  if (best != nullptr) return best;
  const bool only_ll128 =
      std::all_of(in.protos.begin(), in.protos.end(), [](NcclProto p) { return p == NcclProto::kLl128; });
  if (only_ll128 && !Ll128Possible(in))
    return InvalidArgumentError(std::string("protocol LL128: NCCL enables it only when every ring path is NVLink "
                                            "(tuning.cc: typeIntra <= PATH_NVB); this ring's worst path is ") +
                                net::PathClassName(in.worst_path) + ": use ll or simple");
  return InvalidArgumentError(std::string("no allowed NCCL algorithm/protocol for ") + CollectiveName(in.collective) +
                              " (tree is allreduce only)");
}

// "picked ring/ll: ring/ll 21.6 us < ring/simple 88.7 us ... (graph; call runs 4 channels x 512 threads)".
std::string ExplainPick(const NcclTuningResult& result) {
  std::vector<const NcclCandidate*> ranked;
  for (const NcclCandidate& c : result.candidates) {
    if (c.allowed) ranked.push_back(&c);
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const NcclCandidate* a, const NcclCandidate* b) { return a->time_us < b->time_us; });
  std::string reason = "picked " + Name(result.algo, result.proto) + ": ";
  for (size_t i = 0; i < ranked.size(); ++i) {
    if (i > 0) reason += ranked[i - 1]->time_us < ranked[i]->time_us ? " < " : " = ";
    reason += Name(ranked[i]->algo, ranked[i]->proto) + " " + Fmt(ranked[i]->time_us) + " us";
  }
  reason += " (" + result.graph.reason + "; call runs " + std::to_string(result.channels) + " channels x " +
            std::to_string(result.threads) + " threads)";
  return reason;
}

}  // namespace

double NcclPcieBandwidthGbps(int pcie_gen, int lanes) {
  static constexpr double kGenValue[] = {0, 15, 30, 60, 120, 240, 480};
  SPECSIM_CHECK(pcie_gen >= 1 && pcie_gen <= 6) << "pcie_gen=" << pcie_gen;
  return lanes * kGenValue[pcie_gen] / 80.0;
}

StatusOr<int> ParseSmArch(std::string_view arch) {
  const std::string s = AsciiLower(arch);
  std::string digits;
  if (s.rfind("sm_", 0) == 0) {
    digits = s.substr(3);
  } else if (s.rfind("sm", 0) == 0) {
    digits = s.substr(2);
  }
  const bool numeric = !digits.empty() && digits.size() <= 3 &&
                       std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!numeric) {
    return InvalidArgumentError("arch \"" + std::string(arch) + "\": expected smNN, e.g. sm90, sm120");
  }
  return std::stoi(digits);
}

std::vector<double> NcclSearchSpeedsGbps(int sm) {
  if (sm >= 100) return {90, 80, 70, 60, 50, 45, 40, 30, 24, 20, 19, 18};
  if (sm >= 90) return {60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3};
  return {40, 30, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3};
}

StatusOr<NcclGraph> SearchNcclRingGraph(const NcclGraphInput& in) {
  if (!(in.gpu_link_gbps > 0) || !(in.ring_bottleneck_gbps > 0)) {
    return InvalidArgumentError("gpu_link_gbps and ring_bottleneck_gbps must be > 0");
  }
  if (in.max_channels < 0 || in.min_channels < 0) return InvalidArgumentError("channel limits must be >= 0");
  if (in.max_channels > 0 && in.min_channels > in.max_channels) {
    return InvalidArgumentError("min_channels = " + std::to_string(in.min_channels) +
                                " > max_channels = " + std::to_string(in.max_channels));
  }
  const int search_max =
      in.max_channels > 0 ? std::min(in.max_channels, kNcclSearchMaxChannels) : kNcclSearchMaxChannels;
  NcclGraph g;
  double best_total = 0;
  for (double speed : NcclSearchSpeedsGbps(in.sm)) {
    if (speed > in.ring_bottleneck_gbps) continue;
    const int channels = std::min(search_max, static_cast<int>(std::floor(in.ring_bottleneck_gbps / speed + 1e-9)));
    const double total = channels * speed;
    if (total > best_total) {
      best_total = total;
      g.search_channels = channels;
      g.search_speed_gbps = speed;
    }
    if (total >= in.gpu_link_gbps) break;
  }
  if (g.search_channels == 0) {
    g.fell_back = true;
    g.search_channels = 1;
    g.search_speed_gbps = kFallbackBwGbps;
  }
  g.graph_channels = g.search_channels;
  g.bw_intra_gbps = g.search_speed_gbps;
  if (g.bw_intra_gbps >= 25.0) {
    const int dup = std::min(g.graph_channels * 2, search_max);
    // NOLINTNEXTLINE(bugprone-integer-division): NCCL divides by ceil(new / old) channels, an integer
    g.bw_intra_gbps /= (dup + g.graph_channels - 1) / g.graph_channels;
    g.graph_channels = dup;
  }
  const int comm_max = in.max_channels > 0 ? std::min(in.max_channels, kNcclMaxChannels) : kNcclMaxChannels;
  g.comm_channels = std::max(std::min(2 * g.graph_channels, comm_max), in.min_channels);
  if (g.fell_back) {
    g.reason = "no ring fits the " + Fmt(in.ring_bottleneck_gbps) +
               " GB/s bottleneck at any search speed: NCCL falls back to simple order, 1 channel at 0.1 GB/s";
  } else {
    g.reason = "search " + std::to_string(g.search_channels) + " x " + Fmt(g.search_speed_gbps) + " GB/s -> graph " +
               std::to_string(g.graph_channels) + " x " + Fmt(g.bw_intra_gbps) + " GB/s, " +
               std::to_string(g.comm_channels) + " channels";
  }
  return g;
}

double NcclNvLinkPerLinkGbps(int sm) {
  if (sm >= 100) return 40.1;
  if (sm >= 90) return 20.6;
  if (sm == 86) return 12.0;
  if (sm >= 70) return 20.0;
  return 18.0;
}

int NcclChannelsUsed(Collective collective, NcclProto proto, int num_ranks, int call_channels, int comm_channels,
                     int64_t bytes) {
  SPECSIM_CHECK(call_channels >= 1 && call_channels <= comm_channels) << call_channels << " of " << comm_channels;
  SPECSIM_CHECK(num_ranks >= 1 && bytes >= 0);
  constexpr int64_t kMinTrafficPerChannel = 16 << 10;
  // The task's own byte count: allreduce the buffer, all-gather the send, reduce-scatter the receive.
  const int64_t count_bytes = collective == Collective::kAllReduce ? bytes : bytes / num_ranks;
  int64_t traffic_per_byte = collective == Collective::kAllReduce ? 2 : num_ranks;
  if (proto == NcclProto::kLl) traffic_per_byte *= 4;
  const int64_t traffic = std::max(kMinTrafficPerChannel, count_bytes * traffic_per_byte);
  const int64_t per_channel = std::max(kMinTrafficPerChannel, traffic / call_channels);
  const int64_t cell_bytes = DivUp(DivUp(kMinTrafficPerChannel, traffic_per_byte), 16) * 16;
  const int64_t cells = DivUp(count_bytes, cell_bytes);
  if (cells == 0) return 1;
  const int64_t cell_traffic = cell_bytes * traffic_per_byte;
  int64_t cells_per_channel = std::min(cells, DivUp(per_channel, cell_traffic));
  const int64_t cells_lo = comm_channels == 1 ? cells : std::min(cells, DivUp(per_channel, cell_traffic));
  int64_t mid = (cells - cells_lo) / cells_per_channel;
  int64_t cells_hi = (cells - cells_lo) % cells_per_channel;
  int64_t used = (cells_lo != 0 ? 1 : 0) + mid + (cells_hi != 0 ? 1 : 0);
  if (comm_channels < used) {  // overflowed the communicator's channels
    mid = comm_channels - 2;
    cells_per_channel = (cells - cells_lo) / (mid + 1);
    cells_hi = cells_per_channel + (cells - cells_lo) % (mid + 1);
  }
  if (cells_hi == 0 && mid != 0) {
    cells_hi = cells_per_channel;
    --mid;
  }
  used = (cells_lo != 0 ? 1 : 0) + mid + (cells_hi != 0 ? 1 : 0);
  return static_cast<int>(std::clamp<int64_t>(used, 1, comm_channels));
}

NcclCallShape ShrinkNcclChannels(NcclAlgo algo, NcclProto proto, int num_ranks, int comm_channels, int64_t bytes) {
  int nc = comm_channels;
  int nt = proto == NcclProto::kLl128 ? 640 : (algo == NcclAlgo::kTree && proto == NcclProto::kSimple) ? 640 : 512;
  int64_t threshold = proto == NcclProto::kSimple ? 64 : 8;  // NCCL_{LL,LL128,SIMPLE}_THREAD_THRESHOLD
  if (algo == NcclAlgo::kRing && proto == NcclProto::kLl) threshold *= num_ranks;
  while (bytes < int64_t{nc} * nt * threshold) {
    if (nc >= 2) {
      --nc;
    } else if (nt % 128 == 0) {
      nt /= 2;
    } else {
      break;
    }
  }
  return {nc, nt};
}

StatusOr<NcclTuningResult> TuneNccl(const NcclTuningInput& in, int64_t bytes) {
  const int n = in.num_ranks;
  if (n < 2) return InvalidArgumentError("num_ranks = " + std::to_string(n) + ": must be >= 2");
  if (bytes < 0) return InvalidArgumentError("bytes = " + std::to_string(bytes) + ": must be >= 0");
  if (in.collective == Collective::kAllToAll) {
    return InvalidArgumentError("NCCL's tuner has no ring/tree model for alltoall (it is send/recv)");
  }
  NcclTuningResult result;
  ASSIGN_OR_RETURN(result.graph, SearchNcclRingGraph(in.graph));
  const NcclGraph& g = result.graph;
  result.candidates = EstimateCandidates(in, g, bytes);
  ASSIGN_OR_RETURN(const NcclCandidate* best, PickLikeNccl(in, result.candidates));
  result.algo = best->algo;
  result.proto = best->proto;
  result.time_us = best->time_us;
  const NcclCallShape shape = ShrinkNcclChannels(best->algo, best->proto, n, g.comm_channels, bytes);
  result.channels = NcclChannelsUsed(in.collective, best->proto, n, shape.channels, g.comm_channels, bytes);
  result.threads = shape.threads;
  result.reason = ExplainPick(result);
  return result;
}

}  // namespace specsim::coll
