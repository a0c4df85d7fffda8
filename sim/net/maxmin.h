// Max-min fair bandwidth sharing, solved by progressive filling (SimGrid's LMM "System" without
// weights). A pure function: flows x resources -> rates.
//
// Every resource j has a capacity c_j; every flow i crosses a set of resources R_i and may have a
// private cap u_i. The max-min fair allocation is the unique one in which no flow can get more
// without taking from a flow that has no more than it. Progressive filling: all unfrozen flows
// rise together to level L; the next event is the smallest of
//   (remaining capacity of j) / (unfrozen flows on j)   over resources j, and
//   u_i - L                                             over unfrozen capped flows i;
// resources that saturate freeze their flows, flows that reach their cap freeze alone. Each round
// freezes at least one flow, so at most F rounds.
#pragma once

#include <limits>
#include <vector>

namespace specsim::net {

struct MaxMinFlow {
  std::vector<int> resources;  // indices into MaxMinProblem::capacity; may repeat (counts twice)
  double cap = std::numeric_limits<double>::infinity();
};

struct MaxMinProblem {
  std::vector<double> capacity;  // per resource, >= 0
  std::vector<MaxMinFlow> flows;
};

// Returns the rate of every flow, in the capacity's units. A flow with no resources and no cap
// gets +infinity.
std::vector<double> SolveMaxMin(const MaxMinProblem& problem);

}  // namespace specsim::net
