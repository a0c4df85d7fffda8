// Host-paced multi-rank loops of a trace (specsim-validate's pacing and decode suites) re-simulated
// on rank timelines (sim/llm/rank_timeline.h) with the calibrated host model.
//
//   layer loop   per iteration: graph: one launch, then per layer the GEMM (+ the slow rank's spin
//                kernel) and the allreduce, captured; eager: every op issued by its rank's host
//                after the injected cost (FIXED: a host work of that length; EXPONENTIAL: the
//                very draws the measurement waited, replayed per op and rank in the order drawn,
//                injected_host_cost.h); then the host waits for its GPU. Item: per
//                iteration the slowest rank's span from its start (its host's start) to its last
//                op, median over the iterations.
//   skew loop    per iteration: the injected host cost (plus the slow rank's extra), one graph
//                launch of [stamp, collective, stamp] and, when the loop syncs, the host waits.
//                Item: per iteration the longest rank's stamp-to-stamp time: its wait for the last
//                rank, the transfer, the two graph gaps and the stamp kernel; median.
//   decode step / speculative cycle (specsim-validate's loop, validate/decode_suite.cc): plain:
//                forward, token read-back (a D2H copy), sync; speculative: S-1 draft forwards and
//                the verify, read-back, sync, draft extend over N tokens per sequence, sync.
//                Launched as the item's capture mode (graph: whole forwards; piecewise: attention
//                eager between captured segments; eager). Item: per iteration the slowest rank's
//                host wall clock from step start to the end of its sync; median.
// Kernels take the compute model's time; collectives the planner's and fabric's (the item's NCCL
// environment and recorded picks, the calibrated NCCL costs). Iterations: max(50, the item's),
// seeded identically for every prediction so that fits see smooth changes (common random
// numbers); a loop with exponential injected costs runs exactly the measurement's iterations,
// warm-ups and rounds included, so that its median is over the very host costs the measurement's
// was (30-60 iterations of 32-96 draws: their sums' median is off the nominal by up to ~2%, which
// draws of the timeline's own would add as error). With no jitter and no injected cost every
// iteration is the same.
#pragma once

#include <map>
#include <string>

#include "sim/calib/params.h"
#include "sim/calib/predictors.h"
#include "sim/compute/kernel_cost.h"
#include "sim/llm/rank_timeline.h"
#include "sim/net/topology.h"
#include "specsim/trace.pb.h"

namespace specsim::calib {

Prediction PredictLayerLoop(const trace::Item& item, const net::Topology& topology, const CalibParams& params);
Prediction PredictSkewLoop(const trace::Item& item, const net::Topology& topology, const CalibParams& params);
Prediction PredictDecodeLoop(const trace::Trace& trace, const trace::Item& item, const net::Topology& topology,
                             const CalibParams& params);
// A profiler's pass item (DecodeParams.gpu_busy_only): its predicted device time per simulator
// kernel class (compute::KernelClassName; the collectives as "collective"), us.
StatusOr<std::map<std::string, double>> PredictPassDeviceTimeByClass(const trace::Trace& trace, const trace::Item& item,
                                                                     const net::Topology& topology,
                                                                     const CalibParams& params);

}  // namespace specsim::calib
