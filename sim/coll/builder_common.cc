#include "sim/coll/builder_common.h"

#include <numeric>

namespace specsim::coll {

Status ValidateRankOrder(int num_ranks, const std::vector<int>& order) {
  if (order.empty()) return OkStatus();
  if (static_cast<int>(order.size()) != num_ranks) {
    return InvalidArgumentError("order has " + std::to_string(order.size()) + " ranks: must list all " +
                                std::to_string(num_ranks));
  }
  std::vector<bool> seen(num_ranks, false);
  for (size_t i = 0; i < order.size(); ++i) {
    const int r = order[i];
    if (r < 0 || r >= num_ranks) {
      return InvalidArgumentError("order[" + std::to_string(i) + "] = " + std::to_string(r) + ": must be in [0, " +
                                  std::to_string(num_ranks) + ")");
    }
    if (seen[r]) {
      return InvalidArgumentError("order[" + std::to_string(i) + "] = " + std::to_string(r) + ": rank listed twice");
    }
    seen[r] = true;
  }
  return OkStatus();
}

Status ValidateMechanismMatrix(int num_ranks, const MechanismMatrix& matrix) {
  if (matrix.empty()) return OkStatus();
  if (static_cast<int>(matrix.size()) != num_ranks) {
    return InvalidArgumentError("mechanism matrix has " + std::to_string(matrix.size()) + " rows: must be " +
                                std::to_string(num_ranks));
  }
  for (size_t i = 0; i < matrix.size(); ++i) {
    if (static_cast<int>(matrix[i].size()) != num_ranks) {
      return InvalidArgumentError("mechanism matrix row " + std::to_string(i) + " has " +
                                  std::to_string(matrix[i].size()) + " entries: must be " + std::to_string(num_ranks));
    }
  }
  return OkStatus();
}

Status ValidateProtocol(const ProtocolModel& p) {
  const std::string where = "protocol \"" + p.name + "\": ";
  if (!(p.wire_efficiency > 0 && p.wire_efficiency <= 1)) {
    return InvalidArgumentError(where + "wire_efficiency = " + std::to_string(p.wire_efficiency) +
                                ": must be in (0, 1]");
  }
  if (p.hop_latency_ps < 0 || p.base_latency_ps < 0) {
    return InvalidArgumentError(where + "latencies must be >= 0");
  }
  if (p.slot_payload_bytes <= 0) return InvalidArgumentError(where + "slot_payload_bytes must be > 0");
  if (p.slots <= 0) return InvalidArgumentError(where + "slots must be > 0");
  return OkStatus();
}

const ProtocolModel& StepProtocol(const ProtocolModel& fallback, const StepProtocols& steps, int src, int dst) {
  if (steps.transport.empty()) return fallback;
  auto it = steps.model.find(steps.transport[src][dst]);
  return it == steps.model.end() ? fallback : it->second;
}

SimTime PairHopLatency(const StepProtocols& steps, int src, int dst) {
  return steps.pair_hop_latency_ps ? steps.pair_hop_latency_ps(src, dst) : -1;
}

void ApplyStepProtocol(const ProtocolModel& protocol, ScheduleOp* transfer) {
  transfer->wire_efficiency = protocol.wire_efficiency;
  transfer->latency_floor_ps = protocol.hop_latency_ps;
  transfer->rate_cap_gbps = protocol.channel_payload_gbps;
}

Status ValidateStepProtocols(int num_ranks, const StepProtocols& steps) {
  if (steps.transport.empty()) return OkStatus();
  // Which transports have a model, looked up once (the matrix has num_ranks^2 entries).
  bool has_model[kNcclTransports] = {};
  for (int k = 0; k < kNcclTransports; ++k) has_model[k] = steps.model.count(static_cast<NcclTransport>(k)) > 0;
  if (static_cast<int>(steps.transport.size()) != num_ranks)
    return InvalidArgumentError("transport matrix has " + std::to_string(steps.transport.size()) + " rows: must be " +
                                std::to_string(num_ranks));
  for (int i = 0; i < num_ranks; ++i) {
    if (static_cast<int>(steps.transport[i].size()) != num_ranks)
      return InvalidArgumentError("transport matrix row " + std::to_string(i) + " has " +
                                  std::to_string(steps.transport[i].size()) + " entries: must be " +
                                  std::to_string(num_ranks));
    for (int j = 0; j < num_ranks; ++j) {
      if (i == j) continue;
      const NcclTransport t = steps.transport[i][j];
      const int k = static_cast<int>(t);
      if (k < 0 || k >= kNcclTransports || !has_model[k])
        return InvalidArgumentError(std::string("no step protocol for transport ") + NcclTransportName(t));
    }
  }
  for (const auto& [transport, model] : steps.model) {
    RETURN_IF_ERROR(ValidateProtocol(model).WithPrefix(NcclTransportName(transport)));
    if (!(model.channel_payload_gbps >= 0))
      return InvalidArgumentError(std::string(NcclTransportName(transport)) + ": channel_payload_gbps must be >= 0");
  }
  return OkStatus();
}

Status ValidateBasics(int num_ranks, int64_t bytes, int channels) {
  if (num_ranks < 1) {
    return InvalidArgumentError("num_ranks = " + std::to_string(num_ranks) + ": must be >= 1");
  }
  if (bytes < 0) return InvalidArgumentError("bytes = " + std::to_string(bytes) + ": must be >= 0");
  if (channels < 1) {
    return InvalidArgumentError("channels = " + std::to_string(channels) + ": must be >= 1");
  }
  return OkStatus();
}

std::vector<int> OrderOrIdentity(int num_ranks, const std::vector<int>& order) {
  if (!order.empty()) return order;
  std::vector<int> identity(num_ranks);
  std::iota(identity.begin(), identity.end(), 0);
  return identity;
}

std::vector<int> AddStartDelays(Schedule* schedule, int num_ranks, SimTime duration_ps) {
  std::vector<int> start(num_ranks);
  for (int r = 0; r < num_ranks; ++r) {
    ScheduleOp delay;
    delay.kind = OpKind::kDelay;
    delay.dst_rank = r;
    delay.duration_ps = duration_ps;
    start[r] = schedule->Add(delay);
  }
  return start;
}

}  // namespace specsim::coll
