#include "sim/coll/tree.h"

#include "sim/coll/builder_common.h"
#include "sim/coll/pipeline.h"
#include "sim/core/check.h"

namespace specsim::coll {

Status ValidateTreeOptions(int num_ranks, int64_t bytes, const TreeOptions& options) {
  return ValidatePipelinedOptions("tree", num_ranks, bytes, options);
}

Schedule BuildTreeAllReduce(int n, int64_t bytes, const TreeOptions& options) {
  const Status valid = ValidateTreeOptions(n, bytes, options);
  SPECSIM_CHECK(valid.ok()) << valid.ToString();
  const std::vector<int> order = OrderOrIdentity(n, options.order);
  const ProtocolModel& proto = options.protocol;
  const int num_channels = options.channels;
  const int chunks = ChunksPerBlock((bytes + num_channels - 1) / num_channels, proto, options.max_chunks_per_step);
  Schedule s;
  s.collective = Collective::kAllReduce;
  s.algorithm = "tree";
  s.protocol = proto.name;
  s.channels = num_channels;
  s.num_ranks = n;
  s.num_segments = num_channels * chunks;
  s.total_bytes = bytes;

  const std::vector<int> start = AddStartDelays(&s, n, proto.base_latency_ps);
  if (n == 1) return s;

  const ConnectionOrder fresh(proto.slots, options.connection_in_order);
  // up[c][p]: p -> p-1 (p >= 1); down[c][p]: p -> p+1 (p <= n-2).
  std::vector<std::vector<ConnectionOrder>> up(num_channels, std::vector<ConnectionOrder>(n, fresh));
  std::vector<std::vector<ConnectionOrder>> down = up;

  // `ready`: the ops after which the sender holds the chunk.
  auto transfer = [&](int from_pos, int to_pos, DataEffect effect, int c, int segment, DepList ready,
                      ConnectionOrder& conn) {
    ScheduleOp t = PipelinedStep(s, options, order[from_pos], order[to_pos], segment, effect, c);
    t.deps = std::move(ready);
    conn.AddDeps(t.deps);
    NormalizeDeps(t.deps);
    const int op = s.Add(std::move(t));
    conn.Record(op);
    return op;
  };

  for (int k = 0; k < chunks; ++k) {
    for (int c = 0; c < num_channels; ++c) {
      const int segment = c * chunks + k;
      // Up: the leaf's chunk is ready once it started; a middle rank's once its own kernel
      // started and the chunk arrived from below.
      int arrived = -1;
      for (int p = n - 1; p >= 1; --p) {
        DepList ready = {start[order[p]]};
        if (arrived >= 0) ready.push_back(arrived);
        arrived = transfer(p, p - 1, DataEffect::kReduce, c, segment, ready, up[c][p]);
      }
      // Down: `arrived` is now the full sum's arrival at the root.
      for (int p = 0; p <= n - 2; ++p) {
        arrived = transfer(p, p + 1, DataEffect::kCopy, c, segment, {start[order[p]], arrived}, down[c][p]);
      }
    }
  }
  return s;
}

}  // namespace specsim::coll
