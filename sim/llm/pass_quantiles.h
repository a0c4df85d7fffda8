// The quantiles at which one pass's host calls are drawn: a Gaussian copula, the host's speed of the
// moment shared by a pass's calls.
//
// A call's host time is a draw from its op's distribution at quantile u. Drawn independently (u
// uniform per call), a pass of n calls has a time near the sum of its ops' means with a spread that
// shrinks as 1/sqrt(n); measured on the H200 host (traces/torch-host-probe, runs n and o), a
// 147-call loop spreads 2x between its 10th and 90th percentile, because the host's speed drifts
// within minutes and every call of an iteration sees the same moment. So, per pass,
//   u = Phi(sqrt(rho) z + sqrt(1 - rho) e),   z ~ N(0, 1) once per pass, e ~ N(0, 1) per call,
// Phi the standard normal CDF: u is uniform for every call (each op keeps its distribution), and
// two calls of a pass have normal scores correlated rho. rho is the probe's intraclass correlation
// of the calls' normal scores within batches of consecutive calls (HostOpParams.call_correlation).
// rho = 0 draws u uniformly and directly (the draws of a model without the copula, bit for bit).
#pragma once

#include <algorithm>
#include <cmath>
#include <random>

#include "sim/core/check.h"

namespace specsim::llm {

class PassQuantiles {
 public:
  // REQUIRES: 0 <= correlation < 1.
  explicit PassQuantiles(double correlation)
      : shared_(std::sqrt(correlation)), own_(std::sqrt(1 - correlation)), independent_(correlation == 0) {
    SPECSIM_CHECK(correlation >= 0 && correlation < 1) << "correlation " << correlation;
  }

  // A new pass: its shared normal score z (nothing drawn when the calls are independent).
  void NewPass(std::mt19937_64& g) {
    if (!independent_) z_ = std::normal_distribution<double>(0.0, 1.0)(g);
  }
  // The next call's quantile, in [0, 1).
  double Next(std::mt19937_64& g) const {
    if (independent_) return std::uniform_real_distribution<double>(0.0, 1.0)(g);
    const double x = shared_ * z_ + own_ * std::normal_distribution<double>(0.0, 1.0)(g);
    return std::min(0.5 * std::erfc(-x / std::sqrt(2.0)), std::nextafter(1.0, 0.0));
  }

 private:
  double shared_, own_;
  bool independent_;
  double z_ = 0;
};

}  // namespace specsim::llm
