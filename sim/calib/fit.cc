// The fit's order (fit.h): the host link and P2P groups, the fitted fabric applied to the topology,
// then every group from the kernels on, and the timed call's gap last (which redoes the groups from
// the kernels on with the gap it picks). The groups are in fit_*.cc (fitters.h), their shared state
// in fit_context.h.
#include "sim/calib/fit.h"

#include <algorithm>
#include <map>
#include <utility>

#include "sim/calib/fit_context.h"
#include "sim/calib/fitters.h"
#include "sim/calib/predictors.h"
#include "sim/compute/kernel_cost.h"
#include "sim/net/routing.h"

namespace specsim::calib {
namespace {

// The compute fit's parameters are ones the kernel cost model takes (efficiencies in (0, 1], times
// >= 0), which every later group prices kernels with: kernel times no cost model explains (a kernel
// faster than its bytes allow, times that shrink as the shape grows) can solve to a negative
// efficiency. Then the fit stops, naming the parameter.
Status CheckComputeFit(const FitContext& c) {
  const auto model = compute::KernelCostModel::Create(c.topology.gpu_spec(0), c.result.params.compute);
  if (model.ok()) return OkStatus();
  return InvalidArgumentError(
      "the kernel items (GEMM, attention, RMSNorm, launch) fit to parameters no cost model takes (" +
      model.status().message() + "): their times are not those of kernels of the shapes they name");
}

// The fits from the kernels on (each may use the ones before it).
Status KernelsOnwards(FitContext& c) {
  RETURN_IF_ERROR(FitComputeByGemmLibrary(c));
  RETURN_IF_ERROR(CheckComputeFit(c));
  RETURN_IF_ERROR(FitAttention(c));
  RETURN_IF_ERROR(FitSampling(c));
  RETURN_IF_ERROR(FitElementwise(c));
  RETURN_IF_ERROR(FitUnderLoad(c));
  RETURN_IF_ERROR(FitHostMemory(c));
  RETURN_IF_ERROR(FitNcclLocal(c));
  RETURN_IF_ERROR(FitNcclSteps(c));
  RETURN_IF_ERROR(FitCustomAllreduce(c));
  RETURN_IF_ERROR(FitHostPacing(c));
  return FitHostOps(c);
}

}  // namespace

StatusOr<FitResult> Fit(const trace::Trace& trace, const std::vector<int>& indices, const net::Topology& topology,
                        const CalibParams& start, const FitOptions& options) {
  FitContext c{trace, {}, topology, options, {}};
  c.result.topology = topology;
  c.result.params = start;
  if (indices.empty()) {
    for (const trace::Item& it : trace.items()) c.items.push_back(&it);
  } else {
    for (int i : indices) c.items.push_back(&trace.items(i));
  }
  // Only items with a positive median time are usable.
  c.items.erase(std::remove_if(c.items.begin(), c.items.end(),
                               [](const trace::Item* it) { return !(it->stats().median_us() > 0); }),
                c.items.end());
  if (c.items.empty())
    return InvalidArgumentError(
        "no item of the trace has a measured time (every stats.median_us is 0): nothing to fit");
  std::map<trace::Kind, int> measured_only;
  for (const trace::Item* it : c.items)
    if (!MeasuredOnlyReason(it->kind()).empty()) ++measured_only[it->kind()];
  for (const auto& [kind, n] : measured_only)
    c.result.notes.push_back(std::to_string(n) + " " + trace::Kind_Name(kind) +
                             " items ignored: " + MeasuredOnlyReason(kind));
  int max_engines = 1;
  for (const trace::Gpu& g : trace.environment().gpus()) max_engines = std::max(max_engines, g.async_engine_count());
  RETURN_IF_ERROR(FitHostCopies(c));
  RETURN_IF_ERROR(FitCopyEnginesAndDuplex(c, max_engines));
  RETURN_IF_ERROR(FitZeroCopy(c));
  RETURN_IF_ERROR(FitP2p(c));
  c.ApplyFittedFabric(topology);
  const FitContext before_kernels = c;
  RETURN_IF_ERROR(KernelsOnwards(c));
  RETURN_IF_ERROR(FitTimedCallGap(before_kernels, KernelsOnwards, c));
  c.result.topology = c.topology;
  return std::move(c.result);
}

config::Calibration CalibrationFromFit(const FitResult& result, const net::Topology& topology,
                                       const std::string& source) {
  config::Calibration c = ToCalibrationProto(result.params);
  c.set_source(source);
  // Derived GPU-model fields on the host path of GPU 0.
  net::Router router(topology);
  const int gpu_node = topology.gpus[0];
  const int memory = topology.HostMemoryOfSocket(topology.nodes[gpu_node].socket);
  if (memory >= 0 && router.Reachable(memory, gpu_node)) {
    const double one_way = router.Route(memory, gpu_node).latency_ns;
    const FabricParams& f = result.params.fabric;
    const double setup = std::min(f.h2d_pinned.latency_ns, f.d2h_pinned.latency_ns) - one_way -
                         result.params.compute.launch_overhead_eager_ns;
    c.mutable_fabric()->set_copy_engine_setup_ns(std::max(0.0, setup));
    if (f.kernel_read_per_sm_gbps > 0)
      c.mutable_fabric()->set_kernel_read_outstanding_bytes_per_sm(f.kernel_read_per_sm_gbps * 2 * one_way);
  }
  for (const FittedParam& p : result.fitted) {
    config::FittedValue* v = c.add_fitted();
    v->set_name(p.name);
    v->set_value(p.value);
    v->set_unit(p.unit);
    v->set_residual(p.residual);
    v->set_points(p.points);
  }
  return c;
}

}  // namespace specsim::calib
