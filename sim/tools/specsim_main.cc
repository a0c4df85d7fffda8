// specsim: the command line. One binary, one subcommand per question.
#include <CLI/CLI.hpp>
#include <iostream>
#include <string>

#include "sim/core/allocator_tuning.h"
#include "sim/tools/advise_command.h"
#include "sim/tools/calibrate_command.h"
#include "sim/tools/collective_command.h"
#include "sim/tools/compare_command.h"
#include "sim/tools/hardware_from_topo_command.h"
#include "sim/tools/hardware_from_trace_command.h"
#include "sim/tools/nccl_transport_command.h"
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
  specsim::tools::AddHardwareFromTopoCommand(app, &exit_code);
  specsim::tools::AddNcclTransportCommand(app, &exit_code);
  specsim::tools::AddImportProfileCommand(app, &exit_code);
  // A first word that is no command: name the commands (CLI11 says "A subcommand is required").
  if (argc >= 2 && argv[1][0] != '-') {
    std::string names;
    bool known = false;
    for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
      known = known || sub->get_name() == argv[1];
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (!known) {
      std::cerr << "specsim: unknown command \"" << argv[1] << "\": the commands are " << names
                << " (specsim --help; specsim COMMAND --help)\n";
      return 2;
    }
  }
  // A command line CLI11 cannot parse is bad input: exit 2, as every other bad input (README, exit
  // codes), not CLI11's own codes (105-115). --help and --version exit 0.
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  // Output to a full device or a closed pipe is lost output: say so and fail.
  std::cout.flush();
  if (!std::cout) {
    std::cerr << "specsim: cannot write to standard output (the device is full or the pipe closed)\n";
    return 1;
  }
  return exit_code;
}
