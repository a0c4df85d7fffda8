#include "sim/coll/custom_allreduce.h"

#include <string>
#include <vector>

#include "sim/coll/builder_common.h"
#include "sim/core/check.h"

namespace specsim::coll {
namespace {

using FlagMatrix = std::vector<std::vector<int>>;  // [from][to] -> op index

Schedule Skeleton(const char* algorithm, int n, int64_t bytes, const CustomAllReduceOptions& options) {
  const Status valid = ValidateCustomAllReduceOptions(n, bytes, options);
  SPECSIM_CHECK(valid.ok()) << valid.ToString();
  Schedule s;
  s.collective = Collective::kAllReduce;
  s.algorithm = algorithm;
  s.protocol = "";
  s.channels = 1;
  s.num_ranks = n;
  s.num_segments = n;
  s.total_bytes = bytes;
  return s;
}

// Every rank r writes a flag into every peer once all of after[r] have completed. When r waits
// for several ops, one zero-length join op of r waits for them and the n - 1 flags for it (n
// edges instead of n^2 per rank: the end barrier of a 256-rank one-shot had 16.7M).
FlagMatrix AddBarrier(Schedule& s, const std::vector<std::vector<int32_t>>& after,
                      const CustomAllReduceOptions& options, SimTime extra_floor_ps = 0) {
  const int n = s.num_ranks;
  FlagMatrix flag(n, std::vector<int>(n, -1));
  std::vector<std::vector<int32_t>> joined(n);
  for (int r = 0; r < n; ++r) {
    if (after[r].size() <= 1) {
      joined[r] = after[r];
      continue;
    }
    ScheduleOp join;
    join.kind = OpKind::kDelay;
    join.dst_rank = r;
    join.duration_ps = 0;
    join.deps = after[r];
    joined[r] = {s.Add(std::move(join))};
  }
  for (int r = 0; r < n; ++r) {
    for (int p = 0; p < n; ++p) {
      if (p == r) continue;
      ScheduleOp f;
      f.kind = OpKind::kTransfer;
      f.src_rank = r;
      f.dst_rank = p;
      f.effect = DataEffect::kNone;
      f.bytes = options.blocks * options.flag_bytes_per_block;
      // Flags in host memory: written by r into host memory, polled there by p.
      f.mechanism = options.host_mapped ? net::Mechanism::kHostStaged : net::Mechanism::kKernelWrite;
      f.latency_floor_ps = options.flag_latency_ps + extra_floor_ps;
      f.deps = joined[r];
      flag[r][p] = s.Add(f);
    }
  }
  return flag;
}

// Rank `reader` reads segments [seg_begin, seg_end) of `owner`'s `src_buffer` into its `dst_buffer`.
ScheduleOp Pull(int owner, int reader, Buffer src_buffer, Buffer dst_buffer, DataEffect effect, int seg_begin,
                int seg_end, int64_t bytes, double read_sms, bool host_mapped, DepList deps) {
  ScheduleOp op;
  op.kind = OpKind::kTransfer;
  op.src_rank = owner;
  op.dst_rank = reader;
  op.src_buffer = src_buffer;
  op.dst_buffer = dst_buffer;
  op.effect = effect;
  op.unordered_reduce = effect == DataEffect::kReduce;
  op.segment_begin = seg_begin;
  op.segment_end = seg_end;
  op.bytes = bytes;
  op.mechanism = net::Mechanism::kKernelRead;
  op.read_sms = read_sms;
  op.host_end = host_mapped ? HostEnd::kSrc : HostEnd::kNone;
  op.deps = std::move(deps);
  return op;
}

// A pull's own rate cap: its share of the kernel's blocks times one block's read rate. The rate is
// fitted on this kernel (calibrate), so it replaces the fabric's generic outstanding-request cap
// (a default from the GPU's spec that a trace without kernel-read items cannot correct).
int CapPulls(Schedule& s, double read_gbps_per_block) {
  int capped = 0;
  if (read_gbps_per_block <= 0) return 0;
  for (ScheduleOp& op : s.ops)
    if (op.kind == OpKind::kTransfer && op.mechanism == net::Mechanism::kKernelRead) {
      op.rate_cap_gbps = op.read_sms * read_gbps_per_block;
      op.rate_cap_is_measured_read_rate = true;
      ++capped;
    }
  return capped;
}

ScheduleOp Local(int rank, Buffer src, Buffer dst, DataEffect effect, int seg_begin, int seg_end, int64_t bytes,
                 DepList deps) {
  ScheduleOp op;
  op.kind = OpKind::kLocal;
  op.dst_rank = rank;
  op.src_buffer = src;
  op.dst_buffer = dst;
  op.effect = effect;
  op.unordered_reduce = effect == DataEffect::kReduce;
  op.segment_begin = seg_begin;
  op.segment_end = seg_end;
  op.bytes = bytes;
  op.deps = std::move(deps);
  return op;
}

// Launch delays, then (staged layouts) each rank's copy of its input into its exchange buffer.
// Returns per rank the op its first barrier flag and own reads wait for.
std::vector<int> AddLaunchAndStage(Schedule& s, int64_t bytes, const CustomAllReduceOptions& options) {
  const int n = s.num_ranks;
  std::vector<int> ready = AddStartDelays(&s, n, options.launch_delay_ps);
  if (!options.stage_input) return ready;
  for (int r = 0; r < n; ++r) {
    if (options.host_mapped) {
      ScheduleOp w;
      w.kind = OpKind::kTransfer;
      w.src_rank = r;
      w.dst_rank = r;
      w.src_buffer = Buffer::kIn;
      w.dst_buffer = Buffer::kStage;
      w.effect = DataEffect::kCopy;
      w.segment_begin = 0;
      w.segment_end = n;
      w.bytes = bytes;
      w.mechanism = net::Mechanism::kKernelWrite;
      w.host_end = HostEnd::kDst;
      w.deps = {ready[r]};
      ready[r] = s.Add(w);
    } else {
      ready[r] = s.Add(Local(r, Buffer::kIn, Buffer::kStage, DataEffect::kCopy, 0, n, 2 * bytes, {ready[r]}));
    }
  }
  return ready;
}

}  // namespace

Status ValidateCustomAllReduceOptions(int num_ranks, int64_t bytes, const CustomAllReduceOptions& options) {
  RETURN_IF_ERROR(ValidateBasics(num_ranks, bytes, 1));
  if (options.blocks < 1) {
    return InvalidArgumentError("blocks = " + std::to_string(options.blocks) + ": must be >= 1");
  }
  if (options.flag_bytes_per_block < 0) {
    return InvalidArgumentError("flag_bytes_per_block = " + std::to_string(options.flag_bytes_per_block) +
                                ": must be >= 0");
  }
  if (options.launch_delay_ps < 0) return InvalidArgumentError("launch_delay_ps must be >= 0");
  if (options.flag_latency_ps < 0) return InvalidArgumentError("flag_latency_ps must be >= 0");
  if (options.middle_release_ps < 0) return InvalidArgumentError("middle_release_ps must be >= 0");
  if (!(options.read_gbps_per_block >= 0)) return InvalidArgumentError("read_gbps_per_block must be >= 0");
  return OkStatus();
}

Schedule BuildOneShotAllReduce(int n, int64_t bytes, const CustomAllReduceOptions& options) {
  Schedule s = Skeleton("oneshot", n, bytes, options);
  // Two barriers of n(n-1) flags, n(n-1) pulls, and per rank at most a launch, a stage copy, a
  // host read and two joins: reserved at once (growing a 256-rank schedule moved its ops 18 times).
  s.ops.reserve(3 * static_cast<size_t>(n) * (n - 1) + 5 * static_cast<size_t>(n));
  const bool host = options.host_mapped;
  const std::vector<int> ready = AddLaunchAndStage(s, bytes, options);
  std::vector<std::vector<int32_t>> after(n);
  for (int r = 0; r < n; ++r) after[r] = {ready[r]};
  const FlagMatrix start = AddBarrier(s, after, options);
  const Buffer src = options.stage_input ? Buffer::kStage : Buffer::kIn;
  // Concurrent reads per rank: the peers, plus its own host copy when mapped.
  const int reads = (n - 1) + (host ? 1 : 0);
  const double sms = static_cast<double>(options.blocks) / std::max(1, reads);
  std::vector<std::vector<int32_t>> pulls(n);
  for (int r = 0; r < n; ++r) {
    for (int p = 0; p < n; ++p) {
      if (p == r) continue;
      pulls[r].push_back(
          s.Add(Pull(p, r, src, Buffer::kOut, DataEffect::kReduce, 0, n, bytes, sms, host, {ready[r], start[p][r]})));
    }
    // Its own host copy: read like a peer's (the output already holds its own contribution).
    if (host)
      pulls[r].push_back(s.Add(Pull(r, r, src, Buffer::kOut, DataEffect::kNone, 0, n, bytes, sms, true, {ready[r]})));
  }
  AddBarrier(s, pulls, options);  // end barrier
  CapPulls(s, options.read_gbps_per_block);
  return s;
}

Schedule BuildTwoShotAllReduce(int n, int64_t bytes, const CustomAllReduceOptions& options) {
  Schedule s = Skeleton("twoshot", n, bytes, options);
  // Three barriers of n(n-1) flags, two phases of n(n-1) pulls, and per rank at most a launch, a
  // stage copy, three joins and four own-block ops: reserved at once.
  s.ops.reserve(5 * static_cast<size_t>(n) * (n - 1) + 9 * static_cast<size_t>(n));
  const bool host = options.host_mapped;
  const bool staged = options.stage_input;
  const std::vector<int> ready = AddLaunchAndStage(s, bytes, options);
  std::vector<std::vector<int32_t>> after(n);
  for (int r = 0; r < n; ++r) after[r] = {ready[r]};
  const FlagMatrix start = AddBarrier(s, after, options);
  const Buffer src = staged ? Buffer::kStage : Buffer::kIn;
  // Staged, or registered in host memory: block r is reduced into the exchange buffer kStageOut
  // (in host memory when mapped), which starts empty, so the rank's own contribution is reduced in
  // as well; registered in GPU memory: into the output, which holds it.
  const bool exchange = staged || host;
  const Buffer reduced = exchange ? Buffer::kStageOut : Buffer::kOut;
  const int reads = (n - 1) + (host ? 1 : 0);
  const double sms = static_cast<double>(options.blocks) / std::max(1, reads);
  std::vector<std::vector<int32_t>> scatter(n);
  for (int r = 0; r < n; ++r) {
    const int64_t block = EvenShareBytes(bytes, n, r);
    for (int p = 0; p < n; ++p) {
      if (p == r) continue;
      scatter[r].push_back(
          s.Add(Pull(p, r, src, reduced, DataEffect::kReduce, r, r + 1, block, sms, host, {ready[r], start[p][r]})));
    }
    if (exchange) {
      if (host) {
        scatter[r].push_back(
            s.Add(Pull(r, r, src, reduced, DataEffect::kReduce, r, r + 1, block, sms, true, {ready[r]})));
        // The reduced block is stored to host memory while the reads run (traffic only: the data
        // effect is the reduction above).
        ScheduleOp w;
        w.kind = OpKind::kTransfer;
        w.src_rank = r;
        w.dst_rank = r;
        w.effect = DataEffect::kNone;
        w.bytes = block;
        w.mechanism = net::Mechanism::kKernelWrite;
        w.host_end = HostEnd::kDst;
        w.deps = {ready[r]};
        scatter[r].push_back(s.Add(w));
      } else {
        scatter[r].push_back(s.Add(Local(r, src, reduced, DataEffect::kReduce, r, r + 1, 2 * block, {ready[r]})));
      }
    }
  }
  const FlagMatrix middle = AddBarrier(s, scatter, options, options.middle_release_ps);
  // All-gather: rank r reads block p of peer p's reduced buffer once p has finished reducing it.
  std::vector<std::vector<int32_t>> gather(n);
  for (int r = 0; r < n; ++r) {
    for (int p = 0; p < n; ++p) {
      if (p == r) continue;
      gather[r].push_back(s.Add(Pull(p, r, reduced, Buffer::kOut, DataEffect::kCopy, p, p + 1,
                                     EvenShareBytes(bytes, n, p), sms, host, {ready[r], middle[p][r]})));
    }
    if (exchange) {
      const int64_t block = EvenShareBytes(bytes, n, r);
      // Its own block: from its host copy, or a local copy.
      gather[r].push_back(
          host ? s.Add(Pull(r, r, reduced, Buffer::kOut, DataEffect::kCopy, r, r + 1, block, sms, true, scatter[r]))
               : s.Add(Local(r, reduced, Buffer::kOut, DataEffect::kCopy, r, r + 1, 2 * block, scatter[r])));
    }
  }
  if (options.two_shot_end_barrier) AddBarrier(s, gather, options);  // end barrier
  CapPulls(s, options.read_gbps_per_block);
  return s;
}

}  // namespace specsim::coll
