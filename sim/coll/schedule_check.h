// A pure checker for collective schedules, and byte counters over them. No simulation: it reads
// the op list only.
//
// CheckSchedule runs four checks and returns the first violation (op index, rank, segment):
//  (a) structure: deps point backwards, ranks and segments in range, transfers have src != dst,
//      bytes >= 0, wire_efficiency in (0, 1].
//  (b) data flow (the model in schedule.h): each (rank, buffer, segment) holds a set of ranks
//      (a bitset of ceil(n / 64) words; num_ranks <= 1024). Initial inputs:
//        allreduce, reducescatter: in[r][s] = {r} for every s.
//        allgather: in[r][s] = {r} for the segments rank r owns, else {}. Ownership: segment s of
//          num_segments is owned by rank s * num_ranks / num_segments (integer division), so each
//          rank owns one contiguous block of num_segments / num_ranks segments.
//        alltoall: num_segments = n * n * k; block (src, dst) is segments
//          [(src * n + dst) * k, (src * n + dst + 1) * k): the data src sends to dst. It starts as
//          {src} in src's input only; every other segment starts empty.
//      out starts as a copy of in; the stage buffers start empty. Ops are evaluated in index order (a topological order of the
//      DAG; with (c) passing, every topological order gives the same result). A kReduce whose
//      source and destination sets overlap is an error: a contribution counted twice.
//  (c) race freedom: two ops touching the same (rank, buffer, segment), at least one writing, must
//      be ordered by the DAG (one an ancestor of the other). Two unordered_reduce accumulations
//      into one segment commute and may be concurrent. Checked in index order against each
//      location's last write and the conflicting accesses since it (ordering is transitive);
//      precedence is answered by clocks over chains of ordered ops or by one search back from
//      each op (CheckMethods below).
//  (d) expected outputs: allreduce: out[r][s] = all ranks for every r, s; reducescatter:
//      out[r][s] = all ranks for the segments r owns (ownership as for allgather); allgather:
//      out[r][s] = {owner(s)}; alltoall: out[dst][block (src, dst)] = {src}.
// Checks (b) to (d) run on pieces, maximal runs of segments that every op covers whole or not at
// all (a one-shot's n segments are one piece), and keep state only for the locations some op
// touches. Times on the 2-core machine, 1,024 ranks: one-shot 0.75 s, ring 3.4 s, two-shot 19-24 s,
// alltoall 0.75 s (schedule_check_test.cc, SchedulesOfAThousandRanks).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/coll/schedule.h"
#include "sim/core/status.h"

namespace specsim::coll {

// Runs checks (a) to (d) above. OK, or InvalidArgument naming the first violation.
Status CheckSchedule(const Schedule& schedule);

// How the checker works, chosen by CheckSchedule from the schedule's size (schedule_check.cc);
// every choice gives the same answers, and tests force each.
// How check (c) decides that one op precedes another (class Ancestry): by per-op clocks over
// chains of ordered ops, or by a search back over dependencies; kAuto: clocks when the chains are
// few enough for their memory.
enum class PrecedenceTest { kAuto, kClocks, kSearch };
// How a (rank, buffer, piece) finds its state (struct Locations): a table over all of them, or a
// binary search among those some op touches; kAuto: the table when it is small.
enum class LocationIndex { kAuto, kTable, kSorted };
struct CheckMethods {
  PrecedenceTest precedence = PrecedenceTest::kAuto;
  LocationIndex locations = LocationIndex::kAuto;
};
Status CheckSchedule(const Schedule& schedule, const CheckMethods& methods);

// The rank owning segment s for allgather / reducescatter: s * num_ranks / num_segments.
int SegmentOwner(int segment, int num_ranks, int num_segments);

// Which transfers a byte count includes.
enum class TrafficFilter {
  kData,  // transfers that move data (effect kCopy or kReduce)
  kAll,   // also control transfers (barrier flags, effect kNone)
};

// Payload bytes of transfers, summed per source rank / per destination rank (size num_ranks).
std::vector<int64_t> BytesSentPerRank(const Schedule& schedule, TrafficFilter filter = TrafficFilter::kData);
std::vector<int64_t> BytesReceivedPerRank(const Schedule& schedule, TrafficFilter filter = TrafficFilter::kData);

// Bytes of transfers whose endpoints lie on different sides of a cut (e.g. the two PCIe switches
// or sockets of a box): side_of_rank[r] is 0 (side A) or 1 (side B).
struct CrossingTraffic {
  int64_t a_to_b_bytes = 0;
  int64_t b_to_a_bytes = 0;
};
CrossingTraffic CrossingBytes(const Schedule& schedule, const std::vector<int>& side_of_rank,
                              TrafficFilter filter = TrafficFilter::kData);

// The longest chain of dependent transfers (data and control transfers count 1; delays and
// locals count 0).
// A ring allreduce with one chunk and one channel has 2(n-1).
int LongestTransferChain(const Schedule& schedule);

}  // namespace specsim::coll
