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
  if (at == now_) {
    now_fifo_.push_back(id);  // after every event pending for this instant (see the header)
  } else {
    heap_.push_back(Entry{at, id});
    std::push_heap(heap_.begin(), heap_.end(), std::greater<Entry>());
  }
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
  now_fifo_.clear();
  now_head_ = 0;
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

bool EventQueue::RunNextUntil(SimTime until) {
  // Cancelled entries are dropped where they surface: the heap's top, the FIFO's front.
  while (!heap_.empty() && slots_[SlotOf(heap_.front().id)].id != heap_.front().id) PopTop();
  while (now_head_ < now_fifo_.size() && slots_[SlotOf(now_fifo_[now_head_])].id != now_fifo_[now_head_]) ++now_head_;
  if (now_head_ == now_fifo_.size() && now_head_ != 0) {
    now_fifo_.clear();
    now_head_ = 0;
  }
  // The heap's events for this instant first (scheduled before it began), then the FIFO's, then
  // the heap's later ones.
  EventId id;
  if (now_head_ < now_fifo_.size() && (heap_.empty() || heap_.front().time > now_)) {
    if (now_ > until) return false;
    id = now_fifo_[now_head_++];
  } else {
    if (heap_.empty() || heap_.front().time > until) return false;
    const Entry e = heap_.front();
    PopTop();
    SPECSIM_CHECK(now_head_ == now_fifo_.size() || e.time == now_) << "an instant's FIFO outlived it";
    now_ = e.time;
    id = e.id;
  }
  const uint32_t slot = SlotOf(id);
  Handler h = std::move(slots_[slot].handler);
  slots_[slot].id = kNoEvent;
  free_slots_.push_back(slot);
  --pending_;
  ++events_processed_;
  h();
  return true;
}

bool EventQueue::RunNext() { return RunNextUntil(kSimTimeMax); }

void EventQueue::Run(SimTime until) {
  while (RunNextUntil(until)) {
  }
}

}  // namespace specsim
