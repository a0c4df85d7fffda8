// NCCL protocols as the schedule builders use them, and NCCL's latency tables.
//
// A protocol turns into three things in a schedule:
//   wire_efficiency     payload share of the bytes on the wire: the fabric moves bytes / efficiency.
//                       LL sends 16-byte lines of 8 data + 8 flag bytes (0.5); Simple sends bulk
//                       data plus a flag per step (1.0).
//   hop_latency_ps      every transfer (one ring/tree step of one chunk) takes at least this long:
//                       NCCL's per-hop latency hwLat[hw][algo][proto].
//   base_latency_ps     once per collective (a kDelay per rank at the start): NCCL's baseLat.
// and two buffer parameters that set the chunking: each connection has `slots` (NCCL_STEPS = 8)
// buffers of `slot_payload_bytes` payload, so a step's block is sent in chunks of at most one
// slot, and at most `slots` chunks are in flight on a connection.
//
// Latencies are NCCL 2.30.7 src/graph/tuning.cc (baseLat, hwLat[NCCL_HW_PCI / NCCL_HW_NVLINK]),
// unchanged for Ring PCI since 2.16 (reference.md section 2):
//   base Ring/Tree (us): LL 6.6/6.8, Simple 8.4/8.4
//   PCI hop Ring/Tree:   LL 1.0/1.0, Simple 5.7/4.0
//   NVLink hop R/T:      LL 0.6/0.6, Simple 3.4/4.0
// LL128 is not modelled: NCCL disables it on PCIe-only nodes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sim/core/status.h"
#include "sim/core/time.h"

namespace specsim::coll {

enum class NcclProto { kLl, kSimple };
enum class NcclAlgo { kRing, kTree };
enum class NcclHw { kPci, kNvLink };  // NCCL_HW_PCI / NCCL_HW_NVLINK: the ring's link type

const char* NcclProtoName(NcclProto p);  // "ll", "simple"
const char* NcclAlgoName(NcclAlgo a);    // "ring", "tree"

// "ll" | "simple" (case-insensitive); otherwise InvalidArgument listing the allowed values.
StatusOr<NcclProto> ParseNcclProto(std::string_view name);
// "ring" | "tree" (case-insensitive); otherwise InvalidArgument listing the allowed values.
StatusOr<NcclAlgo> ParseNcclAlgo(std::string_view name);

// NCCL's baseLat[algo][proto], microseconds.
double NcclBaseLatencyUs(NcclAlgo algo, NcclProto proto);
// NCCL's hwLat[hw][algo][proto], microseconds per hop.
double NcclHopLatencyUs(NcclHw hw, NcclAlgo algo, NcclProto proto);

// NCCL buffer sizes (src/include/device.h, src/init.cc):
//   NCCL_STEPS = 8 slots per connection.
//   Simple: DEFAULT_BUFFSIZE = 1 << 22 = 4 MiB per connection -> 4 MiB / 8 = 512 KiB per slot.
//     (NCCL moves ALLREDUCE_CHUNKSTEPS slots per primitive call; we model one slot per chunk.)
//   LL: DEFAULT_LL_BUFFSIZE = NCCL_LL_LINES_PER_THREAD (8) * NCCL_LL_MAX_NTHREADS (512) *
//     NCCL_STEPS (8) * sizeof(ncclLLFifoLine) (16) = 512 KiB of wire -> 64 KiB per slot, half of
//     it payload: 32 KiB per slot.
inline constexpr int kNcclSteps = 8;
inline constexpr int64_t kNcclSimpleBufferBytes = int64_t{1} << 22;
inline constexpr int64_t kNcclLlBufferBytes = int64_t{8} * 512 * kNcclSteps * 16;
inline constexpr int64_t kNcclSimpleSlotPayloadBytes = kNcclSimpleBufferBytes / kNcclSteps;
inline constexpr int64_t kNcclLlSlotPayloadBytes = kNcclLlBufferBytes / kNcclSteps / 2;

struct ProtocolModel {
  std::string name;               // "ll", "simple", "ideal"
  double wire_efficiency = 1.0;   // payload / wire bytes, (0, 1]
  SimTime hop_latency_ps = 0;     // floor of every transfer (one step of one chunk)
  SimTime base_latency_ps = 0;    // once per collective, per rank
  int64_t slot_payload_bytes = 0; // payload per connection slot: the largest chunk
  int slots = kNcclSteps;         // buffers per connection: chunks in flight
};

// NCCL's protocol `proto` for algorithm `algo` on links of type `hw`.
ProtocolModel NcclProtocolModel(NcclProto proto, NcclAlgo algo = NcclAlgo::kRing,
                                NcclHw hw = NcclHw::kPci);
// Efficiency 1, zero latencies, one chunk per step however large: the textbook alpha-beta ring.
ProtocolModel IdealProtocol();

// Measured replacements for NCCL's tuning-table values (a calibration's `nccl` block). Unset
// fields keep NCCL's values. They apply to ring and tree alike: one measured per-step cost per
// protocol, since the one-node tree is a chain of the same steps.
struct ProtocolOverrides {
  std::optional<double> base_latency_ll_us, base_latency_simple_us;
  std::optional<double> hop_latency_ll_us, hop_latency_simple_us;
  std::optional<double> ll_wire_efficiency;
  bool empty() const {
    return !base_latency_ll_us && !base_latency_simple_us && !hop_latency_ll_us && !hop_latency_simple_us &&
           !ll_wire_efficiency;
  }
};

// `model` (NCCL's `proto`) with the overrides that concern that protocol applied.
ProtocolModel ApplyProtocolOverrides(ProtocolModel model, NcclProto proto, const ProtocolOverrides& overrides);

}  // namespace specsim::coll
