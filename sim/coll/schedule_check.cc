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

// The checks run on pieces, not segments: a piece is a maximal run of segments that no op's range
// [segment_begin, segment_end) starts or ends inside and across which the initial and expected
// contents do not change (the owner for allgather and reducescatter, the (src, dst) block for
// alltoall). Every op covers a piece whole or not at all, so all segments of a piece hold the same
// set after every op and see the same accesses: checking one stands for all. A one-shot, whose
// pulls each cover all n segments, is one piece (n^3 segment visits at n ranks become n^2); a
// ring's ops each cover one segment, so its pieces are its segments.
//
// A location is (rank, buffer, piece). Only the locations some op touches get an index (0, 1, ...
// in (rank, buffer, piece) order) and state; the others keep their initial contents. An alltoall
// of n ranks has 2n^3 locations and touches 2n^2 of them (at 1,024 ranks: 2G and 2M). The index is
// found through a table over all locations when that is small and mostly touched
// (LocationIndex::kTable: a ring's are half touched), else by binary search in the sorted touched
// keys (kSorted: a 128-rank alltoall's table would be 32 MB for 32k touched locations).
struct Locations {
  static constexpr int64_t kMaxTableLocations = int64_t{1} << 24;  // 64 MB of table

  int num_pieces = 0;
  std::vector<int> piece_of;       // per segment
  std::vector<int> first_segment;  // per piece, and num_segments after the last
  std::vector<int64_t> touched;    // keys of the touched locations, ascending: the index of each
  std::vector<int32_t> table;      // per key, its index or -1 (kTable only)

  // REQUIRES: CheckStructure(s) passed.
  Locations(const Schedule& s, LocationIndex how) {
    const int n = s.num_ranks;
    const int ns = s.num_segments;
    std::vector<bool> starts(ns + 1, false);  // a piece starts at this segment
    starts[0] = true;
    for (const ScheduleOp& op : s.ops) {
      if (MovesData(op)) starts[op.segment_begin] = starts[op.segment_end] = true;
    }
    for (int seg = 1; seg < ns; ++seg) {
      switch (s.collective) {
        case Collective::kAllReduce: break;
        case Collective::kAllGather:
        case Collective::kReduceScatter:
          if (SegmentOwner(seg, n, ns) != SegmentOwner(seg - 1, n, ns)) starts[seg] = true;
          break;
        case Collective::kAllToAll:
          if (seg % (ns / (n * n)) == 0) starts[seg] = true;
          break;
      }
    }
    piece_of.resize(ns);
    for (int seg = 0; seg < ns; ++seg) {
      if (starts[seg]) first_segment.push_back(seg);
      piece_of[seg] = static_cast<int>(first_segment.size()) - 1;
    }
    num_pieces = static_cast<int>(first_segment.size());
    first_segment.push_back(ns);

    for (const ScheduleOp& op : s.ops) {
      if (!MovesData(op)) continue;
      for (int piece = FirstPiece(op); piece <= LastPiece(op); ++piece) {
        touched.push_back(Key(SourceRank(op), op.src_buffer, piece));
        touched.push_back(Key(op.dst_rank, op.dst_buffer, piece));
      }
    }
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    SPECSIM_CHECK_LE(touched.size(), size_t{INT32_MAX});
    const int64_t all = int64_t{n} * kBuffers * num_pieces;
    const bool table_pays = all <= kMaxTableLocations && all <= 4 * static_cast<int64_t>(touched.size()) + 1024;
    if (how == LocationIndex::kTable || (how == LocationIndex::kAuto && table_pays)) {
      table.assign(static_cast<size_t>(all), -1);
      for (size_t i = 0; i < touched.size(); ++i) table[touched[i]] = static_cast<int32_t>(i);
    }
  }

  int64_t Key(int rank, Buffer b, int piece) const {
    return (int64_t{rank} * kBuffers + static_cast<int>(b)) * num_pieces + piece;
  }
  // The index of a touched location, -1 for one no op touches.
  int Of(int rank, Buffer b, int piece) const {
    const int64_t key = Key(rank, b, piece);
    if (!table.empty()) return table[key];
    const auto it = std::lower_bound(touched.begin(), touched.end(), key);
    return it != touched.end() && *it == key ? static_cast<int>(it - touched.begin()) : -1;
  }
  int count() const { return static_cast<int>(touched.size()); }
  int RankOf(int location) const { return static_cast<int>(touched[location] / num_pieces / kBuffers); }
  Buffer BufferOf(int location) const { return static_cast<Buffer>(touched[location] / num_pieces % kBuffers); }
  int PieceOf(int location) const { return static_cast<int>(touched[location] % num_pieces); }
  // The pieces [first, last] an op covers.
  int FirstPiece(const ScheduleOp& op) const { return piece_of[op.segment_begin]; }
  int LastPiece(const ScheduleOp& op) const { return piece_of[op.segment_end - 1]; }
  std::string Name(int location) const { return Name(RankOf(location), BufferOf(location), PieceOf(location)); }
  // "rank 3 out segment 5", or "rank 3 out segments [0, 8)" for a piece of several segments.
  std::string Name(int rank, Buffer b, int piece) const {
    const int begin = first_segment[piece];
    const int end = first_segment[piece + 1];
    return "rank " + std::to_string(rank) + " " + BufferName(b) +
           (end == begin + 1 ? " segment " + std::to_string(begin)
                             : " segments [" + std::to_string(begin) + ", " + std::to_string(end) + ")");
  }
};

// Whether (rank, buffer, segment) starts with the rank's own contribution (the data model above);
// otherwise it starts empty.
bool HoldsOwnAtStart(const Schedule& s, int rank, Buffer b, int segment) {
  if (b != Buffer::kIn && b != Buffer::kOut) return false;  // exchange buffers start empty
  const int n = s.num_ranks;
  const int ns = s.num_segments;
  switch (s.collective) {
    case Collective::kAllReduce:
    case Collective::kReduceScatter: return true;
    case Collective::kAllGather: return SegmentOwner(segment, n, ns) == rank;
    case Collective::kAllToAll: return segment / (ns / (n * n)) / n == rank;
  }
  return false;
}

RankSets InitialContents(const Schedule& s, const Locations& loc) {
  RankSets state;
  state.words = (s.num_ranks + 63) / 64;
  state.bits.assign(static_cast<size_t>(loc.count()) * state.words, 0);
  for (int l = 0; l < loc.count(); ++l) {
    const int rank = loc.RankOf(l);
    if (HoldsOwnAtStart(s, rank, loc.BufferOf(l), loc.first_segment[loc.PieceOf(l)])) AddRank(state.Of(l), rank);
  }
  return state;
}

Status CheckDataFlow(const Schedule& s, const Locations& loc, RankSets& state) {
  const int words = state.words;
  for (int i = 0; i < static_cast<int>(s.ops.size()); ++i) {
    const ScheduleOp& op = s.ops[i];
    if (!MovesData(op)) continue;
    const int src_rank = SourceRank(op);
    for (int piece = loc.FirstPiece(op); piece <= loc.LastPiece(op); ++piece) {
      const uint64_t* src = state.Of(loc.Of(src_rank, op.src_buffer, piece));
      uint64_t* dst = state.Of(loc.Of(op.dst_rank, op.dst_buffer, piece));
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
                         loc.Name(op.dst_rank, op.dst_buffer, piece) + ": reducing " + SetToString(src, words) +
                             " into " + SetToString(dst, words) + " counts " + SetToString(both.data(), words) +
                             " twice");
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
  std::vector<uint64_t> all(words, 0), want(words, 0), untouched(words, 0);
  for (int r = 0; r < n; ++r) AddRank(all.data(), r);
  // Rank r's output piece must hold `single`'s contribution only, or every rank's when -1.
  auto expect = [&](int r, int piece, int single) -> Status {
    if (single < 0) {
      want = all;
    } else {
      std::fill(want.begin(), want.end(), 0);
      AddRank(want.data(), single);
    }
    const int l = loc.Of(r, Buffer::kOut, piece);
    const uint64_t* got = untouched.data();
    if (l >= 0) {
      got = state.Of(l);
    } else {  // no op touched it: as it started
      std::fill(untouched.begin(), untouched.end(), 0);
      if (HoldsOwnAtStart(s, r, Buffer::kOut, loc.first_segment[piece])) AddRank(untouched.data(), r);
    }
    if (std::equal(want.begin(), want.end(), got)) return OkStatus();
    return InvalidArgumentError(std::string(s.algorithm) + " " + CollectiveName(s.collective) +
                                " schedule: after all ops, " + loc.Name(r, Buffer::kOut, piece) + " holds " +
                                SetToString(got, words) + ", expected " + SetToString(want.data(), words));
  };
  for (int r = 0; r < n; ++r) {
    if (s.collective == Collective::kAllToAll) {
      // Only block (src, r) of r's output is specified: n blocks of n^2, visited directly.
      const int k = ns / (n * n);
      for (int src = 0; src < n; ++src) {
        const int block_begin = (src * n + r) * k;
        for (int piece = loc.piece_of[block_begin]; piece <= loc.piece_of[block_begin + k - 1]; ++piece) {
          RETURN_IF_ERROR(expect(r, piece, src));
        }
      }
      continue;
    }
    for (int piece = 0; piece < loc.num_pieces; ++piece) {
      const int seg = loc.first_segment[piece];  // stands for the piece
      switch (s.collective) {
        case Collective::kAllReduce: RETURN_IF_ERROR(expect(r, piece, -1)); break;
        case Collective::kReduceScatter:
          if (SegmentOwner(seg, n, ns) == r) RETURN_IF_ERROR(expect(r, piece, -1));
          break;
        case Collective::kAllGather: RETURN_IF_ERROR(expect(r, piece, SegmentOwner(seg, n, ns))); break;
        case Collective::kAllToAll: break;  // above
      }
    }
  }
  return OkStatus();
}

// Which ops must complete before op b starts (its ancestors), asked for b = 0, 1, 2, ... in turn
// (the race check goes in index order). The ops are cut into chains, each totally ordered by the
// DAG: an op joins the chain whose last op is one of its dependencies (the first such), else
// starts one. A ring's transfers on one connection form one chain; a one-shot's concurrent pulls
// form n(n-1). Before either way below: a is not an ancestor of b if depth(b) <= depth(a) (depth:
// the longest dependency chain from a root), and on one chain the later position is the
// descendant. The two ways:
//  - clocks: per op, the highest position on each chain among it and its ancestors (the
//    elementwise max of its dependencies' clocks, then its own position), so a precedes b iff
//    clock(b)[chain(a)] >= position(a): O(1) per question, O(chains) per op, and memory for the
//    clocks of ops whose dependents are still ahead. Used when the chains are few enough
//    (kMaxClockChains) and those clocks fit in kMaxClockInts: a ring's n chains at 1,024 ranks;
//  - search: one search back over dependencies from b for all of b's questions together, never
//    below the lowest op asked about (dependencies point to lower indices, so nothing below it
//    lies on a path from it), stamping what it finds and stopping once every op asked about is
//    stamped; then one look per question. A two-shot's gather pull asks about each of the n - 1
//    accumulations into the block it reads, all reached through one barrier join.
class Ancestry {
 public:
  static constexpr int kMaxClockChains = 4096;
  static constexpr int64_t kMaxClockInts = int64_t{32} << 20;  // 128 MB of clocks

  Ancestry(const Schedule& s, PrecedenceTest how)
      : s_(s), depth_(s.ops.size(), 0), chain_(s.ops.size()), position_(s.ops.size()), last_use_(s.ops.size(), -1) {
    const int num_ops = static_cast<int>(s.ops.size());
    std::vector<int> chain_last;  // per chain, its last op
    for (int i = 0; i < num_ops; ++i) {
      int depth = 0;
      int chain = -1;
      for (int32_t d : s.ops[i].deps) {
        depth = std::max(depth, depth_[d] + 1);
        last_use_[d] = std::max(last_use_[d], i);
        if (chain < 0 && chain_last[chain_[d]] == d) chain = chain_[d];
      }
      depth_[i] = depth;
      if (chain < 0) {
        chain = static_cast<int>(chain_last.size());
        chain_last.push_back(-1);
        position_[i] = 0;
      } else {
        position_[i] = position_[chain_last[chain]] + 1;
      }
      chain_[i] = chain;
      chain_last[chain] = i;
    }
    chains_ = static_cast<int>(chain_last.size());
    // The most clocks held at once: op j's from j through its last dependent, plus b's own.
    std::vector<int> live_change(num_ops + 1, 0);
    for (int j = 0; j < num_ops; ++j) {
      if (last_use_[j] < 0) continue;
      ++live_change[j];
      --live_change[last_use_[j] + 1];
    }
    int live = 0, peak = 0;
    for (int j = 0; j < num_ops; ++j) peak = std::max(peak, live += live_change[j]);
    use_clocks_ = how == PrecedenceTest::kClocks || (how == PrecedenceTest::kAuto && chains_ <= kMaxClockChains &&
                                                     static_cast<int64_t>(peak + 1) * chains_ <= kMaxClockInts);
    if (use_clocks_) {
      stride_ = (chains_ + kClockBlock - 1) / kClockBlock * kClockBlock;
      slot_.assign(s.ops.size(), -1);
    } else {
      stamp_.assign(s.ops.size(), 0);
      wanted_.assign(s.ops.size(), 0);
    }
  }

  // Next questions are about b: whether each op in `earlier` (all below b) precedes it.
  // REQUIRES: b above the previous b.
  void Begin(int b, const std::vector<int>& earlier) {
    SPECSIM_CHECK_GT(b, b_);
    b_ = b;
    if (use_clocks_) {
      clock_ = ClockOf(b);
      return;
    }
    // The questions that depth and chains leave open, searched for together.
    const uint32_t mark = static_cast<uint32_t>(b) + 1;
    int open = 0;
    int lowest = b;
    for (int a : earlier) {
      SPECSIM_CHECK_LT(a, b);
      if (Decided(a) || wanted_[a] == mark) continue;
      wanted_[a] = mark;
      ++open;
      lowest = std::min(lowest, a);
    }
    if (open > 0) Search(lowest, open);
  }
  // Whether a must complete before b starts. REQUIRES: a was in Begin(b, earlier).
  bool Precedes(int a) const {
    if (Decided(a)) return depth_[b_] > depth_[a] && position_[b_] > position_[a];
    if (use_clocks_) return clock_[chain_[a]] >= position_[a];
    return stamp_[a] == static_cast<uint32_t>(b_) + 1;
  }

 private:
  // Depth and chains settle it: a cannot precede b if depth(b) <= depth(a); on one chain the later
  // position follows (Precedes combines the two).
  bool Decided(int a) const { return depth_[b_] <= depth_[a] || chain_[b_] == chain_[a]; }

  // Stamps b_'s ancestors with b_ + 1, searching back over dependencies, never below `lowest`,
  // until the `open` wanted ones are all stamped (a two-shot gather pull's n - 1 questions are
  // all answered once the barrier join before it is expanded), else all of them down to lowest.
  void Search(int lowest, int open) {
    const uint32_t mark = static_cast<uint32_t>(b_) + 1;
    stack_.assign(1, b_);
    while (!stack_.empty()) {
      const int x = stack_.back();
      stack_.pop_back();
      for (int32_t d : s_.ops[x].deps) {
        if (d < lowest || stamp_[d] == mark) continue;
        stamp_[d] = mark;
        if (wanted_[d] == mark && --open == 0) return;
        stack_.push_back(d);
      }
    }
  }

  // Clocks of every op up to b that a later op depends on, and b's own; a clock is dropped (its
  // slot reused) once its last dependent has one.
  const int32_t* ClockOf(int b) {
    for (; clocked_up_to_ <= b; ++clocked_up_to_) {
      const int j = clocked_up_to_;
      if (last_use_[j] < 0 && j != b) continue;  // nobody asks for it
      // A dependency whose last dependent is j hands j its clock, which is then raised in place.
      int slot = -1;
      for (int32_t d : s_.ops[j].deps) {
        if (last_use_[d] == j) {
          slot = slot_[d];
          break;
        }
      }
      if (slot < 0) {
        slot = Allocate();
        std::fill_n(&clocks_[static_cast<size_t>(slot) * stride_], stride_, -1);
      }
      int32_t* clock = &clocks_[static_cast<size_t>(slot) * stride_];
      for (int32_t d : s_.ops[j].deps) {
        if (slot_[d] != slot) MaxInto(clock, &clocks_[static_cast<size_t>(slot_[d]) * stride_]);
      }
      clock[chain_[j]] = position_[j];
      // Dependencies whose last dependent is j give their clocks back, once each (a dependency
      // may be listed twice).
      for (int32_t d : s_.ops[j].deps) {
        if (last_use_[d] != j || slot_[d] < 0) continue;
        if (slot_[d] != slot) free_.push_back(slot_[d]);
        slot_[d] = -1;
      }
      slot_[j] = slot;
      if (last_use_[j] < 0) free_.push_back(slot);  // b's own: read before the next op is clocked
    }
    return &clocks_[static_cast<size_t>(slot_[b]) * stride_];
  }
  // to[c] = max(to[c], from[c]) over a clock, in blocks of kClockBlock: a loop of known length
  // over two clocks that never overlap (distinct slots), which the compiler turns into vector
  // instructions at -O2 (a 1,024-rank ring joins 1,024-entry clocks 4M times).
  void MaxInto(int32_t* __restrict to, const int32_t* __restrict from) const {
    for (int c = 0; c < stride_; c += kClockBlock) {
      for (int k = 0; k < kClockBlock; ++k) to[c + k] = std::max(to[c + k], from[c + k]);
    }
  }
  int Allocate() {
    if (!free_.empty()) {
      const int slot = free_.back();
      free_.pop_back();
      return slot;
    }
    clocks_.resize(clocks_.size() + stride_);
    return static_cast<int>(clocks_.size() / stride_) - 1;
  }

  const Schedule& s_;
  std::vector<int> depth_;
  std::vector<int> chain_;
  std::vector<int> position_;  // within its chain
  std::vector<int> last_use_;  // the last op depending on it, -1 when none
  int chains_ = 0;
  bool use_clocks_ = false;
  int b_ = -1;
  // Search.
  std::vector<uint32_t> stamp_;   // b + 1 on b's ancestors found
  std::vector<uint32_t> wanted_;  // b + 1 on the ops asked about b that depth and chains leave
  std::vector<int> stack_;
  // Clocks.
  static constexpr int kClockBlock = 8;
  int stride_ = 0;                  // a clock's ints: chains_ rounded up to kClockBlock
  const int32_t* clock_ = nullptr;  // b's
  int clocked_up_to_ = 0;
  std::vector<int> slot_;  // per op, its clock's slot while held
  std::vector<int32_t> clocks_;
  std::vector<int> free_;
};

enum class Access { kRead, kWrite, kAccumulate };

// Every two accesses of one location, at least one writing (two unordered accumulations commute),
// must be ordered. In index order it is enough to order each access after the location's last
// write and after the conflicting accesses since it (reads for an accumulation, accumulations for
// a read, both for a write): the last write was itself ordered after everything before it, and
// "ordered" is transitive. For the same reason an access ordered after any access since the last
// write (each of which was ordered after that write) needs no check against the write itself.
// Reads and accumulations since the last write are kept in two lists, so the n - 1 accumulations
// of a one-shot into one segment do not each walk the others (n^4 at n ranks). An op's questions
// are gathered first and answered together (one search back from it, or one clock).
Status CheckRaces(const Schedule& s, const Locations& loc, PrecedenceTest precedence) {
  struct Touch {
    int op;
    int next;  // the location's previous touch of this kind since its last write, -1 at the end
  };
  const int count = loc.count();
  std::vector<int> last_write(count, -1), reads(count, -1), accumulations(count, -1);
  std::vector<Touch> touches;  // pool of the lists `reads` and `accumulations` head
  // The current op's questions: op earlier[k] must precede it (they meet at location where[k]).
  std::vector<int> earlier, where;
  Ancestry ancestry(s, precedence);
  auto ask = [&](int op, int l) {
    earlier.push_back(op);
    where.push_back(l);
  };
  auto touch = [&](int i, int l, Access access) {
    auto ask_all = [&](int list) {
      for (int t = list; t >= 0; t = touches[t].next) ask(touches[t].op, l);
    };
    bool after_some = false;  // ordered after an access since the last write
    if (access != Access::kRead) {
      ask_all(reads[l]);
      after_some = reads[l] >= 0;
    }
    if (access != Access::kAccumulate) {
      ask_all(accumulations[l]);
      after_some = after_some || accumulations[l] >= 0;
    }
    if (!after_some && last_write[l] >= 0) ask(last_write[l], l);
    switch (access) {
      case Access::kWrite:
        last_write[l] = i;
        reads[l] = accumulations[l] = -1;
        break;
      case Access::kRead:
        touches.push_back({i, reads[l]});
        reads[l] = static_cast<int>(touches.size()) - 1;
        break;
      case Access::kAccumulate:
        touches.push_back({i, accumulations[l]});
        accumulations[l] = static_cast<int>(touches.size()) - 1;
        break;
    }
  };
  for (int i = 0; i < static_cast<int>(s.ops.size()); ++i) {
    const ScheduleOp& op = s.ops[i];
    if (!MovesData(op)) continue;
    const Access dst_access = op.effect == DataEffect::kCopy ? Access::kWrite
                              : op.unordered_reduce          ? Access::kAccumulate
                                                             : Access::kWrite;
    earlier.clear();
    where.clear();
    for (int piece = loc.FirstPiece(op); piece <= loc.LastPiece(op); ++piece) {
      const int src = loc.Of(SourceRank(op), op.src_buffer, piece);
      const int dst = loc.Of(op.dst_rank, op.dst_buffer, piece);
      if (src != dst) touch(i, src, Access::kRead);
      touch(i, dst, dst_access);
    }
    if (earlier.empty()) continue;
    ancestry.Begin(i, earlier);
    for (size_t k = 0; k < earlier.size(); ++k) {
      if (ancestry.Precedes(earlier[k])) continue;
      return Violation(s, i,
                       "races with op " + std::to_string(earlier[k]) + " on " + loc.Name(where[k]) +
                           " (no dependency path orders them)");
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

Status CheckSchedule(const Schedule& schedule) { return CheckSchedule(schedule, CheckMethods{}); }

Status CheckSchedule(const Schedule& schedule, const CheckMethods& methods) {
  RETURN_IF_ERROR(CheckStructure(schedule));
  const Locations loc(schedule, methods.locations);
  RETURN_IF_ERROR(CheckRaces(schedule, loc, methods.precedence));
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
