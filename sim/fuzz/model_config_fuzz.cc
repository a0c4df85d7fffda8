// Fuzzes model textprotos (proto/specsim/model.proto): parse and check, then run the default
// scenario with the model as its target, and as its draft head.
#include <cstddef>
#include <cstdint>

#include "sim/fuzz/fuzz_support.h"
#include "sim/fuzz/textproto_mutator.h"
#include "specsim/model.pb.h"
#include "sim/io/model_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace specsim;
  const std::string_view text = fuzz::AsText(data, size);
  if (!io::ParseModel(text, "fuzzed.textproto").ok()) return 0;
  const std::string path = fuzz::WriteTempFile("model", ".textproto", text);
  config::Scenario as_target = fuzz::DefaultScenario();
  as_target.set_model(path);
  fuzz::EvaluateBounded(as_target, "");
  config::Scenario as_draft = fuzz::DefaultScenario();
  as_draft.mutable_speculation()->set_draft_model(path);
  fuzz::EvaluateBounded(as_draft, "");
  return 0;
}

// Structure-aware: extreme values in the parsed config's fields (textproto_mutator.h).
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  return specsim::fuzz::MutateTextProto(specsim::config::Model(), data, size, max_size, seed);
}
