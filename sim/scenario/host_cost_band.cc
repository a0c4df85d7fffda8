#include "sim/scenario/host_cost_band.h"

#include <fmt/format.h>

#include "sim/scenario/scenario.h"

namespace specsim::scenario {

std::vector<llm::HostCost> UnmeasuredHostCosts(const llm::FrameworkProfile& framework) {
  std::vector<llm::HostCost> out;
  for (llm::HostCost c : llm::kHostCosts) {
    const llm::HostCostSource& s = framework.SourceOf(c);
    if (s.kind == llm::HostCostSource::Kind::kUnmeasured && s.has_range) out.push_back(c);
  }
  return out;
}

llm::FrameworkProfile AtBandEnd(const llm::FrameworkProfile& framework, BandEnd end) {
  llm::FrameworkProfile out = framework;
  for (llm::HostCost c : UnmeasuredHostCosts(framework)) {
    const llm::HostCostSource& s = framework.SourceOf(c);
    out.HostCostUs(c) = end == BandEnd::kLow ? s.low_us : s.high_us;
  }
  return out;
}

std::vector<std::string> DescribeUnmeasured(const llm::FrameworkProfile& framework) {
  std::vector<std::string> out;
  for (llm::HostCost c : UnmeasuredHostCosts(framework)) {
    const llm::HostCostSource& s = framework.SourceOf(c);
    out.push_back(fmt::format("{} = {:g} us in [{:g}, {:g}] ({})", llm::HostCostName(c), framework.HostCostUs(c),
                              s.low_us, s.high_us, s.citation));
  }
  return out;
}

BandFigures FiguresOf(const llm::DecodeResult& r) {
  BandFigures f;
  f.baseline_tokens_per_s = r.baseline_tokens_per_s;
  f.baseline_step_ms = r.baseline_step_ms;
  f.speculative = r.speculative;
  if (r.speculative) {
    f.speculative_tokens_per_s = r.speculative_tokens_per_s;
    f.cycle_ms = r.cycle_ms;
    f.speedup = r.speedup;
  }
  return f;
}

StatusOr<std::optional<HostCostBand>> EvaluateHostCostBand(const llm::DecodeSetup& setup) {
  if (!setup.framework || UnmeasuredHostCosts(*setup.framework).empty()) return std::optional<HostCostBand>();
  HostCostBand band;
  band.costs = DescribeUnmeasured(*setup.framework);
  for (BandEnd end : {BandEnd::kLow, BandEnd::kHigh}) {
    llm::DecodeSetup at = setup;
    at.framework = AtBandEnd(*setup.framework, end);
    auto r = EvaluateSetup(at);
    if (!r.ok())
      return r.status().WithPrefix(end == BandEnd::kLow ? "host-cost band, low end" : "host-cost band, high end");
    (end == BandEnd::kLow ? band.low_cost : band.high_cost) = FiguresOf(*r);
  }
  return std::optional<HostCostBand>(band);
}

}  // namespace specsim::scenario
