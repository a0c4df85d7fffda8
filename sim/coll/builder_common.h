// Input checks and small helpers shared by the schedule builders (ring, tree, custom allreduce,
// all-to-all). The checks return InvalidArgument naming the option and what is allowed.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "sim/coll/protocol.h"
#include "sim/coll/schedule.h"
#include "sim/core/status.h"

namespace specsim::coll {

// Per-transport step costs of NCCL's pipelined builders (ring, tree, all-to-all): the transport of
// every ordered rank pair and, per transport present, the protocol model its steps follow (hop
// latency floor, wire efficiency, channel cap). Empty `transport`: every step follows the
// builder's `protocol`. The collective's base latency, slots and slot size always come from the
// builder's `protocol`.
struct StepProtocols {
  std::vector<std::vector<NcclTransport>> transport;  // [src rank][dst rank]
  std::map<NcclTransport, ProtocolModel> model;
  // A pair's own latency floor per step, over its transport model's hop_latency_ps (the transport
  // model prices each pair by its path: nccl_step_model.h); unset, or -1 for a pair: the model's.
  std::function<SimTime(int src, int dst)> pair_hop_latency_ps;
};

// The protocol a step from rank src to rank dst follows. REQUIRES: ValidateStepProtocols passed.
const ProtocolModel& StepProtocol(const ProtocolModel& fallback, const StepProtocols& steps, int src, int dst);
// Sets a transfer's wire efficiency, latency floor and rate cap from `protocol`.
void ApplyStepProtocol(const ProtocolModel& protocol, ScheduleOp* transfer);
// Empty, or num_ranks x num_ranks with a valid model for every transport it names.
Status ValidateStepProtocols(int num_ranks, const StepProtocols& steps);

// `order` is empty or a permutation of 0..num_ranks-1.
Status ValidateRankOrder(int num_ranks, const std::vector<int>& order);
// `matrix` is empty or num_ranks x num_ranks.
Status ValidateMechanismMatrix(int num_ranks, const MechanismMatrix& matrix);
// Efficiency in (0, 1], latencies >= 0, slot payload > 0, slots > 0.
Status ValidateProtocol(const ProtocolModel& protocol);
// num_ranks >= 1, bytes >= 0, channels >= 1.
Status ValidateBasics(int num_ranks, int64_t bytes, int channels);

// The checks shared by the chunk-pipelined builders (RingOptions, TreeOptions: the same fields).
// `algorithm` prefixes the rank-order error.
template <typename PipelinedOptions>
Status ValidatePipelinedOptions(const char* algorithm, int num_ranks, int64_t bytes, const PipelinedOptions& options) {
  RETURN_IF_ERROR(ValidateBasics(num_ranks, bytes, options.channels));
  RETURN_IF_ERROR(ValidateRankOrder(num_ranks, options.order).WithPrefix(algorithm));
  RETURN_IF_ERROR(ValidateMechanismMatrix(num_ranks, options.mechanism));
  RETURN_IF_ERROR(ValidateProtocol(options.protocol));
  RETURN_IF_ERROR(ValidateStepProtocols(num_ranks, options.steps));
  if (options.max_chunks_per_step < 1) {
    return InvalidArgumentError("max_chunks_per_step = " + std::to_string(options.max_chunks_per_step) +
                                ": must be >= 1");
  }
  return OkStatus();
}

// How steps from rank src to rank dst are sent: the options' mechanism for the pair and the
// pair's step protocol. The same for every step of a pair, so a builder may look it up once.
struct StepLink {
  net::Mechanism mechanism = net::Mechanism::kKernelWrite;
  const ProtocolModel* protocol = nullptr;
  SimTime hop_latency_ps = -1;  // >= 0: the pair's own floor over the protocol's (StepProtocols)
};
// The pair's floor from `steps` (StepProtocols::pair_hop_latency_ps), -1 when it has none.
SimTime PairHopLatency(const StepProtocols& steps, int src, int dst);
template <typename PipelinedOptions>
StepLink StepLinkOf(const PipelinedOptions& options, int src, int dst) {
  return {MechanismAt(options.mechanism, src, dst), &StepProtocol(options.protocol, options.steps, src, dst),
          PairHopLatency(options.steps, src, dst)};
}

// A step of a chunk-pipelined builder (ring, tree): segment `segment` of the output buffer sent
// from rank src to rank dst on `channel`, reduced into the receiver's (kReduce) or copied over it
// (kCopy); its bytes are the segment's even share of the schedule's, its mechanism and its wire
// efficiency, latency floor and rate cap those of the pair's `link` (StepLinkOf).
// Dependencies are the caller's.
inline ScheduleOp PipelinedStep(const Schedule& schedule, const StepLink& link, int src, int dst, int segment,
                                DataEffect effect, int channel) {
  ScheduleOp t;
  t.kind = OpKind::kTransfer;
  t.src_rank = src;
  t.dst_rank = dst;
  t.src_buffer = Buffer::kOut;
  t.dst_buffer = Buffer::kOut;
  t.effect = effect;
  t.segment_begin = segment;
  t.segment_end = segment + 1;
  t.bytes = EvenShareBytes(schedule.total_bytes, schedule.num_segments, segment);
  t.mechanism = link.mechanism;
  ApplyStepProtocol(*link.protocol, &t);
  if (link.hop_latency_ps >= 0) t.latency_floor_ps = link.hop_latency_ps;
  t.channel = channel;
  return t;
}
template <typename PipelinedOptions>
ScheduleOp PipelinedStep(const Schedule& schedule, const PipelinedOptions& options, int src, int dst, int segment,
                         DataEffect effect, int channel) {
  return PipelinedStep(schedule, StepLinkOf(options, src, dst), src, dst, segment, effect, channel);
}

// One kDelay of `duration_ps` per rank (a collective's start cost: NCCL's base latency, a kernel
// launch); returns the op index of each rank's delay.
std::vector<int> AddStartDelays(Schedule* schedule, int num_ranks, SimTime duration_ps);

// `order` or, when empty, 0..num_ranks-1.
std::vector<int> OrderOrIdentity(int num_ranks, const std::vector<int>& order);

inline int Mod(int a, int n) { return ((a % n) + n) % n; }

}  // namespace specsim::coll
