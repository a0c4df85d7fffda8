// specsim: the command line. One binary, one subcommand per question.
#include <CLI/CLI.hpp>
#include <iostream>
#include <string>

#include "sim/core/allocator_tuning.h"
#include "sim/tools/advise_command.h"
#include "sim/tools/calibrate_command.h"
#include "sim/tools/collective_command.h"
#include "sim/tools/compare_command.h"
#include "sim/tools/hardware_from_trace_command.h"
#include "sim/tools/import_profile_command.h"
#include "sim/tools/simulate_command.h"
#include "sim/tools/sweep_command.h"

int main(int argc, char** argv) {
  specsim::KeepFreedMemoryForReuse();  // sim/core/allocator_tuning.h: a third of a search was page faults
  CLI::App app{"specsim: simulate multi-GPU inference boxes (PCIe fabric, collectives, decode loops)"};
  // The commit is the one the build was configured at (sim/tools/CMakeLists.txt).
  app.set_version_flag("--version", std::string("specsim ") + SPECSIM_VERSION + " (commit " + SPECSIM_GIT_COMMIT + ")");
  app.require_subcommand(1);
  int exit_code = 0;
  specsim::tools::AddSimulateCommand(app, &exit_code);
  specsim::tools::AddSweepCommand(app, &exit_code);
  specsim::tools::AddCollectiveCommand(app, &exit_code);
  specsim::tools::AddAdviseCommand(app, &exit_code);
  specsim::tools::AddCalibrateCommand(app, &exit_code);
  specsim::tools::AddCompareCommand(app, &exit_code);
  specsim::tools::AddHardwareFromTraceCommand(app, &exit_code);
  specsim::tools::AddImportProfileCommand(app, &exit_code);
  CLI11_PARSE(app, argc, argv);
  // Output to a full device or a closed pipe is lost output: say so and fail.
  std::cout.flush();
  if (!std::cout) {
    std::cerr << "specsim: cannot write to standard output (the device is full or the pipe closed)\n";
    return 1;
  }
  return exit_code;
}
