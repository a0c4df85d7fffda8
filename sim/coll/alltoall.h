// Direct all-to-all: every rank sends S/n of its input (its block for that peer) straight to every
// peer, all at once (NCCL's alltoall as grouped send/recv). S is the per-rank buffer, as in
// nccl-tests; each rank sends and receives (n-1)/n * S.
//
// Layout (schedule_check.h): block (src, dst) is segments [(src * n + dst) * C, ... + C), one
// segment per channel; a transfer copies segment (src, dst, c) of src's input into dst's output.
// With C channels each (src, dst) pair uses C concurrent transfers of S/(n*C). Each rank starts
// with a kDelay of protocol.base_latency_ps; transfers carry the protocol's hop floor and wire
// efficiency and the mechanism matrix's mechanism.
#pragma once

#include <cstdint>

#include "sim/coll/builder_common.h"
#include "sim/coll/protocol.h"
#include "sim/coll/schedule.h"
#include "sim/core/status.h"

namespace specsim::coll {

struct AllToAllOptions {
  int channels = 1;
  ProtocolModel protocol = IdealProtocol();
  MechanismMatrix mechanism;  // [src][dst]; empty = kKernelWrite everywhere
  StepProtocols steps;        // per-transport step costs; empty = `protocol` for every transfer
};

Status ValidateAllToAllOptions(int num_ranks, int64_t bytes, const AllToAllOptions& options);

// REQUIRES: ValidateAllToAllOptions(num_ranks, bytes, options).ok().
Schedule BuildDirectAllToAll(int num_ranks, int64_t bytes, const AllToAllOptions& options);

}  // namespace specsim::coll
