#include "sim/profile/pass_names.h"

#include <utility>

#include "sim/io/enum_names.h"
#include "sim/io/textproto.h"
#include "specsim/pass_names.pb.h"

namespace specsim::profile {
namespace {

struct BuiltinRule {
  const char* pattern;
  PassNameKind kind;
  const char* why;
};

// Ranges torch and NCCL add themselves: never passes (ignored, not listed as unmatched).
const BuiltinRule kIgnoredEverywhere[] = {
    {"^ProfilerStep#", PassNameKind::kIgnore, "torch.profiler's step ranges (prof.step())"},
    {"^nccl:", PassNameKind::kIgnore, "torch.distributed's ranges around NCCL calls (nccl:all_reduce, ...)"},
};

// Plain PyTorch: the words a user's own range names carry. A word is delimited by a non-letter or
// the name's ends; draft_extend before draft and extend, verify before draft and decode (a
// "draft_verify" range is a verify).
const BuiltinRule kPytorch[] = {
    {"(^|[^a-z])draft[ _.:-]?extend([^a-z]|$)", PassNameKind::kDraftExtend,
     "the draft's pass over the accepted tokens (draft_extend, draft extend, draftextend)"},
    {"(^|[^a-z])verify([^a-z]|$)", PassNameKind::kVerify, "a target verify (verify_pass, spec_verify)"},
    {"(^|[^a-z])draft([^a-z]|$)", PassNameKind::kDraft, "a draft step (draft_step, draft)"},
    {"(^|[^a-z])decode([^a-z]|$)", PassNameKind::kDecode, "a decode step (decode_step, forward_decode_eager)"},
    {"(^|[^a-z])(extend|prefill)([^a-z]|$)", PassNameKind::kOther, "a prefill / extend: kept, not predicted"},
};

// vLLM: GPUModelRunner.execute_model wraps its forward and its proposer in
// record_function_or_nullcontext (vllm/v1/utils.py: torch.profiler.record_function when
// VLLM_CUSTOM_SCOPES_FOR_PROFILING=1, else nothing), read in vllm-project/vllm
// vllm/v1/worker/gpu_model_runner.py (the stored version at commit
// 000fc94b754f66aeb60ef5acf1ea2e94cdc65164 imports it from vllm.v1.utils): "gpu_model_runner:
// forward" around self._model_forward(...), "gpu_model_runner: draft" around
// propose_draft_token_ids (EAGLE's proposer: the draft's extend over the accepted tokens and its
// steps, one range). vLLM's model runner v2 (vllm/v1/worker/gpu/model_runner.py) names them
// "v2_gpu_model_runner: forward"; before 0.20 the scopes were "Forward" and "Draft". The forward
// serves decode and verify alike (and prefill chunks): its kind is told by its tokens.
const BuiltinRule kVllm[] = {
    {"^(v2_)?gpu_model_runner: forward$", PassNameKind::kTarget,
     "vLLM's target forward (VLLM_CUSTOM_SCOPES_FOR_PROFILING=1)"},
    {"^(v2_)?gpu_model_runner: draft$", PassNameKind::kDraft, "vLLM's proposer (draft extend and steps, one range)"},
    {"^Forward$", PassNameKind::kTarget, "vLLM before 0.20: its target forward"},
    {"^Draft$", PassNameKind::kDraft, "vLLM before 0.20: its proposer"},
    {"^(v2_)?gpu_model_runner: ", PassNameKind::kIgnore, "vLLM's other scopes (preprocess, sample, postprocess...)"},
};

// SGLang: no range. sgl-project/sglang python/sglang/srt/managers/scheduler_profiler_mixin.py
// (commit 034c23fa9b4b0d76f9120164223561668cbf2c08) starts torch.profiler.profile around the
// scheduler's forwards (with_stack on, record_shapes off) and adds no record_function around a
// forward; its decode, target-verify and draft forwards replay CUDA graphs
// (model_executor/cuda_graph_runner.py), which the import takes as graph_replay passes. Eager
// extends are not passes.

std::regex Compile(const std::string& pattern) {
  return std::regex(pattern, std::regex::ECMAScript | std::regex::icase | std::regex::optimize);
}

void Append(const char* source, const BuiltinRule* begin, const BuiltinRule* end, PassNameMap* map) {
  int i = 0;
  for (const BuiltinRule* r = begin; r != end; ++r, ++i)
    map->rules.push_back(
        {r->pattern, r->kind, std::string(source) + " #" + std::to_string(i), r->why, Compile(r->pattern)});
}

template <size_t N>
void Append(const char* source, const BuiltinRule (&rules)[N], PassNameMap* map) {
  Append(source, rules, rules + N, map);
}

PassNameKind KindOfProto(config::PassNameKind k) {
  switch (k) {
    case config::PASS_DECODE: return PassNameKind::kDecode;
    case config::PASS_VERIFY: return PassNameKind::kVerify;
    case config::PASS_DRAFT: return PassNameKind::kDraft;
    case config::PASS_DRAFT_EXTEND: return PassNameKind::kDraftExtend;
    case config::PASS_TARGET: return PassNameKind::kTarget;
    case config::PASS_OTHER: return PassNameKind::kOther;
    default: return PassNameKind::kIgnore;
  }
}

}  // namespace

const char* PassNameKindName(PassNameKind kind) {
  switch (kind) {
    case PassNameKind::kDecode: return "decode";
    case PassNameKind::kVerify: return "verify";
    case PassNameKind::kDraft: return "draft";
    case PassNameKind::kDraftExtend: return "draft_extend";
    case PassNameKind::kTarget: return "target";
    case PassNameKind::kOther: return "other";
    case PassNameKind::kIgnore: return "ignore";
  }
  return "ignore";
}

std::string PassNameRule::Describe() const { return source + " /" + pattern + "/ -> " + PassNameKindName(kind); }

int PassNameRule::TokensIn(const std::string& range_name) const {
  if (tokens_group <= 0) return 0;
  std::smatch m;
  if (!std::regex_search(range_name, m, re) || tokens_group >= static_cast<int>(m.size())) return 0;
  const std::string digits = m[tokens_group].str();
  if (digits.empty() || digits.size() > 6 || digits.find_first_not_of("0123456789") != std::string::npos) return 0;
  return std::stoi(digits);
}

const PassNameRule* PassNameMap::Match(const std::string& range_name) const {
  for (const PassNameRule& r : rules)
    if (std::regex_search(range_name, r.re)) return &r;
  return nullptr;
}

StatusOr<PassNameMap> BuiltinPassNameMap(const std::string& which) {
  PassNameMap map;
  if (which == "none") return map;
  if (which != "pytorch" && which != "vllm" && which != "sglang" && which != "auto")
    return InvalidArgumentError("--names '" + which + "': expected one of sglang, vllm, pytorch, auto, none");
  Append("builtin", kIgnoredEverywhere, &map);
  if (which == "vllm" || which == "auto") Append("vllm", kVllm, &map);
  if (which == "pytorch" || which == "auto") Append("pytorch", kPytorch, &map);
  return map;
}

PassNameMap DefaultPassNameMap() { return *BuiltinPassNameMap("auto"); }

PassNameMap ExactPassNameMap(const std::vector<std::string>& names) {
  PassNameMap map;
  for (const std::string& n : names) {
    const PassNameKind kind = n == "decode"         ? PassNameKind::kDecode
                              : n == "verify"       ? PassNameKind::kVerify
                              : n == "draft"        ? PassNameKind::kDraft
                              : n == "draft_extend" ? PassNameKind::kDraftExtend
                                                    : PassNameKind::kOther;
    // The name as a literal: every regex metacharacter escaped.
    std::string literal;
    for (char c : n) {
      if (std::string("\\^$.|?*+()[]{}").find(c) != std::string::npos) literal += '\\';
      literal += c;
    }
    PassNameRule r{"^" + literal + "$", kind, "--phases " + n, "an exact range name", {}};
    r.re = std::regex(r.pattern, std::regex::ECMAScript);  // exact: case-sensitive, as --phases was
    map.rules.push_back(std::move(r));
  }
  return map;
}

StatusOr<PassNameMap> ParsePassNameMap(std::string_view text, std::string_view filename) {
  ASSIGN_OR_RETURN(const config::PassNameMap proto, io::ParseTextProto<config::PassNameMap>(text, filename));
  PassNameMap map;
  const std::string file(filename);
  for (int i = 0; i < proto.rules_size(); ++i) {
    const config::PassNameRule& r = proto.rules(i);
    const std::string where = file + ": rules[" + std::to_string(i) + "]";
    if (r.pattern().empty())
      return InvalidArgumentError(where +
                                  ".pattern is empty: a regular expression over the range's name (e.g. "
                                  "\"^decode_step$\")");
    if (r.kind() == config::PASS_NAME_KIND_UNSPECIFIED)
      return InvalidArgumentError(where + ".kind is not set: one of " +
                                  io::AllowedEnumValues(config::PassNameKind_descriptor()));
    PassNameRule rule{r.pattern(), KindOfProto(r.kind()), where, r.why(), {}};
    try {
      rule.re = Compile(r.pattern());
    } catch (const std::regex_error& e) {
      return InvalidArgumentError(where + ".pattern \"" + r.pattern() +
                                  "\" is not a regular expression (ECMAScript): " + e.what());
    }
    rule.tokens_group = r.tokens_group();
    if (r.tokens_group() < 0 || r.tokens_group() > static_cast<int>(rule.re.mark_count()))
      return InvalidArgumentError(where + ".tokens_group = " + std::to_string(r.tokens_group()) + ": the pattern has " +
                                  std::to_string(rule.re.mark_count()) +
                                  " capture groups (0: the name does not give the tokens)");
    map.rules.push_back(std::move(rule));
  }
  if (map.rules.empty())
    return InvalidArgumentError(file + ": no rules: a name map holds `rules { pattern: \"...\" kind: PASS_DECODE }`");
  return map;
}

StatusOr<PassNameMap> LoadPassNameMapFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, io::ReadFileToString(path));
  return ParsePassNameMap(text, path);
}

PassNameMap ConcatPassNameMaps(PassNameMap first, const PassNameMap& then) {
  first.rules.insert(first.rules.end(), then.rules.begin(), then.rules.end());
  return first;
}

}  // namespace specsim::profile
