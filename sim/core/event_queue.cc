#include "sim/core/event_queue.h"

#include "sim/core/check.h"

namespace specsim {

EventId EventQueue::Schedule(SimTime at, Handler handler) {
  SPECSIM_CHECK_GE(at, now_) << "event scheduled in the past";
  EventId id = next_id_++;
  handlers_.push_back(std::move(handler));
  heap_.push(Entry{at, id});
  return id;
}

void EventQueue::Cancel(EventId id) {
  SPECSIM_CHECK_LT(id, next_id_);
  if (handlers_[id]) {
    handlers_[id] = nullptr;
    cancelled_.insert(id);
  }
}

bool EventQueue::RunNext() {
  while (!heap_.empty()) {
    Entry e = heap_.top();
    heap_.pop();
    if (cancelled_.erase(e.id) > 0) continue;
    now_ = e.time;
    Handler h = std::move(handlers_[e.id]);
    handlers_[e.id] = nullptr;
    ++events_processed_;
    h();
    return true;
  }
  return false;
}

void EventQueue::Run(SimTime until) {
  while (!heap_.empty()) {
    // Skip cancelled entries so the `until` test looks at a live event.
    const Entry& top = heap_.top();
    if (cancelled_.count(top.id)) {
      cancelled_.erase(top.id);
      heap_.pop();
      continue;
    }
    if (top.time > until) return;
    RunNext();
  }
}

}  // namespace specsim
