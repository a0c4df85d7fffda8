#include "sim/coll/collective_planner.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <numeric>

#include "sim/coll/alltoall.h"
#include "sim/coll/custom_allreduce.h"
#include "sim/coll/nccl_transport.h"
#include "sim/coll/nccl_tuning.h"
#include "sim/coll/ring.h"
#include "sim/coll/tree.h"

namespace specsim::coll {

namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// A link's bandwidth as NCCL's topology models it (reference.md section 2): PCIe by generation and
// width, the socket link by CPU vendor, NVLink by its payload rate.
double NcclLinkBandwidthGbps(const net::Link& link, net::CpuVendor vendor) {
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
    case net::LinkKind::kMemory:
      return link.payload_gbps();
  }
  return link.payload_gbps();
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
  const std::string n = Lower(name);
  for (Algorithm a : {Algorithm::kAuto, Algorithm::kRing, Algorithm::kTree, Algorithm::kOneShot,
                      Algorithm::kTwoShot, Algorithm::kDirect}) {
    if (n == AlgorithmName(a)) return a;
  }
  return InvalidArgumentError("algorithm '" + std::string(name) +
                              "': allowed values are auto, ring, tree, oneshot, twoshot, direct");
}

StatusOr<Collective> ParseCollective(std::string_view name) {
  const std::string n = Lower(name);
  for (Collective c : {Collective::kAllReduce, Collective::kAllGather, Collective::kReduceScatter,
                       Collective::kAllToAll}) {
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
      return InvalidArgumentError("--gpus: GPU " + std::to_string(g) + " does not exist; '" + topology.name +
                                  "' has GPUs 0-" + std::to_string(topology.num_gpus() - 1));
    if (used[g]) return InvalidArgumentError("--gpus: GPU " + std::to_string(g) + " is listed twice");
    used[g] = true;
  }
  if (n < 2) return InvalidArgumentError("--gpus: a collective needs at least 2 GPUs");
  if (request.bytes < 0) return InvalidArgumentError("size must be >= 0 bytes");
  if (request.channels < 0) return InvalidArgumentError("--channels must be >= 1 (or 0 for NCCL's choice)");

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

  // 2. NCCL's view of the ring (order = request order).
  net::PathClass worst = net::PathClass::kNvLink;
  double bottleneck = std::numeric_limits<double>::infinity();
  for (int p = 0; p < n; ++p) {
    int a = plan.rank_gpus[p], b = plan.rank_gpus[(p + 1) % n];
    worst = std::max(worst, router.GpuPathClass(a, b));
    for (const net::Hop& hop : router.Route(topology.gpus[a], topology.gpus[b]).hops)
      bottleneck = std::min(bottleneck, NcclLinkBandwidthGbps(topology.links[hop.link], topology.cpu_vendor));
  }
  double gpu_link = std::numeric_limits<double>::infinity();
  const int first_gpu_node = topology.gpus[plan.rank_gpus[0]];
  for (const net::Link& link : topology.links) {
    if (link.a == first_gpu_node || link.b == first_gpu_node) {
      gpu_link = NcclLinkBandwidthGbps(link, topology.cpu_vendor);
      break;
    }
  }
  const NcclHw hw = worst == net::PathClass::kNvLink ? NcclHw::kNvLink : NcclHw::kPci;
  ASSIGN_OR_RETURN(int sm, ParseSmArch(topology.gpu_spec(plan.rank_gpus[0]).arch));

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
    return InvalidArgumentError(std::string("--algo ") + AlgorithmName(algo) + " implements allreduce only; for " +
                                CollectiveName(request.collective) + " use ring or auto");
  }
  if (request.collective == Collective::kAllToAll && algo != Algorithm::kDirect && algo != Algorithm::kAuto)
    return InvalidArgumentError("alltoall runs as direct sends: use --algo direct or auto");
  if (algo == Algorithm::kDirect && request.collective != Collective::kAllToAll)
    return InvalidArgumentError("--algo direct is the all-to-all algorithm; allreduce/allgather/reducescatter use ring, tree, oneshot, twoshot or auto");

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
        ApplyProtocolOverrides(NcclProtocolModel(tuned.proto, tuned.algo, hw), tuned.proto, request.protocol_overrides);
    if (tuned.algo == NcclAlgo::kTree) {
      TreeOptions options;
      options.order = {};
      options.channels = plan.channels;
      options.protocol = protocol;
      options.mechanism = transport.mechanism;
      RETURN_IF_ERROR(ValidateTreeOptions(n, request.bytes, options));
      plan.schedule = BuildTreeAllReduce(n, request.bytes, options);
    } else {
      RingOptions options;
      options.channels = plan.channels;
      options.protocol = protocol;
      options.mechanism = transport.mechanism;
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
    options.protocol = ApplyProtocolOverrides(NcclProtocolModel(a2a_proto, NcclAlgo::kRing, hw), a2a_proto,
                                              request.protocol_overrides);
    options.mechanism = transport.mechanism;
    RETURN_IF_ERROR(ValidateAllToAllOptions(n, request.bytes, options));
    plan.schedule = BuildDirectAllToAll(n, request.bytes, options);
    plan.algorithm = "direct";
    plan.protocol = options.protocol.name;
    plan.channels = options.channels;
    plan.choice = "direct sends to every peer (NCCL send/recv)";
    return plan;
  }

  // One-shot / two-shot custom allreduce: pull-based kernel reads of peer memory (cudaIpc).
  if (request.protocol) return InvalidArgumentError("--proto applies to NCCL algorithms (ring, tree), not to oneshot/twoshot");
  CustomAllReduceOptions options;
  options.blocks = request.custom_blocks;
  options.launch_delay_ps = request.custom_launch_ps;
  RETURN_IF_ERROR(ValidateCustomAllReduceOptions(n, request.bytes, options));
  plan.schedule = algo == Algorithm::kOneShot ? BuildOneShotAllReduce(n, request.bytes, options)
                                              : BuildTwoShotAllReduce(n, request.bytes, options);
  if (request.p2p_disable) {
    // Without P2P the kernels read host-mapped buffers: the same pulls, staged through host memory.
    for (ScheduleOp& op : plan.schedule.ops)
      if (op.kind == OpKind::kTransfer) op.mechanism = net::Mechanism::kHostStaged;
  }
  plan.algorithm = AlgorithmName(algo);
  plan.protocol = "";
  plan.channels = options.blocks;
  plan.choice = std::string("custom ") + AlgorithmName(algo) + " allreduce, " + std::to_string(options.blocks) +
                " blocks, " + (request.p2p_disable ? "host-mapped buffers (P2P disabled)" : "peer reads over P2P");
  return plan;
}

}  // namespace specsim::coll
