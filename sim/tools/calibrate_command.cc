#include "sim/tools/calibrate_command.h"

#include <fmt/format.h>
#include <google/protobuf/text_format.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "sim/calib/fit.h"
#include "sim/tools/calib_setup.h"

namespace specsim::tools {

int RunCalibrate(const CalibrateFlags& flags, std::ostream& out, std::ostream& err) {
  auto in = LoadCalibInputs(flags.trace, flags.hardware, "");
  if (!in.ok()) {
    err << "specsim calibrate: " << in.status().message() << "\n";
    return 2;
  }
  auto fit = calib::Fit(in->trace, {}, *in->topology, in->params);
  if (!fit.ok()) {
    err << "specsim calibrate: " << flags.trace << ": " << fit.status().message() << "\n";
    return 2;
  }
  const config::Calibration c = calib::CalibrationFromFit(*fit, *in->topology, flags.trace);
  std::string text;
  google::protobuf::TextFormat::PrintToString(c, &text);
  text = "# proto-file: proto/specsim/calibration.proto\n# proto-message: specsim.config.Calibration\n"
         "# Written by `specsim calibrate " + flags.trace + "`; hardware " + in->hardware_source + ".\n" + text;
  if (!flags.output.empty()) {
    std::ofstream f(flags.output);
    f << text;
    if (!f) {
      err << "specsim calibrate: cannot write " << flags.output << "\n";
      return 2;
    }
  }
  if (flags.json) {
    nlohmann::json j;
    j["fitted"] = nlohmann::json::array();
    for (const calib::FittedParam& p : fit->fitted)
      j["fitted"].push_back({{"name", p.name}, {"value", p.value}, {"unit", p.unit}, {"residual", p.residual}, {"points", p.points}});
    j["not_fitted"] = fit->not_fitted;
    out << j.dump(2) << "\n";
    return 0;
  }
  out << fmt::format("Calibration of {} ({} items), hardware {}\n\n", flags.trace, in->trace.items_size(), in->hardware_source);
  out << fmt::format("{:<48} {:>14} {:<5} {:>9} {:>6}\n", "parameter", "value", "unit", "residual", "points");
  for (const calib::FittedParam& p : fit->fitted)
    out << fmt::format("{:<48} {:>14.6g} {:<5} {:>8.2f}% {:>6}\n", p.name, p.value, p.unit, 100 * p.residual, p.points);
  out << "\n(residual: rms relative error of the items behind the value, after the fit)\n";
  if (!fit->not_fitted.empty()) {
    out << "\nnot fitted:\n";
    for (const std::string& s : fit->not_fitted) out << "  " << s << "\n";
  }
  if (flags.output.empty()) out << "\n" << text;
  else out << "\nwrote " << flags.output << "\n";
  return 0;
}

void AddCalibrateCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<CalibrateFlags>();
  CLI::App* cmd = app.add_subcommand("calibrate", "fit the simulator's parameters to a measurement trace");
  cmd->add_option("trace", flags->trace, "trace written by specsim-validate (.pb)")->required();
  cmd->add_option("-o,--output", flags->output, "calibration textproto to write");
  cmd->add_option("--hardware", flags->hardware, "hardware textproto; default: built from the trace");
  cmd->add_flag("--json", flags->json, "print the fitted values as JSON");
  cmd->callback([flags, exit_code] { *exit_code = RunCalibrate(*flags, std::cout, std::cerr); });
}

}  // namespace specsim::tools
