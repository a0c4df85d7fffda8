// The discrete-event engine: a queue of callbacks keyed by (time, insertion sequence).
//
// Two events at the same picosecond run in the order they were scheduled, so a run is a pure
// function of its input. There is no global simulator: each simulation owns its EventQueue.
// Cancellation is by flag (the event stays in the heap and is skipped when it surfaces).
#pragma once

#include <cstdint>
#include <functional>
#include <queue>
#include <unordered_set>
#include <vector>

#include "sim/core/time.h"

namespace specsim {

using EventId = uint64_t;

class EventQueue {
 public:
  using Handler = std::function<void()>;

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
  bool empty() const { return heap_.size() == cancelled_.size(); }
  uint64_t events_processed() const { return events_processed_; }

 private:
  struct Entry {
    SimTime time;
    EventId id;  // the insertion sequence number
    // Min-heap on (time, id).
    bool operator>(const Entry& o) const { return time != o.time ? time > o.time : id > o.id; }
  };
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap_;
  std::vector<Handler> handlers_;  // indexed by id - handler_base_
  std::unordered_set<EventId> cancelled_;
  EventId next_id_ = 0;
  SimTime now_ = 0;
  uint64_t events_processed_ = 0;
};

}  // namespace specsim
