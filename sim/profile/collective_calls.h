// Internal to the import (profile_import.h): the i-th NCCL kernel of every rank as one call, timed
// by the last rank to arrive, and the calls grouped by what they transferred; for graph-replayed
// calls, whose size torch does not record, the size taken from the eager passes of the same phase
// and kernel count, else from the eager calls of the same op, algorithm, protocol and channels.
// Not part of sim/profile's interface: only profile_import.cc includes it.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "sim/core/status.h"
#include "sim/profile/kineto_trace.h"
#include "sim/profile/rank_passes.h"

namespace specsim::profile {

// One NCCL call over all ranks.
struct CollectiveInstance {
  std::vector<double> duration_us, wait_us;  // per rank
  double transfer_us = 0;
  std::string phase;
  int pass0 = -1;  // rank 0's pass instance
};
// Key: op, bytes, dtype, graph, algorithm, protocol, channels, and for calls of unknown size the
// run and phase they ran in (so that calls of different, unknown sizes are pooled less).
using CollectiveKey = std::tuple<std::string, int64_t, std::string, bool, std::string, std::string, int, std::string>;
using CollectiveCalls = std::map<CollectiveKey, std::vector<CollectiveInstance>>;

struct MatchedCollectives {
  CollectiveCalls calls;
  // Where graph replays' sizes came from, for the trace's notes: the eager calls like them (e.g.
  // "AllReduce RING/LL on 1 channels: 8192 B"), the eager passes like theirs (e.g. "3 verify passes
  // of 125 kernels").
  std::set<std::string> sizes_from_calls, sizes_from_passes;
};

// Every rank's NCCL kernels (scans->nccl) matched into calls. Rank 0's passes (scans->passes[0])
// learn their allreduce size from the sizes taken for graph replays. InvalidArgument when the
// ranks' NCCL kernel counts differ, or their i-th kernels differ in op or size.
StatusOr<MatchedCollectives> MatchCollectives(const std::vector<KinetoTrace>& ranks, RankScans* scans);

}  // namespace specsim::profile
