// Fuzzes framework profiles (proto/specsim/framework.proto, configs/frameworks/): parse and check,
// then run the default scenario under the profile.
#include <cstddef>
#include <cstdint>

#include "sim/fuzz/fuzz_support.h"
#include "sim/fuzz/textproto_mutator.h"
#include "specsim/framework.pb.h"
#include "sim/io/framework_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace specsim;
  const std::string_view text = fuzz::AsText(data, size);
  if (!io::ParseFramework(text, "fuzzed.textproto").ok()) return 0;
  config::Scenario scenario = fuzz::DefaultScenario();
  scenario.set_framework(fuzz::WriteTempFile("framework", ".textproto", text));
  fuzz::EvaluateBounded(scenario, "");
  return 0;
}

// Structure-aware: extreme values in the parsed config's fields (textproto_mutator.h).
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  return specsim::fuzz::MutateTextProto(specsim::config::FrameworkProfile(), data, size, max_size, seed);
}
