// Writing and reading measurement traces.
//
// WriteTrace writes FILE.pb (binary protobuf) and, unless disabled, FILE.json (protobuf's JSON
// mapping, indented, field names as in the .proto) atomically: each file is written to a temporary
// name in the same directory, flushed to disk (fsync), then renamed over the target. An interrupted
// run therefore leaves either the previous file or the complete new one, never half a file.
#pragma once

#include <string>

#include "specsim/trace.pb.h"
#include "validate/status.h"

namespace specsim::validate {

// "x/run.pb" -> "x/run.json"; "x/run" -> "x/run.json".
std::string JsonPathFor(const std::string& pb_path);

// Writes `contents` to `path` atomically (temp file + fsync + rename).
Status WriteFileAtomically(const std::string& path, const std::string& contents);

Status WriteTrace(const trace::Trace& t, const std::string& pb_path, bool write_json);
StatusOr<trace::Trace> ReadTrace(const std::string& pb_path);
StatusOr<std::string> TraceToJson(const trace::Trace& t);

}  // namespace specsim::validate
