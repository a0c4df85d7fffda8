#include "sim/io/file_io.h"
#include "sim/io/textproto.h"
#include "sim/tools/calibrate_command.h"

#include <fmt/format.h>
#include <google/protobuf/text_format.h>

#include <fstream>
#include <regex>
#include <nlohmann/json.hpp>

#include "sim/calib/fit.h"
#include "sim/calib/trace_io.h"
#include "sim/calib/calib_inputs.h"
#include "sim/tools/kept_defaults.h"

namespace specsim::tools {

namespace {

void PrintFitJson(const calib::FitResult& fit, const std::vector<KeptDefault>& kept, std::ostream& out) {
  nlohmann::json j;
  j["fitted"] = nlohmann::json::array();
  for (const calib::FittedParam& p : fit.fitted)
    j["fitted"].push_back(
        {{"name", p.name}, {"value", p.value}, {"unit", p.unit}, {"residual", p.residual}, {"points", p.points}});
  j["not_fitted"] = fit.not_fitted;
  if (!fit.notes.empty()) j["notes"] = fit.notes;
  j["kept_defaults"] = nlohmann::json::array();
  for (const KeptDefault& k : kept)
    j["kept_defaults"].push_back({{"names", k.names}, {"reason", k.reason}, {"values", k.values}});
  out << j.dump(2) << "\n";
}

void PrintFitTable(const std::string& traces, const calib::CalibInputs& in, const config::Calibration& c,
                   const calib::FitResult& fit, const std::vector<KeptDefault>& kept, std::ostream& out) {
  const config::CalibrationProvenance& p = c.provenance();
  out << fmt::format("Calibration of {} ({} items), {}x {}, hardware {}\n\n", traces, in.trace.items_size(),
                     p.gpu_count(), p.gpu_name(), in.hardware_source);
  out << fmt::format("{:<48} {:>14} {:<5} {:>9} {:>6}\n", "parameter", "value", "unit", "residual", "points");
  for (const calib::FittedParam& fp : fit.fitted)
    out << fmt::format("{:<48} {:>14.6g} {:<5} {:>8.2f}% {:>6}\n", fp.name, fp.value, fp.unit, 100 * fp.residual,
                       fp.points);
  out << "\n(residual: rms relative error of the items behind the value, after the fit)\n";
  if (!fit.notes.empty()) {
    out << "\nnotes:\n";
    for (const std::string& n : fit.notes) out << "  " << n << "\n";
  }
  if (!kept.empty()) {
    out << "\nnot fitted: these parameters keep their defaults (kept values below each):\n";
    for (const KeptDefault& k : kept) {
      out << "  " << k.names << (k.reason.empty() ? "" : ": " + k.reason) << "\n";
      for (const std::string& v : k.values) out << "      " << v << "\n";
    }
  }
}

}  // namespace

int RunCalibrate(const CalibrateFlags& flags, std::ostream& out, std::ostream& err) {
  if (flags.traces.empty()) {
    err << "specsim calibrate: no trace given\n";
    return 2;
  }
  std::string traces;  // "a.pb, b.pb" for messages; "a.pb,b.pb" is Calibration.source
  std::string source;
  for (const std::string& t : flags.traces) {
    traces += (traces.empty() ? "" : ", ") + t;
    source += (source.empty() ? "" : ",") + t;
  }
  auto in = calib::LoadCalibInputs(flags.traces, flags.hardware, "");
  if (!in.ok()) {
    err << "specsim calibrate: " << in.status().message() << "\n";
    return 2;
  }
  for (const std::string& w : in->warnings) err << w << "\n";
  // Never refuse a whole trace for one group its items cannot identify: that group keeps its
  // defaults and is listed below.
  calib::FitOptions options;
  options.fix_undetermined = true;
  std::vector<int> kept_items;  // empty: every item
  if (!flags.exclude.empty()) {
    std::regex exclude;
    try {
      exclude = std::regex(flags.exclude, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      err << "specsim calibrate: --exclude '" << flags.exclude << "': not a regular expression (" << e.what() << ")\n";
      return 2;
    }
    for (int i = 0; i < in->trace.items_size(); ++i)
      if (!std::regex_search(in->trace.items(i).name(), exclude)) kept_items.push_back(i);
    if (kept_items.empty()) {
      err << "specsim calibrate: --exclude '" << flags.exclude << "' leaves none of the " << in->trace.items_size()
          << " items\n";
      return 2;
    }
    err << "specsim calibrate: --exclude '" << flags.exclude << "': " << in->trace.items_size() - kept_items.size()
        << " of " << in->trace.items_size() << " items left out of the fit\n";
  }
  auto fit = calib::Fit(in->trace, kept_items, *in->topology, in->params, options);
  if (!fit.ok()) {
    err << "specsim calibrate: " << traces << ": " << fit.status().message() << "\n";
    return 2;
  }
  config::Calibration c = calib::CalibrationFromFit(*fit, *in->topology, source);
  *c.mutable_provenance() = calib::ProvenanceFromTrace(in->trace, flags.traces);
  // A fit whose values a reader would refuse (a non-finite one, one out of its range) is not written.
  if (auto readable = calib::CalibrationFromProto(c, "the fitted calibration"); !readable.ok()) {
    err << "specsim calibrate: " << traces << ": " << readable.status().message()
        << " (the trace's items do not determine it: check them with `specsim compare`)\n";
    return 2;
  }
  std::string text;
  google::protobuf::TextFormat::PrintToString(c, &text);
  std::string command = "specsim calibrate";
  for (const std::string& t : flags.traces) command += " " + t;
  if (!flags.exclude.empty()) command += " --exclude '" + flags.exclude + "'";
  text =
      "# proto-file: proto/specsim/calibration.proto\n# proto-message: specsim.config.Calibration\n"
      "# Written by `" +
      command + "`; hardware " + in->hardware_source + ".\n" + text;
  if (!flags.output.empty()) {
    if (Status w = io::WriteFileAtomically(flags.output, text); !w.ok()) {
      err << "specsim calibrate: " << w.message() << "\n";
      return io::kWriteFailedExitCode;
    }
  }
  const std::vector<KeptDefault> kept = KeptDefaults(*fit);
  if (flags.json) {
    PrintFitJson(*fit, kept, out);
    return 0;
  }
  PrintFitTable(traces, *in, c, *fit, kept, out);
  if (flags.output.empty())
    out << "\n" << text;
  else
    out << "\nwrote " << flags.output << "\n";
  return 0;
}

}  // namespace specsim::tools
