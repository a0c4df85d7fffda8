#include "sim/scenario/eager_passes.h"

#include <map>
#include <set>

#include "sim/calib/host_op_predictors.h"
#include "sim/core/median.h"
#include "sim/profile/item_stats.h"

namespace specsim::scenario {
namespace {

// The groups of `loop`'s rank whose costs price it: the other kinds' (held out), else its own.
std::vector<const profile::HostOpGroup*> CostGroups(const profile::ProfileImport& imported,
                                                    const profile::HostLoopGroup& loop, std::string* from) {
  std::vector<const profile::HostOpGroup*> other, own;
  std::set<std::string> kinds;
  for (const profile::HostOpGroup& g : imported.host_ops) {
    if (g.rank != loop.rank) continue;
    if (g.kind != loop.kind) {
      other.push_back(&g);
      kinds.insert(g.kind);
    } else if (g.tokens == loop.tokens) {
      own.push_back(&g);
    }
  }
  if (other.empty()) {
    *from = "in-sample (one kind of eager pass)";
    return own;
  }
  *from = "";
  for (const std::string& k : kinds) *from += (from->empty() ? "" : "+") + k;
  *from += " passes (held out)";
  return other;
}

EagerPassPrediction PredictOne(const profile::ProfileImport& imported, const profile::HostLoopGroup& loop) {
  EagerPassPrediction p;
  p.loop = &loop;
  p.measured_us = MedianOf(loop.host_span_us);
  const std::vector<const profile::HostOpGroup*> costs = CostGroups(imported, loop, &p.costs_from);
  // The loop, its ops' own items (their GPU time, kernels, class) and the held-out host costs.
  trace::Trace tr;
  profile::DescribeHostLoopItem(loop, tr.add_items());
  calib::CalibParams params;
  for (const std::string& op : std::set<std::string>(loop.ops.begin(), loop.ops.end())) {
    const profile::HostOpGroup* own = nullptr;
    for (const profile::HostOpGroup& g : imported.host_ops)
      if (g.rank == loop.rank && g.kind == loop.kind && g.tokens == loop.tokens && g.op == op) own = &g;
    std::vector<double> host_us;
    for (const profile::HostOpGroup* g : costs)
      if (g->op == op) host_us.insert(host_us.end(), g->host_us.begin(), g->host_us.end());
    if (own == nullptr || host_us.empty()) {
      p.why = "operator " + op + " has no host cost in the " + p.costs_from;
      return p;
    }
    profile::DescribeHostOpItem(*own, tr.add_items());
    llm::HostOpCost cost;
    cost.op_class = own->op_class;
    cost.kernels = own->kernels;
    cost.quantiles_us = profile::HostQuantiles(host_us);
    params.host.ops[calib::HostOpKey(op, loop.tokens)] = std::move(cost);
  }
  const calib::Prediction predicted = calib::PredictHostLoop(tr, tr.items(0), params);
  if (!predicted.simulated) {
    p.why = predicted.reason;
    return p;
  }
  p.predicted_us = predicted.predicted_us;
  p.ok = true;
  return p;
}

}  // namespace

std::vector<EagerPassPrediction> PredictEagerPasses(const profile::ProfileImport& imported) {
  std::vector<EagerPassPrediction> out;
  for (const profile::HostLoopGroup& loop : imported.host_loops) out.push_back(PredictOne(imported, loop));
  return out;
}

}  // namespace specsim::scenario
