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

// A flow as the fabric holds it: its resources in someone else's array. `count` identical flows
// (same resources, same cap) may be given as one view: max-min fairness gives identical flows
// identical rates, and the solver counts each view `count` times on its resources, so the rate
// is exactly (bit for bit) that of each of `count` separate views.
struct MaxMinFlowView {
  const int* resources = nullptr;
  int num_resources = 0;
  double cap = std::numeric_limits<double>::infinity();
  int count = 1;  // >= 1
};

// The same solver for repeated use (the fabric solves at every instant flows start or end): its
// scratch is kept between solves, so a solve allocates only when the problem is larger than every
// one before. Each round looks only at resources that still carry unfrozen flows and at unfrozen
// capped flows (the others cannot set the next level), so a solve costs O(rounds x (resources
// in use + capped flows) + crossings) whatever the size of the fabric (the first rounds scan the
// unfrozen flows' crossings while each freezes at least half of them: at most twice the
// crossings in all). Gives exactly
// SolveMaxMin's rates (it is what SolveMaxMin runs).
class MaxMinSolver {
 public:
  // `rates` is resized to flows.size().
  void Solve(const std::vector<double>& capacity, const std::vector<MaxMinFlowView>& flows, std::vector<double>* rates);

 private:
  // The steps of a solve, in order. Sizes the per-resource scratch (it only grows).
  void GrowScratch(int num_resources);
  // Counts each resource's crossings (unfrozen_on_, in_use_, remaining_ set to the capacity) and
  // lists the unfrozen flows (unfrozen_) and the capped ones; a flow with neither resources nor
  // cap gets +infinity at once. Returns the flows left to fill.
  int CountCrossings(const std::vector<double>& capacity, const std::vector<MaxMinFlowView>& flows, int num_resources,
                     std::vector<double>* rates);
  // Each resource in use: its unfrozen flows (flows_on_[first_flow_, + flow_count_)).
  void ListUnfrozenFlowsOnResources(const std::vector<MaxMinFlowView>& flows);
  // Raises the `active` unfrozen flows together, freezing them at their caps and at saturated
  // resources, until none is left. The first rounds find the flows on saturated resources by
  // scanning the unfrozen flows; once a round freezes less than half of them, by lists per
  // resource (built then, for the flows left).
  void FillProgressively(const std::vector<double>& capacity, const std::vector<MaxMinFlowView>& flows, int active,
                         std::vector<double>* rates);

  std::vector<double> remaining_;  // per resource
  std::vector<int> unfrozen_on_;   // per resource: unfrozen crossings (zero between solves)
  std::vector<int> views_on_;      // per resource: a count while listing (zero between solves)
  std::vector<char> saturated_;    // per resource: saturated this round (zero between rounds)
  std::vector<int> first_flow_;    // per listed resource: its flows are flows_on_[first, first + count)
  std::vector<int> flow_count_;
  std::vector<int> flows_on_;
  std::vector<int> in_use_;      // resources carrying unfrozen flows
  std::vector<int> capped_;      // unfrozen flows with a finite cap
  std::vector<int> unfrozen_;    // unfrozen flows, until the lists are built
  std::vector<int> frozen_now_;  // flows frozen by this round's scan
  std::vector<char> frozen_;
};

}  // namespace specsim::net
