#include "sim/io/scenario_loader.h"

#include <fmt/format.h>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "sim/core/strings.h"
#include "sim/io/embedded_files.h"
#include "sim/io/enum_names.h"
#include "sim/io/field_ranges.h"
#include "sim/io/file_io.h"
#include "sim/io/framework_loader.h"
#include "sim/io/hardware_checks.h"
#include "sim/io/textproto.h"
#include "sim/llm/draft_tree.h"
#include "sim/llm/speculative_cycle.h"

namespace specsim::io {
namespace {

namespace pb = google::protobuf;
namespace fs = std::filesystem;
using config::Scenario;
using config::Speculation;

std::string Quoted(const std::string& s) { return "\"" + s + "\""; }

void CheckDType(ValidationErrors* e, const std::string& path, config::DType d) {
  if (d == config::DTYPE_UNSPECIFIED || !config::DType_IsValid(d)) {
    e->Add(path, EnumValueName(config::DType_descriptor(), d),
           "must be set, one of " + AllowedEnumValues(config::DType_descriptor()));
  }
}

void CheckOneOf(ValidationErrors* e, const std::string& path, const std::string& value,
                const std::vector<std::string>& allowed) {
  if (std::find(allowed.begin(), allowed.end(), value) != allowed.end()) return;
  std::string list;
  for (const std::string& a : allowed) list += (list.empty() ? "" : ", ") + Quoted(a);
  e->Add(path, Quoted(value), "allowed values: " + list);
}

// The draft's shape: draft model, steps, top-k and draft tokens (SGLang's rules).
void CheckDraftShape(const Speculation& s, ValidationErrors* e) {
  if (s.method() == Speculation::EAGLE3 && s.draft_model().empty()) {
    e->Add("speculation.draft_model", "\"\"",
           "required for method EAGLE3: the path of the draft head's model file, e.g. "
           "\"models/eagle3-kimi-k2.textproto\"");
  }
  if (s.method() == Speculation::DRAFT_MODEL && s.draft_model().empty()) {
    e->Add("speculation.draft_model", "\"\"",
           "required for method DRAFT_MODEL: the path of the standalone draft's model file, e.g. "
           "\"models/llama-3.2-1b.textproto\"");
  }
  if (s.method() == Speculation::NGRAM && !s.draft_model().empty()) {
    e->Add("speculation.draft_model", Quoted(s.draft_model()),
           "must be empty for method NGRAM (the drafts are matched from the sequence's own tokens)");
  }
  if (s.method() == Speculation::NGRAM && !s.has_ngram()) {
    e->Add("speculation.ngram", "(unset)",
           "required for method NGRAM: match_probability (how often a sequence's recent tokens match earlier ones "
           "in your workload, per cycle) and host_match_us_per_sequence");
  }
  if (s.method() != Speculation::NGRAM && s.has_ngram()) {
    e->Add("speculation.ngram", "(set)", "only for method NGRAM");
  }
  if (s.method() == Speculation::MTP && !s.draft_model().empty()) {
    e->Add("speculation.draft_model", Quoted(s.draft_model()),
           "must be empty for method MTP (the draft is the target model's own NEXTN layers); to draft with an "
           "EAGLE-3 head instead set method EAGLE3 (and the head's acceptance)");
  }
  if (s.num_steps() == 0) {
    e->Add("speculation.num_steps", std::to_string(s.num_steps()), "must be >= 1 (--speculative-num-steps)");
  }
  if (s.topk() == 0) {
    e->Add("speculation.topk", std::to_string(s.topk()), "must be >= 1 (--speculative-eagle-topk)");
  }
  if (s.num_draft_tokens() == 0 || s.num_draft_tokens() == 1) {
    e->Add("speculation.num_draft_tokens", std::to_string(s.num_draft_tokens()),
           "must be >= 2 (--speculative-num-draft-tokens, the root included)");
  } else if (s.num_steps() >= 1 && s.topk() == 1 && s.num_draft_tokens() != int64_t{s.num_steps()} + 1) {
    e->Add("speculation.num_draft_tokens", std::to_string(s.num_draft_tokens()),
           fmt::format("must equal speculation.num_steps + 1 = {} when speculation.topk = 1 "
                       "(SGLang's rule: a chain of num_steps drafts plus the root)",
                       int64_t{s.num_steps()} + 1));
  } else if (s.num_steps() >= 1 && s.topk() > 1) {
    const int64_t most = llm::MaxTreeDraftTokens(s.num_steps(), s.topk());
    if (s.num_draft_tokens() > most) {
      e->Add("speculation.num_draft_tokens", std::to_string(s.num_draft_tokens()),
             fmt::format("must be <= 1 + topk + (num_steps - 1) * topk^2 = {} for "
                         "speculation.num_steps = {}, speculation.topk = {} (the candidates "
                         "SGLang's tree building chooses from)",
                         most, s.num_steps(), s.topk()));
    }
  }
}

// The accept-length histogram: num_steps + 1 entries (of its own shape's num_steps when given),
// finite counts or frequencies, not all zero.
void CheckAcceptLengthHistogram(const Speculation& s, ValidationErrors* e) {
  const int hist = s.accept_length_histogram_size();
  // 64-bit: the size below, and the range checks that name an out-of-range count run beside this.
  const int64_t steps = s.histogram_num_steps() > 0 ? s.histogram_num_steps() : s.num_steps();
  const char* which = s.histogram_num_steps() > 0 ? "speculation.histogram_num_steps" : "speculation.num_steps";
  if (steps >= 1 && hist != llm::AcceptLengthHistogramSize(steps)) {
    e->Add("speculation.accept_length_histogram", fmt::format("({} values)", hist),
           fmt::format("must have {} + 1 = {} values (index i = cycles that accepted i draft tokens, "
                       "i = 0..{})",
                       which, llm::AcceptLengthHistogramSize(steps), steps));
  }
  // Each count in [0, 1e15] (scenario.proto): past that their sum loses the small entries and can
  // overflow (1e308 counts gave tau 1.00).
  double sum = 0;
  bool valid = true;
  for (int i = 0; i < hist; ++i) {
    const double h = s.accept_length_histogram(i);
    if (h >= 0 && h <= 1e15) {
      sum += h;
    } else {
      valid = false;
    }
  }
  if (valid && !(sum > 0)) {
    e->Add("speculation.accept_length_histogram", "(all zero)", "the sum must be > 0");
  }
}

// The acceptance model's inputs: per-position probabilities and/or an accept-length histogram
// (of the scenario's own shape or of the one named by histogram_*).
void CheckAcceptance(const Speculation& s, const std::string& method, ValidationErrors* e) {
  const int probs = s.acceptance_probabilities_size();
  const int hist = s.accept_length_histogram_size();
  if (probs == 0 && hist == 0) {
    e->AddPlain(
        fmt::format("speculation: method {} needs acceptance: set speculation.acceptance_probabilities (per-position "
                    "acceptance p_1..p_S of the top-1 draft token, in [0, 1]) and/or "
                    "speculation.accept_length_histogram (num_steps + 1 counts, index i = i drafts accepted)",
                    method));
  }
  if (hist > 0) CheckAcceptLengthHistogram(s, e);
}

void CheckSpeculation(const Speculation& s, ValidationErrors* e) {
  const pb::EnumDescriptor* methods = Speculation::Method_descriptor();
  if (s.method() == Speculation::METHOD_UNSPECIFIED || !Speculation::Method_IsValid(s.method())) {
    e->Add("speculation.method", EnumValueName(methods, s.method()),
           "must be set when a speculation block is present, one of " + AllowedEnumValues(methods));
    return;
  }
  if (s.method() == Speculation::NONE) return;  // other fields ignored (see the header)
  CheckDraftShape(s, e);
  CheckAcceptance(s, EnumValueName(methods, s.method()), e);
}

void CheckScenario(const Scenario& sc, ValidationErrors* e) {
  if (sc.hardware().empty()) {
    e->Add("hardware", "\"\"", "required: a hardware textproto, e.g. \"configs/hardware/h200-1x.textproto\"");
  }
  if (sc.model().empty()) {
    e->Add("model", "\"\"",
           "required: a model textproto or a Hugging Face config.json, e.g. "
           "\"models/llama-3.1-8b.textproto\"");
  }

  // Required blocks; the ranges of their numbers are checked with every other (scenario.proto).
  if (!sc.has_parallelism()) e->Add("parallelism", "(absent)", "required: tensor_parallel (>= 1)");
  if (!sc.has_serving()) e->Add("serving", "(absent)", "required: batch_size (>= 1), context_length, dtypes");
  const config::Parallelism& p = sc.parallelism();
  const int tp = p.tensor_parallel();
  if (p.expert_parallel() > 1 && tp >= 1 && tp % p.expert_parallel() != 0) {
    e->Add("parallelism.expert_parallel", std::to_string(p.expert_parallel()),
           fmt::format("must divide parallelism.tensor_parallel = {}", tp));
  }
  if (p.gpus_size() > 0) {
    if (p.gpus_size() != tp) {
      e->Add("parallelism.gpus", fmt::format("({} values)", p.gpus_size()),
             fmt::format("must list parallelism.tensor_parallel = {} GPU indices, or none "
                         "(= 0..tensor_parallel-1)",
                         tp));
    }
    std::set<int> seen;
    for (int i = 0; i < p.gpus_size(); ++i) {
      if (p.gpus(i) >= 0 && !seen.insert(p.gpus(i)).second) {
        e->Add(fmt::format("parallelism.gpus[{}]", i), std::to_string(p.gpus(i)),
               "appears twice: GPU indices must be distinct");
      }
    }
  }

  const config::Serving& s = sc.serving();
  if (s.max_context_length() > 0 && s.max_context_length() < s.context_length()) {
    e->Add("serving.max_context_length", std::to_string(s.max_context_length()),
           fmt::format("must be 0 (= context_length) or >= serving.context_length = {}", s.context_length()));
  }
  // weight_dtype: required with weight_source DTYPE; unset otherwise means the checkpoint's formats.
  if (s.weight_source() == config::Serving::DTYPE || s.weight_dtype() != config::DTYPE_UNSPECIFIED) {
    CheckDType(e, "serving.weight_dtype", s.weight_dtype());
  }
  // An expert dtype alone would be dropped (no weight_dtype: the checkpoint's formats): refused.
  if (s.weight_source() == config::Serving::WEIGHT_SOURCE_UNSPECIFIED &&
      s.weight_dtype() == config::DTYPE_UNSPECIFIED && s.expert_weight_dtype() != config::DTYPE_UNSPECIFIED) {
    e->Add("serving.expert_weight_dtype", config::DType_Name(s.expert_weight_dtype()),
           "needs serving.weight_dtype (the other tensors' dtype): without it the weights are the checkpoint's "
           "formats (weight_source CHECKPOINT) and expert_weight_dtype is not used");
  }
  CheckDType(e, "serving.activation_dtype", s.activation_dtype());
  CheckDType(e, "serving.kv_cache_dtype", s.kv_cache_dtype());

  if (sc.has_speculation()) CheckSpeculation(sc.speculation(), e);

  const config::Communication& c = sc.communication();
  CheckOneOf(e, "communication.allreduce_algorithm", c.allreduce_algorithm(),
             {"", "auto", "ring", "tree", "oneshot", "twoshot"});
  CheckOneOf(e, "communication.protocol", c.protocol(), {"", "ll", "simple"});
  CheckOneOf(e, "communication.p2p_level", c.p2p_level(), {"", "pix", "pxb", "phb", "sys"});

  if (sc.has_framework_overrides()) {
    for (const std::string& problem : FrameworkOverrideProblems(sc.framework_overrides(), "framework_overrides.")) {
      e->AddPlain(problem);
    }
  }
}

// --- path resolution ---

bool ExistsOnDisk(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

std::string StripDotSlash(std::string s) {
  while (s.size() >= 2 && s.compare(0, 2, "./") == 0) s.erase(0, 2);
  return s;
}

// Resolves one path (rules in the header); empty string on failure with *looked filled.
std::string ResolveOne(const std::string& value, const fs::path& scenario_dir, bool embedded,
                       std::vector<std::string>* looked) {
  const fs::path p(value);
  if (p.is_absolute()) {
    if (ExistsOnDisk(p)) return value;
    looked->push_back(value);
    return "";
  }
  if (!embedded) {
    const fs::path local = (scenario_dir / p).lexically_normal();
    if (ExistsOnDisk(local)) return local.string();
    looked->push_back(local.string());
    // The repository root above configs/scenarios/.
    const fs::path dir = scenario_dir.lexically_normal();
    fs::path d = dir.has_filename() ? dir : dir.parent_path();
    if (d.filename() == "scenarios" && d.parent_path().filename() == "configs") {
      const fs::path root = d.parent_path().parent_path();
      const fs::path bundled = (root / p).lexically_normal();
      if (ExistsOnDisk(bundled)) return bundled.string();
      looked->push_back(bundled.string());
    }
  }
  if (ExistsOnDisk(p)) return value;
  looked->push_back(value + " (from the working directory)");
  if (EmbeddedFile(StripDotSlash(value)).has_value()) return value;
  looked->push_back("embedded copy " + StripDotSlash(value));
  return "";
}

// --- --set ---

std::string FieldNames(const pb::Descriptor* d) {
  std::string out;
  for (int i = 0; i < d->field_count(); ++i) out += (out.empty() ? "" : ", ") + std::string(d->field(i)->name());
  return out;
}

std::string Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

template <class Int>
bool ParseInteger(const std::string& text, Int* out) {
  const char* begin = text.data();
  const char* end = begin + text.size();
  if (begin != end && *begin == '+') ++begin;
  const auto [ptr, ec] = std::from_chars(begin, end, *out);
  return ec == std::errc() && ptr == end && begin != end;
}

bool ParseDouble(const std::string& text, double* out) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  *out = std::strtod(text.c_str(), &end);
  return errno == 0 && end == text.c_str() + text.size() && std::isfinite(*out);
}

// Sets (or adds, for repeated fields) one scalar from `text`; an error message (without the
// "--set" prefix) or "".
std::string SetScalar(pb::Message* msg, const pb::FieldDescriptor* f, const std::string& text) {
  const pb::Reflection* r = msg->GetReflection();
  const bool rep = f->is_repeated();
  const std::string bad = fmt::format("\"{}\" is not a valid {}", text, f->cpp_type_name());
  switch (f->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_INT32: {
      int32_t v;
      if (!ParseInteger(text, &v)) return bad + " (a 32-bit integer)";
      rep ? r->AddInt32(msg, f, v) : r->SetInt32(msg, f, v);
      return "";
    }
    case pb::FieldDescriptor::CPPTYPE_INT64: {
      int64_t v;
      if (!ParseInteger(text, &v)) return bad + " (a 64-bit integer)";
      rep ? r->AddInt64(msg, f, v) : r->SetInt64(msg, f, v);
      return "";
    }
    case pb::FieldDescriptor::CPPTYPE_UINT32: {
      uint32_t v;
      if (!ParseInteger(text, &v)) return bad + " (an unsigned 32-bit integer)";
      rep ? r->AddUInt32(msg, f, v) : r->SetUInt32(msg, f, v);
      return "";
    }
    case pb::FieldDescriptor::CPPTYPE_UINT64: {
      uint64_t v;
      if (!ParseInteger(text, &v)) return bad + " (an unsigned 64-bit integer)";
      rep ? r->AddUInt64(msg, f, v) : r->SetUInt64(msg, f, v);
      return "";
    }
    case pb::FieldDescriptor::CPPTYPE_DOUBLE:
    case pb::FieldDescriptor::CPPTYPE_FLOAT: {
      double v;
      if (!ParseDouble(text, &v)) return bad + " (a finite number)";
      if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_DOUBLE) {
        rep ? r->AddDouble(msg, f, v) : r->SetDouble(msg, f, v);
      } else {
        rep ? r->AddFloat(msg, f, static_cast<float>(v)) : r->SetFloat(msg, f, static_cast<float>(v));
      }
      return "";
    }
    case pb::FieldDescriptor::CPPTYPE_BOOL: {
      const std::string l = AsciiLower(text);
      bool v;
      if (l == "true" || l == "1") {
        v = true;
      } else if (l == "false" || l == "0") {
        v = false;
      } else {
        return bad + " (true, false, 1 or 0)";
      }
      rep ? r->AddBool(msg, f, v) : r->SetBool(msg, f, v);
      return "";
    }
    case pb::FieldDescriptor::CPPTYPE_STRING: rep ? r->AddString(msg, f, text) : r->SetString(msg, f, text); return "";
    case pb::FieldDescriptor::CPPTYPE_ENUM: {
      const pb::EnumDescriptor* e = f->enum_type();
      const pb::EnumValueDescriptor* v = e->FindValueByName(text);
      for (int i = 0; v == nullptr && i < e->value_count(); ++i) {
        if (AsciiLower(std::string(e->value(i)->name())) == AsciiLower(text)) v = e->value(i);
      }
      if (v == nullptr) {
        return fmt::format("\"{}\" is not a value of {}; allowed values: {}", text, std::string(e->full_name()),
                           AllowedEnumValues(e));
      }
      rep ? r->AddEnum(msg, f, v) : r->SetEnum(msg, f, v);
      return "";
    }
    case pb::FieldDescriptor::CPPTYPE_MESSAGE: break;
  }
  return "cannot set a message field from text";
}

// Applies to `root` in place; returns "" or an error message without the "--set" prefix.
std::string ApplyTo(pb::Message* root, const std::string& path, const std::string& value) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    parts.push_back(path.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  pb::Message* msg = root;
  std::string walked;
  for (size_t i = 0; i < parts.size(); ++i) {
    const pb::Descriptor* d = msg->GetDescriptor();
    const std::string& name = parts[i];
    const std::string at = walked.empty() ? std::string(d->full_name()) : walked;
    const pb::FieldDescriptor* f = name.empty() ? nullptr : d->FindFieldByName(name);
    if (f == nullptr) {
      return fmt::format("unknown field \"{}\" in {}; fields allowed there: {}", name, at, FieldNames(d));
    }
    walked += (walked.empty() ? "" : ".") + name;
    const bool last = i + 1 == parts.size();
    if (!last) {
      if (f->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE || f->is_repeated()) {
        return fmt::format("{} is a {}{} field, not a message: it has no field \"{}\"", walked,
                           f->is_repeated() ? "repeated " : "", f->cpp_type_name(), parts[i + 1]);
      }
      msg = msg->GetReflection()->MutableMessage(msg, f);
      continue;
    }
    if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) {
      return fmt::format("{} is a message: set one of its fields ({}.FIELD=VALUE): {}", walked, walked,
                         FieldNames(f->message_type()));
    }
    if (!f->is_repeated()) {
      const std::string error = SetScalar(msg, f, value);
      return error.empty() ? "" : fmt::format("{}: {}", walked, error);
    }
    msg->GetReflection()->ClearField(msg, f);
    if (value.empty()) return "";
    size_t from = 0;
    int index = 0;
    while (true) {
      const size_t comma = value.find(',', from);
      const std::string item =
          Trim(std::string_view(value).substr(from, comma == std::string::npos ? std::string::npos : comma - from));
      const std::string error = SetScalar(msg, f, item);
      if (!error.empty()) {
        return fmt::format("{}[{}]: {} (repeated fields take a comma list a,b,c)", walked, index, error);
      }
      if (comma == std::string::npos) break;
      from = comma + 1;
      ++index;
    }
    return "";
  }
  return "";
}

}  // namespace

Status ValidateScenario(const config::Scenario& scenario, std::string_view filename,
                        std::vector<std::string>* warnings) {
  ValidationErrors errors(filename);
  // Every number in the unit and range scenario.proto (and framework.proto, for
  // framework_overrides) declares; then the scenario's rules.
  errors.AddLines(CheckFieldRanges(scenario, filename, warnings));
  CheckScenario(scenario, &errors);
  if (!errors.empty()) return errors.ToStatus();
  return OkStatus();
}

StatusOr<config::Scenario> ParseScenario(std::string_view text, std::string_view filename) {
  ASSIGN_OR_RETURN(config::Scenario scenario, ParseTextProto<config::Scenario>(text, filename));
  RETURN_IF_ERROR(ValidateScenario(scenario, filename));
  return scenario;
}

Status ResolveScenarioPaths(config::Scenario* scenario, const std::string& scenario_path, bool embedded) {
  SPECSIM_CHECK(scenario != nullptr);
  const fs::path dir = fs::path(scenario_path).parent_path();
  const std::string display = embedded ? StripDotSlash(scenario_path) + " (embedded copy)" : scenario_path;
  ValidationErrors errors(display);
  auto resolve = [&](const std::string& field, std::string* value) {
    if (value->empty()) return;
    std::vector<std::string> looked;
    const std::string resolved = ResolveOne(*value, dir, embedded, &looked);
    if (resolved.empty()) {
      std::string places;
      for (const std::string& l : looked) places += (places.empty() ? "" : ", ") + l;
      errors.Add(field, Quoted(*value), "no such file; looked for " + places);
      return;
    }
    *value = resolved;
  };
  resolve("hardware", scenario->mutable_hardware());
  resolve("model", scenario->mutable_model());
  if (!scenario->speculation().draft_model().empty()) {
    resolve("speculation.draft_model", scenario->mutable_speculation()->mutable_draft_model());
  }
  resolve("calibration", scenario->mutable_calibration());
  resolve("framework", scenario->mutable_framework());
  if (!errors.empty()) return errors.ToStatus();
  return OkStatus();
}

StatusOr<config::Scenario> LoadScenarioFile(const std::string& path) {
  ASSIGN_OR_RETURN(LoadedScenarioFile loaded, LoadScenarioWithFramework(path));
  return std::move(loaded.scenario);
}

StatusOr<LoadedScenarioFile> LoadScenarioWithFramework(const std::string& path) {
  ASSIGN_OR_RETURN(ConfigText file, ReadConfigFile(path));
  LoadedScenarioFile loaded;
  ASSIGN_OR_RETURN(loaded.scenario, ParseScenario(file.text, file.display_name));
  RETURN_IF_ERROR(ResolveScenarioPaths(&loaded.scenario, path, file.embedded));
  ASSIGN_OR_RETURN(loaded.framework, ScenarioFramework(loaded.scenario, file.display_name));
  return loaded;
}

StatusOr<llm::FrameworkProfile> ScenarioFramework(const config::Scenario& scenario, std::string_view filename) {
  const std::string path = scenario.framework().empty() ? kDefaultFrameworkPath : scenario.framework();
  std::string display;
  StatusOr<config::FrameworkProfile> profile = LoadFrameworkProtoFile(path, &display);
  if (!profile.ok()) {
    return profile.status().WithPrefix(fmt::format("{}: framework = {}{}", filename, Quoted(path),
                                                   scenario.framework().empty() ? " (the default)" : ""));
  }
  std::vector<std::string> changes;
  if (!scenario.serving().cuda_graphs()) {
    config::PhaseCapture* c = profile->mutable_capture();
    if (c->decode() != config::EAGER || c->draft() != config::EAGER || c->verify() != config::EAGER ||
        c->draft_extend() != config::EAGER) {
      c->set_decode(config::EAGER);
      c->set_draft(config::EAGER);
      c->set_verify(config::EAGER);
      c->set_draft_extend(config::EAGER);
      changes.push_back("capture eager everywhere (serving.cuda_graphs false)");
    }
  }
  if (scenario.has_framework_overrides()) {
    const std::vector<std::string> problems =
        FrameworkOverrideProblems(scenario.framework_overrides(), "framework_overrides.");
    if (!problems.empty()) {
      ValidationErrors errors(filename);
      for (const std::string& p : problems) errors.AddPlain(p);
      return errors.ToStatus();
    }
    const std::string fields = OverriddenFrameworkFields(scenario.framework_overrides());
    MergeFrameworkOverrides(scenario.framework_overrides(), &*profile);
    if (!fields.empty()) changes.push_back("framework_overrides: " + fields);
  }
  if (changes.empty()) return FrameworkFromProto(*profile, display);
  std::string what;
  for (const std::string& c : changes) what += "; " + c;
  profile->set_source(profile->source() + what);
  return FrameworkFromProto(*profile, fmt::format("{}: framework_overrides on {}", filename, display));
}

Status ApplyOverride(config::Scenario* scenario, std::string_view assignment) {
  SPECSIM_CHECK(scenario != nullptr);
  const std::string a(assignment);
  const size_t eq = a.find('=');
  if (eq == std::string::npos || Trim(std::string_view(a).substr(0, eq)).empty()) {
    return InvalidArgumentError(
        fmt::format("--set {}: expected FIELD.PATH=VALUE, e.g. speculation.num_steps=3 or "
                    "speculation.acceptance_probabilities=0.8,0.6,0.4",
                    a));
  }
  const std::string path = Trim(std::string_view(a).substr(0, eq));
  const std::string value = Trim(std::string_view(a).substr(eq + 1));
  config::Scenario copy = *scenario;  // unchanged on error
  const std::string error = ApplyTo(&copy, path, value);
  if (!error.empty()) return InvalidArgumentError(fmt::format("--set {}: {}", a, error));
  *scenario = std::move(copy);
  return OkStatus();
}

}  // namespace specsim::io
