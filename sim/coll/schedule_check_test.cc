#include "sim/coll/schedule_check.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/coll/alltoall.h"
#include "sim/coll/custom_allreduce.h"
#include "sim/coll/ring.h"
#include "sim/coll/tree.h"
#include "sim/core/splitmix.h"

namespace specsim::coll {
namespace {

ScheduleOp Transfer(int src, int dst, DataEffect effect, int seg, std::vector<int32_t> deps = {}) {
  ScheduleOp op;
  op.kind = OpKind::kTransfer;
  op.src_rank = src;
  op.dst_rank = dst;
  op.effect = effect;
  op.segment_begin = seg;
  op.segment_end = seg + 1;
  op.bytes = 100;
  op.deps = std::move(deps);
  return op;
}

// An empty schedule of `ranks` ranks and `segments` segments.
Schedule Bare(Collective collective, int ranks, int segments) {
  Schedule s;
  s.collective = collective;
  s.num_ranks = ranks;
  s.num_segments = segments;
  return s;
}

// Two ranks, two segments: rank 1 reduces segment 0 into rank 0, which copies it back; the mirror
// for segment 1. The smallest correct allreduce.
Schedule TwoRankAllReduce() {
  Schedule s;
  s.num_ranks = 2;
  s.num_segments = 2;
  const int a = s.Add(Transfer(1, 0, DataEffect::kReduce, 0));
  s.Add(Transfer(0, 1, DataEffect::kCopy, 0, {a}));
  const int b = s.Add(Transfer(0, 1, DataEffect::kReduce, 1));
  s.Add(Transfer(1, 0, DataEffect::kCopy, 1, {b}));
  return s;
}

TEST(ScheduleCheckTest, HandBuiltTwoRankAllReducePasses) {
  EXPECT_TRUE(CheckSchedule(TwoRankAllReduce()).ok()) << CheckSchedule(TwoRankAllReduce()).ToString();
}

TEST(ScheduleCheckTest, MissingCopyLeavesOutputIncomplete) {
  Schedule s = TwoRankAllReduce();
  s.ops.pop_back();  // rank 0 never gets segment 1 back
  const Status st = CheckSchedule(s);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("rank 0 out segment 1 holds {0}, expected {0,1}"), std::string::npos) << st.message();
}

TEST(ScheduleCheckTest, CopyBeforeReduceIsARace) {
  Schedule s = TwoRankAllReduce();
  s.ops[1].deps.clear();  // copy of segment 0 out of rank 0 no longer waits for the reduce into it
  const Status st = CheckSchedule(s);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("op 1"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("races with op 0"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("rank 0 out segment 0"), std::string::npos) << st.message();
}

TEST(ScheduleCheckTest, DoubleReduceIsDoubleCounting) {
  Schedule s = TwoRankAllReduce();
  s.Add(Transfer(1, 0, DataEffect::kReduce, 0, {0, 1, 2, 3}));
  const Status st = CheckSchedule(s);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("op 4"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("twice"), std::string::npos) << st.message();
}

TEST(ScheduleCheckTest, StructuralErrors) {
  {
    Schedule s = TwoRankAllReduce();
    s.ops[2].dst_rank = 0;  // 0 -> 0
    EXPECT_NE(CheckSchedule(s).message().find("op 2 (transfer 0->0 ch 0): transfer from a rank to itself"),
              std::string::npos)
        << CheckSchedule(s).message();
  }
  {
    Schedule s = TwoRankAllReduce();
    s.ops[1].dst_rank = 2;
    EXPECT_NE(CheckSchedule(s).message().find("rank 2 out of range"), std::string::npos);
  }
  {
    Schedule s = TwoRankAllReduce();
    s.ops[1].deps = {1};  // pushed without Add: a self dependency
    EXPECT_NE(CheckSchedule(s).message().find("dependency 1 is not < 1"), std::string::npos);
  }
  {
    Schedule s = TwoRankAllReduce();
    s.ops[3].segment_end = 3;
    EXPECT_NE(CheckSchedule(s).message().find("segments [1, 3)"), std::string::npos);
  }
  {
    Schedule s = TwoRankAllReduce();
    s.ops[0].bytes = -1;
    EXPECT_NE(CheckSchedule(s).message().find("bytes -1 < 0"), std::string::npos);
  }
  {
    Schedule s = TwoRankAllReduce();
    s.ops[0].wire_efficiency = 0;
    EXPECT_FALSE(CheckSchedule(s).ok());
  }
  {
    Schedule s = TwoRankAllReduce();
    s.num_ranks = 1025;
    EXPECT_NE(CheckSchedule(s).message().find("at most 1024"), std::string::npos);
  }
}

TEST(ScheduleCheckTest, ConcurrentReducesRaceUnlessUnordered) {
  // Three ranks, one segment: ranks 1 and 2 both reduce into rank 0 at the same time.
  Schedule s = Bare(Collective::kReduceScatter, 3, 3);
  // Segment 0 is owned by rank 0 (0 * 3 / 3); the others by ranks 1 and 2.
  s.Add(Transfer(1, 0, DataEffect::kReduce, 0));
  s.Add(Transfer(2, 0, DataEffect::kReduce, 0));
  for (int seg = 1; seg < 3; ++seg) {
    s.Add(Transfer((seg + 1) % 3, seg, DataEffect::kReduce, seg));
    s.Add(Transfer((seg + 2) % 3, seg, DataEffect::kReduce, seg, {static_cast<int32_t>(s.ops.size() - 1)}));
  }
  EXPECT_NE(CheckSchedule(s).message().find("op 1 (transfer 2->0 ch 0): races with op 0"), std::string::npos)
      << CheckSchedule(s).message();
  s.ops[0].unordered_reduce = true;
  s.ops[1].unordered_reduce = true;
  EXPECT_TRUE(CheckSchedule(s).ok()) << CheckSchedule(s).ToString();
  // An unordered reduce still conflicts with a concurrent read of its destination.
  s.Add(Transfer(0, 1, DataEffect::kCopy, 0, {0}));  // reads rank 0 seg 0 while op 1 may write
  EXPECT_NE(CheckSchedule(s).message().find("races with op 1"), std::string::npos) << CheckSchedule(s).message();
}

TEST(ScheduleCheckTest, AllGatherInitialContentsFollowOwnership) {
  // 2 ranks, 4 segments: rank 0 owns 0-1, rank 1 owns 2-3 (owner = s * 2 / 4).
  EXPECT_EQ(SegmentOwner(0, 2, 4), 0);
  EXPECT_EQ(SegmentOwner(1, 2, 4), 0);
  EXPECT_EQ(SegmentOwner(2, 2, 4), 1);
  EXPECT_EQ(SegmentOwner(3, 2, 4), 1);
  Schedule s = Bare(Collective::kAllGather, 2, 4);
  for (int seg = 0; seg < 4; ++seg)
    s.Add(Transfer(SegmentOwner(seg, 2, 4), 1 - SegmentOwner(seg, 2, 4), DataEffect::kCopy, seg));
  EXPECT_TRUE(CheckSchedule(s).ok()) << CheckSchedule(s).ToString();
  // Copying from the wrong rank delivers an empty segment.
  s.ops[1].src_rank = 1;
  s.ops[1].dst_rank = 0;
  EXPECT_NE(CheckSchedule(s).message().find("rank 0 out segment 1 holds {}, expected {0}"), std::string::npos)
      << CheckSchedule(s).message();
}

TEST(ScheduleCheckTest, AllToAllLayout) {
  // n = 2, k = 1: block (src, dst) is segment src * 2 + dst. Rank 0 sends block (0,1) = segment 1,
  // rank 1 sends block (1,0) = segment 2.
  Schedule s = Bare(Collective::kAllToAll, 2, 4);
  ScheduleOp a = Transfer(0, 1, DataEffect::kCopy, 1);
  a.src_buffer = Buffer::kIn;
  s.Add(a);
  ScheduleOp b = Transfer(1, 0, DataEffect::kCopy, 2);
  b.src_buffer = Buffer::kIn;
  s.Add(b);
  EXPECT_TRUE(CheckSchedule(s).ok()) << CheckSchedule(s).ToString();
  s.ops.pop_back();
  EXPECT_NE(CheckSchedule(s).message().find("rank 0 out segment 2 holds {}, expected {1}"), std::string::npos)
      << CheckSchedule(s).message();
  s.num_segments = 6;  // not a multiple of n*n
  EXPECT_FALSE(CheckSchedule(s).ok());
}

// Removes op `index`, rewiring its dependents to its own dependencies.
Schedule DropOp(const Schedule& s, int index) {
  Schedule out = s;
  out.ops.clear();
  for (int i = 0; i < static_cast<int>(s.ops.size()); ++i) {
    if (i == index) continue;
    ScheduleOp op = s.ops[i];
    std::vector<int32_t> deps;
    for (int32_t d : op.deps) {
      if (d == index) {
        deps.insert(deps.end(), s.ops[index].deps.begin(), s.ops[index].deps.end());
      } else {
        deps.push_back(d);
      }
    }
    for (int32_t& d : deps) d = d > index ? d - 1 : d;
    op.deps = deps;
    out.ops.push_back(op);
  }
  return out;
}

TEST(ScheduleCheckMutationTest, DroppingAnyDataOpOfARingIsCaught) {
  RingOptions options;
  const Schedule ring = BuildRingAllReduce(4, 4096, options);
  ASSERT_TRUE(CheckSchedule(ring).ok()) << CheckSchedule(ring).ToString();
  int dropped = 0;
  for (int i = 0; i < static_cast<int>(ring.ops.size()); ++i) {
    if (ring.ops[i].kind != OpKind::kTransfer) continue;
    EXPECT_FALSE(CheckSchedule(DropOp(ring, i)).ok()) << "dropping op " << i << " went unnoticed";
    ++dropped;
  }
  EXPECT_EQ(dropped, 2 * 3 * 4);  // 2(n-1) steps x n ranks
}

TEST(ScheduleCheckMutationTest, DuplicatingAnyReduceIsCaught) {
  const Schedule ring = BuildRingAllReduce(4, 4096, RingOptions{});
  for (int i = 0; i < static_cast<int>(ring.ops.size()); ++i) {
    if (ring.ops[i].effect != DataEffect::kReduce) continue;
    Schedule mutated = ring;
    ScheduleOp dup = ring.ops[i];
    dup.deps = {i};  // ordered right after the original: not a race, a double count
    // Insert right after the original, shifting later deps.
    mutated.ops.insert(mutated.ops.begin() + i + 1, dup);
    for (size_t j = i + 2; j < mutated.ops.size(); ++j) {
      for (int32_t& d : mutated.ops[j].deps) d = d > i ? d + 1 : d;
    }
    const Status st = CheckSchedule(mutated);
    EXPECT_FALSE(st.ok()) << "duplicate of op " << i;
  }
}

TEST(ScheduleCheckMutationTest, RemovingTheArrivalDependencyIsARace) {
  // n = 4, one chunk: ops 0-3 are start delays, 4-7 reduce-scatter step 0 (positions 0..3),
  // 8-11 step 1. Op 8 (rank 0 -> 1) forwards the block op 7 (rank 3 -> 0) delivered at step 0.
  Schedule ring = BuildRingAllReduce(4, 4096, RingOptions{});
  ASSERT_EQ(ring.ops[8].src_rank, 0);
  ASSERT_EQ(ring.ops[7].dst_rank, 0);
  ASSERT_EQ(ring.ops[7].segment_begin, ring.ops[8].segment_begin);
  DepList& deps = ring.ops[8].deps;
  deps.erase(std::remove(deps.begin(), deps.end(), 7), deps.end());
  const Status st = CheckSchedule(ring);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("op 8 (transfer 0->1 ch 0): races with op 7"), std::string::npos) << st.message();
}

TEST(ScheduleCheckMutationTest, TwoShotAllGatherWithoutMiddleBarrierRaces) {
  // Each all-gather pull reads a peer's reduced block; without the peer's middle-barrier flag it
  // may read while the peer is still reducing into that block.
  const Schedule two = BuildTwoShotAllReduce(4, 4096, CustomAllReduceOptions{});
  ASSERT_TRUE(CheckSchedule(two).ok()) << CheckSchedule(two).ToString();
  int mutated_pulls = 0;
  for (int i = 0; i < static_cast<int>(two.ops.size()); ++i) {
    const ScheduleOp& op = two.ops[i];
    if (op.effect != DataEffect::kCopy) continue;
    Schedule mutated = two;
    // Keep only the dependency on the reader's own launch: the middle flag is gone.
    std::vector<int32_t> kept;
    for (int32_t d : op.deps) {
      if (two.ops[d].kind == OpKind::kDelay) kept.push_back(d);
    }
    mutated.ops[i].deps = kept;
    EXPECT_FALSE(CheckSchedule(mutated).ok()) << "all-gather pull " << i;
    ++mutated_pulls;
  }
  EXPECT_EQ(mutated_pulls, 4 * 3);
}

TEST(ScheduleCheckMutationTest, OneShotPullsMustBeUnorderedReduces) {
  Schedule one = BuildOneShotAllReduce(4, 4096, CustomAllReduceOptions{});
  ASSERT_TRUE(CheckSchedule(one).ok()) << CheckSchedule(one).ToString();
  for (ScheduleOp& op : one.ops) op.unordered_reduce = false;
  EXPECT_NE(CheckSchedule(one).message().find("races with"), std::string::npos);
}

// Past 64 ranks a set of ranks spans several words: rings, one-shot and two-shot of 65 and 96
// ranks pass, and the mutations that break them are still caught there (a dropped arrival
// dependency races; a one-shot whose pulls are ordinary reduces races across words of the rank
// sets).
TEST(ScheduleCheckTest, SchedulesOfHundredsOfRanks) {
  for (int n : {65, 96}) {
    SCOPED_TRACE(n);
    Schedule ring = BuildRingAllReduce(n, int64_t{n} * 64, RingOptions{});
    EXPECT_TRUE(CheckSchedule(ring).ok()) << CheckSchedule(ring).ToString();
    EXPECT_TRUE(CheckSchedule(BuildOneShotAllReduce(n, int64_t{n} * 64, CustomAllReduceOptions{})).ok());
    EXPECT_TRUE(CheckSchedule(BuildTwoShotAllReduce(n, int64_t{n} * 64, CustomAllReduceOptions{})).ok());
    // The last transfer's dependencies removed: it reads a segment its predecessor writes.
    ring.ops.back().deps.clear();
    EXPECT_NE(CheckSchedule(ring).message().find("op " + std::to_string(ring.ops.size() - 1) + " (transfer"),
              std::string::npos)
        << CheckSchedule(ring).message();
    EXPECT_NE(CheckSchedule(ring).message().find("races with"), std::string::npos);
    Schedule one = BuildOneShotAllReduce(n, int64_t{n} * 64, CustomAllReduceOptions{});
    for (ScheduleOp& op : one.ops) op.unordered_reduce = false;
    EXPECT_NE(CheckSchedule(one).message().find("races with"), std::string::npos);
  }
  // A reduce that counts rank 100's contribution twice names the rank (second word).
  Schedule s = Bare(Collective::kAllReduce, 128, 1);
  ScheduleOp t;
  t.kind = OpKind::kTransfer;
  t.src_rank = 100;
  t.dst_rank = 101;
  t.effect = DataEffect::kReduce;
  t.segment_end = 1;
  s.Add(t);
  ScheduleOp again = t;
  again.src_rank = 101;
  again.dst_rank = 102;
  again.deps = {0};
  s.Add(again);
  ScheduleOp twice = t;
  twice.src_rank = 102;
  twice.dst_rank = 100;
  twice.deps = {1};
  s.Add(twice);
  EXPECT_NE(CheckSchedule(s).message().find("counts {100} twice"), std::string::npos) << CheckSchedule(s).message();
}

// The checker's ways of answering (clocks or search for precedence, a table or a sorted list for
// locations) are picked by size; all four must give the same verdict, message included, on
// correct schedules and on every schedule with one dependency removed.
TEST(ScheduleCheckMethodsTest, EveryMethodGivesTheSameVerdict) {
  RingOptions two_channels;
  two_channels.channels = 2;
  CustomAllReduceOptions staged;
  staged.stage_input = true;
  CustomAllReduceOptions host_mapped = staged;
  host_mapped.host_mapped = true;
  const std::vector<Schedule> schedules = {
      BuildRingAllReduce(5, 5 * 2 * 4096, two_channels),
      BuildTreeAllReduce(7, 1 << 16, TreeOptions{}),
      BuildOneShotAllReduce(5, 5 * 64, CustomAllReduceOptions{}),
      BuildOneShotAllReduce(5, 5 * 64, staged),
      BuildOneShotAllReduce(4, 4 * 64, host_mapped),
      BuildTwoShotAllReduce(5, 5 * 64, CustomAllReduceOptions{}),
      BuildTwoShotAllReduce(4, 4 * 64, host_mapped),
      BuildDirectAllToAll(4, 4 * 4 * 64, AllToAllOptions{}),
  };
  const std::vector<CheckMethods> methods = {
      {PrecedenceTest::kClocks, LocationIndex::kTable},
      {PrecedenceTest::kClocks, LocationIndex::kSorted},
      {PrecedenceTest::kSearch, LocationIndex::kTable},
      {PrecedenceTest::kSearch, LocationIndex::kSorted},
  };
  int races = 0;
  for (const Schedule& schedule : schedules) {
    SCOPED_TRACE(schedule.algorithm + " " + CollectiveName(schedule.collective));
    for (const CheckMethods& m : methods) EXPECT_TRUE(CheckSchedule(schedule, m).ok());
    for (int i = 0; i < static_cast<int>(schedule.ops.size()); ++i) {
      for (size_t k = 0; k < schedule.ops[i].deps.size(); ++k) {
        Schedule mutated = schedule;
        DepList& deps = mutated.ops[i].deps;
        deps.erase(std::remove(deps.begin(), deps.end(), schedule.ops[i].deps[k]), deps.end());
        const Status expected = CheckSchedule(mutated);
        races += expected.message().find("races with") != std::string::npos;
        for (const CheckMethods& m : methods) {
          EXPECT_EQ(CheckSchedule(mutated, m).ToString(), expected.ToString()) << "op " << i << " dep " << k;
        }
      }
    }
  }
  EXPECT_GT(races, 100);  // the mutations do break schedules: the methods are compared on races
  // A dependency listed twice changes nothing (the clocks hand an op's clock on to its last
  // dependent once, not twice).
  for (const Schedule& schedule : schedules) {
    Schedule doubled = schedule;
    for (ScheduleOp& op : doubled.ops) {
      if (!op.deps.empty()) op.deps.push_back(op.deps[op.deps.size() - 1]);
    }
    for (const CheckMethods& m : methods) {
      EXPECT_TRUE(CheckSchedule(doubled, m).ok()) << schedule.algorithm << ": " << CheckSchedule(doubled, m).ToString();
    }
  }
}

// The checker's spec written the plain way, for schedules of at most 64 ops: per segment (no
// pieces), every op's ancestors as a bit mask, and every pair of conflicting accesses of a
// location checked. Returns which check fails first, as CheckSchedule orders them, and where:
// "race op B" (B the first op unordered with an earlier access), "twice op B" (the first reduce
// that counts a contribution twice), "expected rank R segment S" (the first wrong output, ranks
// then segments), or "ok".
// Location index of the plain spec: per (rank, buffer, segment).
int PlainLocation(const Schedule& s, int rank, Buffer b, int seg) {
  return (rank * 4 + static_cast<int>(b)) * s.num_segments + seg;
}

// The first op unordered with an earlier conflicting access of a location it touches, or -1.
int ReferenceFirstRace(const Schedule& s) {
  const int num_ops = static_cast<int>(s.ops.size());
  std::vector<uint64_t> ancestors(num_ops, 0);
  for (int i = 0; i < num_ops; ++i)
    for (int32_t d : s.ops[i].deps) ancestors[i] |= ancestors[d] | uint64_t{1} << d;
  auto location = [&](int rank, Buffer b, int seg) { return PlainLocation(s, rank, b, seg); };
  // Accesses per location in op order: (op, 0 read / 1 write / 2 accumulate).
  std::vector<std::vector<std::pair<int, int>>> accesses(static_cast<size_t>(s.num_ranks) * 4 * s.num_segments);
  for (int i = 0; i < num_ops; ++i) {
    const ScheduleOp& op = s.ops[i];
    if (op.kind == OpKind::kDelay || op.effect == DataEffect::kNone) continue;
    const int src_rank = op.kind == OpKind::kTransfer ? op.src_rank : op.dst_rank;
    for (int seg = op.segment_begin; seg < op.segment_end; ++seg) {
      const int src = location(src_rank, op.src_buffer, seg);
      const int dst = location(op.dst_rank, op.dst_buffer, seg);
      if (src != dst) accesses[src].push_back({i, 0});
      accesses[dst].push_back({i, op.effect == DataEffect::kReduce && op.unordered_reduce ? 2 : 1});
    }
  }
  int first_race = num_ops;
  for (const auto& list : accesses)
    for (size_t x = 0; x < list.size(); ++x)
      for (size_t y = x + 1; y < list.size(); ++y) {
        const auto [a, kind_a] = list[x];
        const auto [b, kind_b] = list[y];
        const bool conflict = !(kind_a == 0 && kind_b == 0) && !(kind_a == 2 && kind_b == 2);
        if (conflict && a != b && (ancestors[b] >> a & 1) == 0) first_race = std::min(first_race, b);
      }
  return first_race < num_ops ? first_race : -1;
}

bool ReferenceStartsWithOwn(const Schedule& s, int rank, Buffer b, int seg) {
  const int n = s.num_ranks;
  const int ns = s.num_segments;
  if (b != Buffer::kIn && b != Buffer::kOut) return false;
  switch (s.collective) {
    case Collective::kAllReduce:
    case Collective::kReduceScatter: return true;
    case Collective::kAllGather: return SegmentOwner(seg, n, ns) == rank;
    case Collective::kAllToAll: return seg / (ns / (n * n)) / n == rank;
  }
  return false;
}

std::string ReferenceVerdict(const Schedule& s) {
  const int n = s.num_ranks;
  const int ns = s.num_segments;
  if (const int race = ReferenceFirstRace(s); race >= 0) return "race op " + std::to_string(race);
  auto location = [&](int rank, Buffer b, int seg) { return PlainLocation(s, rank, b, seg); };
  auto starts_with_own = [&](int rank, Buffer b, int seg) { return ReferenceStartsWithOwn(s, rank, b, seg); };
  std::vector<uint64_t> holds(static_cast<size_t>(n) * 4 * ns, 0);  // n <= 64: one word
  for (int r = 0; r < n; ++r)
    for (int b = 0; b < 4; ++b)
      for (int seg = 0; seg < ns; ++seg)
        if (starts_with_own(r, static_cast<Buffer>(b), seg))
          holds[location(r, static_cast<Buffer>(b), seg)] = uint64_t{1} << r;
  for (int i = 0; i < static_cast<int>(s.ops.size()); ++i) {
    const ScheduleOp& op = s.ops[i];
    if (op.kind == OpKind::kDelay || op.effect == DataEffect::kNone) continue;
    const int src_rank = op.kind == OpKind::kTransfer ? op.src_rank : op.dst_rank;
    for (int seg = op.segment_begin; seg < op.segment_end; ++seg) {
      const uint64_t src = holds[location(src_rank, op.src_buffer, seg)];
      uint64_t& dst = holds[location(op.dst_rank, op.dst_buffer, seg)];
      if (op.effect == DataEffect::kCopy) {
        dst = src;
      } else {
        if ((dst & src) != 0) return "twice op " + std::to_string(i);
        dst |= src;
      }
    }
  }
  const uint64_t all = n == 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1;
  for (int r = 0; r < n; ++r)
    for (int seg = 0; seg < ns; ++seg) {
      uint64_t want = all;
      switch (s.collective) {
        case Collective::kAllReduce: break;
        case Collective::kReduceScatter:
          if (SegmentOwner(seg, n, ns) != r) continue;
          break;
        case Collective::kAllGather: want = uint64_t{1} << SegmentOwner(seg, n, ns); break;
        case Collective::kAllToAll: {
          const int block = seg / (ns / (n * n));
          if (block % n != r) continue;
          want = uint64_t{1} << (block / n);
          break;
        }
      }
      if (holds[location(r, Buffer::kOut, seg)] != want)
        return "expected rank " + std::to_string(r) + " segment " + std::to_string(seg);
    }
  return "ok";
}

// CheckSchedule's message in ReferenceVerdict's terms. A wrong output is named by its piece, whose
// first segment is the first wrong one (all segments of a piece hold the same).
std::string VerdictOf(const Status& st) {
  if (st.ok()) return "ok";
  const std::string& m = st.message();
  auto number_after = [&m](const std::string& tag) {
    const size_t at = m.find(tag);
    return at == std::string::npos ? std::string("?") : std::to_string(std::stoi(m.substr(at + tag.size())));
  };
  const std::string op = number_after("schedule: op ");
  if (m.find("races with") != std::string::npos) return "race op " + op;
  if (m.find(" twice") != std::string::npos) return "twice op " + op;
  if (m.find("after all ops") != std::string::npos) {
    const size_t range = m.find("out segments [");
    return "expected rank " + number_after("after all ops, rank ") + " segment " +
           (range != std::string::npos ? number_after("out segments [") : number_after("out segment "));
  }
  return "other: " + st.ToString();
}

// Random small schedules (any collective, 2-5 ranks, every buffer, overlapping segment ranges,
// random dependencies, some ops built to complete an allreduce so that "ok" occurs): the checker,
// under each of its methods, reaches the verdict of the plain spec above.
TEST(ScheduleCheckMethodsTest, RandomSchedulesMatchThePlainSpec) {
  const std::vector<CheckMethods> methods = {
      {PrecedenceTest::kAuto, LocationIndex::kAuto},     {PrecedenceTest::kClocks, LocationIndex::kTable},
      {PrecedenceTest::kClocks, LocationIndex::kSorted}, {PrecedenceTest::kSearch, LocationIndex::kTable},
      {PrecedenceTest::kSearch, LocationIndex::kSorted},
  };
  uint64_t rng = 7;
  auto below = [&rng](int bound) { return static_cast<int>(SplitMix64(rng) % static_cast<uint64_t>(bound)); };
  std::vector<int> verdicts(4, 0);  // ok, race, twice, expected
  for (int trial = 0; trial < 3000; ++trial) {
    Schedule s;
    s.collective = static_cast<Collective>(below(4));
    s.num_ranks = 2 + below(4);
    s.num_segments = s.collective == Collective::kAllToAll ? s.num_ranks * s.num_ranks : 1 + below(6);
    // A correct core half the time: a ring-free allreduce through rank 0 (reduce in, copy out).
    if (s.collective == Collective::kAllReduce && below(2) == 0) {
      std::vector<int32_t> reduced;
      for (int r = 1; r < s.num_ranks; ++r) {
        ScheduleOp in = Transfer(r, 0, DataEffect::kReduce, 0, reduced);
        in.segment_end = s.num_segments;
        reduced = {static_cast<int32_t>(s.Add(in))};
      }
      for (int r = 1; r < s.num_ranks; ++r) {
        ScheduleOp out = Transfer(0, r, DataEffect::kCopy, 0, reduced);
        out.segment_end = s.num_segments;
        s.Add(out);
      }
    }
    const int extra = below(3) == 0 ? 0 : 1 + below(12);
    for (int k = 0; k < extra && s.ops.size() < 64; ++k) {
      ScheduleOp op;
      op.kind = static_cast<OpKind>(below(3));
      op.dst_rank = below(s.num_ranks);
      op.src_rank = (op.dst_rank + 1 + below(s.num_ranks - 1)) % s.num_ranks;
      if (op.kind != OpKind::kDelay) op.effect = static_cast<DataEffect>(below(3));
      op.src_buffer = static_cast<Buffer>(below(4));
      op.dst_buffer = static_cast<Buffer>(below(4));
      op.unordered_reduce = op.effect == DataEffect::kReduce && below(2) == 0;
      op.segment_begin = below(s.num_segments);
      op.segment_end = op.segment_begin + 1 + below(s.num_segments - op.segment_begin);
      op.bytes = 64;
      const int here = static_cast<int>(s.ops.size());
      for (int d = 0; d < here; ++d)
        if (below(4) == 0) op.deps.push_back(d);
      s.Add(op);
    }
    const std::string want = ReferenceVerdict(s);
    verdicts[want == "ok" ? 0 : want.rfind("race", 0) == 0 ? 1 : want.rfind("twice", 0) == 0 ? 2 : 3] += 1;
    for (const CheckMethods& m : methods) {
      ASSERT_EQ(VerdictOf(CheckSchedule(s, m)), want)
          << "trial " << trial << ", " << static_cast<int>(m.precedence) << "/" << static_cast<int>(m.locations);
    }
  }
  for (int v = 0; v < 4; ++v) EXPECT_GT(verdicts[v], 50) << "verdict " << v << " too rare to be tested";
}

// Pieces: ops over [0, 4) and [2, 6) cut six segments into [0, 2), [2, 4), [4, 6); a reduce that
// counts a rank twice on [2, 4) only is named by that piece.
TEST(ScheduleCheckTest, OverlappingRangesAreCheckedPieceByPiece) {
  Schedule s = Bare(Collective::kAllReduce, 3, 6);
  ScheduleOp a = Transfer(1, 0, DataEffect::kReduce, 0);
  a.segment_end = 4;
  const int first = s.Add(a);
  ScheduleOp b = Transfer(1, 0, DataEffect::kReduce, 2, {first});
  b.segment_end = 6;
  s.Add(b);
  const Status st = CheckSchedule(s);
  EXPECT_NE(st.message().find("rank 0 out segments [2, 4): reducing {1} into {0,1} counts {1} twice"),
            std::string::npos)
      << st.message();
  // Disjoint ranges [0, 4) and [4, 6): nothing counted twice, but rank 0 misses rank 2's share;
  // the first piece named is [0, 4).
  s.ops[1].segment_begin = 4;
  EXPECT_NE(CheckSchedule(s).message().find("rank 0 out segments [0, 4) holds {0,1}, expected {0,1,2}"),
            std::string::npos)
      << CheckSchedule(s).message();
}

// Up to 1,024 ranks (the bound of the rank sets): each algorithm's schedule passes, and a removed
// dependency is still found. Times on the 2-core machine (RelWithDebInfo, the check alone): 1,024
// ranks: one-shot 0.75 s, ring 3.4 s, two-shot 24 s, alltoall 0.75 s, tree 0.01 s; 512 ranks:
// ring 0.31 s, one-shot 0.09 s. The check indexes locations by piece with split access lists, so
// a 1,024-rank alltoall (2G locations if indexed whole) fits.
TEST(ScheduleCheckTest, SchedulesOfAThousandRanks) {
  EXPECT_TRUE(CheckSchedule(BuildTreeAllReduce(1024, 1 << 20, TreeOptions{})).ok());
  EXPECT_TRUE(CheckSchedule(BuildDirectAllToAll(1024, int64_t{1024} * 1024 * 4, AllToAllOptions{})).ok());
  Schedule ring = BuildRingAllReduce(512, 512 * 64, RingOptions{});
  EXPECT_TRUE(CheckSchedule(ring).ok());
  ring.ops.back().deps.clear();
  EXPECT_NE(CheckSchedule(ring).message().find("races with"), std::string::npos);
  CustomAllReduceOptions staged;
  staged.stage_input = true;
  Schedule one = BuildOneShotAllReduce(512, 512 * 64, staged);
  EXPECT_TRUE(CheckSchedule(one).ok());
  // The last pull loses its peer's start flag: it may read the peer's exchange buffer before the
  // peer has staged its input there.
  for (int i = static_cast<int>(one.ops.size()) - 1; i >= 0; --i) {
    if (one.ops[i].effect != DataEffect::kReduce) continue;
    DepList& deps = one.ops[i].deps;
    deps.erase(deps.begin() + 1, deps.end());  // {ready[reader], start flag}: keep the first
    break;
  }
  EXPECT_NE(CheckSchedule(one).message().find("races with"), std::string::npos) << CheckSchedule(one).message();
}

TEST(ScheduleCheckTest, ByteCountsAndCrossing) {
  const Schedule s = TwoRankAllReduce();
  EXPECT_EQ(BytesSentPerRank(s), (std::vector<int64_t>{200, 200}));
  EXPECT_EQ(BytesReceivedPerRank(s), (std::vector<int64_t>{200, 200}));
  const CrossingTraffic x = CrossingBytes(s, {0, 1});
  EXPECT_EQ(x.a_to_b_bytes, 200);
  EXPECT_EQ(x.b_to_a_bytes, 200);
  const CrossingTraffic none = CrossingBytes(s, {1, 1});
  EXPECT_EQ(none.a_to_b_bytes + none.b_to_a_bytes, 0);
  // Control transfers count only with kAll.
  Schedule flags = s;
  flags.Add(Transfer(0, 1, DataEffect::kNone, 0));
  EXPECT_EQ(BytesSentPerRank(flags)[0], 200);
  EXPECT_EQ(BytesSentPerRank(flags, TrafficFilter::kAll)[0], 300);
  EXPECT_EQ(LongestTransferChain(s), 2);
}

}  // namespace
}  // namespace specsim::coll
