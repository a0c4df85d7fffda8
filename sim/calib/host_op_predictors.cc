#include "sim/calib/host_op_predictors.h"
#include "sim/core/median.h"
#include "sim/llm/pass_quantiles.h"

#include <algorithm>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace specsim::calib {
namespace {

constexpr uint64_t kHostLoopSeed = 20261203;  // the same draws for every prediction (smooth fits)
constexpr int kMinIterations = 50;

// The host model's cost of one call of an op of class `cls` launching `kernels` kernels, us, when
// no distribution was fitted for it: the class's calibrated cost, else the compute model's eager
// launch (graph launch for a replay; no wake for a sync).
double ClassCostUs(const CalibParams& params, const std::string& cls, int kernels) {
  const llm::HostCosts& h = params.host;
  const double launch_us = params.compute.launch_overhead_eager_ns * 1e-3;
  if (cls == "library") return h.library_issue_us.value_or(launch_us);
  if (cls == "collective") return h.collective_issue_us.value_or(launch_us);
  if (cls == "graph_launch") return h.graph_launch_us.value_or(params.compute.graph_launch_ns * 1e-3);
  if (cls == "sync") return h.sync_wake_us.value_or(0);
  if (cls == "metadata") return 0;
  return h.kernel_issue_us.value_or(launch_us) * std::max(1, kernels);
}

// One op of a loop: its host cost (a fitted distribution, or a fixed class cost) and GPU times.
struct LoopOp {
  const llm::HostOpCost* cost = nullptr;  // null: `fixed_us`
  double fixed_us = 0;
  double device_us = 0, graph_device_us = 0;
  int kernels = 0;
  // The call's host time at the pass's next quantile (pass_quantiles.h).
  double Draw(const llm::PassQuantiles& pass, std::mt19937_64& rng) const {
    if (cost == nullptr) return fixed_us;
    return cost->At(pass.Next(rng));
  }
};

// The single-op item of `op` measured with `tokens` tokens per sequence on `rank`, or null.
const trace::HostOpParams* SingleOp(const trace::Trace& trace, const std::string& op, int tokens, int rank) {
  for (const trace::Item& it : trace.items())
    if (it.kind() == trace::KIND_HOST_OP && it.has_host_op() && it.host_op().op() == op &&
        it.host_op().tokens() == tokens && it.host_op().rank() == rank)
      return &it.host_op();
  return nullptr;
}

LoopOp OpOf(const trace::HostOpParams& single, const CalibParams& params) {
  LoopOp o;
  o.device_us = single.device_us();
  o.graph_device_us = single.graph_device_us();
  o.kernels = single.kernels();
  auto it = params.host.ops.find(HostOpKey(single.op(), single.tokens()));
  if (it != params.host.ops.end()) {
    o.cost = &it->second;
  } else {
    o.fixed_us = ClassCostUs(params, single.op_class(), single.kernels());
  }
  return o;
}

// One iteration's host wall clock, us (the header's recurrences); its calls drawn as one pass.
double IterationUs(const std::vector<LoopOp>& ops, const LoopOp& sync, const LoopOp* replay, llm::PassQuantiles& pass,
                   std::mt19937_64& rng) {
  pass.NewPass(rng);
  double host = 0, gpu = 0;
  if (replay != nullptr) {
    host = replay->Draw(pass, rng);
    gpu = host;
    for (const LoopOp& o : ops) gpu += o.graph_device_us;
  } else {
    for (const LoopOp& o : ops) {
      const double start = host;
      const double c = o.Draw(pass, rng);
      host += c;
      if (o.device_us <= 0) continue;
      const int k = std::max(1, o.kernels);
      const double begin = std::max(gpu, start + c / k);
      gpu = std::max(begin + o.device_us, host + o.device_us / k);
    }
  }
  return std::max(host, gpu) + sync.Draw(pass, rng);
}

}  // namespace

std::string HostOpKey(const std::string& op, int tokens) { return op + "/q" + std::to_string(tokens); }

Prediction PredictHostOp(const trace::Item& item, const CalibParams& params) {
  if (!item.has_host_op()) return Prediction::NotSimulated("host-op item without its parameters");
  const trace::HostOpParams& p = item.host_op();
  auto it = params.host.ops.find(HostOpKey(p.op(), p.tokens()));
  if (it != params.host.ops.end()) return Prediction::Of(it->second.Median());
  return Prediction::Of(ClassCostUs(params, p.op_class(), p.kernels()));
}

Prediction PredictHostLoop(const trace::Trace& trace, const trace::Item& item, const CalibParams& params) {
  if (!item.has_host_loop()) return Prediction::NotSimulated("host-loop item without its parameters");
  const trace::HostLoopParams& l = item.host_loop();
  if (l.capture() != "eager" && l.capture() != "graph")
    return Prediction::NotSimulated("host-loop capture '" + l.capture() + "' is not known (eager, graph)");
  if (l.ops_size() == 0 || l.ops(l.ops_size() - 1) != "sync")
    return Prediction::NotSimulated("a host loop's ops end with its read-back, \"sync\"");
  // Each op once: its single-op item of the loop's shape and rank.
  std::map<std::string, LoopOp> by_name;
  for (const std::string& name : l.ops()) {
    if (by_name.count(name)) continue;
    const trace::HostOpParams* single = SingleOp(trace, name, l.tokens(), l.rank());
    if (single == nullptr)
      return Prediction::NotSimulated("no host-op item of op \"" + name + "\" with " + std::to_string(l.tokens()) +
                                      " tokens on rank " + std::to_string(l.rank()) + " to price it");
    by_name[name] = OpOf(*single, params);
  }
  std::optional<LoopOp> replay;
  if (l.capture() == "graph") {
    const trace::HostOpParams* single = SingleOp(trace, "graph_replay", l.tokens(), l.rank());
    if (single == nullptr) return Prediction::NotSimulated("no host-op item of op \"graph_replay\" to price the graph");
    replay = OpOf(*single, params);
  }
  std::vector<LoopOp> ops;
  for (int i = 0; i + 1 < l.ops_size(); ++i) ops.push_back(by_name.at(l.ops(i)));
  const LoopOp& sync = by_name.at("sync");
  std::mt19937_64 rng(kHostLoopSeed);
  llm::PassQuantiles pass(params.host.call_correlation);
  const int iterations = std::max(kMinIterations, item.stats().iterations());
  std::vector<double> per_iteration;
  per_iteration.reserve(iterations);
  for (int i = 0; i < iterations; ++i)
    per_iteration.push_back(IterationUs(ops, sync, replay ? &*replay : nullptr, pass, rng));
  return Prediction::Of(MedianOf(std::move(per_iteration)));
}

}  // namespace specsim::calib
