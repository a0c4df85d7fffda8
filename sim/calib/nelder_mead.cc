#include "sim/calib/nelder_mead.h"

#include <algorithm>
#include <numeric>

#include "sim/core/check.h"

namespace specsim::calib {

NelderMeadResult MinimizeNelderMead(const std::function<double(const std::vector<double>&)>& f,
                                    const std::vector<double>& x0, const std::vector<double>& step, double tolerance,
                                    int max_evaluations) {
  SPECSIM_CHECK(!x0.empty() && x0.size() == step.size()) << "Nelder-Mead: start and steps differ in size";
  const size_t n = x0.size();
  std::vector<std::vector<double>> s(n + 1, x0);
  for (size_t i = 0; i < n; ++i) {
    SPECSIM_CHECK(step[i] != 0) << "Nelder-Mead: step " << i << " is 0";
    s[i + 1][i] += step[i];
  }
  int evals = 0;
  auto eval = [&](const std::vector<double>& x) {
    ++evals;
    return f(x);
  };
  std::vector<double> v(n + 1);
  for (size_t i = 0; i <= n; ++i) v[i] = eval(s[i]);
  std::vector<size_t> order(n + 1);
  auto point = [&](const std::vector<double>& c, const std::vector<double>& worst, double t) {
    std::vector<double> x(n);
    for (size_t j = 0; j < n; ++j) x[j] = c[j] + t * (worst[j] - c[j]);
    return x;
  };
  while (evals < max_evaluations) {
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
    std::vector<std::vector<double>> s2(n + 1);
    std::vector<double> v2(n + 1);
    for (size_t i = 0; i <= n; ++i) s2[i] = s[order[i]], v2[i] = v[order[i]];
    s.swap(s2);
    v.swap(v2);
    if (v[n] - v[0] <= tolerance) break;
    std::vector<double> c(n, 0.0);  // centroid of all but the worst
    for (size_t i = 0; i < n; ++i)
      for (size_t j = 0; j < n; ++j) c[j] += s[i][j] / double(n);
    const std::vector<double> xr = point(c, s[n], -1);
    const double fr = eval(xr);
    if (fr < v[0]) {
      const std::vector<double> xe = point(c, s[n], -2);
      const double fe = eval(xe);
      if (fe < fr)
        s[n] = xe, v[n] = fe;
      else
        s[n] = xr, v[n] = fr;
    } else if (fr < v[n - 1]) {
      s[n] = xr, v[n] = fr;
    } else {
      const std::vector<double> xc = point(c, s[n], 0.5);
      const double fc = eval(xc);
      if (fc < v[n]) {
        s[n] = xc, v[n] = fc;
      } else {
        for (size_t i = 1; i <= n; ++i) {
          for (size_t j = 0; j < n; ++j) s[i][j] = s[0][j] + 0.5 * (s[i][j] - s[0][j]);
          v[i] = eval(s[i]);
        }
      }
    }
  }
  const size_t best = static_cast<size_t>(std::min_element(v.begin(), v.end()) - v.begin());
  return {s[best], v[best], evals};
}

}  // namespace specsim::calib
