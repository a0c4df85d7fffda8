#include "sim/tools/config_files.h"

#include <fmt/format.h>

#include "sim/io/file_io.h"

namespace specsim::tools {

std::string ConfigFilesText(const config::Scenario& sc, const std::string& scenario_path,
                            const std::string& calibration_flag, const std::string& no_path) {
  std::string line = "files: scenario " +
                     (scenario_path.empty() ? no_path : scenario_path + " (" + io::ConfigSourceOf(scenario_path) + ")");
  auto add = [&line](const char* what, const std::string& path) {
    if (!path.empty()) line += fmt::format(", {} {} ({})", what, path, io::ConfigSourceOf(path));
  };
  add("hardware", sc.hardware());
  add("model", sc.model());
  add("draft", sc.speculation().draft_model());
  add("framework", sc.framework());
  add("calibration", calibration_flag.empty() ? sc.calibration() : calibration_flag);
  return line;
}

}  // namespace specsim::tools
