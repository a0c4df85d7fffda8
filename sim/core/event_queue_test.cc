#include "sim/core/event_queue.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

namespace specsim {
namespace {

TEST(EventQueue, RunsInTimeOrder) {
  EventQueue q;
  std::string order;
  q.Schedule(30, [&] { order += "c"; });
  q.Schedule(10, [&] { order += "a"; });
  q.Schedule(20, [&] { order += "b"; });
  q.Run();
  EXPECT_EQ(order, "abc");
  EXPECT_EQ(q.now(), 30);
  EXPECT_EQ(q.events_processed(), 3u);
}

TEST(EventQueue, SameTimeRunsInInsertionOrder) {
  EventQueue q;
  std::string order;
  for (char c : std::string("xyzw")) q.Schedule(5, [&order, c] { order += c; });
  q.Run();
  EXPECT_EQ(order, "xyzw");
}

TEST(EventQueue, EventsScheduledFromHandlersAtSameTimeRunAfterExisting) {
  EventQueue q;
  std::string order;
  q.Schedule(5, [&] {
    order += "a";
    q.ScheduleAfter(0, [&] { order += "c"; });
  });
  q.Schedule(5, [&] { order += "b"; });
  q.Run();
  EXPECT_EQ(order, "abc");
}

TEST(EventQueue, CancelledEventsDoNotRun) {
  EventQueue q;
  std::string order;
  q.Schedule(1, [&] { order += "a"; });
  EventId b = q.Schedule(2, [&] { order += "b"; });
  q.Schedule(3, [&] { order += "c"; });
  q.Cancel(b);
  q.Cancel(b);  // twice is a no-op
  q.Run();
  EXPECT_EQ(order, "ac");
  EXPECT_EQ(q.events_processed(), 2u);
  EXPECT_TRUE(q.empty());
}

TEST(EventQueue, RunUntilStopsBeforeLaterEvents) {
  EventQueue q;
  int ran = 0;
  q.Schedule(10, [&] { ++ran; });
  q.Schedule(20, [&] { ++ran; });
  q.Run(15);
  EXPECT_EQ(ran, 1);
  EXPECT_EQ(q.now(), 10);
  EXPECT_FALSE(q.empty());
  q.Run();
  EXPECT_EQ(ran, 2);
}

// Slots are reused: an id of an event that ran (or was cancelled) must not cancel the event that
// took its slot afterwards.
TEST(EventQueue, AStaleIdDoesNotCancelTheEventReusingItsSlot) {
  EventQueue q;
  std::string order;
  EventId a = q.Schedule(1, [&] { order += "a"; });
  q.Cancel(a);
  EventId b = q.Schedule(2, [&] { order += "b"; });  // takes a's slot
  EXPECT_NE(a, b);
  q.Cancel(a);  // stale: no-op
  q.Run();
  EXPECT_EQ(order, "b");
  EventId c = q.Schedule(3, [&] { order += "c"; });  // b's slot, b has run
  q.Cancel(b);
  q.Run();
  EXPECT_EQ(order, "bc");
  q.Cancel(c);
  EXPECT_TRUE(q.empty());
}

// Many events in flight, 700 cancellations at random (slots freed and reused), run in (time,
// order scheduled) order: the same trace as a plain sorted reference.
TEST(EventQueue, ManyEventsWithCancellationsRunInTimeThenInsertionOrder) {
  EventQueue q;
  std::vector<std::pair<SimTime, int>> ran;
  std::vector<EventId> ids;
  std::vector<std::pair<SimTime, int>> expected;
  std::vector<bool> cancelled;
  uint64_t x = 12345;
  auto next = [&x] {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return x >> 33;
  };
  for (int i = 0; i < 2000; ++i) {
    const SimTime t = static_cast<SimTime>(next() % 500);
    ids.push_back(q.Schedule(t, [&ran, t, i] { ran.push_back({t, i}); }));
    expected.push_back({t, i});
    cancelled.push_back(false);
  }
  for (int k = 0; k < 700; ++k) {
    const int i = static_cast<int>(next() % ids.size());
    q.Cancel(ids[i]);
    cancelled[i] = true;
  }
  std::vector<std::pair<SimTime, int>> want;
  for (size_t i = 0; i < expected.size(); ++i)
    if (!cancelled[i]) want.push_back(expected[i]);
  std::stable_sort(want.begin(), want.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  q.Run();
  EXPECT_EQ(ran, want);
  EXPECT_TRUE(q.empty());
}

// The order of the definition: (time, scheduling sequence), by brute force. For checking the
// queue's buckets and its FIFO for the current instant against.
class ReferenceQueue {
 public:
  uint64_t Schedule(SimTime at, std::function<void()> f) {
    events_.push_back({at, next_, std::move(f)});
    return next_++;
  }
  void Cancel(uint64_t id) {
    for (auto& e : events_)
      if (e.seq == id) e.f = nullptr;
  }
  SimTime now() const { return now_; }
  void Run() {
    while (true) {
      auto best = events_.end();
      for (auto it = events_.begin(); it != events_.end(); ++it)
        if (it->f && (best == events_.end() || std::tie(it->at, it->seq) < std::tie(best->at, best->seq))) best = it;
      if (best == events_.end()) return;
      now_ = best->at;
      std::function<void()> f = std::move(best->f);
      best->f = nullptr;
      f();
    }
  }

 private:
  struct Event {
    SimTime at;
    uint64_t seq;
    std::function<void()> f;
  };
  std::vector<Event> events_;
  uint64_t next_ = 0;
  SimTime now_ = 0;
};

// A random program of events that schedule others (half of them for the same instant, as the
// fabric's recompute is), cancel pending ones (same-instant ones included) and sometimes run
// Run(until) in steps: the queue runs it in exactly the reference's order. With `wide_delays`
// the other half spreads over 3,000 instants (more than the queue's table of 64 latest buckets,
// so instants lose their entry and open a second bucket); else over 3 (long buckets).
template <typename Queue>
std::vector<std::pair<SimTime, int>> RunRandomProgram(Queue& q, bool in_steps, bool wide_delays) {
  std::vector<std::pair<SimTime, int>> ran;
  std::vector<uint64_t> ids;  // by label
  int labels = 0;
  std::function<void(int)> body;
  auto schedule = [&](SimTime delay) {
    const int label = labels++;
    ids.push_back(q.Schedule(q.now() + delay, [&body, label] { body(label); }));
  };
  body = [&](int label) {
    ran.push_back({q.now(), label});
    uint64_t x = 0x9E3779B97F4A7C15ULL * static_cast<uint64_t>(label + 1);
    auto next = [&x] {
      x ^= x >> 12;
      x ^= x << 25;
      x ^= x >> 27;
      return (x * 2685821657736338717ULL) >> 40;
    };
    if (labels < 3000) {
      const int children = static_cast<int>(next() % 4);
      for (int c = 0; c < children; ++c) {
        const SimTime delays[] = {0, 0, 0, 1, 2, 7};
        const uint64_t pick = next();
        schedule(wide_delays && pick % 2 == 1 ? static_cast<SimTime>(next() % 3000) : delays[pick % 6]);
      }
    }
    if (next() % 4 == 0 && !ids.empty()) q.Cancel(ids[next() % ids.size()]);
  };
  for (int i = 0; i < 5; ++i) schedule(static_cast<SimTime>(i % 2));
  if constexpr (std::is_same_v<Queue, EventQueue>) {
    if (in_steps) {
      for (SimTime until = 0; !q.empty(); until += 3) q.Run(until);
      return ran;
    }
  }
  q.Run();
  return ran;
}

TEST(EventQueue, SameInstantEventsRunInTheReferenceOrder) {
  for (bool wide_delays : {false, true}) {
    for (bool in_steps : {false, true}) {
      EventQueue q;
      ReferenceQueue reference;
      const auto ran = RunRandomProgram(q, in_steps, wide_delays);
      const auto want = RunRandomProgram(reference, false, wide_delays);
      EXPECT_GE(ran.size(), 1000u);
      EXPECT_EQ(ran, want) << (in_steps ? "Run(until) in steps" : "Run()") << (wide_delays ? ", wide delays" : "");
      EXPECT_TRUE(q.empty());
    }
  }
}

// An instant whose entry in the table of latest buckets was taken by other instants opens a
// second bucket (and a third): its events still run in the order they were scheduled, and a
// bucket whose events were all cancelled before the clock reached it runs nothing.
TEST(EventQueue, AnInstantThatLostItsBucketEntryRunsItsEventsInScheduleOrder) {
  EventQueue q;
  std::vector<int> ran;
  // A bucket whose ids were all cancelled is closed when it surfaces, before the clock reaches
  // its instant; an event scheduled for that instant afterwards still runs.
  q.Cancel(q.Schedule(500, [&ran] { ran.push_back(-3); }));
  q.Schedule(5, [] {});
  q.Run(10);
  q.Schedule(500, [&ran] { ran.push_back(4); });
  q.Run(500);
  EXPECT_EQ(ran, (std::vector<int>{4}));
  ran.clear();
  auto others = [&q] {
    for (SimTime t = 1; t <= 1000; ++t) q.Schedule(1000 + t, [] {});  // 1,000 instants: every entry taken
  };
  q.Schedule(1000, [&ran] { ran.push_back(0); });
  const EventId cancelled = q.Schedule(1000, [&ran] { ran.push_back(-1); });
  others();
  q.Schedule(1000, [&ran] { ran.push_back(1); });
  q.Schedule(1000, [&ran] { ran.push_back(2); });
  others();
  q.Schedule(1000, [&ran] { ran.push_back(3); });
  q.Cancel(cancelled);
  const EventId lone = q.Schedule(999, [&ran] { ran.push_back(-2); });
  q.Cancel(lone);  // its bucket holds only a cancelled id
  q.Run(1000);
  EXPECT_EQ(ran, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(q.now(), 1000);
  q.Run();
  EXPECT_EQ(q.events_processed(), 2u + 4u + 2000u);
}

// A reset queue runs a second simulation exactly as a fresh queue would: from time zero, same-time
// events in insertion order, a cancelled event left in a bucket from the first run never surfacing.
TEST(EventQueue, ResetRunsTheNextSimulationLikeAFreshQueue) {
  auto simulate = [](EventQueue& q) {
    std::vector<std::pair<SimTime, int>> ran;
    for (int i = 0; i < 6; ++i) q.Schedule(100 - 10 * (i % 3), [&ran, &q, i] { ran.push_back({q.now(), i}); });
    q.Cancel(q.Schedule(5, [&ran] { ran.push_back({-1, -1}); }));
    q.Run();
    return std::make_pair(ran, q.events_processed());
  };
  EventQueue fresh;
  const auto want = simulate(fresh);
  EventQueue reused;
  reused.Schedule(1000, [] {});
  reused.Cancel(reused.Schedule(2000, [] {}));  // stays in the heap, cancelled
  reused.Run();
  reused.Reset();
  EXPECT_EQ(reused.now(), 0);
  EXPECT_EQ(reused.events_processed(), 0u);
  EXPECT_EQ(simulate(reused), want);
  EXPECT_EQ(want.second, 6u);
}

TEST(EventQueueDeathTest, ResettingWithEventsPendingIsABug) {
  EventQueue q;
  q.Schedule(10, [] {});
  EXPECT_DEATH(q.Reset(), "pending");
}

TEST(EventQueueDeathTest, SchedulingInThePastIsABug) {
  EventQueue q;
  q.Schedule(10, [] {});
  q.Run();
  EXPECT_DEATH(q.Schedule(5, [] {}), "past");
}

// Durations past 2^60 ps (or NaN) saturate instead of overflowing the int64 cast (issue 15,
// item 2: 1e300 ns latencies became undefined casts, then "event scheduled in the past" aborts).
TEST(TimeTest, ConversionsSaturateInsteadOfOverflowing) {
  EXPECT_EQ(PicosFromNanos(1.5), 1500);
  EXPECT_EQ(PicosFromNanos(1e300), kMaxDurationPs);
  EXPECT_EQ(PicosFromMicros(std::numeric_limits<double>::infinity()), kMaxDurationPs);
  EXPECT_EQ(PicosFromNanos(std::nan("")), kMaxDurationPs);
  EXPECT_EQ(PicosFromNanos(-1e300), -kMaxDurationPs);
  // A few saturated durations still add up within int64: events two saturated delays apart run
  // in order at the sums (an unsaturated 1e300 ns would have been an undefined cast).
  EventQueue q;
  SimTime second = -1;
  q.ScheduleAfter(PicosFromNanos(1e300), [&] { q.ScheduleAfter(PicosFromNanos(1e300), [&] { second = q.now(); }); });
  q.Run();
  EXPECT_EQ(second, 2 * kMaxDurationPs);
}

// A delay past the clock's horizon is scheduled at the horizon (time.h ClampedAdd), never at an
// overflowed time in the past.
TEST(EventQueue, ADelayPastTheHorizonRunsAtTheHorizon) {
  EventQueue q;
  SimTime ran_at = -1;
  q.ScheduleAfter(1000, [&] { q.ScheduleAfter(kSimTimeMax, [&] { ran_at = q.now(); }); });
  q.Run();
  EXPECT_EQ(ran_at, kClockHorizonPs);
  EXPECT_EQ(ClampedAdd(kClockHorizonPs - 5, 3), kClockHorizonPs - 2);
  EXPECT_EQ(ClampedAdd(kClockHorizonPs - 5, 5), kClockHorizonPs);
}

}  // namespace
}  // namespace specsim
