#include "sim/core/event_queue.h"

#include <algorithm>
#include <functional>

#include "sim/core/check.h"

namespace specsim {

EventId EventQueue::Schedule(SimTime at, Handler handler) {
  SPECSIM_CHECK_GE(at, now_) << "event scheduled in the past";
  uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    SPECSIM_CHECK_LT(slots_.size(), size_t{1} << kSlotBits) << "more than 2^24 events pending";
    slot = static_cast<uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  const EventId id = (next_sequence_++ << kSlotBits) | slot;
  slots_[slot].id = id;
  slots_[slot].handler = std::move(handler);
  heap_.push_back(Entry{at, id});
  std::push_heap(heap_.begin(), heap_.end(), std::greater<Entry>());
  ++pending_;
  return id;
}

void EventQueue::PopTop() {
  std::pop_heap(heap_.begin(), heap_.end(), std::greater<Entry>());
  heap_.pop_back();
}

void EventQueue::Reset() {
  SPECSIM_CHECK(empty()) << "resetting an event queue with " << pending_ << " events pending";
  heap_.clear();  // only cancelled entries are left
  next_sequence_ = 0;
  now_ = 0;
  events_processed_ = 0;
}

void EventQueue::Cancel(EventId id) {
  const uint32_t slot = SlotOf(id);
  SPECSIM_CHECK_LT((id >> kSlotBits), next_sequence_) << "unknown event id";
  if (slot >= slots_.size() || slots_[slot].id != id) return;  // ran or cancelled already
  slots_[slot].id = kNoEvent;
  slots_[slot].handler = nullptr;
  free_slots_.push_back(slot);
  --pending_;
}

bool EventQueue::SkipCancelled() {
  while (!heap_.empty()) {
    const EventId id = heap_.front().id;
    const uint32_t slot = SlotOf(id);
    if (slots_[slot].id == id) return true;
    PopTop();
  }
  return false;
}

bool EventQueue::RunNext() {
  if (!SkipCancelled()) return false;
  const Entry e = heap_.front();
  PopTop();
  const uint32_t slot = SlotOf(e.id);
  now_ = e.time;
  Handler h = std::move(slots_[slot].handler);
  slots_[slot].id = kNoEvent;
  free_slots_.push_back(slot);
  --pending_;
  ++events_processed_;
  h();
  return true;
}

void EventQueue::Run(SimTime until) {
  while (SkipCancelled()) {
    if (heap_.front().time > until) return;
    RunNext();
  }
}

}  // namespace specsim
