// `specsim collective`: what a collective costs on a box, with which algorithm, and which link is
// the bottleneck, in nccl-tests' units.
#pragma once

#include <CLI/CLI.hpp>

namespace specsim::tools {

// Adds the subcommand and its flags to `app`; the subcommand's callback runs it and sets
// *exit_code.
void AddCollectiveCommand(CLI::App& app, int* exit_code);

}  // namespace specsim::tools
