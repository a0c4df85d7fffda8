// The acceptance advise falls back to when neither the flags nor the scenario give one: the
// draft's published acceptance (model.proto PublishedAcceptance: the EAGLE-3 head's model file, or
// the target's for MTP layers), a mean accept length measured with one speculation shape, taken as
// the draft's top-1 acceptance per depth whose expected EAGLE-2 tree at that shape yields that mean
// (llm::Top1AcceptanceOfTreeTau): the published shape gets its figure back exactly, every other
// shape follows the tree model (llm::AcceptanceForShape), never a bound that sinks it.
#pragma once

#include <string>

#include "sim/core/status.h"
#include "sim/llm/model.h"
#include "specsim/scenario.pb.h"

namespace specsim::advise {

// Sets the published acceptance as `base`'s speculation acceptance (and, for a base made from
// flags with no speculation method, the published shape) and returns what advise prints of it;
// NotFound naming the model file when it has none. `target`: the base's target model.
StatusOr<std::string> ApplyPublishedAcceptance(const llm::ModelSpec& target, config::Scenario* base);

}  // namespace specsim::advise
