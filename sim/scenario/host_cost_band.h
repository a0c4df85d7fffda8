// The band a framework's unmeasured host costs put around a prediction. A framework profile marks
// each host cost FITTED, UNMEASURED (with a range [low_us, high_us] from a cited figure),
// DEFINITION or SCENARIO_OVERRIDE (llm::HostCostSource). The scenario is evaluated twice more:
// every UNMEASURED cost at the low end of its range together (the fast end: less host time can only
// shorten or keep a step) and every one at the high end together (the slow end). FITTED costs keep
// their fitted value (their runs' spread is shown, not varied), and a cost a scenario overrides is
// the user's value: neither moves the band. No UNMEASURED cost: no band.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/core/status.h"
#include "sim/llm/decode_simulator.h"
#include "sim/llm/framework_profile.h"

namespace specsim::scenario {

// The profile's UNMEASURED costs, in HostCost order.
std::vector<llm::HostCost> UnmeasuredHostCosts(const llm::FrameworkProfile& framework);

enum class BandEnd { kLow, kHigh };
// `framework` with every UNMEASURED cost at the `end` of its range (the others unchanged).
llm::FrameworkProfile AtBandEnd(const llm::FrameworkProfile& framework, BandEnd end);

// One line per UNMEASURED cost: "decode_step_host_us = 310 us in [155, 620] (CITATION)".
std::vector<std::string> DescribeUnmeasured(const llm::FrameworkProfile& framework);

// The headline figures of one run, for a band's end.
struct BandFigures {
  double baseline_tokens_per_s = 0, baseline_step_ms = 0;
  bool speculative = false;
  double speculative_tokens_per_s = 0, cycle_ms = 0, speedup = 0;
};
BandFigures FiguresOf(const llm::DecodeResult& r);

struct HostCostBand {
  std::vector<std::string> costs;   // DescribeUnmeasured of the scenario's framework
  BandFigures low_cost, high_cost;  // every unmeasured cost at its low / high end
};

// The band of `setup` (its framework as the scenario merged it), or nullopt when it has no
// framework or no UNMEASURED cost. Errors: the evaluation's, prefixed with the end.
StatusOr<std::optional<HostCostBand>> EvaluateHostCostBand(const llm::DecodeSetup& setup);

}  // namespace specsim::scenario
