// What a GPU's kernels get when they touch a peer GPU's memory over PCIe, from the NVIDIA driver's
// PCIe P2P mode (Topology::driver_p2p_mode, hardware.proto DriverP2pMode) and where the two GPUs
// meet (their path class): the path of peer writes (NCCL's P2P transport stores into the peer's
// buffer) and of peer reads (the custom allreduce's pulls). docs/reference/peer-access.md.
//
//   NVLink pair                        reads and writes GPU to GPU, whatever the mode
//   BAR1 forced                        reads and writes GPU to GPU on every PCIe pair
//   driver default, meet at a switch   reads and writes GPU to GPU (PIX / PXB)
//   driver default, meet at a CPU      writes GPU to GPU; reads staged through system memory
//                                      (PHB / SYS) [UNVERIFIED: community reports]
//   no PCIe P2P                        neither: no peer mappings on PCIe pairs
#pragma once

#include <string>
#include <string_view>

#include "sim/core/status.h"
#include "sim/net/routing.h"
#include "sim/net/topology.h"

namespace specsim::net {

enum class PeerPath {
  kDirect,             // GPU to GPU (NVLink or PCIe)
  kStagedThroughHost,  // the access goes through system memory (the GPU's host link twice)
  kNone,               // no peer mapping: the kernel cannot touch the peer's memory
};

struct PeerAccess {
  PeerPath writes = PeerPath::kDirect;
  PeerPath reads = PeerPath::kDirect;
};

// "driver default", "BAR1 forced", "no PCIe P2P".
const char* DriverP2pModeName(DriverP2pMode mode);
// "default" | "bar1" | "none" (case-insensitive, as scenario.proto communication.driver_p2p_mode
// takes them); InvalidArgument naming the allowed values otherwise.
StatusOr<DriverP2pMode> ParseDriverP2pMode(std::string_view name);

// Whether a GPU of this compute capability ("sm90", "sm120") can use BAR1 P2P: the driver's BAR1
// P2P mapping check exists for GH100, GB10x, GB11x and GB20x (sm90 and later) and is a stub that
// returns false for every older chip (open-gpu-kernel-modules 595.45.04, kern_bus_gh100.c;
// peer-access.md). False for an arch string it cannot read.
bool Bar1P2pSupported(std::string_view arch);

// The access between GPU a and GPU b (GPU indices) under `mode`. REQUIRES: a != b, both valid.
PeerAccess PeerAccessOf(const Router& router, int gpu_a, int gpu_b, DriverP2pMode mode);

// The registry setting that forces BAR1 P2P, for advice: NVreg_RegistryDwords="RMPcieP2PType=1".
std::string Bar1ModuleParameter();

}  // namespace specsim::net
