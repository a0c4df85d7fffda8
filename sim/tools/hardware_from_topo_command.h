// `specsim hardware-from-topo TOPO.txt [--smi SMI.txt] [--gpu NAME] -o box.textproto`: a hardware
// config from `nvidia-smi topo -m` (and `nvidia-smi -q` or its --query-gpu CSV for the GPU's name
// and PCIe link), built by sim/io/hardware_from_topo.h with every guessed value marked, and checked
// by the hardware loader before it is written.
#pragma once

#include <ostream>
#include <string>

namespace CLI {
class App;  // <CLI/CLI.hpp>, included where the flags are registered
}  // namespace CLI

namespace specsim::tools {

struct HardwareFromTopoFlags {
  std::string topo;    // `nvidia-smi topo -m` output
  std::string smi;     // `nvidia-smi -q` or --query-gpu CSV; empty: none
  std::string gpu;     // the GPU's name; empty: from --smi
  std::string name;    // config name; empty: "<gpu>-<n>x-topo"
  std::string output;  // empty: print on `out`
};

int RunHardwareFromTopo(const HardwareFromTopoFlags& flags, std::ostream& out, std::ostream& err);
void AddHardwareFromTopoCommand(CLI::App& app, int* exit_code);

}  // namespace specsim::tools
