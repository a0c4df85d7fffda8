#include "sim/coll/collective_planner.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <numeric>

#include "sim/coll/alltoall.h"
#include "sim/coll/custom_allreduce.h"
#include "sim/coll/nccl_transport.h"
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

StatusOr<PlannedCollective> PlanCollective(const net::Topology& topology, const net::Router& router,
                                           const CollectiveRequest& request) {
  PlannedCollective plan;
  plan.rank_gpus = request.gpus;
  if (plan.rank_gpus.empty()) {
    plan.rank_gpus.resize(topology.num_gpus());
    std::iota(plan.rank_gpus.begin(), plan.rank_gpus.end(), 0);
  }
  const int n = static_cast<int>(plan.rank_gpus.size());
  std::vector<bool> used(topology.num_gpus(), false);
  for (int g : plan.rank_gpus) {
    if (g < 0 || g >= topology.num_gpus())
      return InvalidArgumentError("gpus: GPU " + std::to_string(g) + " does not exist; '" + topology.name +
                                  "' has GPUs 0-" + std::to_string(topology.num_gpus() - 1));
    if (used[g]) return InvalidArgumentError("gpus: GPU " + std::to_string(g) + " is listed twice");
    used[g] = true;
  }
  if (n < 2) return InvalidArgumentError("gpus: a collective needs at least 2 GPUs");
  if (request.bytes < 0) return InvalidArgumentError("size must be >= 0 bytes");
  if (request.channels < 0) return InvalidArgumentError("channels: must be >= 1 (or 0 for NCCL's choice)");

  // 1. Transport.
  NcclTransportInput transport_in;
  transport_in.cpu_vendor = topology.cpu_vendor;
  transport_in.p2p_level = request.p2p_level;
  transport_in.p2p_disable = request.p2p_disable;
  transport_in.path_class.assign(n, std::vector<net::PathClass>(n, net::PathClass::kPix));
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (i != j) transport_in.path_class[i][j] = router.GpuPathClass(plan.rank_gpus[i], plan.rank_gpus[j]);
  ASSIGN_OR_RETURN(NcclTransportChoice transport, ChooseNcclTransport(transport_in));
  plan.transport = transport.reason;

  // 2. NCCL's view of the ring (order = request order) and the transport of every pair.
  ASSIGN_OR_RETURN(int sm, ParseSmArch(topology.gpu_spec(plan.rank_gpus[0]).arch));
  StepProtocols steps;
  steps.transport.assign(n, std::vector<NcclTransport>(n, NcclTransport::kP2pPcie));
  // ViewOfPair's transport, without its routes and bandwidths (all pairs: O(n^2)).
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      if (i == j) continue;
      if (transport.mechanism[i][j] == net::Mechanism::kHostStaged) {
        steps.transport[i][j] = NcclTransport::kShm;
      } else {
        steps.transport[i][j] = transport_in.path_class[i][j] == net::PathClass::kNvLink ? NcclTransport::kP2pNvLink
                                                                                         : NcclTransport::kP2pPcie;
      }
    }
  }
  net::PathClass worst = net::PathClass::kNvLink;
  double bottleneck = std::numeric_limits<double>::infinity();
  for (int p = 0; p < n; ++p) {
    const NcclPathView v = ViewOfPair(topology, router, plan.rank_gpus[p], plan.rank_gpus[(p + 1) % n],
                                      transport.mechanism[p][(p + 1) % n] == net::Mechanism::kHostStaged, sm);
    worst = std::max(worst, v.path_class);
    bottleneck = std::min(bottleneck, v.bandwidth_gbps);
  }
  double gpu_link = std::numeric_limits<double>::infinity();
  const int first_gpu_node = topology.gpus[plan.rank_gpus[0]];
  for (const net::Link& link : topology.links) {
    if (link.a == first_gpu_node || link.b == first_gpu_node) {
      gpu_link = NcclLinkBandwidthGbps(link, topology.cpu_vendor, sm);
      break;
    }
  }
  const NcclHw hw = worst == net::PathClass::kNvLink ? NcclHw::kNvLink : NcclHw::kPci;

  // Per transport present, the protocol's step cost (NCCL's table for that link type, then the
  // calibrated costs of that transport); filled once the protocol is known.
  auto fill_steps = [&](NcclProto proto, NcclAlgo algo) {
    steps.model.clear();
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        if (i == j) continue;
        const NcclTransport tr = steps.transport[i][j];
        if (!steps.model.count(tr))
          steps.model[tr] = ApplyProtocolOverrides(NcclProtocolModel(proto, algo, NcclHwOf(tr)), proto, tr,
                                                   request.protocol_overrides, static_cast<int>(request.collective));
      }
  };
  // The collective's own base latency: the ring's worst transport.
  const NcclTransport worst_transport = [&] {
    NcclTransport w = NcclTransport::kP2pNvLink;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
        if (i != j && static_cast<int>(steps.transport[i][j]) > static_cast<int>(w)) w = steps.transport[i][j];
    return w;
  }();
  plan.worst_transport = worst_transport;

  NcclTuningInput tuning_in;
  tuning_in.collective = request.collective;
  tuning_in.num_ranks = n;
  tuning_in.worst_path = worst;
  tuning_in.graph.sm = sm;
  tuning_in.graph.gpu_link_gbps = gpu_link;
  tuning_in.graph.ring_bottleneck_gbps = bottleneck;
  tuning_in.graph.min_channels = request.min_channels;
  tuning_in.graph.max_channels = request.max_channels;
  if (request.protocol) tuning_in.protos = {*request.protocol};

  const Algorithm algo = request.algorithm;
  const bool nccl_algo = algo == Algorithm::kAuto || algo == Algorithm::kRing || algo == Algorithm::kTree;
  if (request.collective != Collective::kAllReduce &&
      (algo == Algorithm::kTree || algo == Algorithm::kOneShot || algo == Algorithm::kTwoShot)) {
    return InvalidArgumentError(std::string("algorithm ") + AlgorithmName(algo) + ": implements allreduce only; for " +
                                CollectiveName(request.collective) + " use ring or auto");
  }
  if (request.collective == Collective::kAllToAll && algo != Algorithm::kDirect && algo != Algorithm::kAuto)
    return InvalidArgumentError(std::string("algorithm ") + AlgorithmName(algo) +
                                ": alltoall runs as direct sends (direct or auto)");
  if (algo == Algorithm::kDirect && request.collective != Collective::kAllToAll)
    return InvalidArgumentError(
        "algorithm direct: the all-to-all algorithm; allreduce/allgather/reducescatter use ring, tree, oneshot, "
        "twoshot or auto");

  if (nccl_algo && request.collective != Collective::kAllToAll) {
    if (algo == Algorithm::kRing) tuning_in.algos = {NcclAlgo::kRing};
    if (algo == Algorithm::kTree) tuning_in.algos = {NcclAlgo::kTree};
    if (request.collective != Collective::kAllReduce) tuning_in.algos = {NcclAlgo::kRing};
    ASSIGN_OR_RETURN(NcclTuningResult tuned, TuneNccl(tuning_in, request.bytes));
    plan.algorithm = NcclAlgoName(tuned.algo);
    plan.protocol = NcclProtoName(tuned.proto);
    plan.channels = request.channels > 0 ? request.channels : std::max(1, tuned.channels);
    plan.choice = (algo == Algorithm::kAuto ? "NCCL's pick: " : "NCCL's protocol pick: ") + tuned.reason;
    if (request.channels > 0) plan.choice += "; channels fixed at " + std::to_string(request.channels);
    const ProtocolModel protocol =
        ApplyProtocolOverrides(NcclProtocolModel(tuned.proto, tuned.algo, hw), tuned.proto, worst_transport,
                               request.protocol_overrides, static_cast<int>(request.collective));
    fill_steps(tuned.proto, tuned.algo);
    if (tuned.algo == NcclAlgo::kTree) {
      TreeOptions options;
      options.order = {};
      options.channels = plan.channels;
      options.protocol = protocol;
      options.mechanism = transport.mechanism;
      options.steps = steps;
      RETURN_IF_ERROR(ValidateTreeOptions(n, request.bytes, options));
      plan.schedule = BuildTreeAllReduce(n, request.bytes, options);
    } else {
      RingOptions options;
      options.channels = plan.channels;
      options.protocol = protocol;
      options.mechanism = transport.mechanism;
      options.steps = steps;
      RETURN_IF_ERROR(ValidateRingOptions(n, request.bytes, options));
      switch (request.collective) {
        case Collective::kAllReduce: plan.schedule = BuildRingAllReduce(n, request.bytes, options); break;
        case Collective::kAllGather: plan.schedule = BuildRingAllGather(n, request.bytes, options); break;
        case Collective::kReduceScatter: plan.schedule = BuildRingReduceScatter(n, request.bytes, options); break;
        case Collective::kAllToAll: break;
      }
    }
    return plan;
  }

  if (request.collective == Collective::kAllToAll) {
    AllToAllOptions options;
    options.channels = request.channels > 0 ? request.channels : 1;
    const NcclProto a2a_proto = request.protocol.value_or(NcclProto::kSimple);
    options.protocol =
        ApplyProtocolOverrides(NcclProtocolModel(a2a_proto, NcclAlgo::kRing, hw), a2a_proto, worst_transport,
                               request.protocol_overrides, static_cast<int>(request.collective));
    options.mechanism = transport.mechanism;
    fill_steps(a2a_proto, NcclAlgo::kRing);
    options.steps = steps;
    RETURN_IF_ERROR(ValidateAllToAllOptions(n, request.bytes, options));
    plan.schedule = BuildDirectAllToAll(n, request.bytes, options);
    plan.algorithm = "direct";
    plan.protocol = options.protocol.name;
    plan.channels = options.channels;
    plan.choice = "direct sends to every peer (NCCL send/recv)";
    return plan;
  }

  // One-shot / two-shot custom allreduce: pull-based kernel reads of peer memory (cudaIpc).
  if (request.protocol)
    return InvalidArgumentError("protocol: applies to NCCL algorithms (ring, tree), not to oneshot/twoshot");
  CustomAllReduceOptions options;
  options.blocks = request.custom_blocks;
  options.launch_delay_ps = request.custom_launch_ps;
  // Without P2P the kernels can only meet in mapped host memory, which needs staged inputs.
  options.host_mapped = request.custom_host_mapped || request.p2p_disable;
  options.stage_input = request.custom_stage_input || options.host_mapped;
  options.flag_latency_ps = request.custom_flag_latency_ps;
  options.read_gbps_per_block = request.custom_read_gbps_per_block;
  RETURN_IF_ERROR(ValidateCustomAllReduceOptions(n, request.bytes, options));
  if (options.host_mapped) {
    for (int g : plan.rank_gpus)
      if (topology.HostMemoryOfSocket(topology.nodes[topology.gpus[g]].socket) < 0)
        return InvalidArgumentError("custom allreduce through host memory: GPU " + std::to_string(g) +
                                    "'s socket has no HOST_MEMORY node in '" + topology.name + "'");
  }
  plan.schedule = algo == Algorithm::kOneShot ? BuildOneShotAllReduce(n, request.bytes, options)
                                              : BuildTwoShotAllReduce(n, request.bytes, options);
  plan.algorithm = AlgorithmName(algo);
  plan.protocol = "";
  plan.channels = options.blocks;
  plan.choice =
      std::string("custom ") + AlgorithmName(algo) + " allreduce, " + std::to_string(options.blocks) + " blocks, " +
      (options.host_mapped
           ? "exchange buffers in mapped host memory" + std::string(request.p2p_disable ? " (P2P disabled)" : "")
       : options.stage_input ? "inputs staged in exchange buffers, peer reads over P2P"
                             : "peer reads over P2P");
  return plan;
}

}  // namespace specsim::coll
