// Fuzzes scenario textprotos (proto/specsim/scenario.proto): parse and check, resolve the paths
// against the bundled files, build and evaluate (at most fuzz::kFuzzCycles cycles).
#include <cstddef>
#include <cstdint>

#include "sim/fuzz/fuzz_support.h"
#include "sim/fuzz/textproto_mutator.h"
#include "specsim/scenario.pb.h"
#include "sim/io/scenario_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace specsim;
  auto scenario = io::ParseScenario(fuzz::AsText(data, size), "fuzzed.textproto");
  if (!scenario.ok()) return 0;
  if (!io::ResolveScenarioPaths(&*scenario, "configs/scenarios/fuzzed.textproto", /*embedded=*/true).ok()) return 0;
  fuzz::EvaluateBounded(*std::move(scenario), "");
  return 0;
}

// Structure-aware: extreme values in the parsed config's fields (textproto_mutator.h).
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  return specsim::fuzz::MutateTextProto(specsim::config::Scenario(), data, size, max_size, seed);
}
