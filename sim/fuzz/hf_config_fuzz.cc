// Fuzzes Hugging Face config.json files: import (sim/io/hf_config.h), then run the default
// scenario with the file as its target model.
#include <cstddef>
#include <cstdint>

#include "sim/fuzz/fuzz_support.h"
#include "sim/io/hf_config.h"
#include "sim/io/model_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace specsim;
  const std::string_view text = fuzz::AsText(data, size);
  auto model = io::ImportHfConfig(text, "config.json");
  if (!model.ok()) return 0;
  if (!io::ModelFromProto(*model, "config.json").ok()) return 0;
  config::Scenario scenario = fuzz::DefaultScenario();
  scenario.set_model(fuzz::WriteTempFile("hf", "-config.json", text));
  fuzz::EvaluateBounded(scenario, "");
  return 0;
}
