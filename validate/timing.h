// Timing with CUDA events, nccl-tests style.
//
// TimeOp runs op() `warmup` times untimed, then `iters` times, each bracketed by a pair of events
// on `stream`; the per-iteration time is the event difference in microseconds. The host waits with a
// timeout (a hung op is reported as kDeadlineExceeded, not waited on forever). TimeOpOnAll does the
// same on every rank, one thread per GPU, and takes per iteration the slowest rank's time.
//
// Gated timing (TimingConfig::gate_us > 0) measures the op's GPU time rather than the host's launch
// rate: after the warm-up, a spin kernel of gate_us holds the stream while the host enqueues every
// timed iteration, so that each iteration starts when the previous one ends on the GPU. For
// collectives this keeps the ranks' host threads out of the time: without it, an op whose GPU time is
// shorter than its host launch makes each rank's events wait for the other rank's host thread, and
// the measured time depends on the two threads' phase (bimodal medians, e.g. 13 vs 68 us for one
// 256 KiB allreduce). Host pacing is measured on purpose by the pacing suite. If the gate ran out
// before the host had enqueued everything, the run is repeated in batches of 16 and then of 4
// iterations, each batch behind a gate of its own (the first iteration of a batch then includes the
// ranks' skew at the gate's end; the median is that of the others); then TimeOp reports an error, and TimeOpOnAll with a non-null `gate_held` times the op ungated and
// sets *gate_held = false (NCCL's eager enqueue, for one, can wait for the GPU, so that no gate holds).
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
  // > 0: gated timing (see above), the spin before the timed iterations in microseconds (scaled
  // down with the batch when the iterations go in batches).
  double gate_us = 0.0;
  // Rank r's thread runs on CPU rank_cpus[r] (--rank-threads pinned, rank_threads.h); empty: the OS
  // places the threads.
  std::vector<int> rank_cpus;
};

// A gate long enough for the host to enqueue `iters` iterations of at most a few launches each
// (host launch costs are 2..20 us per call on the machines we measured).
double GateUsFor(int iters);

StatusOr<std::vector<double>> TimeOp(int device, cudaStream_t stream, const TimingConfig& cfg,
                                     const std::function<Status()>& op, const std::string& what);

// Runs fn(rank) for rank in [0, n) on n threads (n == 1: on the calling thread). Returns the
// first error by rank order, annotated with the rank. With `cpus` (one per rank; empty: free)
// rank r's thread runs pinned to cpus[r] (the calling thread, for n == 1, only while fn runs).
Status ParallelFor(int n, const std::vector<int>& cpus, const std::function<Status(int)>& fn);
inline Status ParallelFor(int n, const std::function<Status(int)>& fn) { return ParallelFor(n, {}, fn); }

class TimedBarrier;
// ParallelFor for ranks that meet at `barrier` (validate/pacing.h): a rank that fails breaks the
// barrier so that the others stop at once instead of waiting out their timeout, and the error
// returned is the first one in time (the cause, annotated with its rank), not a later "barrier
// broken".
Status ParallelForWithBarrier(int n, TimedBarrier* barrier, const std::vector<int>& cpus,
                              const std::function<Status(int)>& fn);
inline Status ParallelForWithBarrier(int n, TimedBarrier* barrier, const std::function<Status(int)>& fn) {
  return ParallelForWithBarrier(n, barrier, {}, fn);
}

StatusOr<std::vector<double>> TimeOpOnAll(const std::vector<int>& devices, const std::vector<cudaStream_t>& streams,
                                          const TimingConfig& cfg, const std::function<Status(int)>& op,
                                          const std::string& what, bool* gate_held = nullptr,
                                          int* gate_batch = nullptr);

}  // namespace specsim::validate
