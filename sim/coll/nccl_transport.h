// NCCL's choice of transport between two GPUs on one node: P2P or SHM (docs/reference/nccl-transports.md,
// NCCL src/graph/paths.cc ncclTopoCheckP2p).
//
// For each GPU pair with path class c (net::PathClass, ordered NV < PIX < PXB < PHB < SYS):
//   NCCL_P2P_DISABLE=1           -> SHM for every pair, NVLink included.
//   the driver gives no P2P      -> SHM (net::PeerAccessOf: the driver's PCIe P2P mode).
//   c == NVLink                  -> P2P.
//   c <= level                   -> P2P, else SHM, where level is
//     the user's NCCL_P2P_LEVEL if given, else
//     SYS for an AMD CPU with <= 2 GPUs (NCCL keeps P2P there), else
//     PXB (the default since NCCL 2.23; 2.6-2.22 used SYS on AMD hosts).
// P2P on PCIe = the sender's kernel writes into the peer's buffer: net::Mechanism::kKernelWrite.
// SHM = the sender writes host memory and the receiver reads it: net::Mechanism::kHostStaged.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/coll/schedule.h"
#include "sim/core/status.h"
#include "sim/net/routing.h"
#include "sim/net/topology.h"

namespace specsim::coll {

// "pix" | "pxb" | "phb" | "sys" (case-insensitive); otherwise InvalidArgument listing them.
StatusOr<net::PathClass> ParseP2pLevel(std::string_view level);

struct NcclTransportInput {
  // path_class[i][j]: NCCL's path class between GPU i and GPU j (the diagonal is ignored).
  std::vector<std::vector<net::PathClass>> path_class;
  net::CpuVendor cpu_vendor = net::CpuVendor::kUnknown;
  std::optional<net::PathClass> p2p_level;  // NCCL_P2P_LEVEL, if the user set it
  bool p2p_disable = false;                 // NCCL_P2P_DISABLE=1
  // p2p_possible[i][j]: the driver gives GPU i a P2P mapping of GPU j (NVML P2P status OK,
  // cudaDeviceCanAccessPeer; net::PeerAccessOf writes != kNone). Empty: every pair. A pair without
  // it uses SHM whatever the level (nccl-transports.md, ncclTopoCheckP2p).
  std::vector<std::vector<bool>> p2p_possible;
};

struct NcclTransportChoice {
  MechanismMatrix mechanism;                    // [src][dst]: kKernelWrite (P2P) or kHostStaged (SHM)
  net::PathClass level = net::PathClass::kPxb;  // the effective P2P level
  int p2p_pairs = 0;                            // ordered pairs (i != j) using P2P
  int shm_pairs = 0;                            // ordered pairs using SHM
  // e.g. "P2P level PXB (NCCL >= 2.23 default); 48 pairs P2P, 8 pairs SHM (SYS > PXB)".
  std::string reason;
};

// InvalidArgument if path_class is not square. Number of GPUs = path_class.size().
StatusOr<NcclTransportChoice> ChooseNcclTransport(const NcclTransportInput& input);

}  // namespace specsim::coll
