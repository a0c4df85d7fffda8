#include "sim/net/peer_access.h"

#include <cstdlib>
#include <string>

#include "sim/core/strings.h"

namespace specsim::net {

const char* DriverP2pModeName(DriverP2pMode mode) {
  switch (mode) {
    case DriverP2pMode::kDriverDefault: return "driver default";
    case DriverP2pMode::kBar1Forced: return "BAR1 forced";
    case DriverP2pMode::kNoPcieP2p: return "no PCIe P2P";
  }
  return "?";
}

StatusOr<DriverP2pMode> ParseDriverP2pMode(std::string_view name) {
  const std::string n = AsciiLower(name);
  if (n == "default") return DriverP2pMode::kDriverDefault;
  if (n == "bar1") return DriverP2pMode::kBar1Forced;
  if (n == "none") return DriverP2pMode::kNoPcieP2p;
  return InvalidArgumentError("driver P2P mode '" + std::string(name) +
                              "': allowed values are default (the driver's own: mailbox P2P), bar1 (BAR1 P2P "
                              "forced by module parameter), none (no PCIe P2P)");
}

bool Bar1P2pSupported(std::string_view arch) {
  if (arch.size() < 3 || AsciiLower(arch.substr(0, 2)) != "sm") return false;
  const std::string digits(arch.substr(2));
  char* end = nullptr;
  const long cc = std::strtol(digits.c_str(), &end, 10);
  if (end == digits.c_str()) return false;
  return cc >= 90;
}

PeerAccess PeerAccessOf(const Router& router, int gpu_a, int gpu_b, DriverP2pMode mode) {
  const PathClass path = router.GpuPathClass(gpu_a, gpu_b);
  if (path == PathClass::kNvLink) return {PeerPath::kDirect, PeerPath::kDirect};
  switch (mode) {
    case DriverP2pMode::kBar1Forced: return {PeerPath::kDirect, PeerPath::kDirect};
    case DriverP2pMode::kNoPcieP2p: return {PeerPath::kNone, PeerPath::kNone};
    case DriverP2pMode::kDriverDefault: break;
  }
  const bool meet_at_cpu = path == PathClass::kPhb || path == PathClass::kSys;
  return {PeerPath::kDirect, meet_at_cpu ? PeerPath::kStagedThroughHost : PeerPath::kDirect};
}

std::string Bar1ModuleParameter() { return "NVreg_RegistryDwords=\"RMPcieP2PType=1\""; }

}  // namespace specsim::net
