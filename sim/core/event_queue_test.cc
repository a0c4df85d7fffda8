#include "sim/core/event_queue.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

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

}  // namespace
}  // namespace specsim
