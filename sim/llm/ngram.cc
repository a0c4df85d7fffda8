#include "sim/llm/ngram.h"

#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "sim/core/check.h"

namespace specsim::llm {

StatusOr<AcceptanceModel> NgramCycleAcceptance(const AcceptanceModel& proposed, double match_probability) {
  if (!(match_probability >= 0 && match_probability <= 1))
    return InvalidArgumentError(
        fmt::format("speculation.ngram.match_probability = {}: must be in [0, 1]", match_probability));
  std::vector<double> d;
  for (double p : proposed.distribution()) d.push_back(match_probability * p);
  d[0] += 1 - match_probability;
  return AcceptanceModel::FromHistogram(d);
}

double NgramAnyMatchProbability(double match_probability, int batch) {
  SPECSIM_CHECK(match_probability >= 0 && match_probability <= 1) << match_probability;
  SPECSIM_CHECK_GE(batch, 1);
  return 1 - std::pow(1 - match_probability, batch);
}

}  // namespace specsim::llm
