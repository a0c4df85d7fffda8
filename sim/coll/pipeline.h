// Chunk pipelining shared by the ring and tree builders.
//
// A step's block (per channel) is cut into chunks of at most one protocol slot of payload:
//   chunks = clamp(ceil(block_bytes / slot_payload_bytes), 1, max_chunks).
// Capping at max_chunks (16 by default) keeps schedules small; above the cap chunks are enlarged
// (a simplification: fluid pipelining with fewer, larger chunks).
//
// A connection (one channel's link from one rank to the next) carries its transfers in order:
// transfer j depends on transfer j-1 having completed (`in_order`) and on transfer j-slots having
// completed (its slot is free again). With in_order the slot edge is implied; it is kept so the
// DAG stays correct if in_order is turned off (then up to `slots` chunks overlap in flight).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "sim/coll/dep_list.h"
#include "sim/coll/protocol.h"
#include "sim/core/check.h"

namespace specsim::coll {

inline int ChunksPerBlock(int64_t block_bytes, const ProtocolModel& protocol, int max_chunks) {
  SPECSIM_CHECK_GT(max_chunks, 0);
  SPECSIM_CHECK_GT(protocol.slot_payload_bytes, 0);
  const int64_t slot = protocol.slot_payload_bytes;
  const int64_t chunks = block_bytes / slot + (block_bytes % slot != 0 ? 1 : 0);  // no overflow
  return static_cast<int>(std::clamp<int64_t>(chunks, 1, max_chunks));
}

class ConnectionOrder {
 public:
  ConnectionOrder(int slots, bool in_order) : slots_(slots), in_order_(in_order) { SPECSIM_CHECK_GT(slots, 0); }
  // Appends the dependencies of the connection's next transfer.
  void AddDeps(DepList& deps) const {
    const int j = static_cast<int>(ops_.size());
    if (in_order_ && j >= 1) deps.push_back(ops_[j - 1]);
    if (j >= slots_) deps.push_back(ops_[j - slots_]);
  }
  void Record(int op) { ops_.push_back(op); }

 private:
  int slots_;
  bool in_order_;
  std::vector<int> ops_;
};

// Sorts and removes duplicate dependencies (deterministic op lists).
inline void NormalizeDeps(DepList& deps) {
  std::sort(deps.begin(), deps.end());
  deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
}

}  // namespace specsim::coll
