// How simulate and advise report where the target's weight formats came from
// (scenario::WeightsUsed): one header line and one JSON object, the same in both commands.
#pragma once

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>

#include "sim/scenario/scenario.h"

namespace specsim::tools {

// "#   weight formats from checkpoint (quantization mxfp4): attention, LM head bf16; ...\n"
inline std::string WeightFormatsLine(const scenario::WeightsUsed& w) {
  return fmt::format("#   weight formats from {}: {}\n", w.source, w.formats);
}

// {"source": ..., "from_checkpoint": ..., "formats": ...}
inline nlohmann::json WeightsJson(const scenario::WeightsUsed& w) {
  return {{"source", w.source}, {"from_checkpoint", w.from_checkpoint}, {"formats", w.formats}};
}

}  // namespace specsim::tools
