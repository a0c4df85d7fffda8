#include "sim/coll/ring.h"

#include "sim/coll/builder_common.h"
#include "sim/coll/pipeline.h"
#include "sim/core/check.h"

namespace specsim::coll {
namespace {

enum class RingPhase { kReduceScatter, kAllGather };

Schedule BuildRing(Collective collective, int n, int64_t bytes, const RingOptions& options,
                   const std::vector<RingPhase>& phases) {
  const Status valid = ValidateRingOptions(n, bytes, options);
  SPECSIM_CHECK(valid.ok()) << valid.ToString();
  const std::vector<int> order = OrderOrIdentity(n, options.order);
  const ProtocolModel& proto = options.protocol;
  const int num_channels = options.channels;
  const int64_t block_bytes = (bytes + int64_t{n} * num_channels - 1) / (int64_t{n} * num_channels);
  const int chunks = ChunksPerBlock(block_bytes, proto, options.max_chunks_per_step);

  Schedule s;
  s.collective = collective;
  s.algorithm = "ring";
  s.protocol = proto.name;
  s.channels = num_channels;
  s.num_ranks = n;
  s.num_segments = n * num_channels * chunks;
  s.total_bytes = bytes;

  s.ops.reserve(static_cast<size_t>(n) + static_cast<size_t>(phases.size()) * (n - 1) * chunks * num_channels * n);
  const std::vector<int> start = AddStartDelays(&s, n, proto.base_latency_ps);
  if (n == 1) return s;

  // connection[c][p]: channel c's link from position p to p+1.
  std::vector<std::vector<ConnectionOrder>> connection(
      num_channels, std::vector<ConnectionOrder>(n, ConnectionOrder(proto.slots, options.connection_in_order)));
  // arrival[(c * n + p) * chunks + k]: the transfer that last delivered chunk k of channel c to
  // position p (one flat array per step, two kept and swapped: no allocation per step).
  auto at = [n, chunks](int c, int p, int k) { return (static_cast<size_t>(c) * n + p) * chunks + k; };
  std::vector<int> arrival(static_cast<size_t>(num_channels) * n * chunks, -1), next_arrival;
  // link[p]: how position p sends to p+1 (the same at every step).
  std::vector<StepLink> link(n);
  for (int p = 0; p < n; ++p) link[p] = StepLinkOf(options, order[p], order[Mod(p + 1, n)]);

  for (RingPhase phase : phases) {
    for (int step = 0; step < n - 1; ++step) {
      next_arrival = arrival;
      for (int k = 0; k < chunks; ++k) {
        for (int c = 0; c < num_channels; ++c) {
          for (int p = 0; p < n; ++p) {
            const int block =
                phase == RingPhase::kReduceScatter ? order[Mod(p - step - 1, n)] : order[Mod(p - step, n)];
            const int segment = (block * num_channels + c) * chunks + k;
            ScheduleOp t =
                PipelinedStep(s, link[p], order[p], order[Mod(p + 1, n)], segment,
                              phase == RingPhase::kReduceScatter ? DataEffect::kReduce : DataEffect::kCopy, c);
            const int ready = arrival[at(c, p, k)];
            t.deps.push_back(ready >= 0 ? ready : start[order[p]]);
            connection[c][p].AddDeps(t.deps);
            NormalizeDeps(t.deps);
            const int op = s.Add(std::move(t));
            connection[c][p].Record(op);
            next_arrival[at(c, Mod(p + 1, n), k)] = op;
          }
        }
      }
      arrival.swap(next_arrival);
    }
  }
  return s;
}

}  // namespace

Status ValidateRingOptions(int num_ranks, int64_t bytes, const RingOptions& options) {
  return ValidatePipelinedOptions("ring", num_ranks, bytes, options);
}

Schedule BuildRingAllReduce(int num_ranks, int64_t bytes, const RingOptions& options) {
  return BuildRing(Collective::kAllReduce, num_ranks, bytes, options,
                   {RingPhase::kReduceScatter, RingPhase::kAllGather});
}

Schedule BuildRingAllGather(int num_ranks, int64_t bytes, const RingOptions& options) {
  return BuildRing(Collective::kAllGather, num_ranks, bytes, options, {RingPhase::kAllGather});
}

Schedule BuildRingReduceScatter(int num_ranks, int64_t bytes, const RingOptions& options) {
  return BuildRing(Collective::kReduceScatter, num_ranks, bytes, options, {RingPhase::kReduceScatter});
}

}  // namespace specsim::coll
