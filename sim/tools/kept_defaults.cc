#include "sim/tools/kept_defaults.h"

#include <fmt/format.h>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include <optional>
#include <set>

#include "sim/calib/params.h"

namespace specsim::tools {

namespace {

// The numeric field at `path` ("fabric.d2h_pinned.latency_ns") of `message`, when there is one.
std::optional<double> NumericField(const google::protobuf::Message& message, const std::string& path) {
  const google::protobuf::Message* m = &message;
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    const std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    const google::protobuf::FieldDescriptor* f = m->GetDescriptor()->FindFieldByName(part);
    if (f == nullptr || f->is_repeated()) return std::nullopt;
    const google::protobuf::Reflection* r = m->GetReflection();
    if (dot != std::string::npos) {
      if (f->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE) return std::nullopt;
      m = &r->GetMessage(*m, f);
      start = dot + 1;
      continue;
    }
    switch (f->cpp_type()) {
      case google::protobuf::FieldDescriptor::CPPTYPE_DOUBLE: return r->GetDouble(*m, f);
      case google::protobuf::FieldDescriptor::CPPTYPE_FLOAT: return r->GetFloat(*m, f);
      case google::protobuf::FieldDescriptor::CPPTYPE_INT32: return r->GetInt32(*m, f);
      case google::protobuf::FieldDescriptor::CPPTYPE_INT64: return static_cast<double>(r->GetInt64(*m, f));
      default: return std::nullopt;
    }
  }
}

}  // namespace

std::vector<KeptDefault> KeptDefaults(const calib::FitResult& fit) {
  const config::Calibration values = calib::ToCalibrationProto(fit.params);
  std::vector<KeptDefault> out;
  std::set<std::string> seen;
  for (const std::string& entry : fit.not_fitted) {
    if (!seen.insert(entry).second) continue;  // the fit may report one group twice
    KeptDefault k;
    const size_t colon = entry.find(": ");
    k.names = entry.substr(0, colon);
    if (colon != std::string::npos) k.reason = entry.substr(colon + 2);
    size_t start = 0;
    while (start < k.names.size()) {
      size_t comma = k.names.find(", ", start);
      if (comma == std::string::npos) comma = k.names.size();
      const std::string name = k.names.substr(start, comma - start);
      if (std::optional<double> v = NumericField(values, name))
        k.values.push_back(*v != 0 ? fmt::format("{} = {:.6g}", name, *v)
                                   : name + " = 0 (written as unset: readers use the built-in default)");
      start = comma + 2;
    }
    out.push_back(std::move(k));
  }
  return out;
}

}  // namespace specsim::tools
