#include "sim/calib/trace_io.h"

#include "sim/io/file_io.h"

namespace specsim::calib {

StatusOr<trace::Trace> LoadTrace(const std::string& path) {
  ASSIGN_OR_RETURN(std::string bytes, io::ReadFileToString(path));
  trace::Trace t;
  if (!t.ParseFromString(bytes))
    return InvalidArgumentError(path + ": not a binary specsim.trace.Trace (proto/specsim/trace.proto); "
                                "pass the .pb file, not the .json copy");
  if (t.schema_version() != 1)
    return InvalidArgumentError(path + ": schema_version = " + std::to_string(t.schema_version()) +
                                ": this specsim reads schema_version 1");
  if (t.items_size() == 0) return InvalidArgumentError(path + ": the trace has no items");
  return t;
}

const char* SuiteName(trace::Suite suite) {
  switch (suite) {
    case trace::SUITE_PCIE: return "pcie";
    case trace::SUITE_COLLECTIVES: return "collectives";
    case trace::SUITE_KERNELS: return "kernels";
    case trace::SUITE_DECODE: return "decode";
    default: return "unspecified";
  }
}

const char* PathClassName(trace::PathClass c) {
  switch (c) {
    case trace::PATH_SELF: return "SELF";
    case trace::PATH_NVLINK: return "NV";
    case trace::PATH_PIX: return "PIX";
    case trace::PATH_PXB: return "PXB";
    case trace::PATH_PHB: return "PHB";
    case trace::PATH_NODE: return "NODE";
    case trace::PATH_SYS: return "SYS";
    default: return "";
  }
}

}  // namespace specsim::calib
