// The one check of numeric fields against the unit and range their schema declares
// (proto/specsim/range.proto: `[(range) = {unit: "ns" min: 0 max: 1e9}]` beside the field). Every
// loader runs it on what it parsed (hardware, calibration, scenario, framework profile, model,
// measurement trace) before its own checks of names and cross-field rules.
//
//   error    a value outside [min, max] (or (min, max] with min_exclusive), NaN or infinite: the
//            model cannot represent it. "FILE: links[3].latency_ns = 2e+09: must be in [0, 1e+09]
//            ns (at most a second)"
//   warning  a value inside the range but outside [plausible_min, plausible_max]: no GPU or box of
//            today has it; the run goes on.
//
// Which values are checked: every singular numeric field of every message that is present (a
// proto3 scalar without presence reads 0 when unset: 0 is accepted when the range says
// zero_is_unset, else checked like any value); an `optional` field only when set; every element
// of a repeated field; every value of a map. Fields without a range are not checked.
#pragma once

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/status.h"
#include "specsim/range.pb.h"

namespace specsim::io {

// One numeric value of a message that has a declared range: where it is and what its range is.
struct RangedValue {
  std::string path;  // "links[3].latency_ns", "fabric.under_load_extra_ns[\"h2d/d2h\"]"
  const google::protobuf::Message* message = nullptr;        // the message holding it (a map's entry)
  const google::protobuf::FieldDescriptor* field = nullptr;  // its field in `message`
  int index = -1;                                            // element of a repeated field; -1: singular
  // A map value: the message holding the map, the map field and the entry's index.
  const google::protobuf::Message* map_owner = nullptr;
  const google::protobuf::FieldDescriptor* map_field = nullptr;
  int map_index = -1;
  const config::FieldRange* range = nullptr;
  double value = 0;
};

// Calls `visit` for every value the check covers (see above), in field order, depth first.
void ForEachRangedValue(const google::protobuf::Message& message, const std::function<void(const RangedValue&)>& visit);

// What the check finds, value by value, in field order: errors (out of range) and warnings
// (implausible), each with its path, value and rule ("must be in [0, 1e+09] ns (at most a second)").
struct RangeFinding {
  std::string path;
  double value = 0;
  std::string rule;
  bool error = true;  // false: a warning
};
std::vector<RangeFinding> RangeFindings(const google::protobuf::Message& message);

// The check of `message`: OK, or InvalidArgument listing every value out of its range, one line
// each, "FILE: PATH = VALUE: must be in [MIN, MAX] UNIT (WHY)". Values outside their plausible
// range add a line to `warnings` (when given) in the same form.
Status CheckFieldRanges(const google::protobuf::Message& message, std::string_view file,
                        std::vector<std::string>* warnings = nullptr);

// The numeric fields (map values included) of `root` and of every message reachable from it that
// declare no range, by full name: what a schema test wants empty.
std::vector<std::string> FieldsWithoutRange(const google::protobuf::Descriptor* root);

// "[0, 1e+09] ns (at most a second)" for messages and docs.
std::string DescribeRange(const config::FieldRange& range);

// `value` set into the field `at` names (doubles and floats as is, integers clamped to the type's
// range, then truncated), for tests that move a field to its range's ends. REQUIRES: the message
// ForEachRangedValue visited is not a const object.
void SetNumericValue(const RangedValue& at, double value);

}  // namespace specsim::io
