#include "sim/tools/hardware_from_topo_command.h"

#include <algorithm>
#include <cctype>
#include <iostream>

#include "sim/io/file_io.h"
#include "sim/io/hardware_from_topo.h"
#include "sim/io/hardware_loader.h"

namespace specsim::tools {

int RunHardwareFromTopo(const HardwareFromTopoFlags& flags, std::ostream& out, std::ostream& err) {
  auto fail = [&err](const std::string& what, const Status& s) {
    err << "specsim hardware-from-topo: " << what << s.message() << "\n";
    return 2;
  };
  // Committed inputs (traces/topo/...) are found from any directory, as traces are.
  auto topo_text = io::ReadFileToString(io::CommittedPath(flags.topo));
  if (!topo_text.ok()) return fail("", topo_text.status());
  io::TopoInputs in;
  auto matrix = io::ParseNvidiaSmiTopo(*topo_text);
  if (!matrix.ok()) return fail(flags.topo + ": ", matrix.status());
  in.matrix = *matrix;
  in.sources = "`nvidia-smi topo -m` (" + flags.topo + ")";
  if (!flags.smi.empty()) {
    auto smi_text = io::ReadFileToString(io::CommittedPath(flags.smi));
    if (!smi_text.ok()) return fail("", smi_text.status());
    auto gpus = io::ParseNvidiaSmiGpus(*smi_text);
    if (!gpus.ok()) return fail(flags.smi + ": ", gpus.status());
    if (static_cast<int>(gpus->size()) != in.matrix.num_gpus)
      return fail(flags.smi + ": ",
                  InvalidArgumentError(std::to_string(gpus->size()) + " GPUs where the topology has " +
                                       std::to_string(in.matrix.num_gpus)));
    in.gpus = *gpus;
    in.sources += " and nvidia-smi (" + flags.smi + ")";
  }
  in.gpu_name = flags.gpu;
  in.name = flags.name;
  if (in.name.empty()) {
    std::string gpu = !flags.gpu.empty() ? flags.gpu : in.gpus.empty() ? std::string("gpu") : in.gpus.front().name;
    if (gpu.rfind("NVIDIA ", 0) == 0) gpu = gpu.substr(7);
    for (char& c : gpu) c = std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::tolower(c)) : '-';
    in.name = gpu + "-" + std::to_string(in.matrix.num_gpus) + "x-topo";
  }
  auto text = io::HardwareConfigFromTopo(in);
  if (!text.ok()) return fail("", text.status());
  // Checked as any hardware file is before it is written (its warnings shown).
  std::vector<std::string> warnings;
  auto loaded = io::ParseHardware(*text, in.name + " (generated)", &warnings);
  if (!loaded.ok()) return fail("the generated config does not load: ", loaded.status());
  for (const std::string& w : warnings) err << "specsim hardware-from-topo: warning: " << w << "\n";
  if (flags.output.empty()) {
    out << *text;
    return 0;
  }
  if (Status w = io::WriteFileAtomically(flags.output, *text); !w.ok()) {
    err << "specsim hardware-from-topo: -o " << w.message() << "\n";
    return io::kWriteFailedExitCode;
  }
  err << "wrote " << flags.output << " (" << in.matrix.num_gpus
      << " GPUs; values marked [GUESS] to replace or calibrate)\n";
  return 0;
}

}  // namespace specsim::tools
