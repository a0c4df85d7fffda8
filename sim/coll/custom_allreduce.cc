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

std::vector<int> AddLaunchDelays(Schedule& s, const CustomAllReduceOptions& options) {
  std::vector<int> launch(s.num_ranks);
  for (int r = 0; r < s.num_ranks; ++r) {
    ScheduleOp d;
    d.kind = OpKind::kDelay;
    d.dst_rank = r;
    d.duration_ps = options.launch_delay_ps;
    launch[r] = s.Add(d);
  }
  return launch;
}

// Every rank r writes a flag into every peer once all of after[r] have completed.
FlagMatrix AddBarrier(Schedule& s, const std::vector<std::vector<int32_t>>& after,
                      const CustomAllReduceOptions& options) {
  const int n = s.num_ranks;
  FlagMatrix flag(n, std::vector<int>(n, -1));
  for (int r = 0; r < n; ++r) {
    for (int p = 0; p < n; ++p) {
      if (p == r) continue;
      ScheduleOp f;
      f.kind = OpKind::kTransfer;
      f.src_rank = r;
      f.dst_rank = p;
      f.effect = DataEffect::kNone;
      f.bytes = options.blocks * options.flag_bytes_per_block;
      f.mechanism = net::Mechanism::kKernelWrite;
      f.deps = after[r];
      flag[r][p] = s.Add(f);
    }
  }
  return flag;
}

// Rank `reader` pulls segments [seg_begin, seg_end) of `peer`'s `src_buffer` into its kOut.
ScheduleOp Pull(int peer, int reader, Buffer src_buffer, DataEffect effect, int seg_begin, int seg_end,
                int64_t bytes, double read_sms, std::vector<int32_t> deps) {
  ScheduleOp op;
  op.kind = OpKind::kTransfer;
  op.src_rank = peer;
  op.dst_rank = reader;
  op.src_buffer = src_buffer;
  op.dst_buffer = Buffer::kOut;
  op.effect = effect;
  op.unordered_reduce = effect == DataEffect::kReduce;
  op.segment_begin = seg_begin;
  op.segment_end = seg_end;
  op.bytes = bytes;
  op.mechanism = net::Mechanism::kKernelRead;
  op.read_sms = read_sms;
  op.deps = std::move(deps);
  return op;
}

double ReadSmsPerPull(int n, const CustomAllReduceOptions& options) {
  return n > 1 ? static_cast<double>(options.blocks) / (n - 1) : options.blocks;
}

}  // namespace

Status ValidateCustomAllReduceOptions(int num_ranks, int64_t bytes,
                                      const CustomAllReduceOptions& options) {
  RETURN_IF_ERROR(ValidateBasics(num_ranks, bytes, 1));
  if (options.blocks < 1) {
    return InvalidArgumentError("blocks = " + std::to_string(options.blocks) + ": must be >= 1");
  }
  if (options.flag_bytes_per_block < 0) {
    return InvalidArgumentError("flag_bytes_per_block = " + std::to_string(options.flag_bytes_per_block) +
                                ": must be >= 0");
  }
  if (options.launch_delay_ps < 0) return InvalidArgumentError("launch_delay_ps must be >= 0");
  return OkStatus();
}

Schedule BuildOneShotAllReduce(int n, int64_t bytes, const CustomAllReduceOptions& options) {
  Schedule s = Skeleton("oneshot", n, bytes, options);
  const std::vector<int> launch = AddLaunchDelays(s, options);
  std::vector<std::vector<int32_t>> after(n);
  for (int r = 0; r < n; ++r) after[r] = {launch[r]};
  const FlagMatrix start = AddBarrier(s, after, options);
  const double sms = ReadSmsPerPull(n, options);
  std::vector<std::vector<int32_t>> pulls(n);
  for (int r = 0; r < n; ++r) {
    for (int p = 0; p < n; ++p) {
      if (p == r) continue;
      pulls[r].push_back(s.Add(Pull(p, r, Buffer::kIn, DataEffect::kReduce, 0, n, bytes, sms,
                                    {launch[r], start[p][r]})));
    }
  }
  AddBarrier(s, pulls, options);  // end barrier
  return s;
}

Schedule BuildTwoShotAllReduce(int n, int64_t bytes, const CustomAllReduceOptions& options) {
  Schedule s = Skeleton("twoshot", n, bytes, options);
  const std::vector<int> launch = AddLaunchDelays(s, options);
  std::vector<std::vector<int32_t>> after(n);
  for (int r = 0; r < n; ++r) after[r] = {launch[r]};
  const FlagMatrix start = AddBarrier(s, after, options);
  const double sms = ReadSmsPerPull(n, options);
  // Reduce-scatter: rank r pulls block r of every peer's input.
  std::vector<std::vector<int32_t>> scatter(n);
  for (int r = 0; r < n; ++r) {
    for (int p = 0; p < n; ++p) {
      if (p == r) continue;
      scatter[r].push_back(s.Add(Pull(p, r, Buffer::kIn, DataEffect::kReduce, r, r + 1,
                                      EvenShareBytes(bytes, n, r), sms, {launch[r], start[p][r]})));
    }
  }
  const FlagMatrix middle = AddBarrier(s, scatter, options);
  // All-gather: rank r pulls block p of peer p's output once p has finished reducing it.
  std::vector<std::vector<int32_t>> gather(n);
  for (int r = 0; r < n; ++r) {
    for (int p = 0; p < n; ++p) {
      if (p == r) continue;
      gather[r].push_back(s.Add(Pull(p, r, Buffer::kOut, DataEffect::kCopy, p, p + 1,
                                     EvenShareBytes(bytes, n, p), sms, {launch[r], middle[p][r]})));
    }
  }
  AddBarrier(s, gather, options);  // end barrier
  return s;
}

}  // namespace specsim::coll
