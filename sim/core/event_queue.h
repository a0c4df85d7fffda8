// The discrete-event engine: a queue of callbacks keyed by (time, insertion sequence).
//
// Two events at the same picosecond run in the order they were scheduled, so a run is a pure
// function of its input. There is no global simulator: each simulation owns its EventQueue.
// Handlers live in reusable slots (a free list), the heap holds (time, sequence, slot), and an
// event id is its sequence and slot together: cancelling frees the slot at once and the heap entry
// is skipped when it surfaces (its id no longer matches the slot's). In steady state scheduling
// and running allocate nothing (handlers are InlineFunctions).
// Events scheduled for the current instant (a delay of 0: the fabric's recompute, a zero-latency
// step) skip the heap and wait in a FIFO: every heap entry for this instant was scheduled before
// the clock reached it, so it runs first, then the FIFO in order, then later instants. This is
// the (time, sequence) order exactly, at a push and a pop of a vector.
#pragma once

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
  // Schedules `handler` `delay` picoseconds from now. REQUIRES: delay >= 0.
  EventId ScheduleAfter(SimTime delay, Handler handler) { return Schedule(now_ + delay, std::move(handler)); }
  // Cancels a pending event; cancelling an event that already ran or was cancelled is a no-op.
  void Cancel(EventId id);

  // Runs the earliest pending event. Returns false when nothing is pending.
  bool RunNext();
  // Runs events until none is pending or the next is later than `until`.
  void Run(SimTime until = kSimTimeMax);

  SimTime now() const { return now_; }
  bool empty() const { return pending_ == 0; }
  // Back to time zero with no event processed, keeping the memory of the slots and the heap (for
  // running many short simulations one after another). Sequences start over, so an id from before
  // the reset may name a new event: drop them all. REQUIRES: empty().
  void Reset();
  uint64_t events_processed() const { return events_processed_; }

 private:
  static constexpr int kSlotBits = 24;  // at most 2^24 events pending at once
  static constexpr EventId kNoEvent = ~EventId{0};
  struct Entry {
    SimTime time;
    EventId id;  // (sequence << kSlotBits) | slot: orders like the sequence
    // Min-heap on (time, id), kept with std::push_heap / pop_heap and this order.
    bool operator>(const Entry& o) const { return time != o.time ? time > o.time : id > o.id; }
  };
  struct Slot {
    EventId id = kNoEvent;  // the pending event in this slot, kNoEvent when free
    Handler handler;
  };
  static uint32_t SlotOf(EventId id) { return static_cast<uint32_t>(id & ((EventId{1} << kSlotBits) - 1)); }
  // Runs the earliest pending event unless none is pending or it is later than `until`.
  bool RunNextUntil(SimTime until);
  void PopTop();

  std::vector<Entry> heap_;        // a binary min-heap (std::greater<Entry>)
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
