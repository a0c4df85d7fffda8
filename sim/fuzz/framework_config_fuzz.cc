// Fuzzes framework profiles (proto/specsim/framework.proto, configs/frameworks/): parse and check,
// then run the default scenario under the profile.
#include <cstddef>
#include <cstdint>

#include "sim/fuzz/fuzz_support.h"
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
