#include "sim/net/maxmin.h"

#include <algorithm>
#include <cmath>

#include "sim/core/check.h"

namespace specsim::net {

std::vector<double> SolveMaxMin(const MaxMinProblem& problem) {
  const int num_resources = static_cast<int>(problem.capacity.size());
  const int num_flows = static_cast<int>(problem.flows.size());
  std::vector<double> rate(num_flows, 0.0);
  std::vector<double> remaining(problem.capacity);
  std::vector<int> unfrozen_on(num_resources, 0);  // unfrozen flow-crossings per resource
  std::vector<bool> frozen(num_flows, false);
  std::vector<std::vector<int>> flows_on(num_resources);
  int active = 0;
  for (int i = 0; i < num_flows; ++i) {
    const MaxMinFlow& f = problem.flows[i];
    SPECSIM_CHECK_GE(f.cap, 0.0);
    if (f.resources.empty() && std::isinf(f.cap)) {
      rate[i] = f.cap;
      frozen[i] = true;
      continue;
    }
    for (int r : f.resources) {
      SPECSIM_CHECK(r >= 0 && r < num_resources) << "flow " << i << " resource " << r;
      ++unfrozen_on[r];
      flows_on[r].push_back(i);
    }
    ++active;
  }
  for (double c : problem.capacity) SPECSIM_CHECK_GE(c, 0.0);

  double level = 0.0;
  while (active > 0) {
    double delta = std::numeric_limits<double>::infinity();
    for (int r = 0; r < num_resources; ++r) {
      if (unfrozen_on[r] > 0) delta = std::min(delta, std::max(0.0, remaining[r]) / unfrozen_on[r]);
    }
    for (int i = 0; i < num_flows; ++i) {
      if (!frozen[i]) delta = std::min(delta, problem.flows[i].cap - level);
    }
    SPECSIM_CHECK(std::isfinite(delta)) << "unbounded max-min problem";
    level += delta;
    for (int r = 0; r < num_resources; ++r) remaining[r] -= delta * unfrozen_on[r];

    // Freeze flows on saturated resources and flows at their cap. The tolerance is relative to
    // the capacity so that rounding never leaves a saturated resource unfrozen.
    auto freeze = [&](int i) {
      if (frozen[i]) return;
      frozen[i] = true;
      rate[i] = level;
      --active;
      for (int r : problem.flows[i].resources) --unfrozen_on[r];
    };
    for (int i = 0; i < num_flows; ++i) {
      if (!frozen[i] && problem.flows[i].cap - level <= 1e-12 * std::max(1.0, level)) freeze(i);
    }
    for (int r = 0; r < num_resources; ++r) {
      if (unfrozen_on[r] > 0 && remaining[r] <= 1e-12 * std::max(1.0, problem.capacity[r])) {
        for (int i : flows_on[r]) freeze(i);
      }
    }
  }
  return rate;
}

}  // namespace specsim::net
