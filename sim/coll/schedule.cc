#include "sim/coll/schedule.h"

#include "sim/core/check.h"

namespace specsim::coll {

const char* CollectiveName(Collective c) {
  switch (c) {
    case Collective::kAllReduce: return "allreduce";
    case Collective::kAllGather: return "allgather";
    case Collective::kReduceScatter: return "reducescatter";
    case Collective::kAllToAll: return "alltoall";
  }
  return "?";
}

net::Mechanism MechanismAt(const MechanismMatrix& matrix, int src, int dst, net::Mechanism fallback) {
  if (matrix.empty()) return fallback;
  SPECSIM_CHECK(src >= 0 && src < static_cast<int>(matrix.size())) << "src=" << src;
  SPECSIM_CHECK(dst >= 0 && dst < static_cast<int>(matrix[src].size())) << "dst=" << dst;
  return matrix[src][dst];
}

int64_t EvenShareBytes(int64_t total, int parts, int index) {
  SPECSIM_CHECK_GT(parts, 0);
  SPECSIM_CHECK(index >= 0 && index < parts) << "index=" << index << " parts=" << parts;
  SPECSIM_CHECK_GE(total, 0);
  return total / parts + (index < total % parts ? 1 : 0);
}

int Schedule::Add(ScheduleOp&& op) {
  const int index = static_cast<int>(ops.size());
  for (int32_t dep : op.deps) {
    SPECSIM_CHECK(dep >= 0 && dep < index) << "op " << index << " depends on " << dep;
  }
  ops.push_back(std::move(op));
  return index;
}

}  // namespace specsim::coll
