#include "sim/coll/collective_planner.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>

#include "sim/coll/alltoall.h"
#include "sim/coll/custom_allreduce.h"
#include "sim/coll/nccl_transport.h"
#include "sim/net/peer_access.h"
#include "sim/coll/nccl_tuning.h"
#include "sim/coll/ring.h"
#include "sim/coll/tree.h"
#include "sim/core/strings.h"

namespace specsim::coll {

namespace {

// A link's bandwidth as NCCL's topology models it (docs/reference/nccl-cost-model.md): PCIe by generation and
// width, the socket link by CPU vendor, NVLink by its link count times NCCL's per-link rate for
// the arch (topo.h: an H200's NV18 is 18 x 20.6 = 370.8 GB/s), else its payload rate.
double NcclLinkBandwidthGbps(const net::Link& link, net::CpuVendor vendor, int sm) {
  switch (link.kind) {
    case net::LinkKind::kPcie:
      if (link.pcie_gen >= 1 && link.pcie_gen <= 6 && link.pcie_lanes > 0)
        return NcclPcieBandwidthGbps(link.pcie_gen, link.pcie_lanes);
      return link.payload_gbps();
    case net::LinkKind::kCpuInterconnect:
      if (vendor == net::CpuVendor::kAmd) return kNcclAmdInterCpuGbps;
      if (vendor == net::CpuVendor::kIntel) return kNcclIntelSapphireRapidsInterCpuGbps;
      return link.payload_gbps();
    case net::LinkKind::kNvLink:
      if (link.nvlinks > 0) return link.nvlinks * NcclNvLinkPerLinkGbps(sm);
      return link.payload_gbps();
    case net::LinkKind::kMemory: return link.payload_gbps();
  }
  return link.payload_gbps();
}

// NCCL's view of the path between two ranks' GPUs: with SHM the GPUs meet at the CPU (NCCL drops
// the NVLink paths when P2P is disabled), so the path is the PCIe route through host memory
// (class PHB, or SYS across sockets); with P2P it is the route (NVLink when the GPUs have it).
// Bandwidth is the narrowest link in NCCL's units; through an Intel root complex NCCL charges
// P2P traffic 6/5 of its bytes (topo.h INTEL_P2P_OVERHEAD), so the path carries 5/6 of that.
struct NcclPathView {
  net::PathClass path_class = net::PathClass::kPix;
  double bandwidth_gbps = 0;
  NcclTransport transport = NcclTransport::kP2pPcie;
};

NcclPathView ViewOfPair(const net::Topology& t, const net::Router& router, int gpu_a, int gpu_b, bool shm, int sm) {
  NcclPathView v;
  v.bandwidth_gbps = std::numeric_limits<double>::infinity();
  std::vector<const net::Path*> legs;
  bool crosses_cpu = false, crosses_sockets = false;
  const int a = t.gpus[gpu_a], b = t.gpus[gpu_b];
  if (shm) {
    v.transport = NcclTransport::kShm;
    const int memory = t.HostMemoryOfSocket(t.nodes[b].socket);
    if (memory >= 0 && router.Reachable(a, memory) && router.Reachable(memory, b)) {
      legs = {&router.Route(a, memory), &router.Route(memory, b)};
      crosses_cpu = true;
    } else {
      legs = {&router.Route(a, b)};
    }
  } else {
    legs = {&router.Route(a, b)};
  }
  for (const net::Path* p : legs) {
    for (const net::Hop& hop : p->hops) {
      const net::Link& link = t.links[hop.link];
      if (link.kind == net::LinkKind::kMemory) continue;  // not in NCCL's topology
      if (link.kind == net::LinkKind::kCpuInterconnect) crosses_sockets = true;
      v.bandwidth_gbps = std::min(v.bandwidth_gbps, NcclLinkBandwidthGbps(link, t.cpu_vendor, sm));
    }
    for (size_t i = 1; i + 1 < p->nodes.size(); ++i)
      if (t.nodes[p->nodes[i]].kind == net::NodeKind::kCpuRootComplex) crosses_cpu = true;
  }
  if (!shm) {
    v.path_class = router.GpuPathClass(gpu_a, gpu_b);
    v.transport = v.path_class == net::PathClass::kNvLink ? NcclTransport::kP2pNvLink : NcclTransport::kP2pPcie;
  } else {
    v.path_class = crosses_sockets ? net::PathClass::kSys : net::PathClass::kPhb;
  }
  if (crosses_cpu && t.cpu_vendor == net::CpuVendor::kIntel && v.path_class != net::PathClass::kNvLink)
    v.bandwidth_gbps = v.bandwidth_gbps * 5.0 / 6.0;
  if (!std::isfinite(v.bandwidth_gbps)) v.bandwidth_gbps = t.gpu_spec(gpu_a).memory_bandwidth_gbps;
  return v;
}

// The request's ranks' GPUs: as listed, or every GPU of the box in order.
std::vector<int> RankGpusOf(const net::Topology& topology, const CollectiveRequest& request) {
  std::vector<int> gpus = request.gpus;
  if (gpus.empty()) {
    gpus.resize(topology.num_gpus());
    std::iota(gpus.begin(), gpus.end(), 0);
  }
  return gpus;
}

// InvalidArgument for a GPU out of range or listed twice, fewer than 2 GPUs, a negative size or
// channel count.
Status CheckRequest(const net::Topology& topology, const CollectiveRequest& request, const std::vector<int>& gpus) {
  std::vector<bool> used(topology.num_gpus(), false);
  for (int g : gpus) {
    if (g < 0 || g >= topology.num_gpus())
      return InvalidArgumentError("gpus: GPU " + std::to_string(g) + " does not exist; '" + topology.name +
                                  "' has GPUs 0-" + std::to_string(topology.num_gpus() - 1));
    if (used[g]) return InvalidArgumentError("gpus: GPU " + std::to_string(g) + " is listed twice");
    used[g] = true;
  }
  if (gpus.size() < 2) return InvalidArgumentError("gpus: a collective needs at least 2 GPUs");
  if (request.bytes < 0) return InvalidArgumentError("size must be >= 0 bytes");
  if (request.channels < 0) return InvalidArgumentError("channels: must be >= 1 (or 0 for NCCL's choice)");
  return OkStatus();
}

// Every algorithm implements allreduce; only the ring the others; only direct sends all-to-all.
Status CheckAlgorithmImplements(Algorithm algo, Collective collective) {
  if (collective != Collective::kAllReduce &&
      (algo == Algorithm::kTree || algo == Algorithm::kOneShot || algo == Algorithm::kTwoShot)) {
    return InvalidArgumentError(std::string("algorithm ") + AlgorithmName(algo) + ": implements allreduce only; for " +
                                CollectiveName(collective) + " use ring or auto");
  }
  if (collective == Collective::kAllToAll && algo != Algorithm::kDirect && algo != Algorithm::kAuto)
    return InvalidArgumentError(std::string("algorithm ") + AlgorithmName(algo) +
                                ": alltoall runs as direct sends (direct or auto)");
  if (algo == Algorithm::kDirect && collective != Collective::kAllToAll)
    return InvalidArgumentError(
        "algorithm direct: the all-to-all algorithm; allreduce/allgather/reducescatter use ring, tree, oneshot, "
        "twoshot or auto");
  return OkStatus();
}

// What NCCL makes of the ranks' fabric before it looks at the collective: each pair's transport
// and the ring graph's inputs. The ring is the ranks in request order.
struct NcclFabricView {
  NcclTransportChoice transport;
  StepProtocols steps;  // each pair's transport; the models are filled per protocol (FillStepModels)
  int sm = 0;
  net::PathClass worst_path = net::PathClass::kNvLink;                    // of the ring's hops
  double ring_bottleneck_gbps = std::numeric_limits<double>::infinity();  // in NCCL's units
  double gpu_link_gbps = std::numeric_limits<double>::infinity();         // the first GPU's own link
  NcclHw hw = NcclHw::kNvLink;
  // The ring's worst transport: the collective's own base latency is its.
  NcclTransport worst_transport = NcclTransport::kP2pNvLink;
  // What the transport model prices each pair's path on (outlive the view's use in a plan).
  const net::Topology* topology = nullptr;
  const net::Router* router = nullptr;
  std::vector<int> gpus;  // rank -> GPU
};

NcclTransportInput TransportInputOf(const net::Topology& topology, const net::Router& router,
                                    const CollectiveRequest& request, const std::vector<int>& gpus) {
  const int n = static_cast<int>(gpus.size());
  NcclTransportInput in;
  in.cpu_vendor = topology.cpu_vendor;
  in.p2p_level = request.p2p_level;
  in.p2p_disable = request.p2p_disable;
  in.path_class.assign(n, std::vector<net::PathClass>(n, net::PathClass::kPix));
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (i != j) in.path_class[i][j] = router.GpuPathClass(gpus[i], gpus[j]);
  if (topology.driver_p2p_mode == net::DriverP2pMode::kNoPcieP2p) {
    in.p2p_possible.assign(n, std::vector<bool>(n, true));
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
        if (i != j)
          in.p2p_possible[i][j] =
              net::PeerAccessOf(router, gpus[i], gpus[j], topology.driver_p2p_mode).writes != net::PeerPath::kNone;
  }
  return in;
}

// ViewOfPair's transport for every pair, without its routes and bandwidths (O(n^2)).
std::vector<std::vector<NcclTransport>> PairTransports(const NcclTransportChoice& transport,
                                                       const std::vector<std::vector<net::PathClass>>& path_class) {
  const int n = static_cast<int>(path_class.size());
  std::vector<std::vector<NcclTransport>> out(n, std::vector<NcclTransport>(n, NcclTransport::kP2pPcie));
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      if (i == j) continue;
      if (transport.mechanism[i][j] == net::Mechanism::kHostStaged) {
        out[i][j] = NcclTransport::kShm;
      } else {
        out[i][j] = path_class[i][j] == net::PathClass::kNvLink ? NcclTransport::kP2pNvLink : NcclTransport::kP2pPcie;
      }
    }
  }
  return out;
}

NcclTransport WorstTransport(const std::vector<std::vector<NcclTransport>>& transport) {
  const int n = static_cast<int>(transport.size());
  NcclTransport w = NcclTransport::kP2pNvLink;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (i != j && static_cast<int>(transport[i][j]) > static_cast<int>(w)) w = transport[i][j];
  return w;
}

// The ring's worst path class and narrowest hop, and the first GPU's own link, as NCCL sees them.
void ViewRing(const net::Topology& topology, const net::Router& router, const std::vector<int>& gpus,
              NcclFabricView* view) {
  const int n = static_cast<int>(gpus.size());
  for (int p = 0; p < n; ++p) {
    const NcclPathView v =
        ViewOfPair(topology, router, gpus[p], gpus[(p + 1) % n],
                   view->transport.mechanism[p][(p + 1) % n] == net::Mechanism::kHostStaged, view->sm);
    view->worst_path = std::max(view->worst_path, v.path_class);
    view->ring_bottleneck_gbps = std::min(view->ring_bottleneck_gbps, v.bandwidth_gbps);
  }
  const int first_gpu_node = topology.gpus[gpus[0]];
  for (const net::Link& link : topology.links) {
    if (link.a == first_gpu_node || link.b == first_gpu_node) {
      view->gpu_link_gbps = NcclLinkBandwidthGbps(link, topology.cpu_vendor, view->sm);
      break;
    }
  }
  view->hw = view->worst_path == net::PathClass::kNvLink ? NcclHw::kNvLink : NcclHw::kPci;
}

StatusOr<NcclFabricView> ViewFabricAsNccl(const net::Topology& topology, const net::Router& router,
                                          const CollectiveRequest& request, const std::vector<int>& gpus) {
  NcclFabricView view;
  const NcclTransportInput transport_in = TransportInputOf(topology, router, request, gpus);
  ASSIGN_OR_RETURN(view.transport, ChooseNcclTransport(transport_in));
  ASSIGN_OR_RETURN(view.sm, ParseSmArch(topology.gpu_spec(gpus[0]).arch));
  view.steps.transport = PairTransports(view.transport, transport_in.path_class);
  ViewRing(topology, router, gpus, &view);
  view.worst_transport = WorstTransport(view.steps.transport);
  view.topology = &topology;
  view.router = &router;
  view.gpus = gpus;
  return view;
}

// Whether the box's calibration sets `field` (ProtocolCost::hop_latency_us or base_latency_us) for
// a transport, `proto` and `op`, per transport or per op.
bool Calibrated(const ProtocolOverrides& o, std::optional<double> ProtocolCost::*field, NcclTransport tr,
                NcclProto proto, int op) {
  auto t = o.per_transport.find({tr, proto});
  auto p = o.per_op.find({tr, proto, op});
  return (t != o.per_transport.end() && (t->second.*field).has_value()) ||
         (p != o.per_op.end() && (p->second.*field).has_value());
}
bool CalibratedHop(const ProtocolOverrides& o, NcclTransport tr, NcclProto proto, int op) {
  return Calibrated(o, &ProtocolCost::hop_latency_us, tr, proto, op);
}
bool CalibratedBase(const ProtocolOverrides& o, NcclTransport tr, NcclProto proto, int op) {
  return Calibrated(o, &ProtocolCost::base_latency_us, tr, proto, op);
}

// Which transports some ordered pair of distinct ranks uses, by NcclTransport value.
std::array<bool, kNcclTransports> TransportsPresent(const std::vector<std::vector<NcclTransport>>& transport) {
  std::array<bool, kNcclTransports> present{};
  const int n = static_cast<int>(transport.size());
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (i != j) present[static_cast<int>(transport[i][j])] = true;
  return present;
}

// Per transport present, the protocol's step cost: NCCL's table for that link type, then the
// calibrated costs of that transport; where no calibration sets a transport's hop, each pair's
// hop from the transport model over the pair's path (nccl_step_model.h). InvalidArgument when an
// SHM receiver's socket has no host memory to stage through.
Status FillStepModels(NcclProto proto, NcclAlgo algo, const CollectiveRequest& request, const NcclFabricView& view,
                      StepProtocols* steps) {
  const int n = static_cast<int>(steps->transport.size());
  const int op = static_cast<int>(request.collective);
  steps->model.clear();
  const std::array<bool, kNcclTransports> present = TransportsPresent(steps->transport);
  std::array<bool, kNcclTransports> modelled{};
  bool any_modelled = false;
  for (int k = 0; k < kNcclTransports; ++k) {
    const auto tr = static_cast<NcclTransport>(k);
    if (!present[k]) continue;
    steps->model[tr] =
        ApplyProtocolOverrides(NcclProtocolModel(proto, algo, NcclHwOf(tr)), proto, tr, request.protocol_overrides, op);
    modelled[k] = NcclStepModelCovers(proto) && !CalibratedHop(request.protocol_overrides, tr, proto, op);
    any_modelled = any_modelled || modelled[k];
  }
  if (!any_modelled) return OkStatus();
  if (modelled[static_cast<int>(NcclTransport::kShm)]) {
    for (int j = 0; j < n; ++j) {
      const int node = view.topology->gpus[view.gpus[j]];
      if (view.topology->HostMemoryOfSocket(view.topology->nodes[node].socket) >= 0) continue;
      for (int i = 0; i < n; ++i)
        if (i != j && steps->transport[i][j] == NcclTransport::kShm)
          return InvalidArgumentError("NCCL SHM transport to GPU " + std::to_string(view.gpus[j]) +
                                      ": its socket has no HOST_MEMORY node in '" + view.topology->name + "'");
    }
  }
  steps->pair_hop_latency_ps = [v = &view, work = request.nccl_step_work, proto, modelled](int src, int dst) {
    const NcclTransport tr = v->steps.transport[src][dst];
    if (!modelled[static_cast<int>(tr)]) return SimTime{-1};
    const StatusOr<NcclPathTimes> path = NcclStepPathTimes(*v->topology, *v->router, v->gpus[src], v->gpus[dst], tr);
    SPECSIM_CHECK(path.ok()) << path.status().message();
    return PicosFromMicros(NcclStepHopUs(proto, *path, work));
  };
  return OkStatus();
}

// The collective's own protocol model: NCCL's for the ring's hardware, calibrated for its worst
// transport; its base from the transport model where no calibration sets one.
ProtocolModel CollectiveProtocol(NcclProto proto, NcclAlgo algo, const NcclFabricView& view,
                                 const CollectiveRequest& request) {
  const int op = static_cast<int>(request.collective);
  ProtocolModel m = ApplyProtocolOverrides(NcclProtocolModel(proto, algo, view.hw), proto, view.worst_transport,
                                           request.protocol_overrides, op);
  if (NcclStepModelCovers(proto) && !CalibratedBase(request.protocol_overrides, view.worst_transport, proto, op))
    m.base_latency_ps = PicosFromMicros(NcclStepBaseUs(proto, request.nccl_step_work));
  return m;
}

// Where a plan's NCCL costs came from (PlannedCollective::step_costs) and the range they carry.
void DescribeStepCosts(NcclProto proto, const CollectiveRequest& request, const NcclFabricView& view,
                       PlannedCollective* plan) {
  const int op = static_cast<int>(request.collective);
  if (!NcclStepModelCovers(proto)) {
    plan->step_costs = std::string("NCCL's tuning table (") + NcclProtoName(proto) + " is not in the transport model)";
    return;
  }
  std::string calibrated, modelled;
  const std::array<bool, kNcclTransports> present = TransportsPresent(view.steps.transport);
  for (int k = 0; k < kNcclTransports; ++k) {
    if (!present[k]) continue;
    const auto tr = static_cast<NcclTransport>(k);
    const bool cal = CalibratedHop(request.protocol_overrides, tr, proto, op) &&
                     CalibratedBase(request.protocol_overrides, tr, proto, op);
    std::string& list = cal ? calibrated : modelled;
    list += (list.empty() ? "" : ", ") + std::string(NcclTransportName(tr));
  }
  const NcclStepWork& w = request.nccl_step_work;
  if (modelled.empty()) {
    plan->step_costs = "calibrated (" + calibrated + ")";
    return;
  }
  char range[96];
  std::snprintf(range, sizeof range, "x%.2f-%.2f", w.range_low, w.range_high);
  plan->step_costs = "transport model for " + modelled + " (paths from '" + view.topology->name + "', protocol work " +
                     w.source + "; uncalibrated range " + range + ")";
  if (!calibrated.empty()) plan->step_costs += "; calibrated for " + calibrated;
  plan->range_low = w.range_low;
  plan->range_high = w.range_high;
}

NcclTuningInput TuningInputOf(const CollectiveRequest& request, int num_ranks, const NcclFabricView& view) {
  NcclTuningInput in;
  in.collective = request.collective;
  in.num_ranks = num_ranks;
  in.worst_path = view.worst_path;
  in.graph.sm = view.sm;
  in.graph.gpu_link_gbps = view.gpu_link_gbps;
  in.graph.ring_bottleneck_gbps = view.ring_bottleneck_gbps;
  in.graph.min_channels = request.min_channels;
  in.graph.max_channels = request.max_channels;
  if (request.protocol) in.protos = {*request.protocol};
  if (request.algorithm == Algorithm::kRing) in.algos = {NcclAlgo::kRing};
  if (request.algorithm == Algorithm::kTree) in.algos = {NcclAlgo::kTree};
  if (request.collective != Collective::kAllReduce) in.algos = {NcclAlgo::kRing};
  return in;
}

// The schedule of NCCL's ring or tree with the tuned protocol on `channels` channels.
StatusOr<Schedule> BuildNcclSchedule(const NcclTuningResult& tuned, const CollectiveRequest& request,
                                     const NcclFabricView& view, int num_ranks, int channels) {
  const ProtocolModel protocol = CollectiveProtocol(tuned.proto, tuned.algo, view, request);
  StepProtocols steps = view.steps;
  RETURN_IF_ERROR(FillStepModels(tuned.proto, tuned.algo, request, view, &steps));
  if (tuned.algo == NcclAlgo::kTree) {
    TreeOptions options;
    options.order = {};
    options.channels = channels;
    options.protocol = protocol;
    options.mechanism = view.transport.mechanism;
    options.steps = std::move(steps);
    RETURN_IF_ERROR(ValidateTreeOptions(num_ranks, request.bytes, options));
    return BuildTreeAllReduce(num_ranks, request.bytes, options);
  }
  RingOptions options;
  options.channels = channels;
  options.protocol = protocol;
  options.mechanism = view.transport.mechanism;
  options.steps = std::move(steps);
  RETURN_IF_ERROR(ValidateRingOptions(num_ranks, request.bytes, options));
  switch (request.collective) {
    case Collective::kAllReduce: return BuildRingAllReduce(num_ranks, request.bytes, options);
    case Collective::kAllGather: return BuildRingAllGather(num_ranks, request.bytes, options);
    case Collective::kReduceScatter: return BuildRingReduceScatter(num_ranks, request.bytes, options);
    case Collective::kAllToAll: break;
  }
  return Schedule{};
}

// Ring or tree as NCCL's tuner picks them (algorithm, protocol, channels) unless the request fixes them.
Status PlanNcclAlgorithm(const CollectiveRequest& request, const NcclFabricView& view, PlannedCollective* plan) {
  const int n = static_cast<int>(plan->rank_gpus.size());
  ASSIGN_OR_RETURN(NcclTuningResult tuned, TuneNccl(TuningInputOf(request, n, view), request.bytes));
  plan->algorithm = NcclAlgoName(tuned.algo);
  plan->protocol = NcclProtoName(tuned.proto);
  plan->channels = request.channels > 0 ? request.channels : std::max(1, tuned.channels);
  plan->choice = (request.algorithm == Algorithm::kAuto ? "NCCL's pick: " : "NCCL's protocol pick: ") + tuned.reason;
  if (request.channels > 0) plan->choice += "; channels fixed at " + std::to_string(request.channels);
  ASSIGN_OR_RETURN(plan->schedule, BuildNcclSchedule(tuned, request, view, n, plan->channels));
  DescribeStepCosts(tuned.proto, request, view, plan);
  return OkStatus();
}

// All-to-all as direct sends to every peer (NCCL send/recv), Simple unless a protocol is asked.
Status PlanDirectAllToAll(const CollectiveRequest& request, const NcclFabricView& view, PlannedCollective* plan) {
  const int n = static_cast<int>(plan->rank_gpus.size());
  AllToAllOptions options;
  options.channels = request.channels > 0 ? request.channels : 1;
  const NcclProto a2a_proto = request.protocol.value_or(NcclProto::kSimple);
  options.protocol = CollectiveProtocol(a2a_proto, NcclAlgo::kRing, view, request);
  options.mechanism = view.transport.mechanism;
  StepProtocols steps = view.steps;
  RETURN_IF_ERROR(FillStepModels(a2a_proto, NcclAlgo::kRing, request, view, &steps));
  options.steps = std::move(steps);
  RETURN_IF_ERROR(ValidateAllToAllOptions(n, request.bytes, options));
  plan->schedule = BuildDirectAllToAll(n, request.bytes, options);
  plan->algorithm = "direct";
  plan->protocol = options.protocol.name;
  plan->channels = options.channels;
  plan->choice = "direct sends to every peer (NCCL send/recv)";
  DescribeStepCosts(a2a_proto, request, view, plan);
  return OkStatus();
}

}  // namespace

double HostFlagFloorUs(int num_ranks, int blocks) { return HostFlagFloorUs(num_ranks, blocks, kHostFlagOneWayUs); }

double HostFlagFloorUs(int num_ranks, int blocks, double one_way_us) {
  const int per_line = std::max(1, num_ranks) * std::clamp(blocks, 1, kFrameworkFlagBlocksPerLine);
  return one_way_us + (per_line - 1) * kHostFlagLineWriteUs;
}

int FrameworkCustomBlocks(int64_t bytes) {
  const int64_t packs = (std::max<int64_t>(bytes, 0) + 15) / 16;
  return static_cast<int>(std::clamp<int64_t>((packs + 511) / 512, 1, 36));
}

std::string WhyPeerReadsAreNotDirect(const net::Topology& topology, const std::vector<int>& gpus) {
  const net::Router router(topology);
  return WhyPeerReadsAreNotDirect(topology, router, gpus);
}

std::string WhyPeerReadsAreNotDirect(const net::Topology& topology, const net::Router& router,
                                     const std::vector<int>& gpus) {
  int staged = 0, none = 0;
  for (int a : gpus)
    for (int b : gpus) {
      if (a == b) continue;
      const net::PeerPath reads = net::PeerAccessOf(router, a, b, topology.driver_p2p_mode).reads;
      staged += reads == net::PeerPath::kStagedThroughHost;
      none += reads == net::PeerPath::kNone;
    }
  if (none > 0)
    return std::to_string(none) + " GPU pairs have no peer mapping (" +
           net::DriverP2pModeName(topology.driver_p2p_mode) + ")";
  if (staged > 0)
    return std::to_string(staged) + " GPU pairs meet only at a CPU, where the " +
           net::DriverP2pModeName(topology.driver_p2p_mode) +
           " PCIe P2P stages peer reads through system memory (docs/reference/peer-access.md)";
  return "";
}

namespace {

std::string FixedPoint2(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

// The custom allreduce's buffer layout from the request (`not_direct`: WhyPeerReadsAreNotDirect
// of its GPUs); InvalidArgument for options the kernels cannot run with, or host memory a GPU's
// socket lacks.
StatusOr<CustomAllReduceOptions> CustomAllReduceOptionsOf(const net::Topology& topology, const net::Router& router,
                                                          const CollectiveRequest& request,
                                                          const std::vector<int>& gpus, const std::string& not_direct) {
  if (request.custom_blocks < 0)
    return InvalidArgumentError("custom allreduce blocks = " + std::to_string(request.custom_blocks) +
                                ": must be >= 1, or 0 for vLLM's rule (min(36, 16-byte packs / 512))");
  CustomAllReduceOptions options;
  options.blocks = request.custom_blocks > 0 ? request.custom_blocks : FrameworkCustomBlocks(request.bytes);
  options.launch_delay_ps = request.custom_launch_ps;
  // Without P2P the kernels can only meet in mapped host memory, which needs staged inputs.
  // Nor where the driver stages peer reads through system memory, or gives no peer mapping
  // (net::PeerAccessOf: the driver's PCIe P2P mode): the kernels' pulls then take the host path.
  options.host_mapped = request.custom_host_mapped || request.p2p_disable || !not_direct.empty();
  options.stage_input = request.custom_stage_input || (options.host_mapped && !request.custom_registered_host);
  options.flag_latency_ps = request.custom_flag_latency_ps;
  // Uncalibrated: a barrier flag through host memory takes at least the measured one-way trip and
  // the other writes into its line.
  if (options.host_mapped && options.flag_latency_ps == 0)
    options.flag_latency_ps = PicosFromMicros(HostFlagFloorUs(static_cast<int>(gpus.size()), options.blocks));
  options.read_gbps_per_block = request.custom_read_gbps_per_block;
  options.two_shot_end_barrier = request.custom_fence_kernel;
  // vLLM's middle barrier releases the reduced block's stores to host memory: their completion, a
  // round trip between the GPU and its socket's memory (the first rank's path; the fence kernel
  // fences at every barrier, which its flag floor carries).
  if (options.host_mapped && !request.custom_fence_kernel) {
    const int node = topology.gpus[gpus[0]];
    const int memory = topology.HostMemoryOfSocket(topology.nodes[node].socket);
    if (memory >= 0) options.middle_release_ps = PicosFromMicros(2 * router.Route(node, memory).latency_ns * 1e-3);
  }
  RETURN_IF_ERROR(ValidateCustomAllReduceOptions(static_cast<int>(gpus.size()), request.bytes, options));
  if (options.host_mapped) {
    for (int g : gpus)
      if (topology.HostMemoryOfSocket(topology.nodes[topology.gpus[g]].socket) < 0)
        return InvalidArgumentError("custom allreduce through host memory: GPU " + std::to_string(g) +
                                    "'s socket has no HOST_MEMORY node in '" + topology.name + "'");
  }
  return options;
}

// One-shot / two-shot custom allreduce: pull-based kernel reads of peer memory (cudaIpc).
// `not_direct`: WhyPeerReadsAreNotDirect of the plan's GPUs.
Status PlanCustomAllReduce(const net::Topology& topology, const net::Router& router, const CollectiveRequest& request,
                           const std::string& not_direct, PlannedCollective* plan) {
  ASSIGN_OR_RETURN(const CustomAllReduceOptions options,
                   CustomAllReduceOptionsOf(topology, router, request, plan->rank_gpus, not_direct));
  const int n = static_cast<int>(plan->rank_gpus.size());
  const Algorithm algo = request.algorithm;
  plan->schedule = algo == Algorithm::kOneShot ? BuildOneShotAllReduce(n, request.bytes, options)
                                               : BuildTwoShotAllReduce(n, request.bytes, options);
  plan->algorithm = AlgorithmName(algo);
  plan->protocol = "";
  plan->channels = options.blocks;
  plan->choice =
      std::string("custom ") + AlgorithmName(algo) + " allreduce, " +
      (request.custom_blocks > 0 ? std::to_string(options.blocks) + " blocks"
                                 : std::string("blocks min(36, 16-byte packs / 512) as vLLM launches")) +
      ", " +
      (options.host_mapped ? "exchange buffers in mapped host memory" +
                                 (request.p2p_disable   ? std::string(" (P2P disabled)")
                                  : !not_direct.empty() ? " (" + not_direct + ")"
                                                        : std::string()) +
                                 (request.custom_flag_latency_ps == 0
                                      ? ", barrier flags >= " + FixedPoint2(kHostFlagOneWayUs) + " us one way + " +
                                            FixedPoint2(kHostFlagLineWriteUs) +
                                            " us per other flag in their 128-byte line (measured through host memory)"
                                      : std::string())
       : options.stage_input ? "inputs staged in exchange buffers, peer reads over P2P"
                             : "peer reads over P2P");
  return OkStatus();
}

}  // namespace

const char* AlgorithmName(Algorithm a) {
  switch (a) {
    case Algorithm::kAuto: return "auto";
    case Algorithm::kRing: return "ring";
    case Algorithm::kTree: return "tree";
    case Algorithm::kOneShot: return "oneshot";
    case Algorithm::kTwoShot: return "twoshot";
    case Algorithm::kDirect: return "direct";
  }
  return "?";
}

StatusOr<Algorithm> ParseAlgorithm(std::string_view name) {
  const std::string n = AsciiLower(name);
  for (Algorithm a : {Algorithm::kAuto, Algorithm::kRing, Algorithm::kTree, Algorithm::kOneShot, Algorithm::kTwoShot,
                      Algorithm::kDirect}) {
    if (n == AlgorithmName(a)) return a;
  }
  return InvalidArgumentError("algorithm '" + std::string(name) +
                              "': allowed values are auto, ring, tree, oneshot, twoshot, direct");
}

StatusOr<Collective> ParseCollective(std::string_view name) {
  const std::string n = AsciiLower(name);
  for (Collective c :
       {Collective::kAllReduce, Collective::kAllGather, Collective::kReduceScatter, Collective::kAllToAll}) {
    if (n == CollectiveName(c)) return c;
  }
  return InvalidArgumentError("collective '" + std::string(name) +
                              "': allowed values are allreduce, allgather, reducescatter, alltoall");
}

double BusBandwidthFactor(Collective collective, int num_ranks) {
  const double n = num_ranks;
  return collective == Collective::kAllReduce ? 2 * (n - 1) / n : (n - 1) / n;
}

// What planning keeps between collectives on the same ranks: NCCL's view of the fabric (every
// pair's transport, the ring graph; or the error it gave) and, once a custom allreduce asked,
// why peer reads are not direct. Both depend only on the ranks' GPUs, the P2P level and
// NCCL_P2P_DISABLE (and the topology, fixed per planner).
struct CollectivePlanner::RankView {
  std::vector<int> gpus;
  std::optional<net::PathClass> p2p_level;
  bool p2p_disable = false;
  StatusOr<NcclFabricView> view = InvalidArgumentError("not viewed");
  std::optional<std::string> not_direct;

  bool Matches(const std::vector<int>& g, const CollectiveRequest& request) const {
    return gpus == g && p2p_level == request.p2p_level && p2p_disable == request.p2p_disable;
  }
};

namespace {

// PlanCollective's steps; `rank_view` is what a CollectivePlanner kept from its last plan (taken
// as is when it matches the request's ranks, refilled otherwise).
StatusOr<PlannedCollective> PlanWithRankView(const net::Topology& topology, const net::Router& router,
                                             const CollectiveRequest& request, CollectivePlanner::RankView* rank_view) {
  PlannedCollective plan;
  plan.rank_gpus = RankGpusOf(topology, request);
  RETURN_IF_ERROR(CheckRequest(topology, request, plan.rank_gpus));
  // 1. Transport; 2. NCCL's view of the ring (order = request order) and the transport of every pair.
  if (!rank_view->Matches(plan.rank_gpus, request)) {  // a fresh view (no GPUs) matches no request
    rank_view->gpus = plan.rank_gpus;
    rank_view->p2p_level = request.p2p_level;
    rank_view->p2p_disable = request.p2p_disable;
    rank_view->view = ViewFabricAsNccl(topology, router, request, plan.rank_gpus);
    rank_view->not_direct.reset();
  }
  RETURN_IF_ERROR(rank_view->view.status());
  const NcclFabricView& view = *rank_view->view;
  plan.transport = view.transport.reason;
  plan.worst_transport = view.worst_transport;
  RETURN_IF_ERROR(CheckAlgorithmImplements(request.algorithm, request.collective));
  // 3. and 4.: the algorithm's choices and its schedule.
  const Algorithm algo = request.algorithm;
  const bool nccl_algo = algo == Algorithm::kAuto || algo == Algorithm::kRing || algo == Algorithm::kTree;
  if (nccl_algo && request.collective != Collective::kAllToAll) {
    RETURN_IF_ERROR(PlanNcclAlgorithm(request, view, &plan));
  } else if (request.collective == Collective::kAllToAll) {
    RETURN_IF_ERROR(PlanDirectAllToAll(request, view, &plan));
  } else {
    if (request.protocol)
      return InvalidArgumentError("protocol: applies to NCCL algorithms (ring, tree), not to oneshot/twoshot");
    if (!rank_view->not_direct) rank_view->not_direct = WhyPeerReadsAreNotDirect(topology, router, plan.rank_gpus);
    RETURN_IF_ERROR(PlanCustomAllReduce(topology, router, request, *rank_view->not_direct, &plan));
  }
  return plan;
}

}  // namespace

StatusOr<PlannedCollective> PlanCollective(const net::Topology& topology, const net::Router& router,
                                           const CollectiveRequest& request) {
  CollectivePlanner::RankView rank_view;
  return PlanWithRankView(topology, router, request, &rank_view);
}

CollectivePlanner::CollectivePlanner(const net::Router& router)
    : router_(&router), rank_view_(std::make_unique<RankView>()) {}

CollectivePlanner::~CollectivePlanner() = default;

StatusOr<PlannedCollective> CollectivePlanner::Plan(const CollectiveRequest& request) {
  return PlanWithRankView(router_->topology(), *router_, request, rank_view_.get());
}

}  // namespace specsim::coll
