// `specsim advise`: given a box and a model, which configuration is fastest, by how much, and why
// the alternatives lose (sim/advise/advisor.h has the search).
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace CLI {
class App;  // <CLI/CLI.hpp>, included where the flags are registered
}  // namespace CLI

namespace specsim::tools {

struct AdviseFlags {
  std::string scenario;  // optional base scenario; the flags below override it
  std::string hardware;
  std::string model;
  std::string draft;  // EAGLE-3 head; empty: no EAGLE-3 (unless the scenario names one)
  int tp = 0;         // 0: the scenario's, else every GPU of the box
  int batch = 0;      // 0: the scenario's, else 1
  int context = -1;   // -1: the scenario's, else 4096
  bool tp_given = false, batch_given = false, context_given = false;  // set on the command line
  std::string weight_dtype, expert_weight_dtype, kv_dtype;
  std::string acceptance;      // "0.85,0.75,0.65": per-position acceptance of the draft's top-1 token
  std::string accept_lengths;  // "80,120,...": a histogram measured with the scenario's speculation shape
  std::string calibration;
  bool exhaustive = false;
  int threads = 0;
  int top = 10;
  bool json = false;
  bool progress = true;
};

int RunAdvise(const AdviseFlags& flags, std::ostream& out, std::ostream& err);
void AddAdviseCommand(CLI::App& app, int* exit_code);

}  // namespace specsim::tools
