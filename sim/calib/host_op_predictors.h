// A Python framework's ops and the loops of them (validate/torch_host_probe.py), re-simulated from
// the host model's per-op costs (llm::HostCosts::ops, fitted from the probe's single-op items, one
// entry per op and shape: HostOpKey) and each op's GPU time as its single-op item measured it.
//
//   host op    KIND_HOST_OP: the host time of one call, the median of the op's fitted distribution;
//              without one, the host model's cost for the op's class (library, collective, graph
//              launch, sync wake; a kernel op pays kernel_issue per kernel, a metadata op nothing).
//   host loop  KIND_HOST_LOOP, per iteration from an idle GPU, each op's host time drawn from its
//              distribution (seeded, the same draws for every prediction), an iteration's calls
//              as one pass with the host model's call_correlation (llm::PassQuantiles):
//                eager  the host issues op i in c_i (H += c_i); its k kernels are launched through
//                       the call, so its GPU work starts at max(G, H_start + c_i / k) and ends at
//                       max(start + d_i, H + d_i / k): no earlier than the last kernel's launch and
//                       its share of the op's GPU time d_i (the single op's, calls back to back);
//                graph  the host spends one graph replay; the GPU runs the ops' in-graph times
//                       (the single ops' graph_device_us) from then on;
//              then the read-back: the host waits for the GPU and pays the sync's cost,
//              H = max(H, G) + c_sync. The item: the median over the iterations of H.
#pragma once

#include <string>

#include "sim/calib/params.h"
#include "sim/calib/predictors.h"
#include "specsim/trace.pb.h"

namespace specsim::calib {

// The key of an op's host cost in llm::HostCosts::ops: "<op>/q<tokens>" (one entry per shape).
std::string HostOpKey(const std::string& op, int tokens);

Prediction PredictHostOp(const trace::Item& item, const CalibParams& params);
Prediction PredictHostLoop(const trace::Trace& trace, const trace::Item& item, const CalibParams& params);

}  // namespace specsim::calib
