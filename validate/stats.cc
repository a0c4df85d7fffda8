#include "validate/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace specsim::validate {

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  double pos = p / 100.0 * static_cast<double>(v.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, v.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return v[lo] + (v[hi] - v[lo]) * frac;
}

Summary Summarize(const std::vector<double>& x) {
  Summary s;
  s.iterations = static_cast<int>(x.size());
  if (x.empty()) return s;
  s.median_us = Percentile(x, 50);
  s.p10_us = Percentile(x, 10);
  s.p90_us = Percentile(x, 90);
  s.min_us = *std::min_element(x.begin(), x.end());
  s.max_us = *std::max_element(x.begin(), x.end());
  s.mean_us = std::accumulate(x.begin(), x.end(), 0.0) / static_cast<double>(x.size());
  double var = 0;
  for (double v : x) var += (v - s.mean_us) * (v - s.mean_us);
  s.stddev_us = x.size() > 1 ? std::sqrt(var / static_cast<double>(x.size() - 1)) : 0.0;
  return s;
}

void ToProto(const Summary& s, int warmup, trace::Stats* out) {
  out->set_iterations(s.iterations);
  out->set_warmup(warmup);
  out->set_median_us(s.median_us);
  out->set_min_us(s.min_us);
  out->set_max_us(s.max_us);
  out->set_p10_us(s.p10_us);
  out->set_p90_us(s.p90_us);
  out->set_mean_us(s.mean_us);
  out->set_stddev_us(s.stddev_us);
}

double BusBwFactor(trace::CollectiveOp op, int n) {
  if (n <= 0) return 0.0;
  switch (op) {
    case trace::ALLREDUCE: return 2.0 * (n - 1) / n;
    case trace::ALLGATHER:
    case trace::REDUCESCATTER: return static_cast<double>(n - 1) / n;
    default: return 0.0;
  }
}

double GBps(double bytes, double us) { return us > 0 ? bytes / (us * 1e3) : 0.0; }
double TFlops(double flops, double us) { return us > 0 ? flops / (us * 1e6) : 0.0; }

}  // namespace specsim::validate
