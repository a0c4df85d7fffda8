// Loading a server's hardware description (proto/specsim/hardware.proto, text format) into the
// simulator's plain net::Topology, with every input error reported as a Status.
//
// Checks (each error names the file, the field path with index (and the element's name, where it
// has one), the value and what is allowed, one line per problem):
//   numbers: every numeric field in the unit and range hardware.proto declares beside it
//     (field_ranges.h: e.g. link bandwidth 1 MB/s..100 TB/s, latencies up to a second,
//     payload_efficiency in (0, 1], at least a 16-byte load in flight per SM); a value no GPU of
//     today has is a warning (`warnings`), not an error. These come first: the checks below run
//     once every number is in range.
//   gpu_models: unique non-empty names, non-empty arch.
//   nodes: at least one GPU; unique non-empty names; kind set; GPU nodes name a defined gpu_model
//     (others leave it empty); p2p_forward_* non-zero only on CPU_ROOT_COMPLEX; at most one
//     HOST_MEMORY per socket.
//   links: endpoints exist and differ; no two links join the same pair; kind set; PCIE links
//     have pcie_gen 1..6 and pcie_lanes in {1, 2, 4, 8, 16} (other kinds leave both 0); nvlinks
//     only on NVLINK links; endpoint kinds fit the link kind (PCIE: GPU/PCIE_SWITCH/
//     CPU_ROOT_COMPLEX; NVLINK: GPU/NVSWITCH; CPU_INTERCONNECT: two CPU_ROOT_COMPLEX; MEMORY: one
//     HOST_MEMORY and one CPU_ROOT_COMPLEX).
//   graph (only once the fields are valid): every HOST_MEMORY has a MEMORY link to a root complex
//     of its own socket; every pair of GPUs has a route as net::Router finds them (traffic is
//     forwarded only by PCIE_SWITCH, CPU_ROOT_COMPLEX and NVSWITCH nodes). No route is
//     FailedPrecondition; every other problem is InvalidArgument.
// cpu_vendor CPU_VENDOR_UNSPECIFIED is accepted and means unknown.
//
// The topology keeps nodes and links in file order; gpus lists GPU node indices in file order;
// gpu_specs holds every gpu_model in file order.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/status.h"
#include "sim/net/topology.h"
#include "specsim/hardware.pb.h"

namespace specsim::io {

// Validates `hardware` and converts it. `filename` prefixes every error message and warning; the
// warnings (implausible values) are added to `warnings` when given.
// GPU nodes one hardware file may have (bounded work; the largest bundled, configs/hardware/scale, has
// 256).
inline constexpr int64_t kMaxHardwareGpus = 4096;

StatusOr<net::Topology> TopologyFromHardware(const config::Hardware& hardware, std::string_view filename,
                                             std::vector<std::string>* warnings = nullptr);

// Parses text-format Hardware (errors as in textproto.h), then TopologyFromHardware.
StatusOr<net::Topology> ParseHardware(std::string_view text, std::string_view filename,
                                      std::vector<std::string>* warnings = nullptr);

// Reads `path` with ReadConfigFile (file_io.h): the file on disk, or else the embedded copy when
// `path` is a bundled config's relative path such as "configs/hardware/h200-1x.textproto"; errors
// then name "<path> (embedded copy)". NotFound when neither exists.
StatusOr<net::Topology> LoadHardwareFile(const std::string& path, std::vector<std::string>* warnings = nullptr);

}  // namespace specsim::io
