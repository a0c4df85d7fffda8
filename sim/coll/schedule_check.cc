#include "sim/coll/schedule_check.h"

#include <algorithm>
#include <bit>
#include <sstream>
#include <string>

#include "sim/core/check.h"

namespace specsim::coll {
namespace {

using RankSet = uint64_t;
constexpr int kMaxCheckedRanks = 64;

std::string SetToString(RankSet set) {
  std::ostringstream out;
  out << "{";
  bool first = true;
  for (int r = 0; r < kMaxCheckedRanks; ++r) {
    if (set & (RankSet{1} << r)) {
      out << (first ? "" : ",") << r;
      first = false;
    }
  }
  out << "}";
  return out.str();
}

const char* BufferName(Buffer b) {
  switch (b) {
    case Buffer::kIn: return "in";
    case Buffer::kOut: return "out";
    case Buffer::kStage: return "stage";
    case Buffer::kStageOut: return "stage-out";
  }
  return "?";
}
constexpr int kBuffers = 4;

std::string OpLabel(const Schedule& s, int index) {
  const ScheduleOp& op = s.ops[index];
  std::ostringstream out;
  out << "op " << index;
  switch (op.kind) {
    case OpKind::kTransfer:
      out << " (transfer " << op.src_rank << "->" << op.dst_rank << " ch " << op.channel << ")";
      break;
    case OpKind::kLocal: out << " (local on rank " << op.dst_rank << ")"; break;
    case OpKind::kDelay: out << " (delay on rank " << op.dst_rank << ")"; break;
  }
  return out.str();
}

Status Violation(const Schedule& s, int index, const std::string& what) {
  return InvalidArgumentError(std::string(s.algorithm) + " " + CollectiveName(s.collective) +
                              " schedule: " + OpLabel(s, index) + ": " + what);
}

// The rank whose buffer an op reads (its source side).
int SourceRank(const ScheduleOp& op) { return op.kind == OpKind::kTransfer ? op.src_rank : op.dst_rank; }

bool MovesData(const ScheduleOp& op) {
  return op.kind != OpKind::kDelay && op.effect != DataEffect::kNone;
}

Status CheckStructure(const Schedule& s) {
  const int n = s.num_ranks;
  if (n <= 0) return InvalidArgumentError("schedule: num_ranks = " + std::to_string(n) + ": must be > 0");
  if (n > kMaxCheckedRanks) {
    return InvalidArgumentError("schedule: num_ranks = " + std::to_string(n) +
                                ": the checker supports at most 64 ranks");
  }
  if (s.num_segments <= 0) {
    return InvalidArgumentError("schedule: num_segments = " + std::to_string(s.num_segments) +
                                ": must be > 0");
  }
  if (s.collective == Collective::kAllToAll && s.num_segments % (n * n) != 0) {
    return InvalidArgumentError("alltoall schedule: num_segments = " +
                                std::to_string(s.num_segments) + ": must be a multiple of n*n = " +
                                std::to_string(n * n));
  }
  auto rank_ok = [n](int r) { return r >= 0 && r < n; };
  for (int i = 0; i < static_cast<int>(s.ops.size()); ++i) {
    const ScheduleOp& op = s.ops[i];
    for (int32_t d : op.deps) {
      if (d < 0 || d >= i) return Violation(s, i, "dependency " + std::to_string(d) + " is not < " + std::to_string(i));
    }
    if (!rank_ok(op.dst_rank)) return Violation(s, i, "rank " + std::to_string(op.dst_rank) + " out of range");
    if (op.kind == OpKind::kTransfer) {
      if (!rank_ok(op.src_rank)) return Violation(s, i, "src rank " + std::to_string(op.src_rank) + " out of range");
      if (op.src_rank == op.dst_rank && op.host_end == HostEnd::kNone)
        return Violation(s, i, "transfer from a rank to itself");
      if (!(op.wire_efficiency > 0 && op.wire_efficiency <= 1)) {
        return Violation(s, i, "wire_efficiency " + std::to_string(op.wire_efficiency) + " not in (0, 1]");
      }
    }
    if (op.bytes < 0) return Violation(s, i, "bytes " + std::to_string(op.bytes) + " < 0");
    if (op.duration_ps < 0 || op.latency_floor_ps < 0) return Violation(s, i, "negative time");
    if (op.read_sms < 0) return Violation(s, i, "read_sms < 0");
    if (op.kind == OpKind::kDelay && op.effect != DataEffect::kNone) {
      return Violation(s, i, "a delay cannot move data");
    }
    if (MovesData(op)) {
      if (op.segment_begin < 0 || op.segment_end > s.num_segments || op.segment_begin >= op.segment_end) {
        return Violation(s, i, "segments [" + std::to_string(op.segment_begin) + ", " +
                                   std::to_string(op.segment_end) + ") not a non-empty range of [0, " +
                                   std::to_string(s.num_segments) + ")");
      }
    }
    if (op.unordered_reduce && op.effect != DataEffect::kReduce) {
      return Violation(s, i, "unordered_reduce on an op that does not reduce");
    }
  }
  return OkStatus();
}

// Location index of (rank, buffer, segment).
struct Locations {
  int num_segments;
  int Of(int rank, Buffer b, int segment) const {
    return (rank * kBuffers + static_cast<int>(b)) * num_segments + segment;
  }
  int count(int num_ranks) const { return num_ranks * kBuffers * num_segments; }
};

std::string LocationName(int rank, Buffer b, int segment) {
  return "rank " + std::to_string(rank) + " " + BufferName(b) + " segment " + std::to_string(segment);
}

std::vector<RankSet> InitialContents(const Schedule& s, const Locations& loc) {
  const int n = s.num_ranks;
  const int ns = s.num_segments;
  std::vector<RankSet> state(loc.count(n), 0);
  for (int r = 0; r < n; ++r) {
    for (int seg = 0; seg < ns; ++seg) {
      RankSet in = 0;
      switch (s.collective) {
        case Collective::kAllReduce:
        case Collective::kReduceScatter: in = RankSet{1} << r; break;
        case Collective::kAllGather:
          if (SegmentOwner(seg, n, ns) == r) in = RankSet{1} << r;
          break;
        case Collective::kAllToAll: {
          const int block = seg / (ns / (n * n));
          if (block / n == r) in = RankSet{1} << r;
          break;
        }
      }
      state[loc.Of(r, Buffer::kIn, seg)] = in;
      state[loc.Of(r, Buffer::kOut, seg)] = in;
    }
  }
  return state;
}

Status CheckDataFlow(const Schedule& s, const Locations& loc, std::vector<RankSet>& state) {
  for (int i = 0; i < static_cast<int>(s.ops.size()); ++i) {
    const ScheduleOp& op = s.ops[i];
    if (!MovesData(op)) continue;
    const int src_rank = SourceRank(op);
    for (int seg = op.segment_begin; seg < op.segment_end; ++seg) {
      const RankSet src = state[loc.Of(src_rank, op.src_buffer, seg)];
      RankSet& dst = state[loc.Of(op.dst_rank, op.dst_buffer, seg)];
      if (op.effect == DataEffect::kCopy) {
        dst = src;
      } else {
        if (dst & src) {
          return Violation(s, i, LocationName(op.dst_rank, op.dst_buffer, seg) + ": reducing " +
                                     SetToString(src) + " into " + SetToString(dst) +
                                     " counts " + SetToString(dst & src) + " twice");
        }
        dst |= src;
      }
    }
  }
  return OkStatus();
}

Status CheckExpected(const Schedule& s, const Locations& loc, const std::vector<RankSet>& state) {
  const int n = s.num_ranks;
  const int ns = s.num_segments;
  const RankSet all = n == 64 ? ~RankSet{0} : (RankSet{1} << n) - 1;
  for (int r = 0; r < n; ++r) {
    for (int seg = 0; seg < ns; ++seg) {
      bool checked = true;
      RankSet want = 0;
      switch (s.collective) {
        case Collective::kAllReduce: want = all; break;
        case Collective::kReduceScatter:
          checked = SegmentOwner(seg, n, ns) == r;
          want = all;
          break;
        case Collective::kAllGather: want = RankSet{1} << SegmentOwner(seg, n, ns); break;
        case Collective::kAllToAll: {
          const int block = seg / (ns / (n * n));
          checked = block % n == r;
          want = RankSet{1} << (block / n);
          break;
        }
      }
      const RankSet got = state[loc.Of(r, Buffer::kOut, seg)];
      if (checked && got != want) {
        return InvalidArgumentError(std::string(s.algorithm) + " " + CollectiveName(s.collective) +
                                    " schedule: after all ops, " + LocationName(r, Buffer::kOut, seg) +
                                    " holds " + SetToString(got) + ", expected " + SetToString(want));
      }
    }
  }
  return OkStatus();
}

// Ancestor bitsets: row i has bit j set when op j must complete before op i starts.
class Ancestors {
 public:
  explicit Ancestors(const Schedule& s)
      : words_((s.ops.size() + 63) / 64), bits_(s.ops.size() * words_, 0) {
    for (size_t i = 0; i < s.ops.size(); ++i) {
      uint64_t* row = &bits_[i * words_];
      for (int32_t d : s.ops[i].deps) {
        const uint64_t* dep_row = &bits_[static_cast<size_t>(d) * words_];
        for (size_t w = 0; w < words_; ++w) row[w] |= dep_row[w];
        row[d / 64] |= uint64_t{1} << (d % 64);
      }
    }
  }
  bool IsAncestor(int ancestor, int op) const {
    return (bits_[static_cast<size_t>(op) * words_ + ancestor / 64] >> (ancestor % 64)) & 1;
  }

 private:
  size_t words_;
  std::vector<uint64_t> bits_;
};

enum class Access { kRead, kWrite, kAccumulate };

bool Conflicts(Access a, Access b) {
  if (a == Access::kRead && b == Access::kRead) return false;
  if (a == Access::kAccumulate && b == Access::kAccumulate) return false;
  return true;
}

Status CheckRaces(const Schedule& s, const Locations& loc) {
  struct Touch {
    int op;
    Access access;
  };
  std::vector<std::vector<Touch>> touches(loc.count(s.num_ranks));
  for (int i = 0; i < static_cast<int>(s.ops.size()); ++i) {
    const ScheduleOp& op = s.ops[i];
    if (!MovesData(op)) continue;
    const Access dst_access = op.effect == DataEffect::kCopy ? Access::kWrite
                              : op.unordered_reduce          ? Access::kAccumulate
                                                             : Access::kWrite;
    for (int seg = op.segment_begin; seg < op.segment_end; ++seg) {
      const int src = loc.Of(SourceRank(op), op.src_buffer, seg);
      const int dst = loc.Of(op.dst_rank, op.dst_buffer, seg);
      if (src != dst) touches[src].push_back({i, Access::kRead});
      touches[dst].push_back({i, dst_access});
    }
  }
  const Ancestors ancestors(s);
  for (int l = 0; l < static_cast<int>(touches.size()); ++l) {
    const std::vector<Touch>& list = touches[l];
    for (size_t a = 0; a < list.size(); ++a) {
      for (size_t b = a + 1; b < list.size(); ++b) {
        const Touch& first = list[a];
        const Touch& second = list[b];  // second.op >= first.op: ops are pushed in index order
        if (first.op == second.op || !Conflicts(first.access, second.access)) continue;
        if (ancestors.IsAncestor(first.op, second.op)) continue;
        const int seg = l % loc.num_segments;
        const int rank = l / loc.num_segments / kBuffers;
        const Buffer buf = static_cast<Buffer>((l / loc.num_segments) % kBuffers);
        return Violation(s, second.op,
                         "races with op " + std::to_string(first.op) + " on " +
                             LocationName(rank, buf, seg) + " (no dependency path orders them)");
      }
    }
  }
  return OkStatus();
}

bool Counts(const ScheduleOp& op, TrafficFilter filter) {
  if (op.kind != OpKind::kTransfer) return false;
  return filter == TrafficFilter::kAll || op.effect != DataEffect::kNone;
}

}  // namespace

int SegmentOwner(int segment, int num_ranks, int num_segments) {
  SPECSIM_CHECK(segment >= 0 && segment < num_segments) << "segment=" << segment;
  return static_cast<int>(static_cast<int64_t>(segment) * num_ranks / num_segments);
}

Status CheckSchedule(const Schedule& schedule) {
  RETURN_IF_ERROR(CheckStructure(schedule));
  const Locations loc{schedule.num_segments};
  RETURN_IF_ERROR(CheckRaces(schedule, loc));
  std::vector<RankSet> state = InitialContents(schedule, loc);
  RETURN_IF_ERROR(CheckDataFlow(schedule, loc, state));
  return CheckExpected(schedule, loc, state);
}

std::vector<int64_t> BytesSentPerRank(const Schedule& schedule, TrafficFilter filter) {
  std::vector<int64_t> bytes(schedule.num_ranks, 0);
  for (const ScheduleOp& op : schedule.ops) {
    if (Counts(op, filter)) bytes[op.src_rank] += op.bytes;
  }
  return bytes;
}

std::vector<int64_t> BytesReceivedPerRank(const Schedule& schedule, TrafficFilter filter) {
  std::vector<int64_t> bytes(schedule.num_ranks, 0);
  for (const ScheduleOp& op : schedule.ops) {
    if (Counts(op, filter)) bytes[op.dst_rank] += op.bytes;
  }
  return bytes;
}

CrossingTraffic CrossingBytes(const Schedule& schedule, const std::vector<int>& side_of_rank,
                              TrafficFilter filter) {
  SPECSIM_CHECK_EQ(static_cast<int>(side_of_rank.size()), schedule.num_ranks);
  CrossingTraffic traffic;
  for (const ScheduleOp& op : schedule.ops) {
    if (!Counts(op, filter)) continue;
    const int from = side_of_rank[op.src_rank];
    const int to = side_of_rank[op.dst_rank];
    if (from == 0 && to == 1) traffic.a_to_b_bytes += op.bytes;
    if (from == 1 && to == 0) traffic.b_to_a_bytes += op.bytes;
  }
  return traffic;
}

int LongestTransferChain(const Schedule& schedule) {
  std::vector<int> depth(schedule.ops.size(), 0);
  int longest = 0;
  for (size_t i = 0; i < schedule.ops.size(); ++i) {
    int d = 0;
    for (int32_t dep : schedule.ops[i].deps) d = std::max(d, depth[dep]);
    depth[i] = d + (schedule.ops[i].kind == OpKind::kTransfer ? 1 : 0);
    longest = std::max(longest, depth[i]);
  }
  return longest;
}

}  // namespace specsim::coll
