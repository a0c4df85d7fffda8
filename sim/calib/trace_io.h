// Reading a measurement trace (proto/specsim/trace.proto, binary specsim.trace.Trace as written by
// specsim-validate) with errors that name the file.
#pragma once

#include <string>

#include "sim/core/status.h"
#include "specsim/trace.pb.h"

namespace specsim::calib {

// Reads and parses `path`. NotFound when the file does not exist; InvalidArgument when it is not a
// binary Trace, has schema_version other than 1, or has no items.
StatusOr<trace::Trace> LoadTrace(const std::string& path);

// "pcie", "collectives", "kernels", "decode" (the trace's own suite names), "unspecified".
const char* SuiteName(trace::Suite suite);
// "PIX", "PXB", "PHB", "NODE", "SYS", "NV", "SELF", "" for unspecified.
const char* PathClassName(trace::PathClass path_class);

}  // namespace specsim::calib
