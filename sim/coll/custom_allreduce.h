// vLLM / SGLang "custom allreduce" as schedules: pull based, every data transfer is a
// net::Mechanism::kKernelRead issued by the destination (src_rank = the peer being read,
// dst_rank = the reader), reading the peer's registered input buffer (kIn) or, in two-shot's
// second stage, its reduced output (kOut).
//
// Barriers: each rank writes a flag into every peer (kKernelWrite, blocks * flag_bytes_per_block
// bytes, effect kNone) and a rank's pulls from peer p wait for p's flag to have arrived at it.
//
//   one-shot: launch delay, start barrier, each rank pulls all n-1 peers' full input S and
//     reduces into its output (n-1 concurrent unordered_reduce pulls: the kernel sums the peers
//     in registers and stores once), end barrier. Per rank ingress (n-1) * S. With k of n ranks
//     on one side of a cut, each direction carries k(n-k) * S.
//   two-shot: launch delay, start barrier, reduce-scatter: rank r pulls block r (S/n) of every
//     peer's input and reduces into its output block r; middle barrier (flags after all of r's
//     pulls); all-gather: rank r pulls block p of peer p's output (kCopy) once p's middle flag
//     has arrived; end barrier. Ingress 2(n-1)/n * S per rank; a cut carries 2k(n-k) S/n.
//
// Segments: num_segments = n, segment r = block r (bytes split by EvenShareBytes).
// SMs: the kernel's `blocks` thread blocks are shared by the n-1 pulls that run at once, so each
// pull has read_sms = blocks / (n-1) (fractional) for the outstanding-read cap.
#pragma once

#include <cstdint>

#include "sim/coll/schedule.h"
#include "sim/core/status.h"
#include "sim/core/time.h"

namespace specsim::coll {

struct CustomAllReduceOptions {
  int blocks = 36;                   // thread blocks (SMs) of the kernel; vLLM: 36 x 512 threads
  int64_t flag_bytes_per_block = 4;  // each block writes a 4-byte flag into every peer
  SimTime launch_delay_ps = 0;       // kernel launch, a kDelay per rank before the start barrier
};

// InvalidArgument for num_ranks < 1, bytes < 0, blocks < 1, flag bytes < 0, negative delay.
Status ValidateCustomAllReduceOptions(int num_ranks, int64_t bytes,
                                      const CustomAllReduceOptions& options);

// REQUIRES: ValidateCustomAllReduceOptions(...).ok().
Schedule BuildOneShotAllReduce(int num_ranks, int64_t bytes, const CustomAllReduceOptions& options);
Schedule BuildTwoShotAllReduce(int num_ranks, int64_t bytes, const CustomAllReduceOptions& options);

}  // namespace specsim::coll
