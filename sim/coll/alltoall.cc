#include "sim/coll/alltoall.h"

#include "sim/coll/builder_common.h"
#include "sim/core/check.h"

namespace specsim::coll {

Status ValidateAllToAllOptions(int num_ranks, int64_t bytes, const AllToAllOptions& options) {
  RETURN_IF_ERROR(ValidateBasics(num_ranks, bytes, options.channels));
  RETURN_IF_ERROR(ValidateMechanismMatrix(num_ranks, options.mechanism));
  RETURN_IF_ERROR(ValidateStepProtocols(num_ranks, options.steps));
  return ValidateProtocol(options.protocol);
}

Schedule BuildDirectAllToAll(int n, int64_t bytes, const AllToAllOptions& options) {
  const Status valid = ValidateAllToAllOptions(n, bytes, options);
  SPECSIM_CHECK(valid.ok()) << valid.ToString();
  const int num_channels = options.channels;
  Schedule s;
  s.collective = Collective::kAllToAll;
  s.algorithm = "direct";
  s.protocol = options.protocol.name;
  s.channels = num_channels;
  s.num_ranks = n;
  s.num_segments = n * n * num_channels;
  s.total_bytes = bytes;

  const std::vector<int> start = AddStartDelays(&s, n, options.protocol.base_latency_ps);
  for (int src = 0; src < n; ++src) {
    for (int dst = 0; dst < n; ++dst) {
      if (src == dst) continue;
      const int64_t block_bytes = EvenShareBytes(bytes, n, dst);
      const SimTime pair_hop_ps = PairHopLatency(options.steps, src, dst);
      for (int c = 0; c < num_channels; ++c) {
        const int segment = (src * n + dst) * num_channels + c;
        ScheduleOp t;
        t.kind = OpKind::kTransfer;
        t.src_rank = src;
        t.dst_rank = dst;
        t.src_buffer = Buffer::kIn;
        t.dst_buffer = Buffer::kOut;
        t.effect = DataEffect::kCopy;
        t.segment_begin = segment;
        t.segment_end = segment + 1;
        t.bytes = EvenShareBytes(block_bytes, num_channels, c);
        t.mechanism = MechanismAt(options.mechanism, src, dst);
        ApplyStepProtocol(StepProtocol(options.protocol, options.steps, src, dst), &t);
        if (pair_hop_ps >= 0) t.latency_floor_ps = pair_hop_ps;
        t.channel = c;
        t.deps = {start[src]};
        s.Add(std::move(t));
      }
    }
  }
  return s;
}

}  // namespace specsim::coll
