// How many distinct routed experts a batch of tokens touches in one MoE layer.
//
// N routings (tokens), each picks k distinct experts of E. Assuming every token's choice is
// uniform over the k-subsets and independent of the other tokens', one expert is missed by one
// token with probability 1 - k/E, by all N with (1 - k/E)^N, so
//
//   E[distinct experts] = E * (1 - (1 - k/E)^N)          (docs/reference/speculative-decoding.md)
//
// Real routers are neither uniform nor independent. For independent tokens with expert i picked
// with probability p_i (sum p_i = k), E[distinct] = sum_i 1 - (1 - p_i)^N, concave in p, so the
// uniform case is the maximum; tokens of one sequence choosing alike lower it further. The formula
// is therefore an upper bound on the expert weight bytes a pass reads.
#pragma once

#include <cstdint>

namespace specsim::llm {

// REQUIRES: num_experts >= 1, 0 <= experts_per_token <= num_experts, routings_tokens >= 0.
double ExpectedDistinctExperts(int num_experts, int experts_per_token, int64_t routings_tokens);

}  // namespace specsim::llm
