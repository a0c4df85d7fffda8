#include "sim/coll/schedule_check.h"

#include <algorithm>
#include <bit>
#include <sstream>
#include <string>

#include "sim/core/check.h"

namespace specsim::coll {
namespace {

constexpr int kMaxCheckedRanks = 1024;

// A set of ranks is `words` 64-bit words of a flat array (one set per location).
struct RankSets {
  int words = 1;
  std::vector<uint64_t> bits;
  uint64_t* Of(int location) { return &bits[static_cast<size_t>(location) * words]; }
  const uint64_t* Of(int location) const { return &bits[static_cast<size_t>(location) * words]; }
};

void AddRank(uint64_t* set, int rank) { set[rank / 64] |= uint64_t{1} << (rank % 64); }

std::string SetToString(const uint64_t* set, int words) {
  std::ostringstream out;
  out << "{";
  bool first = true;
  for (int w = 0; w < words; ++w) {
    for (int b = 0; b < 64; ++b) {
      if (set[w] & (uint64_t{1} << b)) {
        out << (first ? "" : ",") << w * 64 + b;
        first = false;
      }
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

bool MovesData(const ScheduleOp& op) { return op.kind != OpKind::kDelay && op.effect != DataEffect::kNone; }

Status CheckStructure(const Schedule& s) {
  const int n = s.num_ranks;
  if (n <= 0) return InvalidArgumentError("schedule: num_ranks = " + std::to_string(n) + ": must be > 0");
  if (n > kMaxCheckedRanks) {
    return InvalidArgumentError("schedule: num_ranks = " + std::to_string(n) +
                                ": the checker supports at most 1024 ranks");
  }
  if (s.num_segments <= 0) {
    return InvalidArgumentError("schedule: num_segments = " + std::to_string(s.num_segments) + ": must be > 0");
  }
  if (s.collective == Collective::kAllToAll && s.num_segments % (n * n) != 0) {
    return InvalidArgumentError("alltoall schedule: num_segments = " + std::to_string(s.num_segments) +
                                ": must be a multiple of n*n = " + std::to_string(n * n));
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
        return Violation(s, i,
                         "segments [" + std::to_string(op.segment_begin) + ", " + std::to_string(op.segment_end) +
                             ") not a non-empty range of [0, " + std::to_string(s.num_segments) + ")");
      }
    }
    if (op.unordered_reduce && op.effect != DataEffect::kReduce) {
      return Violation(s, i, "unordered_reduce on an op that does not reduce");
    }
  }
  return OkStatus();
}

// Location index of (rank, buffer, segment), over the buffers the schedule uses (in and out
// always; the stage buffers when an op touches them), so a 1,024-rank ring keeps two buffers.
struct Locations {
  int num_segments = 0;
  int num_buffers = 0;
  int index_of[kBuffers] = {-1, -1, -1, -1};
  Buffer buffer_at[kBuffers] = {};
  explicit Locations(const Schedule& s) : num_segments(s.num_segments) {
    bool used[kBuffers] = {true, true, false, false};
    for (const ScheduleOp& op : s.ops) {
      if (!MovesData(op)) continue;
      used[static_cast<int>(op.src_buffer)] = used[static_cast<int>(op.dst_buffer)] = true;
    }
    for (int b = 0; b < kBuffers; ++b) {
      if (!used[b]) continue;
      index_of[b] = num_buffers;
      buffer_at[num_buffers++] = static_cast<Buffer>(b);
    }
  }
  int Of(int rank, Buffer b, int segment) const {
    return (rank * num_buffers + index_of[static_cast<int>(b)]) * num_segments + segment;
  }
  int count(int num_ranks) const { return num_ranks * num_buffers * num_segments; }
  std::string Name(int location) const {
    const int seg = location % num_segments;
    const int rank = location / num_segments / num_buffers;
    return LocationName(rank, buffer_at[(location / num_segments) % num_buffers], seg);
  }
  static std::string LocationName(int rank, Buffer b, int segment) {
    return "rank " + std::to_string(rank) + " " + BufferName(b) + " segment " + std::to_string(segment);
  }
};

RankSets InitialContents(const Schedule& s, const Locations& loc) {
  const int n = s.num_ranks;
  const int ns = s.num_segments;
  RankSets state;
  state.words = (n + 63) / 64;
  state.bits.assign(static_cast<size_t>(loc.count(n)) * state.words, 0);
  for (int r = 0; r < n; ++r) {
    for (int seg = 0; seg < ns; ++seg) {
      bool holds = false;
      switch (s.collective) {
        case Collective::kAllReduce:
        case Collective::kReduceScatter: holds = true; break;
        case Collective::kAllGather: holds = SegmentOwner(seg, n, ns) == r; break;
        case Collective::kAllToAll: holds = seg / (ns / (n * n)) / n == r; break;
      }
      if (!holds) continue;
      AddRank(state.Of(loc.Of(r, Buffer::kIn, seg)), r);
      AddRank(state.Of(loc.Of(r, Buffer::kOut, seg)), r);
    }
  }
  return state;
}

Status CheckDataFlow(const Schedule& s, const Locations& loc, RankSets& state) {
  const int words = state.words;
  for (int i = 0; i < static_cast<int>(s.ops.size()); ++i) {
    const ScheduleOp& op = s.ops[i];
    if (!MovesData(op)) continue;
    const int src_rank = SourceRank(op);
    for (int seg = op.segment_begin; seg < op.segment_end; ++seg) {
      const uint64_t* src = state.Of(loc.Of(src_rank, op.src_buffer, seg));
      uint64_t* dst = state.Of(loc.Of(op.dst_rank, op.dst_buffer, seg));
      if (op.effect == DataEffect::kCopy) {
        std::copy(src, src + words, dst);
        continue;
      }
      bool overlap = false;
      for (int w = 0; w < words; ++w) overlap = overlap || (dst[w] & src[w]) != 0;
      if (overlap) {
        std::vector<uint64_t> both(words);
        for (int w = 0; w < words; ++w) both[w] = dst[w] & src[w];
        return Violation(s, i,
                         Locations::LocationName(op.dst_rank, op.dst_buffer, seg) + ": reducing " +
                             SetToString(src, words) + " into " + SetToString(dst, words) + " counts " +
                             SetToString(both.data(), words) + " twice");
      }
      for (int w = 0; w < words; ++w) dst[w] |= src[w];
    }
  }
  return OkStatus();
}

Status CheckExpected(const Schedule& s, const Locations& loc, const RankSets& state) {
  const int n = s.num_ranks;
  const int ns = s.num_segments;
  const int words = state.words;
  std::vector<uint64_t> all(words, 0), want(words, 0);
  for (int r = 0; r < n; ++r) AddRank(all.data(), r);
  for (int r = 0; r < n; ++r) {
    for (int seg = 0; seg < ns; ++seg) {
      bool checked = true;
      int single = -1;  // want = {single}, or all ranks when -1
      switch (s.collective) {
        case Collective::kAllReduce: break;
        case Collective::kReduceScatter: checked = SegmentOwner(seg, n, ns) == r; break;
        case Collective::kAllGather: single = SegmentOwner(seg, n, ns); break;
        case Collective::kAllToAll: {
          const int block = seg / (ns / (n * n));
          checked = block % n == r;
          single = block / n;
          break;
        }
      }
      if (!checked) continue;
      if (single < 0) {
        want = all;
      } else {
        std::fill(want.begin(), want.end(), 0);
        AddRank(want.data(), single);
      }
      const uint64_t* got = state.Of(loc.Of(r, Buffer::kOut, seg));
      if (!std::equal(want.begin(), want.end(), got)) {
        return InvalidArgumentError(std::string(s.algorithm) + " " + CollectiveName(s.collective) +
                                    " schedule: after all ops, " + Locations::LocationName(r, Buffer::kOut, seg) +
                                    " holds " + SetToString(got, words) + ", expected " +
                                    SetToString(want.data(), words));
      }
    }
  }
  return OkStatus();
}

// Whether op `a` must complete before op `b` starts (a < b): a depth-first search back from b
// over dependencies, never below a (dependencies point to lower indices). A stamp per op marks
// what this query visited, so queries allocate nothing and need no clearing.
class Ancestry {
 public:
  explicit Ancestry(const Schedule& s) : s_(s), stamp_(s.ops.size(), 0) {}
  bool IsAncestor(int a, int b) {
    ++query_;
    stack_.assign(1, b);
    while (!stack_.empty()) {
      const int x = stack_.back();
      stack_.pop_back();
      for (int32_t d : s_.ops[x].deps) {
        if (d == a) return true;
        if (d < a || stamp_[d] == query_) continue;
        stamp_[d] = query_;
        stack_.push_back(d);
      }
    }
    return false;
  }

 private:
  const Schedule& s_;
  std::vector<uint32_t> stamp_;
  uint32_t query_ = 0;
  std::vector<int> stack_;
};

enum class Access { kRead, kWrite, kAccumulate };

bool Conflicts(Access a, Access b) {
  if (a == Access::kRead && b == Access::kRead) return false;
  if (a == Access::kAccumulate && b == Access::kAccumulate) return false;
  return true;
}

// Every two accesses of one location, at least one writing (two unordered accumulations commute),
// must be ordered. In index order it is enough to order each access after the location's last
// write and after the reads and accumulations since that write it conflicts with: the last write
// was itself ordered after everything before it, and "ordered" is transitive.
Status CheckRaces(const Schedule& s, const Locations& loc) {
  struct Touch {
    int op;
    Access access;
    int next;  // the location's previous touch since its last write, -1 at the end
  };
  const int count = loc.count(s.num_ranks);
  std::vector<int> last_write(count, -1), since(count, -1);
  std::vector<Touch> touches;  // pool of the lists `since` heads
  Ancestry ancestry(s);
  auto touch = [&](int i, int l, Access access) -> Status {
    auto check = [&](int first) -> Status {
      if (first == i || ancestry.IsAncestor(first, i)) return OkStatus();
      return Violation(
          s, i, "races with op " + std::to_string(first) + " on " + loc.Name(l) + " (no dependency path orders them)");
    };
    if (last_write[l] >= 0) RETURN_IF_ERROR(check(last_write[l]));
    for (int t = since[l]; t >= 0; t = touches[t].next) {
      if (Conflicts(touches[t].access, access)) RETURN_IF_ERROR(check(touches[t].op));
    }
    if (access == Access::kWrite) {
      last_write[l] = i;
      since[l] = -1;
    } else {
      touches.push_back({i, access, since[l]});
      since[l] = static_cast<int>(touches.size()) - 1;
    }
    return OkStatus();
  };
  for (int i = 0; i < static_cast<int>(s.ops.size()); ++i) {
    const ScheduleOp& op = s.ops[i];
    if (!MovesData(op)) continue;
    const Access dst_access = op.effect == DataEffect::kCopy ? Access::kWrite
                              : op.unordered_reduce          ? Access::kAccumulate
                                                             : Access::kWrite;
    for (int seg = op.segment_begin; seg < op.segment_end; ++seg) {
      const int src = loc.Of(SourceRank(op), op.src_buffer, seg);
      const int dst = loc.Of(op.dst_rank, op.dst_buffer, seg);
      if (src != dst) RETURN_IF_ERROR(touch(i, src, Access::kRead));
      RETURN_IF_ERROR(touch(i, dst, dst_access));
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
  const Locations loc(schedule);
  RETURN_IF_ERROR(CheckRaces(schedule, loc));
  RankSets state = InitialContents(schedule, loc);
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

CrossingTraffic CrossingBytes(const Schedule& schedule, const std::vector<int>& side_of_rank, TrafficFilter filter) {
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
