// NCCL-style ring collectives as schedules.
//
// Ranks sit on a ring in `order`; position p sends to position p+1 (mod n). The buffer is cut
// into n blocks, each block into `channels` parts (each channel runs its own ring over its 1/C of
// the data, all channels in the same order, as NCCL does on PCIe), each part into K chunks:
//   segment(block b, channel c, chunk k) = (b * C + c) * K + k,   num_segments = n * C * K,
// so block b is the contiguous segments owned by rank b (schedule_check.h's ownership rule).
//
//   reduce-scatter, steps k = 0..n-2: position p sends block order[(p-k-1) mod n] to p+1, which
//     reduces it into its own copy (kReduce). After n-1 steps position p holds block order[p]
//     fully reduced.
//   all-gather, steps k = 0..n-2: position p sends block order[(p-k) mod n] (kCopy).
//   allreduce = reduce-scatter then all-gather: 2(n-1) steps of S/n, so every rank sends
//     2(n-1)/n * S bytes (optimal) and T = 2(n-1) alpha + 2(n-1)/n * S/B on uniform links.
//   allgather / reducescatter: n-1 steps, (n-1)/n * S bytes sent per rank (S = the full buffer).
//
// Pipelining (pipeline.h): chunk k of step s on a rank depends on chunk k of step s-1 having
// arrived at that rank (or, at step 0, on the rank's start delay), and on the connection order
// and slot rules. Each rank starts with a kDelay of protocol.base_latency_ps; every transfer has
// latency_floor_ps = protocol.hop_latency_ps and wire_efficiency = protocol.wire_efficiency.
// Transfers write directly into the next rank's buffer (in place, kOut -> kOut).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/coll/builder_common.h"
#include "sim/coll/protocol.h"
#include "sim/coll/schedule.h"
#include "sim/core/status.h"

namespace specsim::coll {

struct RingOptions {
  std::vector<int> order;  // a permutation of 0..n-1; empty = 0, 1, ..., n-1
  int channels = 1;        // parallel rings, each over 1/channels of the buffer
  ProtocolModel protocol = IdealProtocol();
  MechanismMatrix mechanism;        // [src][dst]; empty = kKernelWrite (NCCL P2P) everywhere
  StepProtocols steps;              // per-transport step costs; empty = `protocol` for every step
  int max_chunks_per_step = 16;     // cap on chunks per (channel, step), see pipeline.h
  bool connection_in_order = true;  // see pipeline.h
};

// InvalidArgument when the options cannot build a ring on num_ranks ranks (order not a
// permutation, channels < 1, a mechanism matrix of the wrong shape, ...).
Status ValidateRingOptions(int num_ranks, int64_t bytes, const RingOptions& options);

// REQUIRES: ValidateRingOptions(num_ranks, bytes, options).ok().
Schedule BuildRingAllReduce(int num_ranks, int64_t bytes, const RingOptions& options);
Schedule BuildRingAllGather(int num_ranks, int64_t bytes, const RingOptions& options);
Schedule BuildRingReduceScatter(int num_ranks, int64_t bytes, const RingOptions& options);

}  // namespace specsim::coll
