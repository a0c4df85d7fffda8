// `specsim collective`: what a collective costs on a box, with which algorithm, and which link is
// the bottleneck, in nccl-tests' units.
#pragma once

#include <ostream>
#include <string>

namespace CLI {
class App;  // <CLI/CLI.hpp>, included where the flags are registered
}  // namespace CLI

namespace specsim::tools {

// The flags of `specsim collective`, with their defaults.
struct CollectiveFlags {
  std::string hardware = "configs/hardware/rtxpro6000-8x-dual-socket.textproto";
  std::string op = "allreduce";
  std::string algo = "auto";
  std::string proto;
  int channels = 0;
  int min_channels = 0;
  int max_channels = 0;
  std::string gpus;
  std::string p2p_level;
  bool p2p_disable = false;
  std::string sizes = "1K:256M";
  // nccl-tests' -b / -e / -f / -i (instead of --sizes): minbytes, maxbytes, stepfactor, stepbytes.
  std::string min_bytes, max_bytes, step_bytes;
  double step_factor = 0;
  std::string dtype = "float";
  std::string redop = "sum";
  bool sizes_given = false;  // --sizes named on the command line (set by the CLI)
  int custom_blocks = 0;     // 0: vLLM's rule, min(36, 16-byte packs / 512)
  double custom_launch_us = 0;
  bool json = false;
  std::string trace;
  std::string calibration;  // --calibration: its fabric part on the topology, its NCCL costs on every plan
};

// Runs the command: the table (or JSON) on `out`, errors on `err`. Returns the exit code: 0, or 2
// for bad input.
int RunCollective(const CollectiveFlags& flags, std::ostream& out, std::ostream& err);

// Adds the subcommand and its flags to `app`; the subcommand's callback runs it and sets
// *exit_code.
void AddCollectiveCommand(CLI::App& app, int* exit_code);

}  // namespace specsim::tools
