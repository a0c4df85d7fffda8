#include "sim/io/enum_names.h"

namespace specsim::io {

std::string AllowedEnumValues(const google::protobuf::EnumDescriptor* e) {
  std::string out;
  for (int i = 0; i < e->value_count(); ++i) {
    if (e->value(i)->number() == 0) continue;
    out += (out.empty() ? "" : ", ") + std::string(e->value(i)->name());
  }
  return out;
}

std::string EnumValueName(const google::protobuf::EnumDescriptor* e, int value) {
  const google::protobuf::EnumValueDescriptor* v = e->FindValueByNumber(value);
  return v != nullptr ? std::string(v->name()) : std::to_string(value);
}

}  // namespace specsim::io
