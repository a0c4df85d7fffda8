#include "sim/io/textproto.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/stubs/common.h>
#include <google/protobuf/text_format.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <string>
#include <vector>

namespace specsim::io {
namespace {

namespace pb = google::protobuf;

struct ParseError {
  int line = 0;    // 0-based, as protobuf reports it
  int column = 0;  // 0-based
  std::string message;
};

// Collects protobuf's errors; the Parser stops at the first one, but keep them all.
class Collector : public pb::io::ErrorCollector {
 public:
#if GOOGLE_PROTOBUF_VERSION >= 4022000
  void RecordError(int line, pb::io::ColumnNumber column, absl::string_view message) override {
    errors.push_back({line, column, std::string(message)});
  }
  void RecordWarning(int, pb::io::ColumnNumber, absl::string_view) override {}
#else
  void AddError(int line, pb::io::ColumnNumber column, const std::string& message) override {
    errors.push_back({line, column, message});
  }
  void AddWarning(int, pb::io::ColumnNumber, const std::string&) override {}
#endif
  std::vector<ParseError> errors;
};

// Silences the tokenizer used to rebuild context (its errors were already reported by the parser).
class NullCollector : public pb::io::ErrorCollector {
 public:
#if GOOGLE_PROTOBUF_VERSION >= 4022000
  void RecordError(int, pb::io::ColumnNumber, absl::string_view) override {}
#else
  void AddError(int, pb::io::ColumnNumber, const std::string&) override {}
#endif
};

// The text between the first pair of double quotes after `after` in `message`, or "".
std::string QuotedAfter(const std::string& message, const std::string& after) {
  const size_t at = message.find(after);
  if (at == std::string::npos) return "";
  const size_t open = message.find('"', at + after.size());
  if (open == std::string::npos) return "";
  const size_t close = message.find('"', open + 1);
  if (close == std::string::npos) return "";
  return message.substr(open + 1, close - open - 1);
}

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// " Did you mean "x"?" when one candidate is close to `typed`, else "".
std::string ClosestHint(const std::string& typed, const std::vector<std::string>& candidates) {
  const std::string* best = nullptr;
  size_t best_distance = 0;
  for (const std::string& c : candidates) {
    const size_t d = EditDistance(typed, c);
    if (best == nullptr || d < best_distance) {
      best = &c;
      best_distance = d;
    }
  }
  if (best == nullptr || best_distance == 0 || best_distance > std::max<size_t>(2, typed.size() / 3)) {
    return "";
  }
  return " Did you mean \"" + *best + "\"?";
}

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

// What replaying the tokens before an error position tells: the message type being parsed there
// (a sub-message's type is pushed at each '{' / '<' and popped at '}' / '>'; nullptr if lost),
// and where the last token spelled `value` starts (protobuf reports an unknown enum value at the
// token after it).
struct Context {
  const pb::Descriptor* message = nullptr;
  int value_line = -1;  // 0-based; -1 when not found
  int value_column = -1;
};

Context ReplayTo(std::string_view text, const pb::Descriptor* root, int line, int column, const std::string& value) {
  Context context;
  if (text.size() > static_cast<size_t>(INT_MAX)) return context;
  pb::io::ArrayInputStream input(text.data(), static_cast<int>(text.size()));
  NullCollector silent;
  pb::io::Tokenizer tokenizer(&input, &silent);
  tokenizer.set_comment_style(pb::io::Tokenizer::SH_COMMENT_STYLE);
  std::vector<const pb::Descriptor*> stack = {root};
  const pb::FieldDescriptor* pending = nullptr;  // the field whose value comes next
  std::string previous;                          // text of the previous token
  int bracket_depth = 0;
  while (tokenizer.Next()) {
    const pb::io::Tokenizer::Token& token = tokenizer.current();
    if (token.line > line || (token.line == line && token.column >= column)) break;
    const std::string& t = token.text;
    if (!value.empty() && t == value) {
      context.value_line = token.line;
      context.value_column = token.column;
    }
    if (token.type == pb::io::Tokenizer::TYPE_IDENTIFIER) {
      const bool is_value = previous == ":" || (bracket_depth > 0 && (previous == "[" || previous == ","));
      if (!is_value) pending = stack.back() ? stack.back()->FindFieldByName(t) : nullptr;
    } else if (t == "{" || t == "<") {
      stack.push_back(pending != nullptr && pending->message_type() != nullptr ? pending->message_type() : nullptr);
    } else if (t == "}" || t == ">") {
      if (stack.size() > 1) stack.pop_back();
    } else if (t == "[") {
      ++bracket_depth;
    } else if (t == "]") {
      bracket_depth = std::max(0, bracket_depth - 1);
    }
    previous = t;
  }
  context.message = stack.back();
  return context;
}

// Every enum type of a field called `field_name` in messages reachable from `root`.
void CollectEnumsNamed(const pb::Descriptor* message, const std::string& field_name,
                       std::vector<const pb::Descriptor*>* visited, std::vector<const pb::EnumDescriptor*>* enums) {
  if (std::find(visited->begin(), visited->end(), message) != visited->end()) return;
  visited->push_back(message);
  for (int i = 0; i < message->field_count(); ++i) {
    const pb::FieldDescriptor* field = message->field(i);
    if (std::string(field->name()) == field_name && field->enum_type() != nullptr &&
        std::find(enums->begin(), enums->end(), field->enum_type()) == enums->end()) {
      enums->push_back(field->enum_type());
    }
    if (field->message_type() != nullptr) {
      CollectEnumsNamed(field->message_type(), field_name, visited, enums);
    }
  }
}

std::string EnumValuesHint(const std::string& typed, const pb::EnumDescriptor* e) {
  std::vector<std::string> names;
  for (int i = 0; i < e->value_count(); ++i) names.push_back(std::string(e->value(i)->name()));
  return ClosestHint(typed, names) + " Allowed values of " + std::string(e->full_name()) + ": " + Join(names) + ".";
}

// Protobuf: Message type "specsim.config.Link" has no field named "bandwdith_gbps".
std::string UnknownFieldHint(const std::string& message, const pb::DescriptorPool* pool) {
  const std::string type_name = QuotedAfter(message, "Message type");
  const std::string field_name = QuotedAfter(message, "has no field named");
  if (type_name.empty() || field_name.empty()) return "";
  const pb::Descriptor* type = pool->FindMessageTypeByName(type_name);
  if (type == nullptr) return "";
  std::vector<std::string> names;
  for (int i = 0; i < type->field_count(); ++i) names.push_back(std::string(type->field(i)->name()));
  return ClosestHint(field_name, names) + " Fields of " + type_name + ": " + Join(names) + ".";
}

// Protobuf: Unknown enumeration value of "GPUU" for field "kind". Moves `error` to the value
// itself when it can be found.
std::string UnknownEnumHint(std::string_view text, const pb::Descriptor* root, ParseError* error) {
  const std::string value = QuotedAfter(error->message, "Unknown enumeration value of");
  const std::string field_name = QuotedAfter(error->message, "for field");
  if (field_name.empty()) return "";
  const Context context = ReplayTo(text, root, error->line, error->column, value);
  if (context.value_line >= 0) {
    error->line = context.value_line;
    error->column = context.value_column;
  }
  if (context.message != nullptr) {
    const pb::FieldDescriptor* field = context.message->FindFieldByName(field_name);
    if (field != nullptr && field->enum_type() != nullptr) {
      return EnumValuesHint(value, field->enum_type());
    }
  }
  // Context lost: list every enum used by a field of that name.
  std::vector<const pb::Descriptor*> visited;
  std::vector<const pb::EnumDescriptor*> enums;
  CollectEnumsNamed(root, field_name, &visited, &enums);
  std::string hint;
  for (const pb::EnumDescriptor* e : enums) hint += EnumValuesHint(value, e);
  return hint;
}

// The first non-finite float / double field set in `m` (nested messages and maps included), as
// "path = value"; empty when every one is finite.
std::string FirstNonFinite(const pb::Message& m, const std::string& prefix) {
  const pb::Reflection* r = m.GetReflection();
  std::vector<const pb::FieldDescriptor*> fields;
  r->ListFields(m, &fields);
  for (const pb::FieldDescriptor* f : fields) {
    const std::string name = prefix + f->name();
    const int n = f->is_repeated() ? r->FieldSize(m, f) : 1;
    for (int i = 0; i < n; ++i) {
      const std::string path = f->is_repeated() ? name + "[" + std::to_string(i) + "]" : name;
      double v = 0;
      switch (f->cpp_type()) {
        case pb::FieldDescriptor::CPPTYPE_DOUBLE:
          v = f->is_repeated() ? r->GetRepeatedDouble(m, f, i) : r->GetDouble(m, f);
          break;
        case pb::FieldDescriptor::CPPTYPE_FLOAT:
          v = f->is_repeated() ? r->GetRepeatedFloat(m, f, i) : r->GetFloat(m, f);
          break;
        case pb::FieldDescriptor::CPPTYPE_MESSAGE: {
          const pb::Message& sub = f->is_repeated() ? r->GetRepeatedMessage(m, f, i) : r->GetMessage(m, f);
          if (std::string bad = FirstNonFinite(sub, path + "."); !bad.empty()) return bad;
          continue;
        }
        default: continue;
      }
      if (!std::isfinite(v)) return path + " = " + (std::isnan(v) ? std::string("nan") : v > 0 ? "inf" : "-inf");
    }
  }
  return std::string();
}

}  // namespace

Status CheckFiniteNumbers(const google::protobuf::Message& message, std::string_view filename) {
  if (std::string bad = FirstNonFinite(message, ""); !bad.empty())
    return InvalidArgumentError(std::string(filename) + ": " + bad + ": must be a finite number");
  return OkStatus();
}

Status ParseTextProtoInto(std::string_view text, std::string_view filename, google::protobuf::Message* message) {
  SPECSIM_CHECK(message != nullptr);
  message->Clear();
  const std::string file(filename);
  if (text.size() > static_cast<size_t>(INT_MAX)) {
    return InvalidArgumentError(file + ": file too large for the text format parser");
  }
  Collector collector;
  pb::TextFormat::Parser parser;
  parser.RecordErrorsTo(&collector);
  pb::io::ArrayInputStream input(text.data(), static_cast<int>(text.size()));
  if (parser.Parse(&input, message)) return OkStatus();

  const pb::Descriptor* root = message->GetDescriptor();
  std::string out;
  for (ParseError& error : collector.errors) {
    std::string hint = UnknownFieldHint(error.message, root->file()->pool());
    if (hint.empty()) hint = UnknownEnumHint(text, root, &error);
    if (!out.empty()) out += "\n";
    out += file + ":" + std::to_string(error.line + 1) + ":" + std::to_string(error.column + 1) + ": " + error.message +
           hint;
  }
  if (out.empty()) out = file + ": not a valid " + std::string(root->full_name()) + " in text format";
  // A JSON file where a textproto belongs (e.g. a Hugging Face config.json given as a scenario).
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && (text[first] == '{' || text[first] == '['))
    out += "\n" + file + " looks like JSON: specsim's configs are protobuf text format (" +
           std::string(root->full_name()) +
           "); a Hugging Face config.json is a model: give it as --model (simulate) or `model:` in a scenario";
  return InvalidArgumentError(out);
}

}  // namespace specsim::io
