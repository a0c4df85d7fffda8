#include "sim/coll/nccl_transport.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "sim/core/strings.h"

namespace specsim::coll {

StatusOr<net::PathClass> ParseP2pLevel(std::string_view level) {
  const std::string s = AsciiLower(level);
  if (s == "pix") return net::PathClass::kPix;
  if (s == "pxb") return net::PathClass::kPxb;
  if (s == "phb") return net::PathClass::kPhb;
  if (s == "sys") return net::PathClass::kSys;
  return InvalidArgumentError("NCCL_P2P_LEVEL \"" + std::string(level) + "\": allowed values are pix, pxb, phb, sys");
}

StatusOr<NcclTransportChoice> ChooseNcclTransport(const NcclTransportInput& input) {
  const int n = static_cast<int>(input.path_class.size());
  for (int i = 0; i < n; ++i) {
    if (static_cast<int>(input.path_class[i].size()) != n) {
      return InvalidArgumentError("path_class row " + std::to_string(i) + " has " +
                                  std::to_string(input.path_class[i].size()) + " entries: must be " +
                                  std::to_string(n));
    }
  }
  NcclTransportChoice out;
  std::string why;
  if (input.p2p_level) {
    out.level = *input.p2p_level;
    why = std::string("P2P level ") + net::PathClassName(out.level) + " (NCCL_P2P_LEVEL)";
  } else if (input.cpu_vendor == net::CpuVendor::kAmd && n <= 2) {
    out.level = net::PathClass::kSys;
    why = "P2P level SYS (AMD CPU with <= 2 GPUs)";
  } else {
    out.level = net::PathClass::kPxb;
    why = "P2P level PXB (NCCL >= 2.23 default)";
  }
  if (input.p2p_disable) why = "NCCL_P2P_DISABLE=1: SHM everywhere";

  out.mechanism.assign(n, std::vector<net::Mechanism>(n, net::Mechanism::kKernelWrite));
  if (!input.p2p_possible.empty() && static_cast<int>(input.p2p_possible.size()) != n)
    return InvalidArgumentError("p2p_possible has " + std::to_string(input.p2p_possible.size()) + " rows: must be " +
                                std::to_string(n) + " or none");
  std::map<net::PathClass, int> shm_by_class;
  int no_driver_p2p = 0;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      if (i == j) continue;
      const net::PathClass c = input.path_class[i][j];
      const bool possible = input.p2p_possible.empty() || input.p2p_possible[i].at(j);
      const bool by_level = c == net::PathClass::kNvLink || static_cast<int>(c) <= static_cast<int>(out.level);
      const bool p2p = !input.p2p_disable && possible && by_level;
      out.mechanism[i][j] = p2p ? net::Mechanism::kKernelWrite : net::Mechanism::kHostStaged;
      if (p2p) {
        ++out.p2p_pairs;
      } else if (!input.p2p_disable && !possible) {
        ++out.shm_pairs;
        ++no_driver_p2p;
      } else {
        ++out.shm_pairs;
        ++shm_by_class[c];
      }
    }
  }
  out.reason =
      why + "; " + std::to_string(out.p2p_pairs) + " pairs P2P, " + std::to_string(out.shm_pairs) + " pairs SHM";
  if (!input.p2p_disable && !shm_by_class.empty()) {
    out.reason += " (";
    bool first = true;
    for (const auto& [c, count] : shm_by_class) {
      out.reason += std::string(first ? "" : ", ") + std::to_string(count) + " " + net::PathClassName(c) + " > " +
                    net::PathClassName(out.level);
      first = false;
    }
    out.reason += ")";
  }
  if (no_driver_p2p > 0)
    out.reason += "; " + std::to_string(no_driver_p2p) + " pairs SHM: the driver gives them no PCIe P2P";
  return out;
}

}  // namespace specsim::coll
