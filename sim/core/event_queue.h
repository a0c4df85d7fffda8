// The discrete-event engine: a queue of callbacks keyed by (time, insertion sequence).
//
// Two events at the same picosecond run in the order they were scheduled, so a run is a pure
// function of its input. There is no global simulator: each simulation owns its EventQueue.
// Handlers live in reusable slots (a free list), and an event id is its sequence and slot
// together: cancelling frees the slot at once and the queued id is skipped when it surfaces (it
// no longer matches the slot's). In steady state scheduling and running allocate nothing
// (handlers are InlineFunctions; buckets and their id lists are reused).
// Future events wait in buckets, one per instant: a bucket is a FIFO of ids, and a binary heap
// orders the buckets by (time, first id). A simulation schedules many events for few instants (a
// 256-rank ring step ends its 256 transfers at two or three), so popping an event is O(1) and
// the heap holds instants, not events. The bucket of an instant is found through a small
// direct-mapped table of the latest bucket opened per instant; when the table has lost it (an
// other instant took its entry), a second bucket opens for the same instant. Every id of the
// first was scheduled before every id of the second, so the heap's order (time, first id) still
// runs them in sequence order.
// Events scheduled for the current instant (a delay of 0: the fabric's recompute, a zero-latency
// step) wait in a FIFO of their own: every bucket for this instant was filled before the clock
// reached it, so it runs first, then the FIFO in order, then later instants. This is the
// (time, sequence) order exactly.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "sim/core/inline_function.h"
#include "sim/core/time.h"

namespace specsim {

using EventId = uint64_t;

class EventQueue {
 public:
  using Handler = InlineFunction;

  // Schedules `handler` at absolute time `at`. REQUIRES: at >= now().
  EventId Schedule(SimTime at, Handler handler);
  // Schedules `handler` `delay` picoseconds from now, or at the clock's horizon when that is
  // sooner (time.h ClampedAdd). REQUIRES: delay >= 0.
  EventId ScheduleAfter(SimTime delay, Handler handler) {
    return Schedule(ClampedAdd(now_, delay), std::move(handler));
  }
  // Cancels a pending event; cancelling an event that already ran or was cancelled is a no-op.
  void Cancel(EventId id);

  // Runs the earliest pending event. Returns false when nothing is pending.
  bool RunNext();
  // Runs events until none is pending or the next is later than `until`.
  void Run(SimTime until = kSimTimeMax);

  SimTime now() const { return now_; }
  bool empty() const { return pending_ == 0; }
  // Back to time zero with no event processed, keeping the memory of the slots and buckets (for
  // running many short simulations one after another). Sequences start over, so an id from before
  // the reset may name a new event: drop them all. REQUIRES: empty().
  void Reset();
  uint64_t events_processed() const { return events_processed_; }

 private:
  static constexpr int kSlotBits = 24;  // at most 2^24 events pending at once
  static constexpr EventId kNoEvent = ~EventId{0};
  static constexpr int kLatestBucketBits = 6;  // the table of the latest bucket per instant: 64 entries
  // The ids scheduled for one future instant, in sequence order: ids[head..] wait.
  struct Bucket {
    SimTime time = -1;  // -1 while free
    std::vector<EventId> ids;
    size_t head = 0;
  };
  struct Instant {
    SimTime time;
    EventId first;  // the bucket's first id: orders two buckets of one instant
    uint32_t bucket;
    // Min-heap on (time, first), kept with std::push_heap / pop_heap and this order.
    bool operator>(const Instant& o) const { return time != o.time ? time > o.time : first > o.first; }
  };
  struct LatestBucket {
    SimTime time = -1;
    uint32_t bucket = 0;
  };
  struct Slot {
    EventId id = kNoEvent;  // the pending event in this slot, kNoEvent when free
    Handler handler;
  };
  static uint32_t SlotOf(EventId id) { return static_cast<uint32_t>(id & ((EventId{1} << kSlotBits) - 1)); }
  static size_t LatestIndexOf(SimTime t) {
    return static_cast<size_t>((static_cast<uint64_t>(t) * 0x9E3779B97F4A7C15ULL) >> (64 - kLatestBucketBits));
  }
  bool IsPending(EventId id) const { return slots_[SlotOf(id)].id == id; }
  // Appends `id` to the bucket of `at` (> now_), opening one when the table does not know it.
  void AddToBucket(SimTime at, EventId id);
  // Drops cancelled ids at the front of the earliest bucket, and emptied buckets, until the
  // earliest bucket's front id is pending or no bucket is left.
  void SkipCancelledFront();
  // Removes the earliest bucket from the heap and frees it.
  void CloseEarliestBucket();
  // Runs the earliest pending event unless none is pending or it is later than `until`.
  bool RunNextUntil(SimTime until);

  std::vector<Instant> instants_;  // a binary min-heap (std::greater<Instant>) of open buckets
  std::vector<Bucket> buckets_;
  std::vector<uint32_t> free_buckets_;
  std::array<LatestBucket, size_t{1} << kLatestBucketBits> latest_bucket_{};  // in the queue: no allocation
  std::vector<EventId> now_fifo_;  // events for now_ scheduled at now_: now_fifo_[now_head_..]
  size_t now_head_ = 0;
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_slots_;
  uint64_t next_sequence_ = 0;
  uint64_t pending_ = 0;
  SimTime now_ = 0;
  uint64_t events_processed_ = 0;
};

}  // namespace specsim
