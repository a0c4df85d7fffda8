// `specsim simulate [SCENARIO]`: baseline and speculative tokens/s of a scenario, tau, speedup, and
// where the cycle's time goes; `--compare-algos` adds a row per allreduce choice.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace CLI {
class App;  // <CLI/CLI.hpp>, included where the flags are registered
}  // namespace CLI

namespace specsim::tools {

struct SimulateFlags {
  std::string scenario;          // empty: the embedded default
  std::vector<std::string> set;  // --set field.path=value
  // --model: replaces the scenario's model (textproto or HF config.json), planned in the formats its
  // checkpoint stores (serving.weight_source=CHECKPOINT) unless `set` names serving.weight_dtype,
  // expert_weight_dtype or weight_source: the scenario file's dtypes were chosen for its own model.
  std::string model;
  std::string draft;  // --draft: replaces speculation.draft_model (an EAGLE-3 head, textproto or config.json)
  std::string calibration;
  bool json = false;
  bool compare_algos = false;
  bool memory = false;
  std::string trace;
};

int RunSimulate(const SimulateFlags& flags, std::ostream& out, std::ostream& err);
void AddSimulateCommand(CLI::App& app, int* exit_code);

}  // namespace specsim::tools
