#include "sim/llm/ngram.h"

#include <fmt/format.h>

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

NgramRaggedCycle SampleNgramRaggedCycle(const AcceptanceModel& proposed, double match_probability, int batch,
                                        std::mt19937_64& rng) {
  SPECSIM_CHECK(match_probability >= 0 && match_probability <= 1) << match_probability;
  SPECSIM_CHECK_GE(batch, 1);
  NgramRaggedCycle c;
  int accepted = 0;
  for (int i = 0; i < batch; ++i) {
    // A uniform draw in [0, 1) from the top 53 bits: the same on every standard library.
    const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;
    if (u >= match_probability) continue;
    ++c.matched;
    accepted += proposed.Sample(rng);
  }
  c.tokens_per_sequence = 1 + static_cast<double>(accepted) / batch;
  return c;
}

}  // namespace specsim::llm
