#include "sim/llm/experts.h"

#include <cmath>

#include "sim/core/check.h"

namespace specsim::llm {

double ExpectedDistinctExperts(int num_experts, int experts_per_token, int64_t routings_tokens) {
  SPECSIM_CHECK_GE(num_experts, 1);
  SPECSIM_CHECK(experts_per_token >= 0 && experts_per_token <= num_experts) << experts_per_token;
  SPECSIM_CHECK_GE(routings_tokens, 0);
  const double e = num_experts;
  if (routings_tokens == 0) return 0;
  if (experts_per_token == num_experts) return e;
  // E * (1 - (1 - k/E)^N) computed as -E * expm1(N * log1p(-k/E)): exact to rounding for N = 1.
  return -e * std::expm1(static_cast<double>(routings_tokens) * std::log1p(-experts_per_token / e));
}

}  // namespace specsim::llm
