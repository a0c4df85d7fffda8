// Timing with CUDA events, nccl-tests style.
//
// TimeOp runs op() `warmup` times untimed, then `iters` times, each bracketed by a pair of events
// on `stream`; the per-iteration time is the event difference in microseconds. The host waits with a
// timeout (a hung op is reported as kDeadlineExceeded, not waited on forever). TimeOpOnAll does the
// same on every rank, one thread per GPU, and takes per iteration the slowest rank's time.
#pragma once

#include <cuda_runtime.h>

#include <functional>
#include <string>
#include <vector>

#include "validate/status.h"

namespace specsim::validate {

struct TimingConfig {
  int warmup = 5;
  int iters = 20;
  double timeout_s = 60.0;
};

StatusOr<std::vector<double>> TimeOp(int device, cudaStream_t stream, const TimingConfig& cfg,
                                     const std::function<Status()>& op, const std::string& what);

// Runs fn(rank) for rank in [0, n) on n threads (n == 1: on the calling thread). Returns the
// first error by rank order, annotated with the rank.
Status ParallelFor(int n, const std::function<Status(int)>& fn);

class TimedBarrier;
// ParallelFor for ranks that meet at `barrier` (validate/pacing.h): a rank that fails breaks the
// barrier so that the others stop at once instead of waiting out their timeout, and the error
// returned is the first one in time (the cause, annotated with its rank), not a later "barrier
// broken".
Status ParallelForWithBarrier(int n, TimedBarrier* barrier, const std::function<Status(int)>& fn);

StatusOr<std::vector<double>> TimeOpOnAll(const std::vector<int>& devices, const std::vector<cudaStream_t>& streams,
                                          const TimingConfig& cfg, const std::function<Status(int)>& op,
                                          const std::string& what);

}  // namespace specsim::validate
