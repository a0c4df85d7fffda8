// Nelder-Mead simplex minimisation (derivative-free), for the small nonlinear fits of fit.h whose
// objective is a max() of terms (attention_cost.h): linearising such a model flips terms on and
// off between rounds, while the simplex only compares objective values.
//
// Standard coefficients (reflection 1, expansion 2, contraction 1/2, shrink 1/2); the start simplex
// is x0 and x0 + step_j e_j. Stops when the spread of the simplex's values falls below `tolerance`
// or after `max_evaluations`. Deterministic: the same inputs give the same result on every platform.
#pragma once

#include <functional>
#include <vector>

namespace specsim::calib {

struct NelderMeadResult {
  std::vector<double> x;
  double value = 0;
  int evaluations = 0;
};

// REQUIRES: x0 and step non-empty, of equal size, every step != 0.
NelderMeadResult MinimizeNelderMead(const std::function<double(const std::vector<double>&)>& f,
                                    const std::vector<double>& x0, const std::vector<double>& step,
                                    double tolerance = 1e-12, int max_evaluations = 20000);

}  // namespace specsim::calib
