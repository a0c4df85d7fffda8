#include "sim/tools/nccl_transport_command.h"

#include <fmt/format.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "sim/calib/calib_inputs.h"
#include "sim/calib/nccl_transport_fit.h"
#include "sim/tools/sizes.h"

namespace specsim::tools {
namespace {

constexpr auto kLl = static_cast<size_t>(coll::NcclProto::kLl);
constexpr auto kSimple = static_cast<size_t>(coll::NcclProto::kSimple);

nlohmann::json WorkJson(const coll::NcclStepWork& w) {
  return {{"ll", {{"base_us", w.base_us[kLl]}, {"step_us", w.step_us[kLl]}}},
          {"simple", {{"base_us", w.base_us[kSimple]}, {"step_us", w.step_us[kSimple]}}}};
}

nlohmann::json RowsJson(const std::vector<calib::NcclTransportRow>& rows) {
  nlohmann::json a = nlohmann::json::array();
  for (const calib::NcclTransportRow& r : rows)
    a.push_back({{"item", r.item},
                 {"transport", coll::NcclTransportName(r.transport)},
                 {"protocol", coll::NcclProtoName(r.protocol)},
                 {"cuda_graph", r.cuda_graph},
                 {"measured_us", r.measured_us},
                 {"predicted_us", r.predicted_us}});
  return a;
}

std::string WorkLine(const coll::NcclStepWork& w) {
  return fmt::format("LL base {:.2f} us, step {:+.2f} us; Simple base {:.2f} us, step {:+.2f} us", w.base_us[kLl],
                     w.step_us[kLl], w.base_us[kSimple], w.step_us[kSimple]);
}

void PrintRows(const std::vector<calib::NcclTransportRow>& rows, std::ostream& out) {
  out << fmt::format("  {:<52} {:>10} {:>6} {:>10} {:>10} {:>7}\n", "item", "transport", "proto", "measured",
                     "predicted", "error");
  for (const calib::NcclTransportRow& r : rows)
    out << fmt::format("  {:<52} {:>10} {:>6} {:>8.2f}us {:>8.2f}us {:>+6.1f}%\n", r.item,
                       coll::NcclTransportName(r.transport), coll::NcclProtoName(r.protocol), r.measured_us,
                       r.predicted_us, 100 * (r.predicted_us / r.measured_us - 1));
}

}  // namespace

int RunNcclTransport(const NcclTransportFlags& flags, std::ostream& out, std::ostream& err) {
  const StatusOr<int64_t> max_bytes = ParseSizeBytes(flags.max_bytes);
  if (!max_bytes.ok() || *max_bytes < 1) {
    err << "specsim nccl-transport: --max-bytes " << flags.max_bytes << ": "
        << (max_bytes.ok() ? std::string("must be at least 1 byte") : std::string(max_bytes.status().message()))
        << "\n";
    return 2;
  }
  auto in = calib::LoadCalibInputs(flags.traces, flags.hardware, flags.calibration);
  if (!in.ok()) {
    err << "specsim nccl-transport: " << in.status().message() << "\n";
    return 2;
  }
  for (const std::string& w : in->warnings) err << w << "\n";
  calib::NcclTransportOptions options;
  options.max_bytes = *max_bytes;
  std::string names;
  for (const std::string& t : flags.traces)
    names += (names.empty() ? "" : ", ") + std::filesystem::path(t).filename().string();
  options.source = "fitted on " + names;
  auto report = calib::CheckNcclTransportTransfer(in->trace, *in->topology, in->params, options);
  if (!report.ok()) {
    err << "specsim nccl-transport: " << report.status().message() << "\n";
    return 2;
  }
  bool over = false;
  for (const calib::NcclTransfer& t : report->transfers)
    over = over || (flags.max_error >= 0 && t.median_abs_error > flags.max_error);
  if (flags.json) {
    nlohmann::json j{{"fit_all",
                      {{"work", WorkJson(report->all.work)},
                       {"median_abs_error", report->all.median_abs_error},
                       {"items", RowsJson(report->all.rows)}}},
                     {"range", {report->range_low, report->range_high}},
                     {"covered", report->covered},
                     {"covered_held_out", report->covered_held_out},
                     {"checked", report->checked},
                     {"notes", report->notes}};
    nlohmann::json transfers = nlohmann::json::array();
    for (const calib::NcclTransfer& t : report->transfers)
      transfers.push_back({{"fitted_on", coll::NcclTransportName(t.fitted_on)},
                           {"checked_on", coll::NcclTransportName(t.checked_on)},
                           {"work", WorkJson(t.fit.work)},
                           {"fit_median_abs_error", t.fit.median_abs_error},
                           {"median_abs_error", t.median_abs_error},
                           {"ratio", {t.ratio_low, t.ratio_high}},
                           {"items", RowsJson(t.checked)}});
    j["transfers"] = transfers;
    out << j.dump(1) << "\n";
    return over ? 1 : 0;
  }
  out << "# NCCL transport model: protocol work fitted on measured calls of at most " << *max_bytes
      << " bytes (the latency regime), paths from '" << in->topology->name << "' (" << in->hardware_source << ")\n";
  for (const std::string& n : report->notes) out << "# " << n << "\n";
  out << fmt::format("\nfitted on every transport ({} items, median error {:.1f}%): {}\n", report->all.rows.size(),
                     100 * report->all.median_abs_error, WorkLine(report->all.work));
  for (const std::string& n : report->all.not_fitted) out << "  not fitted: " << n << "\n";
  for (const calib::NcclTransfer& t : report->transfers) {
    out << fmt::format("\ntransfer: fitted on {} ({} items, median error {:.1f}%): {}\n",
                       coll::NcclTransportName(t.fitted_on), t.fit.rows.size(), 100 * t.fit.median_abs_error,
                       WorkLine(t.fit.work));
    for (const std::string& n : t.fit.not_fitted) out << "  not fitted: " << n << "\n";
    out << fmt::format("  checked on {}: {} items, median error {:.1f}%, measured / predicted {:.2f}-{:.2f}\n",
                       coll::NcclTransportName(t.checked_on), t.checked.size(), 100 * t.median_abs_error, t.ratio_low,
                       t.ratio_high);
    PrintRows(t.checked, out);
  }
  out << fmt::format(
      "\nuncalibrated range: measured / predicted x{:.2f}-{:.2f} (5th-95th percentile over every transfer's items); "
      "covers {} of {} checked items (by construction); the other transfers' min-max alone covers {} of {}\n",
      report->range_low, report->range_high, report->covered, report->checked, report->covered_held_out,
      report->checked);
  if (over) {
    err << fmt::format("specsim nccl-transport: a transfer's median error exceeds --max-error {:.3f}\n",
                       flags.max_error);
    return 1;
  }
  return 0;
}

}  // namespace specsim::tools
