// Names of protobuf enum values for error messages.
#pragma once

#include <google/protobuf/descriptor.h>

#include <string>

namespace specsim::io {

// "A, B, C": every value of an enum except its *_UNSPECIFIED = 0.
std::string AllowedEnumValues(const google::protobuf::EnumDescriptor* e);
// The value's name, or its number when the enum has no such value.
std::string EnumValueName(const google::protobuf::EnumDescriptor* e, int value);

}  // namespace specsim::io
