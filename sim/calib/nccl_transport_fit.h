// The NCCL transport model's protocol work (coll/nccl_step_model.h) fitted on measured NCCL calls,
// and its transfer check: fitted on the calls of one transport (P2P over NVLink, SHM through host
// memory), the other transport's calls predicted from their paths alone.
//
// What is fitted: per protocol (LL, Simple) the base (once per call) and the step work (per ring
// step, beyond the path's notify / fetch), by damped Gauss-Newton through the predictor
// (FitContext::FitBySimulation), on the multi-rank NCCL items of at most `max_bytes` (the latency
// regime: every step one chunk). Everything else is the parameters given (a box's calibration for
// its host costs) with their NCCL per-step overrides removed: what an uncalibrated box runs on.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/calib/params.h"
#include "sim/coll/nccl_step_model.h"
#include "sim/coll/protocol.h"
#include "sim/core/status.h"
#include "sim/net/topology.h"
#include "specsim/trace.pb.h"

namespace specsim::calib {

// One NCCL call measured and predicted.
struct NcclTransportRow {
  std::string item;  // the item's name
  coll::NcclTransport transport = coll::NcclTransport::kP2pNvLink;
  coll::NcclProto protocol = coll::NcclProto::kLl;
  bool cuda_graph = false;
  double measured_us = 0, predicted_us = 0;
  double Ratio() const { return measured_us / predicted_us; }  // measured / predicted
};

struct NcclTransportFit {
  coll::NcclStepWork work;
  std::vector<NcclTransportRow> rows;   // the items it was fitted on, predicted with `work`
  double median_abs_error = 0;          // |predicted / measured - 1| over rows
  std::vector<std::string> not_fitted;  // unknowns the items could not separate (kept at their start)
};

// One direction of the transfer check.
struct NcclTransfer {
  coll::NcclTransport fitted_on = coll::NcclTransport::kP2pNvLink;
  coll::NcclTransport checked_on = coll::NcclTransport::kShm;
  NcclTransportFit fit;                   // on `fitted_on`'s items
  std::vector<NcclTransportRow> checked;  // `checked_on`'s items predicted with fit.work
  double median_abs_error = 0;            // over `checked`
  double ratio_low = 0, ratio_high = 0;   // min and max of measured / predicted over `checked`
};

struct NcclTransportReport {
  NcclTransportFit all;                 // fitted on every transport's items: the transport calibration
  std::vector<NcclTransfer> transfers;  // one per ordered pair of transports with items
  // The uncalibrated range: the 5th and 95th percentiles of measured / predicted over every
  // transfer's checked items (widened to include 1).
  double range_low = 1, range_high = 1;
  // Covered: per transfer, the checked items whose measured value lies in
  // [range_low, range_high] x predicted (the range applied as an uncalibrated box prints it; about
  // 90% by construction, as the range is the transfers' spread). Held out: the same with the other
  // transfers' min-max range only (no item's own transfer in it): the test of the range as a forecast.
  int covered = 0, covered_held_out = 0, checked = 0;
  std::vector<std::string> notes;  // items left out, and why (counted per reason)
};

struct NcclTransportOptions {
  int64_t max_bytes = 16 * 1024;  // the latency regime
  std::string source;             // names the traces, for NcclStepWork::source
};

// A multi-rank NCCL call with the transport (the ring's worst) and protocol the planner gives it
// (they do not depend on the step costs: planned once).
struct NcclTransportItem {
  const trace::Item* item = nullptr;
  coll::NcclTransport transport = coll::NcclTransport::kP2pNvLink;
  coll::NcclProto protocol = coll::NcclProto::kLl;
};

// The multi-rank NCCL items of at most max_bytes that time a call, in LL or Simple; `notes` gets
// the rest, counted per reason.
std::vector<NcclTransportItem> NcclTransportItems(const trace::Trace& trace, const net::Topology& topology,
                                                  const CalibParams& params, int64_t max_bytes,
                                                  std::vector<std::string>* notes);

// Fits the protocol work on `items` from `params` (its nccl.protocol removed).
StatusOr<NcclTransportFit> FitNcclStepWork(const trace::Trace& trace, const net::Topology& topology,
                                           const CalibParams& params, const std::vector<NcclTransportItem>& items,
                                           const std::string& source);

// The fit on every item, and the transfer between every two transports that have items.
// InvalidArgument when the trace has no item in the latency regime.
StatusOr<NcclTransportReport> CheckNcclTransportTransfer(const trace::Trace& trace, const net::Topology& topology,
                                                         const CalibParams& params,
                                                         const NcclTransportOptions& options);

}  // namespace specsim::calib
