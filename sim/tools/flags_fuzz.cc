// Fuzzes the values of specsim's own flag parsers (CLI11 splits the command line; these read
// what it hands over): --sizes, --gpus, sweep's --vary, --set assignments (then the scenario is
// checked and evaluated), and `specsim collective` with every scalar flag fuzzed on a bundled box.
// It fuzzes the commands' own plumbing, so it lives with them; sim/fuzz/CMakeLists.txt builds it
// with the other libFuzzer targets (-DSPECSIM_BUILD_FUZZ=ON).
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "sim/core/check.h"
#include "sim/fuzz/fuzz_support.h"
#include "sim/io/embedded_files.h"
#include "sim/io/scenario_loader.h"
#include "sim/tools/collective_command.h"
#include "sim/tools/sizes.h"
#include "sim/tools/sweep_command.h"

namespace {

using namespace specsim;

std::vector<std::string> BundledHardware() {
  std::vector<std::string> paths;
  for (std::string_view name : io::EmbeddedFileNames())
    if (name.starts_with("configs/hardware/") && name.find("/scale/") == std::string_view::npos)
      paths.emplace_back(name);
  return paths;
}

void FuzzSetAssignments(FuzzedDataProvider& fdp) {
  config::Scenario scenario = fuzz::DefaultScenario();
  const int n = fdp.ConsumeIntegralInRange(0, 3);
  for (int i = 0; i < n; ++i) {
    const std::string assignment = fdp.ConsumeRandomLengthString(80);
    config::Scenario before = scenario;
    if (!io::ApplyOverride(&scenario, assignment).ok()) {
      // A refused assignment leaves the scenario unchanged (scenario_loader.h).
      SPECSIM_CHECK(before.SerializeAsString() == scenario.SerializeAsString()) << "--set " << assignment;
    }
  }
  if (!io::ValidateScenario(scenario, "fuzzed.textproto").ok()) return;
  fuzz::EvaluateBounded(scenario, "");
}

void FuzzCollective(FuzzedDataProvider& fdp) {
  static const std::vector<std::string> kHardware = BundledHardware();
  tools::CollectiveFlags flags;
  flags.hardware = kHardware[fdp.ConsumeIntegralInRange<size_t>(0, kHardware.size() - 1)];
  flags.op = fdp.ConsumeRandomLengthString(16);
  flags.algo = fdp.ConsumeRandomLengthString(16);
  flags.proto = fdp.ConsumeRandomLengthString(12);
  flags.channels = fdp.ConsumeIntegral<int>();
  flags.min_channels = fdp.ConsumeIntegral<int>();
  flags.max_channels = fdp.ConsumeIntegral<int>();
  flags.gpus = fdp.ConsumeRandomLengthString(24);
  flags.p2p_level = fdp.ConsumeRandomLengthString(8);
  flags.p2p_disable = fdp.ConsumeBool();
  flags.sizes = fdp.ConsumeRandomLengthString(24);
  flags.dtype = fdp.ConsumeRandomLengthString(8);
  flags.custom_blocks = fdp.ConsumeIntegral<int>();
  flags.custom_launch_us = fdp.ConsumeFloatingPoint<double>();
  flags.json = fdp.ConsumeBool();
  std::ostringstream out, err;
  const int exit_code = tools::RunCollective(flags, out, err);
  SPECSIM_CHECK(exit_code == 0 || exit_code == 2) << "exit " << exit_code << ": " << err.str();
  // Bad input is always explained.
  if (exit_code == 2) {
    SPECSIM_CHECK(!err.str().empty()) << "exit 2 without a message";
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider fdp(data, size);
  switch (fdp.ConsumeIntegralInRange(0, 4)) {
    case 0: {
      auto sizes = tools::ParseSizeList(fdp.ConsumeRemainingBytesAsString());
      if (!sizes.ok()) break;
      for (int64_t bytes : *sizes) {
        SPECSIM_CHECK(bytes >= 0) << "size " << bytes;
      }
      break;
    }
    case 1: {
      auto gpus = tools::ParseIndexList(fdp.ConsumeRemainingBytesAsString());
      if (!gpus.ok()) break;
      for (int g : *gpus) {
        SPECSIM_CHECK(g >= 0 && g < 1024) << "gpu " << g;
      }
      break;
    }
    case 2: {
      auto axis = tools::ParseVary(fdp.ConsumeRemainingBytesAsString());
      if (axis.ok()) (void)tools::CrossProduct({*axis});
      break;
    }
    case 3: FuzzSetAssignments(fdp); break;
    default: FuzzCollective(fdp); break;
  }
  return 0;
}
