// `specsim nccl-transport TRACE.pb... --calibration C`: fits the NCCL transport model's protocol
// work (sim/coll/nccl_step_model.h) on a box's measured NCCL calls of every transport, and checks
// the transfer: fitted on one transport's calls, the other's predicted from their paths alone
// (sim/calib/nccl_transport_fit.h). Prints the fit (what DefaultNcclStepWork ships), each
// transfer's items measured against predicted with its median error, and the uncalibrated range
// (the transfers' spread). Exit 2 for unreadable inputs or no NCCL call in the latency regime;
// with --max-error, exit 1 when a transfer's median error exceeds it.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace CLI {
class App;  // <CLI/CLI.hpp>, included where the flags are registered
}  // namespace CLI

namespace specsim::tools {

struct NcclTransportFlags {
  std::vector<std::string> traces;
  std::string hardware;           // empty: built from the (first) trace
  std::string calibration;        // the box's host costs; its nccl.protocols are dropped
  std::string max_bytes = "16K";  // the largest call fitted and checked (sizes.h: 16K, 1M, 16384)
  double max_error = -1;          // < 0: no limit
  bool json = false;
};

int RunNcclTransport(const NcclTransportFlags& flags, std::ostream& out, std::ostream& err);
void AddNcclTransportCommand(CLI::App& app, int* exit_code);

}  // namespace specsim::tools
