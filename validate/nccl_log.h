// What NCCL chose for each collective, read from the log of an earlier run with
// NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING (and NCCL_DEBUG_FILE), as given to --nccl-log.
//
// NCCL (2.2x, src/enqueue.cc) writes, on rank 0 of each communicator, one line per collective it
// schedules:
//   host:pid:tid [dev] NCCL INFO AllReduce: 8388608 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..23}
// where Bytes is count * sizeof(datatype) of the count argument of the call: ncclAllReduce's count,
// ncclAllGather's sendcount, ncclReduceScatter's recvcount. The table maps (op, Bytes) to the pick
// (algorithm, protocol, channels = Hi - Lo + 1). When one (op, Bytes) was logged with different picks
// (several communicators, eager and graph-captured calls), the pick logged most often wins; a tie goes
// to the pick logged first. Lines of other ops (Broadcast, SendRecv, ...) and every other line are
// ignored. AnnotateNcclPicks writes the picks into CollectiveParams.nccl_chosen_* of a trace.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "specsim/trace.pb.h"
#include "validate/status.h"

namespace specsim::validate {

struct NcclPick {
  std::string algo;   // "RING", "TREE", "NVLS", ...
  std::string proto;  // "LL", "LL128", "SIMPLE"
  int channels = 0;   // Hi - Lo + 1 (0 when the line has no channel range)
  bool operator==(const NcclPick& o) const { return algo == o.algo && proto == o.proto && channels == o.channels; }
};

struct NcclTuningLine {
  trace::CollectiveOp op = trace::COLLECTIVE_OP_UNSPECIFIED;
  int64_t bytes = 0;
  NcclPick pick;
};

// True when `line` is a tuning line of AllReduce, AllGather or ReduceScatter; fills *out.
bool ParseNcclTuningLine(std::string_view line, NcclTuningLine* out);

class NcclPickTable {
 public:
  void Add(const NcclTuningLine& line);
  // Adds every tuning line of `text` (a whole log); returns how many were used.
  int64_t AddText(std::string_view text);
  // Reads one log file (kNotFound when it cannot be opened).
  Status AddFile(const std::string& path);
  // The pick for (op, bytes as NCCL logs them), or nullptr.
  const NcclPick* Find(trace::CollectiveOp op, int64_t bytes) const;
  int64_t lines() const { return lines_; }        // tuning lines used
  size_t size() const { return counts_.size(); }  // distinct (op, bytes)

 private:
  struct Seen {
    NcclPick pick;
    int64_t count = 0;
  };
  // Per key, the picks in the order first seen.
  std::map<std::pair<int, int64_t>, std::vector<Seen>> counts_;
  int64_t lines_ = 0;
};

// The Bytes NCCL logs for a collective described by `p` (0 when it cannot tell: unknown op or
// dtype, or a reduce-scatter count not divisible by nranks). count is elements per rank in the send
// buffer, so reduce-scatter's recvcount is count / nranks.
int64_t NcclLoggedBytes(const trace::CollectiveParams& p);

struct NcclAnnotation {
  int annotated = 0;
  int not_found = 0;
  std::vector<std::string> missing;  // names of the items not found (the first few)
};
// Sets nccl_chosen_algo / _proto / _channels on every NCCL collective of the trace: KIND_COLLECTIVE
// items with IMPL_NCCL, the collective of KIND_COLLECTIVE_SKEW items, and that of KIND_LAYER_LOOP
// items with an allreduce.
NcclAnnotation AnnotateNcclPicks(const NcclPickTable& table, trace::Trace* t);

}  // namespace specsim::validate
