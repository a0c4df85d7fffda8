// Protobuf text format ("textproto") parsing with errors a person can act on.
//
// Every syntax or schema error becomes an InvalidArgument Status whose message reads
//   FILE:LINE:COL: <protobuf's message>[ <hint>]
// with 1-based line and column. Two common mistakes get a hint:
//   - an unknown field name: the hint lists the fields that message allows (and the closest one);
//   - an unknown enum value: the hint lists the values of that enum (and the closest one). The
//     enum is found through the descriptor pool, from the field named in protobuf's message and
//     the message being parsed at the error position.
// Parsing never aborts on bad input. Semantic checks (ranges, references) are the caller's job.
#pragma once

#include <google/protobuf/message.h>

#include <string>
#include <string_view>

#include "sim/core/status.h"
#include "sim/io/file_io.h"

namespace specsim::io {

// Parses `text` into `*message` (cleared first). `filename` is only used in error messages.
// REQUIRES: message != nullptr.
Status ParseTextProtoInto(std::string_view text, std::string_view filename, google::protobuf::Message* message);

// InvalidArgument "FILE: field.path = nan: must be a finite number" for the first float / double
// field of `message` (nested messages included) that is NaN or infinite. For configs without
// per-field checks of their own (calibrations).
Status CheckFiniteNumbers(const google::protobuf::Message& message, std::string_view filename);

template <class Msg>
StatusOr<Msg> ParseTextProto(std::string_view text, std::string_view filename) {
  Msg message;
  RETURN_IF_ERROR(ParseTextProtoInto(text, filename, &message));
  return message;
}

// Reads the file at `path` from disk (NotFound naming the path when it does not exist) and parses
// it. No embedded fallback here: see ReadConfigFile in file_io.h for that.
template <class Msg>
StatusOr<Msg> LoadTextProtoFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  return ParseTextProto<Msg>(text, path);
}

}  // namespace specsim::io
