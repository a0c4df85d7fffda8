// Fuzzes PyTorch profiler (Kineto) JSON through what `import-profile` does with one rank's trace:
// parse and check every field (kineto_trace.h), group the kernels into passes, NCCL calls, GEMM /
// attention / norm calls and eager passes' host operators (profile_import.h), write the
// measurement trace, and predict the eager passes from their operators' host costs
// (sim/scenario/eager_passes.h). Issue 43: the reader trusted every number (negative or NaN
// durations, timestamps, a billion-rank world size); an accepted input must now import without a
// crash, an abort or a sanitizer report, and its trace must serialize.
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/fuzz/fuzz_support.h"
#include "sim/profile/kineto_trace.h"
#include "sim/profile/profile_import.h"
#include "sim/scenario/eager_passes.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace specsim;
  auto trace = profile::ParseKinetoTrace(std::string(fuzz::AsText(data, size)), "fuzz.json");
  if (!trace.ok()) return 0;
  std::vector<profile::KinetoTrace> ranks;
  ranks.push_back(*std::move(trace));
  auto imported = profile::ImportProfile(std::move(ranks));
  if (!imported.ok()) return 0;
  std::string bytes;
  (void)imported->trace.SerializeToString(&bytes);
  (void)scenario::PredictEagerPasses(*imported);
  return 0;
}
