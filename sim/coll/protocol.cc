#include "sim/coll/protocol.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

#include "sim/core/strings.h"

namespace specsim::coll {
namespace {

SimTime PicosFromMicrosRounded(double us) { return static_cast<SimTime>(std::llround(us * 1e6)); }

int ProtoIndex(NcclProto p) { return p == NcclProto::kLl ? 0 : p == NcclProto::kLl128 ? 1 : 2; }

}  // namespace

const char* NcclProtoName(NcclProto p) {
  switch (p) {
    case NcclProto::kLl: return "ll";
    case NcclProto::kLl128: return "ll128";
    case NcclProto::kSimple: return "simple";
  }
  return "?";
}

const char* NcclAlgoName(NcclAlgo a) { return a == NcclAlgo::kRing ? "ring" : "tree"; }

const char* NcclTransportName(NcclTransport t) {
  switch (t) {
    case NcclTransport::kP2pNvLink: return "p2p_nvlink";
    case NcclTransport::kP2pPcie: return "p2p_pcie";
    case NcclTransport::kShm: return "shm";
  }
  return "?";
}

StatusOr<NcclProto> ParseNcclProto(std::string_view name) {
  const std::string s = AsciiLower(name);
  for (NcclProto p : {NcclProto::kLl, NcclProto::kLl128, NcclProto::kSimple})
    if (s == NcclProtoName(p)) return p;
  return InvalidArgumentError("protocol \"" + std::string(name) + "\": allowed values are ll, ll128, simple");
}

StatusOr<NcclAlgo> ParseNcclAlgo(std::string_view name) {
  const std::string s = AsciiLower(name);
  if (s == "ring") return NcclAlgo::kRing;
  if (s == "tree") return NcclAlgo::kTree;
  return InvalidArgumentError("algorithm \"" + std::string(name) + "\": allowed values are ring, tree");
}

StatusOr<NcclTransport> ParseNcclTransport(std::string_view name) {
  const std::string s = AsciiLower(name);
  for (NcclTransport t : {NcclTransport::kP2pNvLink, NcclTransport::kP2pPcie, NcclTransport::kShm})
    if (s == NcclTransportName(t)) return t;
  return InvalidArgumentError("transport \"" + std::string(name) + "\": allowed values are p2p_nvlink, p2p_pcie, shm");
}

double NcclBaseLatencyUs(NcclAlgo algo, NcclProto proto) {
  // tuning.cc baseLat[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS]: Tree {6.8, 14.0, 8.4},
  // Ring {6.6, 14.0, 8.4} (LL, LL128, Simple).
  static constexpr double kRing[3] = {6.6, 14.0, 8.4};
  static constexpr double kTree[3] = {6.8, 14.0, 8.4};
  return (algo == NcclAlgo::kRing ? kRing : kTree)[ProtoIndex(proto)];
}

double NcclHopLatencyUs(NcclHw hw, NcclAlgo algo, NcclProto proto) {
  // tuning.cc hwLat[NCCL_HW_NVLINK]: Tree {.6, 1.25, 4}, Ring {.6, 1.9, 3.4};
  //           hwLat[NCCL_HW_PCI]:    Tree {1.0, 1.9, 4}, Ring {1.0, 2.5, 5.7}.
  static constexpr double kNvRing[3] = {0.6, 1.9, 3.4};
  static constexpr double kNvTree[3] = {0.6, 1.25, 4.0};
  static constexpr double kPciRing[3] = {1.0, 2.5, 5.7};
  static constexpr double kPciTree[3] = {1.0, 1.9, 4.0};
  const bool ring = algo == NcclAlgo::kRing;
  const double* row = hw == NcclHw::kNvLink ? (ring ? kNvRing : kNvTree) : (ring ? kPciRing : kPciTree);
  return row[ProtoIndex(proto)];
}

NcclHw NcclHwOf(NcclTransport transport) {
  return transport == NcclTransport::kP2pNvLink ? NcclHw::kNvLink : NcclHw::kPci;
}

ProtocolModel NcclProtocolModel(NcclProto proto, NcclAlgo algo, NcclHw hw) {
  ProtocolModel m;
  m.name = NcclProtoName(proto);
  m.wire_efficiency = proto == NcclProto::kLl ? 0.5 : proto == NcclProto::kLl128 ? 120.0 / 128.0 : 1.0;
  m.hop_latency_ps = PicosFromMicrosRounded(NcclHopLatencyUs(hw, algo, proto));
  m.base_latency_ps = PicosFromMicrosRounded(NcclBaseLatencyUs(algo, proto));
  m.slot_payload_bytes = proto == NcclProto::kLl      ? kNcclLlSlotPayloadBytes
                         : proto == NcclProto::kLl128 ? kNcclLl128SlotPayloadBytes
                                                      : kNcclSimpleSlotPayloadBytes;
  m.slots = kNcclSteps;
  return m;
}

ProtocolModel IdealProtocol() {
  ProtocolModel m;
  m.name = "ideal";
  m.slot_payload_bytes = std::numeric_limits<int64_t>::max();
  return m;
}

ProtocolModel ApplyProtocolOverrides(ProtocolModel model, NcclProto proto, NcclTransport transport,
                                     const ProtocolOverrides& o, int op) {
  auto apply = [&model](const ProtocolCost& c) {
    if (c.base_latency_us) model.base_latency_ps = PicosFromMicros(*c.base_latency_us);
    if (c.hop_latency_us) model.hop_latency_ps = PicosFromMicros(*c.hop_latency_us);
    if (c.channel_gbps) model.channel_payload_gbps = *c.channel_gbps;
    if (c.wire_efficiency) model.wire_efficiency = *c.wire_efficiency;
  };
  if (auto it = o.per_transport.find({transport, proto}); it != o.per_transport.end()) apply(it->second);
  if (op >= 0)
    if (auto it = o.per_op.find({transport, proto, op}); it != o.per_op.end()) apply(it->second);
  return model;
}

}  // namespace specsim::coll
