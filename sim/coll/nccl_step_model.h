// NCCL's per-step and per-call latency from the mechanism of the path a step takes, the transport
// model that replaces NCCL's tuning table as a time (the table still chooses: nccl_tuning.h).
//
// A ring or tree step of one small chunk from GPU s to GPU d costs
//     LL:      hop = notify_lines(path) + step_work[LL]
//     Simple:  hop = notify_flag(path) + fetch(path) + step_work[Simple]
// and a collective pays base[protocol] once (kernel start and exit, NCCL's own set-up), where the
// path terms come from the box's topology (one-way route latencies, net::Router) and the transport:
//   P2P (NVLink or PCIe)  the sender's stores land in the receiver's buffer; the receiver polls its
//                         own memory: notify_lines = notify_flag = route(s -> d), fetch = 0
//   SHM (host memory)     the sender's stores land in host memory (the receiver's socket, as the
//                         fabric stages them) and the receiver polls them there with reads:
//                           LL's threads poll every line, reads always in flight: a line returns
//                           one way after it lands, notify_lines = route(s -> mem) + route(mem -> d);
//                           Simple's flag has one polling thread: a read round trip after it lands,
//                           notify_flag = route(s -> mem) + 2 route(mem -> d); then Simple reads the
//                           data where it lies, fetch = 2 route(mem -> d).
// LL carries its flag in every 16-byte line (no fetch); Simple writes the data, fences, writes a
// flag, and the receiver then reads the data. Checked against the one mechanism measured directly:
// a flag's one-way trip through host memory on an H200 is 2.34 us
// (traces/h200-1x-host-staged-2026-12-03-b.json, half the 4.67 us round trip, one polling thread),
// where the H200 box's topology gives notify_flag(SHM) = 775 + 2 * 775 ns = 2.325 us.
//
// step_work and base are the protocol's, the same on every transport: fitted on the 2x H200's NCCL
// items of up to 16 KiB (NVLink and, with NCCL_P2P_DISABLE=1, SHM), the transport calibration below
// (DefaultNcclStepWork). The transfer check (scripts/nccl-transport-transfer.sh, docs/calibration.md) fits them on
// one transport and predicts the other; the spread of those transfers is the range an uncalibrated
// box prints. A box's own calibration (its `nccl.protocols`) replaces them per transport.
//
// Simplifications, stated: a step's chunk is small (the bandwidth part is the fabric's, without a
// channel cap unless calibrated); the hop is a floor under the fabric's own transfer of the chunk;
// the fence before Simple's flag is in step_work, not priced by the path; the polls' phase is
// averaged as above; LL128 keeps NCCL's table (no LL128 measurement: LL128 runs only on NVLink, and
// none was timed).
#pragma once

#include <array>
#include <string>

#include "sim/coll/protocol.h"
#include "sim/core/status.h"
#include "sim/net/routing.h"
#include "sim/net/topology.h"

namespace specsim::coll {

// The protocol's share of the step and call costs, per NcclProto (indexed by its value); the same
// on every transport. The fit keeps step_us >= 0; a negative value given by hand is floored with
// the hop at 0.
struct NcclStepWork {
  std::array<double, 3> base_us{};  // per collective: kernel start and exit, set-up
  std::array<double, 3> step_us{};  // per step, beyond the path's notify (+ fetch)
  // Where the values came from, e.g. "fitted on h200-2x NVLink+SHM (traces/h200-2x-*-2026-11-30)".
  std::string source;
  // The spread of the transfer check: measured / predicted on the transport not fitted ranged over
  // [range_low, range_high]; an uncalibrated prediction prints that range around itself.
  double range_low = 1, range_high = 1;
};

// The transport calibration shipped with specsim (see the header comment and its source field).
NcclStepWork DefaultNcclStepWork();

// The path's part of a step from GPU src_gpu to GPU dst_gpu (GPU indices) on `transport`, us.
struct NcclPathTimes {
  double notify_lines_us = 0;  // LL: a line seen by the receiver's threads polling every line
  double notify_flag_us = 0;   // Simple: a flag seen by one polling thread
  double fetch_us = 0;         // Simple: the receiver's read of the data where it lies
};
// InvalidArgument when SHM is asked and the receiver's socket has no HOST_MEMORY node, or when a
// GPU index is out of range.
StatusOr<NcclPathTimes> NcclStepPathTimes(const net::Topology& topology, const net::Router& router, int src_gpu,
                                          int dst_gpu, NcclTransport transport);

// hop = max(0, notify + [Simple] fetch + step_work), us.
double NcclStepHopUs(NcclProto proto, const NcclPathTimes& path, const NcclStepWork& work);
// base[proto], us (>= 0).
double NcclStepBaseUs(NcclProto proto, const NcclStepWork& work);
// Whether the transport model prices `proto` (LL and Simple; LL128 keeps NCCL's table).
bool NcclStepModelCovers(NcclProto proto);

}  // namespace specsim::coll
