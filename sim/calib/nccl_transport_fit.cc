#include "sim/calib/nccl_transport_fit.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "sim/calib/compare.h"
#include "sim/calib/fit_context.h"
#include "sim/calib/predictors.h"
#include "sim/coll/collective_planner.h"
#include "sim/core/median.h"
#include "sim/net/routing.h"

namespace specsim::calib {
namespace {

constexpr auto kLl = static_cast<size_t>(coll::NcclProto::kLl);
constexpr auto kSimple = static_cast<size_t>(coll::NcclProto::kSimple);

// `params` as an uncalibrated box's NCCL runs: no per-step overrides.
CalibParams WithoutNcclOverrides(CalibParams params) {
  params.nccl.protocol = coll::ProtocolOverrides{};
  return params;
}

// The transport (the ring's worst) and protocol the planner gives an item; false when it cannot plan it.
bool PlannedTransport(const trace::Item& it, const net::Topology& topology, const net::Router& router,
                      const CalibParams& params, coll::NcclTransport* transport, coll::NcclProto* proto) {
  auto request = CollectiveRequestOf(it.collective(), params);
  if (!request.ok()) return false;
  auto plan = coll::PlanCollective(topology, router, *request);
  if (!plan.ok()) return false;
  auto p = coll::ParseNcclProto(plan->protocol);
  if (!p.ok()) return false;
  *transport = plan->worst_transport;
  *proto = *p;
  return true;
}

double MedianAbsError(const std::vector<NcclTransportRow>& rows) {
  std::vector<double> e;
  e.reserve(rows.size());
  for (const NcclTransportRow& r : rows) e.push_back(std::abs(r.predicted_us / r.measured_us - 1));
  return MedianOf(std::move(e));
}

std::vector<NcclTransportRow> PredictRows(const trace::Trace& trace, const net::Topology& topology,
                                          const CalibParams& params, const std::vector<NcclTransportItem>& items) {
  const Predictor predictor(trace, topology, params);
  std::vector<NcclTransportRow> rows;
  for (const NcclTransportItem& ti : items) {
    const Prediction p = predictor.Predict(*ti.item);
    if (!p.simulated || p.predicted_us <= 0) continue;
    NcclTransportRow r;
    r.transport = ti.transport;
    r.protocol = ti.protocol;
    r.item = ti.item->name();
    r.cuda_graph = ti.item->collective().cuda_graph();
    r.measured_us = MeasuredNs(*ti.item) * 1e-3;
    r.predicted_us = p.predicted_us;
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace

std::vector<NcclTransportItem> NcclTransportItems(const trace::Trace& trace, const net::Topology& topology,
                                                  const CalibParams& params, int64_t max_bytes,
                                                  std::vector<std::string>* notes) {
  const CalibParams bare = WithoutNcclOverrides(params);
  const net::Router router(topology);
  std::map<std::string, int> left_out;
  std::vector<NcclTransportItem> items;
  for (const trace::Item& it : trace.items()) {
    if (it.kind() != trace::KIND_COLLECTIVE || it.collective().implementation() != trace::IMPL_NCCL ||
        it.collective().nranks() < 2)
      continue;
    if (it.collective().kernel_time_only()) {
      ++left_out["kernel durations only (no call time)"];
      continue;
    }
    if (it.collective().bytes() > max_bytes) {
      ++left_out["larger than " + std::to_string(max_bytes) + " bytes (past the latency regime)"];
      continue;
    }
    coll::NcclTransport transport = coll::NcclTransport::kP2pNvLink;
    coll::NcclProto proto = coll::NcclProto::kLl;
    if (!PlannedTransport(it, topology, router, bare, &transport, &proto)) {
      ++left_out["not plannable on this box"];
      continue;
    }
    if (!coll::NcclStepModelCovers(proto)) {
      ++left_out[std::string(coll::NcclProtoName(proto)) + " (not in the transport model)"];
      continue;
    }
    items.push_back({&it, transport, proto});
  }
  if (notes != nullptr)
    for (const auto& [why, count] : left_out) notes->push_back(std::to_string(count) + " NCCL items left out: " + why);
  return items;
}

StatusOr<NcclTransportFit> FitNcclStepWork(const trace::Trace& trace, const net::Topology& topology,
                                           const CalibParams& params, const std::vector<NcclTransportItem>& items,
                                           const std::string& source) {
  if (items.empty()) return InvalidArgumentError("NCCL transport fit: no NCCL items to fit on");
  std::vector<const trace::Item*> fit_items;
  for (const NcclTransportItem& ti : items) fit_items.push_back(ti.item);
  FitContext c{trace, fit_items, topology, FitOptions{}, {}};
  c.result.params = WithoutNcclOverrides(params);
  const coll::NcclStepWork& w = c.result.params.nccl.step_work;
  // Starts: NCCL's ring base latencies, no step work; bounds wide of anything physical.
  std::vector<SimUnknown> u = {
      {"nccl.step_work.ll.base_us", "us", w.base_us[kLl] > 0 ? w.base_us[kLl] : 6.6, 0.25, 0, 100, 1},
      {"nccl.step_work.ll.step_us", "us", w.step_us[kLl], 0.1, 0, 50, 0},
      {"nccl.step_work.simple.base_us", "us", w.base_us[kSimple] > 0 ? w.base_us[kSimple] : 8.4, 0.25, 0, 100, 3},
      {"nccl.step_work.simple.step_us", "us", w.step_us[kSimple], 0.1, 0, 50, 2}};
  RETURN_IF_ERROR(
      c.FitBySimulation("nccl transport model", fit_items, u, [](const std::vector<double>& t, CalibParams* p) {
        p->nccl.step_work.base_us[kLl] = t[0];
        p->nccl.step_work.step_us[kLl] = t[1];
        p->nccl.step_work.base_us[kSimple] = t[2];
        p->nccl.step_work.step_us[kSimple] = t[3];
      }));
  NcclTransportFit fit;
  fit.not_fitted = c.result.not_fitted;
  fit.work = c.result.params.nccl.step_work;
  fit.work.source = source;
  fit.work.range_low = fit.work.range_high = 1;
  CalibParams fitted = c.result.params;
  fit.rows = PredictRows(trace, topology, fitted, items);
  fit.median_abs_error = MedianAbsError(fit.rows);
  return fit;
}

StatusOr<NcclTransportReport> CheckNcclTransportTransfer(const trace::Trace& trace, const net::Topology& topology,
                                                         const CalibParams& params,
                                                         const NcclTransportOptions& options) {
  NcclTransportReport report;
  const std::vector<NcclTransportItem> items =
      NcclTransportItems(trace, topology, params, options.max_bytes, &report.notes);
  if (items.empty())
    return InvalidArgumentError("no multi-rank NCCL call of at most " + std::to_string(options.max_bytes) +
                                " bytes timed in LL or Simple: nothing to fit the transport model on");
  std::map<coll::NcclTransport, std::vector<NcclTransportItem>> by_transport;
  for (const NcclTransportItem& ti : items) by_transport[ti.transport].push_back(ti);
  ASSIGN_OR_RETURN(report.all, FitNcclStepWork(trace, topology, params, items, options.source));
  double low = 1, high = 1;
  for (const auto& [fit_on, fit_items] : by_transport) {
    for (const auto& [check_on, check_items] : by_transport) {
      if (fit_on == check_on) continue;
      NcclTransfer t;
      t.fitted_on = fit_on;
      t.checked_on = check_on;
      ASSIGN_OR_RETURN(t.fit, FitNcclStepWork(trace, topology, params, fit_items, options.source));
      CalibParams p = WithoutNcclOverrides(params);
      p.nccl.step_work = t.fit.work;
      t.checked = PredictRows(trace, topology, p, check_items);
      t.median_abs_error = MedianAbsError(t.checked);
      t.ratio_low = t.ratio_high = t.checked.empty() ? 1 : t.checked[0].Ratio();
      for (const NcclTransportRow& r : t.checked) {
        t.ratio_low = std::min(t.ratio_low, r.Ratio());
        t.ratio_high = std::max(t.ratio_high, r.Ratio());
      }
      low = std::min(low, t.ratio_low);
      high = std::max(high, t.ratio_high);
      report.transfers.push_back(std::move(t));
    }
  }
  // The range: the 5th and 95th percentiles (compare.h Percentile) of measured / predicted over every
  // transfer's checked items, so that one noisy item does not set it.
  std::vector<double> ratios;
  for (const NcclTransfer& t : report.transfers)
    for (const NcclTransportRow& r : t.checked) ratios.push_back(r.Ratio());
  if (!ratios.empty()) {
    low = std::min(1.0, PercentileOf(ratios, 0.05));
    high = std::max(1.0, PercentileOf(ratios, 0.95));
  }
  report.range_low = low;
  report.range_high = high;
  report.all.work.range_low = low;
  report.all.work.range_high = high;
  const auto within = [](double ratio, double lo, double hi) { return ratio >= lo - 1e-12 && ratio <= hi + 1e-12; };
  for (size_t k = 0; k < report.transfers.size(); ++k) {
    // The other transfers' own spread (their min and max): a range this transfer had no part in.
    double others_low = 1, others_high = 1;
    for (size_t o = 0; o < report.transfers.size(); ++o) {
      if (o == k) continue;
      others_low = std::min(others_low, report.transfers[o].ratio_low);
      others_high = std::max(others_high, report.transfers[o].ratio_high);
    }
    for (const NcclTransportRow& r : report.transfers[k].checked) {
      ++report.checked;
      report.covered += within(r.Ratio(), low, high);
      report.covered_held_out += within(r.Ratio(), others_low, others_high);
    }
  }
  return report;
}

}  // namespace specsim::calib
