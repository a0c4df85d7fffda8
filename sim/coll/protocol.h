// NCCL protocols as the schedule builders use them, NCCL's latency tables, and the transports whose
// measured per-step costs replace them.
//
// A protocol turns into four things in a schedule:
//   wire_efficiency     payload share of the bytes on the wire: the fabric moves bytes / efficiency.
//                       LL sends 16-byte lines of 8 data + 8 flag bytes (0.5); LL128 128-byte lines
//                       of 120 data + 8 flag bytes (120/128); Simple bulk data plus a flag per step (1).
//   hop_latency_ps      every transfer (one ring/tree step of one chunk) takes at least this long:
//                       NCCL's per-hop latency hwLat[hw][algo][proto].
//   base_latency_ps     once per collective (a kDelay per rank at the start): NCCL's baseLat.
//   channel_payload_gbps  the most one channel moves per direction (0: no cap). A channel is one CUDA
//                       block that copies (and reduces) every byte it sends or receives; its rate is
//                       bounded by the block's own load/store throughput, and through host memory
//                       (SHM) by its reads' round trips. Not in NCCL's tables: measured (calibration).
// and two buffer parameters that set the chunking: each connection has `slots` (NCCL_STEPS = 8)
// buffers of `slot_payload_bytes` payload, so a step's block is sent in chunks of at most one
// slot, and at most `slots` chunks are in flight on a connection.
//
// Latencies are NCCL src/graph/tuning.cc (baseLat, hwLat[NCCL_HW_PCI / NCCL_HW_NVLINK]), the same
// in 2.28.3 (the calibration box's NCCL) and 2.30.7 (docs/reference/nccl-cost-model.md):
//   base Ring/Tree (us): LL 6.6/6.8, LL128 14.0/14.0, Simple 8.4/8.4
//   PCI hop Ring/Tree:   LL 1.0/1.0, LL128 2.5/1.9,   Simple 5.7/4.0
//   NVLink hop R/T:      LL 0.6/0.6, LL128 1.9/1.25,  Simple 3.4/4.0
// NCCL enables LL128 only where the ring's paths are NVLink (tuning.cc: typeIntra <= PATH_NVB).
//
// Transports (docs/reference/nccl-transports.md): P2P over NVLink, P2P over PCIe (the sender's kernel writes
// the peer's buffer) and SHM (through host memory). A step's cost depends on the transport and the
// protocol, so measured costs (a calibration's `nccl.protocols`) are kept per (transport, protocol).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "sim/core/status.h"
#include "sim/core/time.h"

namespace specsim::coll {

enum class NcclProto { kLl, kLl128, kSimple };
enum class NcclAlgo { kRing, kTree };
enum class NcclHw { kPci, kNvLink };  // NCCL_HW_PCI / NCCL_HW_NVLINK: the ring's link type
enum class NcclTransport { kP2pNvLink, kP2pPcie, kShm };
// The number of NcclTransport values (they run 0..kNcclTransports-1): for tables per transport.
inline constexpr int kNcclTransports = static_cast<int>(NcclTransport::kShm) + 1;

const char* NcclProtoName(NcclProto p);          // "ll", "ll128", "simple"
const char* NcclAlgoName(NcclAlgo a);            // "ring", "tree"
const char* NcclTransportName(NcclTransport t);  // "p2p_nvlink", "p2p_pcie", "shm"

// "ll" | "ll128" | "simple" (case-insensitive); otherwise InvalidArgument listing the allowed values.
StatusOr<NcclProto> ParseNcclProto(std::string_view name);
// "ring" | "tree" (case-insensitive); otherwise InvalidArgument listing the allowed values.
StatusOr<NcclAlgo> ParseNcclAlgo(std::string_view name);
// "p2p_nvlink" | "p2p_pcie" | "shm"; otherwise InvalidArgument listing the allowed values.
StatusOr<NcclTransport> ParseNcclTransport(std::string_view name);

// NCCL's baseLat[algo][proto], microseconds.
double NcclBaseLatencyUs(NcclAlgo algo, NcclProto proto);
// NCCL's hwLat[hw][algo][proto], microseconds per hop.
double NcclHopLatencyUs(NcclHw hw, NcclAlgo algo, NcclProto proto);
// The hardware row NCCL's table uses for a transport: NVLink for P2P over NVLink, else PCI.
NcclHw NcclHwOf(NcclTransport transport);

// NCCL buffer sizes (src/include/device.h, src/init.cc):
//   NCCL_STEPS = 8 slots per connection.
//   Simple: DEFAULT_BUFFSIZE = 1 << 22 = 4 MiB per connection -> 4 MiB / 8 = 512 KiB per slot.
//     (NCCL moves ALLREDUCE_CHUNKSTEPS slots per primitive call; we model one slot per chunk.)
//   LL: DEFAULT_LL_BUFFSIZE = NCCL_LL_LINES_PER_THREAD (8) * NCCL_LL_MAX_NTHREADS (512) *
//     NCCL_STEPS (8) * sizeof(ncclLLFifoLine) (16) = 512 KiB of wire -> 64 KiB per slot, half of
//     it payload: 32 KiB per slot.
//   LL128: DEFAULT_LL128_BUFFSIZE = NCCL_LL128_ELEMS_PER_THREAD (120) * NCCL_LL128_MAX_NTHREADS (640)
//     * NCCL_STEPS * sizeof(uint64_t) = 4,915,200 bytes of wire -> 614,400 per slot, 120/128 of it
//     payload: 576,000 per slot.
inline constexpr int kNcclSteps = 8;
inline constexpr int64_t kNcclSimpleBufferBytes = int64_t{1} << 22;
inline constexpr int64_t kNcclLlBufferBytes = int64_t{8} * 512 * kNcclSteps * 16;
inline constexpr int64_t kNcclLl128BufferBytes = int64_t{120} * 640 * kNcclSteps * 8;
inline constexpr int64_t kNcclSimpleSlotPayloadBytes = kNcclSimpleBufferBytes / kNcclSteps;
inline constexpr int64_t kNcclLlSlotPayloadBytes = kNcclLlBufferBytes / kNcclSteps / 2;
inline constexpr int64_t kNcclLl128SlotPayloadBytes = kNcclLl128BufferBytes / kNcclSteps / 128 * 120;

struct ProtocolModel {
  std::string name;                 // "ll", "ll128", "simple", "ideal"
  double wire_efficiency = 1.0;     // payload / wire bytes, (0, 1]
  SimTime hop_latency_ps = 0;       // floor of every transfer (one step of one chunk)
  SimTime base_latency_ps = 0;      // once per collective, per rank
  double channel_payload_gbps = 0;  // per channel and direction; 0 = no cap
  int64_t slot_payload_bytes = 0;   // payload per connection slot: the largest chunk
  int slots = kNcclSteps;           // buffers per connection: chunks in flight
};

// NCCL's protocol `proto` for algorithm `algo` on links of type `hw` (no channel cap).
ProtocolModel NcclProtocolModel(NcclProto proto, NcclAlgo algo = NcclAlgo::kRing, NcclHw hw = NcclHw::kPci);
// Efficiency 1, zero latencies, one chunk per step however large: the textbook alpha-beta ring.
ProtocolModel IdealProtocol();

// Measured replacements for NCCL's values on one (transport, protocol); unset fields keep them.
struct ProtocolCost {
  std::optional<double> base_latency_us, hop_latency_us, channel_gbps, wire_efficiency;
  bool empty() const { return !base_latency_us && !hop_latency_us && !channel_gbps && !wire_efficiency; }
};

// A calibration's `nccl` block (sim/calib/calibration_loader.h reads it): NCCL's per-step costs per
// (transport, protocol) and, over those, per collective op.
struct ProtocolOverrides {
  std::map<std::pair<NcclTransport, NcclProto>, ProtocolCost> per_transport;
  // Per collective op (its kernel: reduce or copy), over the per-transport entries. The key's int
  // is a Collective (schedule.h) value.
  std::map<std::tuple<NcclTransport, NcclProto, int>, ProtocolCost> per_op;
  bool empty() const {
    bool none = true;
    for (const auto& [key, cost] : per_transport) none = none && cost.empty();
    for (const auto& [key, cost] : per_op) none = none && cost.empty();
    return none;
  }
};

// `model` (NCCL's `proto` on `transport`) with the overrides that concern it applied: the
// transport's entry, then the transport's entry for `op` (a Collective value; -1: none).
ProtocolModel ApplyProtocolOverrides(ProtocolModel model, NcclProto proto, NcclTransport transport,
                                     const ProtocolOverrides& overrides, int op = -1);

}  // namespace specsim::coll
