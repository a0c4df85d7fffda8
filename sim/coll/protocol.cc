#include "sim/coll/protocol.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

namespace specsim::coll {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

SimTime PicosFromMicrosRounded(double us) { return static_cast<SimTime>(std::llround(us * 1e6)); }

}  // namespace

const char* NcclProtoName(NcclProto p) { return p == NcclProto::kLl ? "ll" : "simple"; }
const char* NcclAlgoName(NcclAlgo a) { return a == NcclAlgo::kRing ? "ring" : "tree"; }

StatusOr<NcclProto> ParseNcclProto(std::string_view name) {
  const std::string s = Lower(name);
  if (s == "ll") return NcclProto::kLl;
  if (s == "simple") return NcclProto::kSimple;
  return InvalidArgumentError("protocol \"" + std::string(name) +
                              "\": allowed values are ll, simple (LL128 is disabled on PCIe)");
}

StatusOr<NcclAlgo> ParseNcclAlgo(std::string_view name) {
  const std::string s = Lower(name);
  if (s == "ring") return NcclAlgo::kRing;
  if (s == "tree") return NcclAlgo::kTree;
  return InvalidArgumentError("algorithm \"" + std::string(name) + "\": allowed values are ring, tree");
}

double NcclBaseLatencyUs(NcclAlgo algo, NcclProto proto) {
  // tuning.cc baseLat[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS]: Tree {6.8, 14.0, 8.4},
  // Ring {6.6, 14.0, 8.4} (LL, LL128, Simple).
  if (algo == NcclAlgo::kRing) return proto == NcclProto::kLl ? 6.6 : 8.4;
  return proto == NcclProto::kLl ? 6.8 : 8.4;
}

double NcclHopLatencyUs(NcclHw hw, NcclAlgo algo, NcclProto proto) {
  // tuning.cc hwLat[NCCL_HW_NVLINK]: Tree {.6, 1.25, 4}, Ring {.6, 1.9, 3.4};
  //           hwLat[NCCL_HW_PCI]:    Tree {1.0, 1.9, 4}, Ring {1.0, 2.5, 5.7}.
  const bool ll = proto == NcclProto::kLl;
  if (hw == NcclHw::kNvLink) {
    if (algo == NcclAlgo::kRing) return ll ? 0.6 : 3.4;
    return ll ? 0.6 : 4.0;
  }
  if (algo == NcclAlgo::kRing) return ll ? 1.0 : 5.7;
  return ll ? 1.0 : 4.0;
}

ProtocolModel NcclProtocolModel(NcclProto proto, NcclAlgo algo, NcclHw hw) {
  ProtocolModel m;
  m.name = NcclProtoName(proto);
  m.wire_efficiency = proto == NcclProto::kLl ? 0.5 : 1.0;
  m.hop_latency_ps = PicosFromMicrosRounded(NcclHopLatencyUs(hw, algo, proto));
  m.base_latency_ps = PicosFromMicrosRounded(NcclBaseLatencyUs(algo, proto));
  m.slot_payload_bytes =
      proto == NcclProto::kLl ? kNcclLlSlotPayloadBytes : kNcclSimpleSlotPayloadBytes;
  m.slots = kNcclSteps;
  return m;
}

ProtocolModel IdealProtocol() {
  ProtocolModel m;
  m.name = "ideal";
  m.slot_payload_bytes = std::numeric_limits<int64_t>::max();
  return m;
}

ProtocolModel ApplyProtocolOverrides(ProtocolModel model, NcclProto proto, const ProtocolOverrides& o) {
  const bool ll = proto == NcclProto::kLl;
  const std::optional<double>& base = ll ? o.base_latency_ll_us : o.base_latency_simple_us;
  const std::optional<double>& hop = ll ? o.hop_latency_ll_us : o.hop_latency_simple_us;
  if (base) model.base_latency_ps = PicosFromMicros(*base);
  if (hop) model.hop_latency_ps = PicosFromMicros(*hop);
  if (ll && o.ll_wire_efficiency) model.wire_efficiency = *o.ll_wire_efficiency;
  return model;
}

}  // namespace specsim::coll
