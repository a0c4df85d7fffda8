// Order statistics of a sample, one definition for every fit and report: the median (the middle
// value, or the mean of the two middle values of an even count) and the q-th percentile (linear
// interpolation between order statistics); 0 for an empty sample.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

namespace specsim {

inline double MedianOf(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// q in [0, 1]: v sorted, position q (n - 1), interpolated between its neighbours.
inline double PercentileOf(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

}  // namespace specsim
