// A collective algorithm as data: a DAG of transfers, local reductions and fixed delays between
// ranks, built without the simulator (see the builders in ring.h, tree.h, custom_allreduce.h, ...)
// and run on the fabric by executor.h. Because a schedule is plain data, its invariants (bytes per
// rank, every contribution reaching every output, no data races) are checked directly by
// schedule_check.h.
//
// Data model used by the checker. Each rank has two buffers, kIn and kOut, each cut into
// `num_segments` equal segments, and two exchange buffers that custom allreduce kernels stage data
// in (kStage: a copy of the input peers read; kStageOut: a reduced slice peers read), which start
// empty. The content of a segment is the set of ranks whose contribution
// it holds (a bit mask). The output buffer starts as a copy of the input (NCCL runs collectives
// in place; the local copy of an out-of-place call is not modelled). An op's effect on
// [segment_begin, segment_end):
//   kCopy    dst_buffer := src_buffer            (all-gather, broadcast)
//   kReduce  dst_buffer := dst_buffer + src_buffer, where both must be disjoint sets (a rank's
//            contribution counted twice is a bug)
//   kNone    no data (barrier flags, protocol handshakes)
// A kReduce op marked `unordered_reduce` accumulates commutatively: several such ops into the same
// destination segment may run concurrently (a kernel that sums several peers in registers and
// stores once, as the one-shot custom allreduce does); they are still ordered against every other
// access to that segment.
// For a transfer the source is src_rank's buffer and the destination dst_rank's; for a kLocal op
// both are on `dst_rank`. A transfer whose `host_end` is kSrc reads src_rank's buffer from host
// memory (mapped into dst_rank's GPU: the flow runs host memory -> dst_rank's GPU); kDst writes
// dst_rank's buffer in host memory (the flow runs src_rank's GPU -> host memory). Such a transfer
// may have src_rank == dst_rank (a rank staging into, or reading back, its own host buffer). Host
// buffers live in the memory of their rank's socket.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/coll/dep_list.h"
#include "sim/core/time.h"
#include "sim/net/transfer.h"

namespace specsim::coll {

enum class Collective { kAllReduce, kAllGather, kReduceScatter, kAllToAll };
// One byte each: a schedule holds an op per transfer (ScheduleOp below).
enum class OpKind : uint8_t { kTransfer, kLocal, kDelay };
enum class Buffer : uint8_t { kIn, kOut, kStage, kStageOut };
enum class HostEnd : uint8_t { kNone, kSrc, kDst };
enum class DataEffect : uint8_t { kNone, kCopy, kReduce };

const char* CollectiveName(Collective c);  // "allreduce", "allgather", "reducescatter", "alltoall"

// Mechanism per ordered GPU pair, [src][dst] (NCCL P2P: kKernelWrite, SHM: kHostStaged).
using MechanismMatrix = std::vector<std::vector<net::Mechanism>>;

// matrix[src][dst], or `fallback` when the matrix is empty. REQUIRES: an empty or n x n matrix.
net::Mechanism MechanismAt(const MechanismMatrix& matrix, int src, int dst,
                           net::Mechanism fallback = net::Mechanism::kKernelWrite);

// Share `index` of `total` bytes cut into `parts` near-equal parts (the first total % parts parts
// get one byte more), so the parts always sum to `total`.
int64_t EvenShareBytes(int64_t total, int parts, int index);

// Fields are grouped by size (one-byte kinds first, then ints, then 8-byte quantities) so an op
// packs into 128 bytes: a 256-GPU ring holds 130k of them.
struct ScheduleOp {
  OpKind kind = OpKind::kTransfer;
  Buffer src_buffer = Buffer::kOut;
  Buffer dst_buffer = Buffer::kOut;
  DataEffect effect = DataEffect::kNone;
  net::Mechanism mechanism = net::Mechanism::kKernelWrite;
  // kTransfer: which end is a buffer in host memory instead of a GPU's (see above).
  HostEnd host_end = HostEnd::kNone;
  // kReduce only: commutes with other unordered_reduce ops into the same segment (see above).
  bool unordered_reduce = false;
  // See rate_cap_gbps.
  bool rate_cap_is_measured_read_rate = false;
  int src_rank = -1;      // kTransfer: the rank whose memory is read
  int dst_rank = -1;      // kTransfer: the rank whose memory is written; kLocal/kDelay: the rank
  int segment_begin = 0;  // [segment_begin, segment_end) of the buffers
  int segment_end = 0;
  int channel = 0;
  // kTransfer: payload bytes moved. kLocal: bytes read plus written by the local kernel.
  int64_t bytes = 0;
  // kKernelRead: SMs (thread blocks) issuing the reads, for the outstanding-request cap. Fractional
  // when one kernel's blocks are shared by several concurrent pulls (blocks / pulls).
  double read_sms = 0;
  // Share of wire bytes that is payload for the protocol (NCCL LL: 0.5, Simple: 1). The fabric
  // moves bytes / wire_efficiency.
  double wire_efficiency = 1.0;
  // The op takes at least this long from its start (a protocol's per-step latency), ps.
  SimTime latency_floor_ps = 0;
  // kTransfer: the most payload GB/s this transfer moves (one NCCL channel's throughput); 0 = no cap.
  // With rate_cap_is_measured_read_rate (a kKernelRead whose cap is a rate fitted on this very
  // kernel: our custom allreduce's read_gbps_per_block), the cap replaces the fabric's a-priori
  // outstanding-request (Little's law) cap instead of adding to it.
  double rate_cap_gbps = 0;
  // kDelay: fixed duration (kernel launch, collective setup), ps.
  SimTime duration_ps = 0;
  // Indices of ops that must complete before this one starts. Always < this op's index, so the
  // op list is a topological order. Up to DepList::kInline of them live in the op (no allocation).
  DepList deps;
};
static_assert(sizeof(ScheduleOp) <= 128, "ScheduleOp grew: keep its fields grouped by size");

struct Schedule {
  Collective collective = Collective::kAllReduce;
  std::string algorithm;  // "ring", "tree", "oneshot", "twoshot", "direct"
  std::string protocol;   // "ll", "simple", "" when not applicable
  int channels = 1;
  int num_ranks = 0;
  int num_segments = 0;
  int64_t total_bytes = 0;  // the collective's size in nccl-tests' sense (the full buffer)
  std::vector<ScheduleOp> ops;

  // Appends an op and returns its index. REQUIRES: every dep < the new index.
  int Add(ScheduleOp&& op);
  int Add(const ScheduleOp& op) { return Add(ScheduleOp(op)); }
};

}  // namespace specsim::coll
