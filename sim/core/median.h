// The median of a sample: the middle value, or the mean of the two middle values of an even count;
// 0 for an empty sample. One definition for every fit and report.
#pragma once

#include <algorithm>
#include <vector>

namespace specsim {

inline double MedianOf(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace specsim
