// NCCL's tree allreduce on one node, which is a chain: order[0] (the root) - order[1] - ... -
// order[n-1] (the leaf).
//
//   reduce (up):      position p (p >= 1) sends its partial sum to p-1, which reduces it into
//                     its own copy (kReduce); the leaf starts, the root ends with the full sum.
//   broadcast (down): position p (p <= n-2) copies the full sum to p+1 (kCopy).
// The whole buffer S moves on every chain link in both directions: middle ranks send 2S, the leaf
// and the root S each. Each channel runs its own chain over 1/channels of the buffer (all in the
// same order), cut into chunks of at most one protocol slot (pipeline.h, capped at
// max_chunks_per_step): segment(channel c, chunk k) = c * K + k, num_segments = C * K.
// Chunk k moves up one link once chunk k arrived from below (the leaf: once it started), and
// down once it arrived from above (the root: once it arrived from position 1); connections
// (one up and one down per position and channel) follow pipeline.h's order and slot rules.
// With K chunks the pipeline has 2(n-1) + K - 1 stages, which is why NCCL's tree latency is
// base + 2(n-1) * hop. Protocol: per-rank start kDelay of base_latency_ps; each transfer
// latency_floor_ps = hop_latency_ps, wire_efficiency = protocol efficiency (use
// NcclProtocolModel(proto, NcclAlgo::kTree) for NCCL's tree values).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/coll/builder_common.h"
#include "sim/coll/protocol.h"
#include "sim/coll/schedule.h"
#include "sim/core/status.h"

namespace specsim::coll {

struct TreeOptions {
  std::vector<int> order;  // chain order, root first; empty = 0, 1, ..., n-1
  int channels = 1;
  ProtocolModel protocol = IdealProtocol();
  MechanismMatrix mechanism;     // [src][dst]; empty = kKernelWrite everywhere
  StepProtocols steps;           // per-transport step costs; empty = `protocol` for every step
  int max_chunks_per_step = 16;  // cap on chunks per channel
  bool connection_in_order = true;
};

Status ValidateTreeOptions(int num_ranks, int64_t bytes, const TreeOptions& options);

// REQUIRES: ValidateTreeOptions(num_ranks, bytes, options).ok().
Schedule BuildTreeAllReduce(int num_ranks, int64_t bytes, const TreeOptions& options);

}  // namespace specsim::coll
