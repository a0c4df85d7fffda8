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
#include <cstddef>
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
    if (in_order_ && count_ >= 1) deps.push_back(recent_[Back(1)]);
    if (count_ >= slots_) deps.push_back(recent_[Back(slots_)]);
  }
  void Record(int op) {
    // Only the last `slots` transfers are ever named: a ring buffer of them, filled once.
    if (recent_.empty()) recent_.resize(slots_);
    recent_[next_] = op;
    next_ = next_ + 1 == slots_ ? 0 : next_ + 1;
    ++count_;
  }

 private:
  // Where the transfer `back` places before the next one is (1 <= back <= min(count_, slots_)).
  int Back(int back) const { return next_ >= back ? next_ - back : next_ - back + slots_; }

  int slots_;
  bool in_order_;
  int count_ = 0;            // transfers recorded
  int next_ = 0;             // recent_ slot of the next transfer
  std::vector<int> recent_;  // the last `slots` transfers' ops, by count_ mod slots
};

// Sorts and removes duplicate dependencies (deterministic op lists). A pipelined step has one to
// three, which an insertion sort orders in a few instructions (std::sort's set-up cost more).
inline void NormalizeDeps(DepList& deps) {
  int32_t* const first = deps.begin();
  const std::ptrdiff_t n = deps.end() - first;
  if (n > 16) {
    std::sort(first, deps.end());
  } else {
    for (std::ptrdiff_t i = 1; i < n; ++i) {
      const int32_t x = first[i];
      std::ptrdiff_t j = i;
      for (; j > 0 && first[j - 1] > x; --j) first[j] = first[j - 1];
      first[j] = x;
    }
  }
  deps.erase(std::unique(first, deps.end()), deps.end());
}

}  // namespace specsim::coll
