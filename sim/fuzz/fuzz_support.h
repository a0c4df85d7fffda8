// What the libFuzzer targets of sim/fuzz share: the embedded default scenario to plug a fuzzed
// file into, temporary files for inputs that specsim reads by path, and the bounded run of a
// scenario or a collective once an input is accepted.
//
// Bounds (stated here, pinned by the targets' own asserts): a scenario runs at most kFuzzCycles
// decode cycles and a collective on at most kFuzzRanks GPUs, so that one input costs milliseconds
// (libFuzzer reports an input past -timeout as a hang; a legitimate long run is not the defect the
// targets look for: the bounds on work are checked by the commands' tests).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "sim/coll/protocol.h"
#include "sim/net/topology.h"
#include "specsim/scenario.pb.h"

namespace specsim::fuzz {

inline constexpr int kFuzzCycles = 4;
inline constexpr int kFuzzRanks = 16;

// The bundled default scenario (scenario::kDefaultScenario), parsed with its paths resolved to the
// embedded copies. Aborts when the bundled file does not load (a build defect, not an input).
const config::Scenario& DefaultScenario();

// A file of this process holding `contents`, named `<tmp>/specsim-fuzz-<pid>-<slot><suffix>` (one
// per slot, rewritten on every call, so that a run leaves at most a few files behind).
std::string WriteTempFile(std::string_view slot, std::string_view suffix, std::string_view contents);

// Builds `scenario` (`calibration_path` as --calibration; empty: none) with at most kFuzzCycles
// cycles and evaluates it. Errors are the expected answer to bad input and are dropped; a crash,
// a CHECK failure or a sanitizer report is what the fuzzer finds.
void EvaluateBounded(config::Scenario scenario, const std::string& calibration_path);

// Plans and times every allreduce algorithm (ring, tree, one-shot, two-shot), with and without
// NCCL_P2P_DISABLE, and an all-to-all, of `bytes` on the first min(N, kFuzzRanks) GPUs of
// `topology`, NCCL's per-step costs overridden by `nccl`. Planner errors are dropped as above.
void TimeCollectivesBounded(const net::Topology& topology, int64_t bytes, const coll::ProtocolOverrides& nccl = {});

// `data` as a string view.
inline std::string_view AsText(const uint8_t* data, size_t size) { return {reinterpret_cast<const char*>(data), size}; }

}  // namespace specsim::fuzz
