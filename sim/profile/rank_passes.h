// Internal to the import (profile_import.h): each rank's kernels attributed to the passes of the
// decode loop (the phase range, or CUDA-graph replay, whose host call launched them), and each
// rank's NCCL kernels with the pass they ran in. Not part of sim/profile's interface: only
// profile_import.cc and collective_calls.cc include it.
#pragma once

#include <algorithm>
#include <climits>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sim/profile/kineto_trace.h"
#include "sim/profile/profile_import.h"

namespace specsim::profile {

// One rank's passes: for each phase-range occurrence, its kernels.
struct PassInstance {
  std::string phase, run;
  const PassNameRule* rule = nullptr;  // the name map's rule of its range (null: a graph replay)
  int64_t tid = -1;                    // the host thread of its range / launch
  int rank = 0;
  int64_t host_start = 0, host_end = 0;
  int64_t gpu_start = INT64_MAX, gpu_end = INT64_MIN;
  int kernels = 0;
  bool graph = false;
  std::map<std::string, double> busy_ns;
  std::vector<std::pair<int64_t, int64_t>> intervals;  // kernels' [start, end)
  int allreduces = 0;
  int64_t allreduce_elements = -1;  // the first allreduce's, when recorded
  // GPU time inside the span with no kernel running: the host not keeping up (launch gaps, host
  // syncs) plus graph-internal gaps.
  double IdleNs() const {
    std::vector<std::pair<int64_t, int64_t>> v = intervals;
    std::sort(v.begin(), v.end());
    int64_t covered = 0, end = INT64_MIN;
    for (const auto& [a, b] : v) {
      const int64_t from = std::max(a, end);
      if (b > from) covered += b - from;
      end = std::max(end, b);
    }
    return static_cast<double>(gpu_end - gpu_start - covered);
  }
};

// One NCCL kernel of a rank: the pass it ran in and whether a graph launched it.
struct NcclCall {
  const KinetoKernel* kernel;
  std::string phase, run;
  bool graph;
  int pass = -1;  // index into the rank's passes (-1: outside every pass)
};

// What the scan of every rank's kernels finds.
struct RankScans {
  std::vector<std::vector<PassInstance>> passes;  // per rank, in the order of their first kernels
  std::vector<std::vector<NcclCall>> nccl;        // per rank, by start
};

// Every rank's passes and NCCL calls (`ranks` sorted by rank); counts the kernels into `out`
// (kernels, kernels_in_passes, kernels_without_launch).
RankScans ScanRanks(const std::vector<KinetoTrace>& ranks, const ImportOptions& options, ProfileImport* out);

}  // namespace specsim::profile
