// Fuzzes hardware textprotos (proto/specsim/hardware.proto): parse and check, then time every
// allreduce algorithm and an all-to-all on the box, and run the default scenario on it.
#include <cstddef>
#include <cstdint>

#include "sim/fuzz/fuzz_support.h"
#include "sim/fuzz/textproto_mutator.h"
#include "specsim/hardware.pb.h"
#include "sim/io/hardware_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace specsim;
  const std::string_view text = fuzz::AsText(data, size);
  auto topology = io::ParseHardware(text, "fuzzed.textproto");
  if (!topology.ok()) return 0;
  fuzz::TimeCollectivesBounded(*topology, int64_t{1} << 20);
  config::Scenario scenario = fuzz::DefaultScenario();
  scenario.set_hardware(fuzz::WriteTempFile("hardware", ".textproto", text));
  fuzz::EvaluateBounded(scenario, "");
  return 0;
}

// Structure-aware: extreme values in the parsed config's fields (textproto_mutator.h).
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  return specsim::fuzz::MutateTextProto(specsim::config::Hardware(), data, size, max_size, seed);
}
