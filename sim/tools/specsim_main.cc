// specsim: the command line. One binary, one subcommand per question.
#include <malloc.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "sim/tools/advise_command.h"
#include "sim/tools/calibrate_command.h"
#include "sim/tools/collective_command.h"
#include "sim/tools/compare_command.h"
#include "sim/tools/hardware_from_trace_command.h"
#include "sim/tools/import_profile_command.h"
#include "sim/tools/simulate_command.h"
#include "sim/tools/sweep_command.h"

// glibc's allocator returns memory to the kernel when the top of the heap is free past 128 KiB
// and serves blocks past 128 KiB (a pass's or a program's step list) from fresh mmaps; a search
// that builds and drops such lists per configuration then spends a third of its time in page
// faults (perf on `advise --exhaustive`: 17% in the kernel's fault path; 3.65 s -> 2.25 s on 2
// cores with these settings). Keep freed memory for reuse instead: blocks up to 32 MiB from the
// heap, trimmed only past 256 MiB free. Output is unchanged (golden-output test).
namespace {
void KeepFreedMemoryForReuse() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  mallopt(M_TOP_PAD, 16 << 20);
#endif
}
}  // namespace

int main(int argc, char** argv) {
  KeepFreedMemoryForReuse();
  CLI::App app{"specsim: simulate multi-GPU inference boxes (PCIe fabric, collectives, decode loops)"};
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
