// Statistics of timed iterations and the nccl-tests bandwidth conventions.
//
// Percentiles interpolate linearly between order statistics (p in [0, 100]; the median is p50).
// nccl-tests: algbw = size / time; busbw = algbw * factor with factor 2(n-1)/n for allreduce and
// (n-1)/n for all-gather and reduce-scatter, where size is the larger buffer of one rank.
#pragma once

#include <vector>

#include "specsim/trace.pb.h"

namespace specsim::validate {

struct Summary {
  int iterations = 0;
  double median_us = 0, min_us = 0, max_us = 0, p10_us = 0, p90_us = 0, mean_us = 0, stddev_us = 0;
};

// REQUIRES: p in [0, 100]. Returns 0 for an empty sample.
double Percentile(std::vector<double> samples, double p);
Summary Summarize(const std::vector<double>& samples_us);
void ToProto(const Summary& s, int warmup, trace::Stats* out);

double BusBwFactor(trace::CollectiveOp op, int nranks);
// bytes / us -> GB/s (1e9 B/s). 0 when us <= 0.
double GBps(double bytes, double us);
// flops / us -> TFLOP/s.
double TFlops(double flops, double us);

}  // namespace specsim::validate
