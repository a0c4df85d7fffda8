// The "files:" line of a command's header: every config file a scenario run read and where from
// (a file in the working directory shadows the compiled-in copy of its name: io::ConfigSourceOf).
#pragma once

#include <string>

#include "specsim/scenario.pb.h"

namespace specsim::tools {

// "files: scenario S (compiled-in), hardware H (working directory), model M (...), draft D (...),
// framework F (...), calibration C (...)", without the comment prefix or newline. `scenario_path`
// empty: `no_path` names the scenario (simulate: the embedded default; advise: built from its
// flags); `calibration_flag` non-empty replaces the scenario's calibration.
std::string ConfigFilesText(const config::Scenario& scenario, const std::string& scenario_path,
                            const std::string& calibration_flag,
                            const std::string& no_path = "the embedded default (compiled-in)");

}  // namespace specsim::tools
