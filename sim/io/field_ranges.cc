#include "sim/io/field_ranges.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>

namespace specsim::io {
namespace {

namespace pb = google::protobuf;
using Fn = std::function<void(const RangedValue&)>;

bool IsNumeric(const pb::FieldDescriptor* f) {
  switch (f->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_DOUBLE:
    case pb::FieldDescriptor::CPPTYPE_FLOAT:
    case pb::FieldDescriptor::CPPTYPE_INT32:
    case pb::FieldDescriptor::CPPTYPE_INT64:
    case pb::FieldDescriptor::CPPTYPE_UINT32:
    case pb::FieldDescriptor::CPPTYPE_UINT64: return true;
    default: return false;
  }
}

const config::FieldRange* RangeOf(const pb::FieldDescriptor* f) {
  if (!f->options().HasExtension(config::range)) return nullptr;
  return &f->options().GetExtension(config::range);
}

// The value of a numeric field (element `index` of a repeated one).
double Get(const pb::Message& m, const pb::FieldDescriptor* f, int index) {
  const pb::Reflection* r = m.GetReflection();
  const bool rep = index >= 0;
  switch (f->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_DOUBLE: return rep ? r->GetRepeatedDouble(m, f, index) : r->GetDouble(m, f);
    case pb::FieldDescriptor::CPPTYPE_FLOAT: return rep ? r->GetRepeatedFloat(m, f, index) : r->GetFloat(m, f);
    case pb::FieldDescriptor::CPPTYPE_INT32: return rep ? r->GetRepeatedInt32(m, f, index) : r->GetInt32(m, f);
    case pb::FieldDescriptor::CPPTYPE_INT64:
      return static_cast<double>(rep ? r->GetRepeatedInt64(m, f, index) : r->GetInt64(m, f));
    case pb::FieldDescriptor::CPPTYPE_UINT32: return rep ? r->GetRepeatedUInt32(m, f, index) : r->GetUInt32(m, f);
    case pb::FieldDescriptor::CPPTYPE_UINT64:
      return static_cast<double>(rep ? r->GetRepeatedUInt64(m, f, index) : r->GetUInt64(m, f));
    default: return 0;
  }
}

std::string MapKey(const pb::Message& entry) {
  const pb::FieldDescriptor* key = entry.GetDescriptor()->map_key();
  const pb::Reflection* r = entry.GetReflection();
  if (key->cpp_type() == pb::FieldDescriptor::CPPTYPE_STRING) return "\"" + r->GetString(entry, key) + "\"";
  return fmt::format("{}", Get(entry, key, -1));
}

// A singular string field `field` of `m`, "" when there is none.
std::string StringField(const pb::Message& m, const char* field) {
  const pb::FieldDescriptor* f = m.GetDescriptor()->FindFieldByName(field);
  if (f == nullptr || f->cpp_type() != pb::FieldDescriptor::CPPTYPE_STRING || f->is_repeated()) return "";
  return m.GetReflection()->GetString(m, f);
}

// How the loaders' own errors name an element of a repeated message field: " (NAME)" for one with
// a non-empty `name` (a GPU model, a node), " (A<->B)" for one joining `a` and `b` (a link).
std::string ElementName(const pb::Message& element) {
  if (const std::string name = StringField(element, "name"); !name.empty()) return " (" + name + ")";
  const std::string a = StringField(element, "a"), b = StringField(element, "b");
  if (!a.empty() || !b.empty()) return " (" + a + "<->" + b + ")";
  return "";
}

void Visit(const pb::Message& m, const std::string& prefix, const Fn& visit) {
  const pb::Descriptor* d = m.GetDescriptor();
  const pb::Reflection* r = m.GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const pb::FieldDescriptor* f = d->field(i);
    const std::string name = prefix.empty() ? f->name() : prefix + "." + f->name();
    if (f->is_map()) {
      const pb::FieldDescriptor* value = f->message_type()->map_value();
      const config::FieldRange* range = RangeOf(f);
      // Entries in key order: a map's own order is not stable between copies of a message.
      std::vector<std::pair<std::string, int>> entries;
      for (int j = 0; j < r->FieldSize(m, f); ++j) entries.emplace_back(MapKey(r->GetRepeatedMessage(m, f, j)), j);
      std::sort(entries.begin(), entries.end());
      for (const auto& [key, j] : entries) {
        const pb::Message& entry = r->GetRepeatedMessage(m, f, j);
        const std::string path = name + "[" + key + "]";
        if (value->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) {
          Visit(entry.GetReflection()->GetMessage(entry, value), path, visit);
        } else if (range != nullptr && IsNumeric(value)) {
          visit({path, &entry, value, -1, &m, f, j, range, Get(entry, value, -1)});
        }
      }
      continue;
    }
    if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) {
      if (f->is_repeated()) {
        for (int j = 0; j < r->FieldSize(m, f); ++j) {
          const pb::Message& element = r->GetRepeatedMessage(m, f, j);
          Visit(element, fmt::format("{}[{}]{}", name, j, ElementName(element)), visit);
        }
      } else if (r->HasField(m, f)) {
        Visit(r->GetMessage(m, f), name, visit);
      }
      continue;
    }
    if (!IsNumeric(f)) continue;
    const config::FieldRange* range = RangeOf(f);
    if (range == nullptr) continue;
    if (f->is_repeated()) {
      for (int j = 0; j < r->FieldSize(m, f); ++j)
        visit({fmt::format("{}[{}]", name, j), &m, f, j, nullptr, nullptr, -1, range, Get(m, f, j)});
    } else if (!f->has_presence() || r->HasField(m, f)) {
      visit({name, &m, f, -1, nullptr, nullptr, -1, range, Get(m, f, -1)});
    }
  }
}

bool InRange(const config::FieldRange& range, double v) {
  if (!std::isfinite(v)) return false;
  if (range.zero_is_unset() && v == 0) return true;
  if (range.has_min() && (range.min_exclusive() ? !(v > range.min()) : !(v >= range.min()))) return false;
  if (range.has_max() && !(v <= range.max())) return false;
  return true;
}

bool Plausible(const config::FieldRange& range, double v) {
  if (range.zero_is_unset() && v == 0) return true;
  if (range.has_plausible_min() && v < range.plausible_min()) return false;
  if (range.has_plausible_max() && v > range.plausible_max()) return false;
  return true;
}

std::string Unit(const config::FieldRange& range) { return range.unit().empty() ? "" : " " + range.unit(); }

// A bound as people write it (1e+09, 0.001, 64) when %g holds it exactly, else exactly
// (1099511627776, 2147483647).
std::string Bound(double v) {
  const std::string g = fmt::format("{:g}", v);
  return std::stod(g) == v ? g : fmt::format("{}", v);
}

}  // namespace

void ForEachRangedValue(const pb::Message& message, const Fn& visit) { Visit(message, "", visit); }

std::vector<std::string> FieldsWithoutRange(const pb::Descriptor* root) {
  std::vector<std::string> missing;
  std::set<const pb::Descriptor*> seen;
  std::function<void(const pb::Descriptor*)> walk = [&](const pb::Descriptor* d) {
    if (!seen.insert(d).second) return;
    for (int i = 0; i < d->field_count(); ++i) {
      const pb::FieldDescriptor* f = d->field(i);
      // A map's range is the map field's; its entries are not messages of the schema's own.
      const pb::FieldDescriptor* value = f->is_map() ? f->message_type()->map_value() : f;
      if (value->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) {
        walk(value->message_type());
      } else if (IsNumeric(value) && RangeOf(f) == nullptr) {
        missing.push_back(f->full_name());
      }
    }
  };
  walk(root);
  return missing;
}

std::string DescribeRange(const config::FieldRange& range) {
  std::string bounds;
  if (range.has_min() && range.has_max()) {
    bounds = fmt::format("{}{}, {}]", range.min_exclusive() ? "(" : "[", Bound(range.min()), Bound(range.max()));
  } else if (range.has_min()) {
    bounds = fmt::format("{} {}", range.min_exclusive() ? ">" : ">=", Bound(range.min()));
  } else if (range.has_max()) {
    bounds = fmt::format("<= {}", Bound(range.max()));
  } else {
    bounds = "finite";
  }
  std::string out = bounds + Unit(range);
  if (range.zero_is_unset()) out += ", or 0 (unset: the default)";
  if (!range.why().empty()) out += " (" + range.why() + ")";
  return out;
}

std::vector<RangeFinding> RangeFindings(const pb::Message& message) {
  std::vector<RangeFinding> out;
  ForEachRangedValue(message, [&](const RangedValue& v) {
    const config::FieldRange& range = *v.range;
    if (!InRange(range, v.value)) {
      out.push_back({v.path, v.value,
                     fmt::format("must be {}{}", range.has_min() && range.has_max() ? "in " : "", DescribeRange(range)),
                     true});
    } else if (!Plausible(range, v.value)) {
      std::string plausible;
      if (range.has_plausible_min()) plausible += ">= " + Bound(range.plausible_min());
      if (range.has_plausible_max())
        plausible += (plausible.empty() ? "<= " : " and <= ") + Bound(range.plausible_max());
      out.push_back({v.path, v.value,
                     fmt::format("no hardware or software of today has it (plausible: {}{}); simulated as given",
                                 plausible, Unit(range)),
                     false});
    }
  });
  return out;
}

Status CheckFieldRanges(const pb::Message& message, std::string_view file, std::vector<std::string>* warnings) {
  std::string errors;
  for (const RangeFinding& f : RangeFindings(message)) {
    const std::string line = fmt::format("{}: {} = {}: {}", file, f.path, f.value, f.rule);
    if (f.error) {
      errors += (errors.empty() ? "" : "\n") + line;
    } else if (warnings != nullptr) {
      warnings->push_back("warning: " + line);
    }
  }
  if (errors.empty()) return OkStatus();
  return InvalidArgumentError(errors);
}

void SetNumericValue(const RangedValue& at, double value) {
  pb::Message* m = const_cast<pb::Message*>(at.message);  // NOLINT: REQUIRES a mutable root (see header)
  if (at.map_owner != nullptr) {
    pb::Message* owner = const_cast<pb::Message*>(at.map_owner);  // NOLINT: as above
    m = owner->GetReflection()->MutableRepeatedMessage(owner, at.map_field, at.map_index);
  }
  const pb::Reflection* r = m->GetReflection();
  const pb::FieldDescriptor* f = at.field;
  const int i = at.index;
  auto clamp = [value](auto lo, auto hi) {
    using T = decltype(lo);
    if (!(value >= static_cast<double>(lo))) return lo;
    if (value >= static_cast<double>(hi)) return hi;
    return static_cast<T>(value);
  };
  switch (f->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_DOUBLE:
      i >= 0 ? r->SetRepeatedDouble(m, f, i, value) : r->SetDouble(m, f, value);
      break;
    case pb::FieldDescriptor::CPPTYPE_FLOAT: {
      const auto v = static_cast<float>(value);
      i >= 0 ? r->SetRepeatedFloat(m, f, i, v) : r->SetFloat(m, f, v);
      break;
    }
    case pb::FieldDescriptor::CPPTYPE_INT32: {
      const int32_t v = clamp(std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max());
      i >= 0 ? r->SetRepeatedInt32(m, f, i, v) : r->SetInt32(m, f, v);
      break;
    }
    case pb::FieldDescriptor::CPPTYPE_INT64: {
      const int64_t v = clamp(std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max());
      i >= 0 ? r->SetRepeatedInt64(m, f, i, v) : r->SetInt64(m, f, v);
      break;
    }
    case pb::FieldDescriptor::CPPTYPE_UINT32: {
      const uint32_t v = clamp(uint32_t{0}, std::numeric_limits<uint32_t>::max());
      i >= 0 ? r->SetRepeatedUInt32(m, f, i, v) : r->SetUInt32(m, f, v);
      break;
    }
    case pb::FieldDescriptor::CPPTYPE_UINT64: {
      const uint64_t v = clamp(uint64_t{0}, std::numeric_limits<uint64_t>::max());
      i >= 0 ? r->SetRepeatedUInt64(m, f, i, v) : r->SetUInt64(m, f, v);
      break;
    }
    default: break;
  }
}

}  // namespace specsim::io
