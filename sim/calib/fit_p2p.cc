// GPU-to-GPU transfers (fitters.h):
//   P2P              per path class (PIX, NV, ...) and mechanism (copy engine, kernel write,
//                    kernel read): t = L + B * (1/BW), weighted linear least squares (weights
//                    1/measured); a class's mechanisms not measured keep the routed path's defaults
//                    (P2pDefaults)
//   custom allreduce our one-shot / two-shot kernels (validate/allreduce_kernels.cu) per transport
//                    (peer memory, host-mapped memory): the barrier flag's trip (a floor on every
//                    exchange) and the most one thread block reads, through the collective
//                    planner and executor (FitBySimulation: the law is the simulated schedule)
#include <algorithm>
#include <map>
#include <string>

#include "sim/calib/fitters.h"
#include "sim/calib/trace_io.h"

namespace specsim::calib {
namespace {

bool IsP2p(trace::Kind k) {
  return k == trace::KIND_P2P_COPY || k == trace::KIND_P2P_KERNEL_READ || k == trace::KIND_P2P_KERNEL_WRITE;
}

// Fits one path class's mechanisms from the routed path's defaults for its GPUs (the last item of
// the class names them).
Status FitP2pClass(FitContext& c, const std::string& cls, std::map<int, SizeTimeRows>& by_kind) {
  const trace::Item* any = nullptr;
  for (const trace::Item* it : c.items)
    if (it->has_transfer() && PathClassName(it->transfer().path_class()) == cls) any = it;
  P2pParams& pp = c.result.params.fabric.p2p[cls];
  pp = P2pDefaults(c.topology, any->transfer().src_gpu(), any->transfer().dst_gpu(), c.result.params.compute);
  const std::string base = "fabric.p2p." + cls;
  if (by_kind.count(trace::KIND_P2P_COPY))
    RETURN_IF_ERROR(c.FitTransferClass(base + ".copy", by_kind[trace::KIND_P2P_COPY], &pp.copy));
  if (by_kind.count(trace::KIND_P2P_KERNEL_WRITE))
    RETURN_IF_ERROR(
        c.FitTransferClass(base + ".kernel_write", by_kind[trace::KIND_P2P_KERNEL_WRITE], &pp.kernel_write));
  if (by_kind.count(trace::KIND_P2P_KERNEL_READ))
    RETURN_IF_ERROR(c.FitTransferClass(base + ".kernel_read", by_kind[trace::KIND_P2P_KERNEL_READ], &pp.kernel_read));
  return OkStatus();
}

// The custom allreduce items of 2+ ranks on one transport, and the per-block read rate to start
// from: below the largest item's bus bandwidth per block, so that the cap binds there and the fit
// can move it (a cap that binds nothing has no derivative).
std::vector<const trace::Item*> CustomAllreduceItems(const FitContext& c, bool host, double* start_rate) {
  std::vector<const trace::Item*> group_items;
  *start_rate = 0;
  for (const trace::Item* it : c.items) {
    if (it->kind() != trace::KIND_CUSTOM_ALLREDUCE || it->collective().nranks() < 2) continue;
    if (it->collective().rank_groups_on_one_gpu() > 0) continue;  // one GPU's link: not a box of n GPUs
    if ((it->collective().transport() == trace::TRANSPORT_HOST_MAPPED) != host) continue;
    group_items.push_back(it);
    const int blocks = std::max(1, it->collective().blocks());
    *start_rate = std::max(*start_rate, 0.8 * it->busbw_gbps() / blocks);
  }
  return group_items;
}

}  // namespace

Status FitP2p(FitContext& c) {
  std::map<std::string, std::map<int, SizeTimeRows>> rows;  // class -> kind
  for (const trace::Item* it : c.items) {
    if (!IsP2p(it->kind())) continue;
    rows[PathClassName(it->transfer().path_class())][it->kind()].push_back(
        {double(it->transfer().bytes()), MeasuredNs(*it)});
  }
  if (rows.empty()) {
    c.result.not_fitted.push_back(
        "fabric.p2p (per path class): no GPU-to-GPU items (one GPU?): the simulator's "
        "routed-path defaults are kept");
    return OkStatus();
  }
  for (auto& [cls, by_kind] : rows) {
    if (cls.empty()) continue;
    RETURN_IF_ERROR(FitP2pClass(c, cls, by_kind));
  }
  return OkStatus();
}

Status FitCustomAllreduce(FitContext& c) {
  for (bool host : {false, true}) {
    double start_rate = 0;
    const std::vector<const trace::Item*> group_items = CustomAllreduceItems(c, host, &start_rate);
    const std::string base = std::string("custom_allreduce.") + (host ? "host" : "peer");
    if (group_items.empty()) {
      c.result.not_fitted.push_back(base + ": no custom allreduce items of 2+ ranks (defaults kept)");
      continue;
    }
    const CustomAllreduceParams& custom = c.result.params.custom;
    std::vector<SimUnknown> u = {
        // Start above any path latency (the floor must bind to be moved): 20 us.
        {base + ".flag_latency_us", "us",
         std::max(host ? custom.host_flag_latency_us : custom.peer_flag_latency_us, 20.0), 0.25, 0, 500},
        {base + ".read_gbps_per_block", "GB/s", std::max(start_rate, 0.1), 0.05 * std::max(start_rate, 0.1), 0.01,
         1e4}};
    RETURN_IF_ERROR(c.FitBySimulation(base, group_items, u, [host](const std::vector<double>& t, CalibParams* p) {
      (host ? p->custom.host_flag_latency_us : p->custom.peer_flag_latency_us) = t[0];
      (host ? p->custom.host_read_gbps_per_block : p->custom.peer_read_gbps_per_block) = t[1];
    }));
  }
  return OkStatus();
}

}  // namespace specsim::calib
