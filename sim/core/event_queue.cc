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
    AddToBucket(at, id);
  }
  ++pending_;
  return id;
}

void EventQueue::AddToBucket(SimTime at, EventId id) {
  LatestBucket& latest = latest_bucket_[LatestIndexOf(at)];
  // The entry may name a bucket closed since (its ids all cancelled before the clock reached
  // it), free or reopened for another instant: only a bucket still open for `at` is it.
  if (latest.time == at && buckets_[latest.bucket].time == at) {
    buckets_[latest.bucket].ids.push_back(id);
    return;
  }
  uint32_t b;
  if (!free_buckets_.empty()) {
    b = free_buckets_.back();
    free_buckets_.pop_back();
  } else {
    b = static_cast<uint32_t>(buckets_.size());
    buckets_.emplace_back();
  }
  Bucket& bucket = buckets_[b];
  bucket.time = at;
  bucket.ids.push_back(id);
  latest = {at, b};
  instants_.push_back(Instant{at, id, b});
  std::push_heap(instants_.begin(), instants_.end(), std::greater<Instant>());
}

void EventQueue::CloseEarliestBucket() {
  const uint32_t b = instants_.front().bucket;
  std::pop_heap(instants_.begin(), instants_.end(), std::greater<Instant>());
  instants_.pop_back();
  Bucket& bucket = buckets_[b];
  bucket.time = -1;
  bucket.ids.clear();
  bucket.head = 0;
  free_buckets_.push_back(b);
}

void EventQueue::SkipCancelledFront() {
  while (!instants_.empty()) {
    Bucket& bucket = buckets_[instants_.front().bucket];
    while (bucket.head < bucket.ids.size() && !IsPending(bucket.ids[bucket.head])) ++bucket.head;
    if (bucket.head < bucket.ids.size()) return;
    CloseEarliestBucket();
  }
}

void EventQueue::Reset() {
  SPECSIM_CHECK(empty()) << "resetting an event queue with " << pending_ << " events pending";
  while (!instants_.empty()) CloseEarliestBucket();  // only cancelled ids are left
  for (LatestBucket& latest : latest_bucket_) latest = LatestBucket{};
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
  // Cancelled ids are dropped where they surface: the earliest bucket's front, the FIFO's front.
  SkipCancelledFront();
  while (now_head_ < now_fifo_.size() && !IsPending(now_fifo_[now_head_])) ++now_head_;
  if (now_head_ == now_fifo_.size() && now_head_ != 0) {
    now_fifo_.clear();
    now_head_ = 0;
  }
  // The buckets' events for this instant first (scheduled before it began), then the FIFO's,
  // then later instants.
  EventId id;
  if (now_head_ < now_fifo_.size() && (instants_.empty() || instants_.front().time > now_)) {
    if (now_ > until) return false;
    id = now_fifo_[now_head_++];
  } else {
    if (instants_.empty() || instants_.front().time > until) return false;
    const SimTime time = instants_.front().time;
    SPECSIM_CHECK(now_head_ == now_fifo_.size() || time == now_) << "an instant's FIFO outlived it";
    Bucket& bucket = buckets_[instants_.front().bucket];
    now_ = time;
    id = bucket.ids[bucket.head++];
    if (bucket.head == bucket.ids.size()) {
      CloseEarliestBucket();
    } else {
      // The next event's slot, fetched while this one runs: a 256-rank step's completions fill
      // a bucket with ids whose slots are spread over the slot array.
      __builtin_prefetch(&slots_[SlotOf(bucket.ids[bucket.head])]);
    }
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
