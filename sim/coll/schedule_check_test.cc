#include "sim/coll/schedule_check.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "sim/coll/alltoall.h"
#include "sim/coll/custom_allreduce.h"
#include "sim/coll/ring.h"
#include "sim/coll/tree.h"

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
// ring 0.31 s, one-shot 0.09 s. Before pieces, split access lists and clocks, a 128-rank ring
// took 1.8 s and a 1,024-rank alltoall could not be indexed (2G locations).
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
