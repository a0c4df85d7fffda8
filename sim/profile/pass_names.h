// The pass name map: which host ranges of a profile are passes of the decode loop, and of which
// kind. Ordered rules, each a regular expression over the range's name (ECMAScript, searched
// anywhere in the name, case-insensitive) and a kind; the first rule that matches gives the kind,
// a range no rule matches is not a pass (the import lists such names so that a user can extend the
// map). Built-in maps (BuiltinPassNameMap):
//
//   pytorch  plain PyTorch code's own names: the words decode / verify / draft / extend anywhere in
//            the name, delimited by non-letters ("decode_step", "forward_decode_eager",
//            "verify_pass", "draft_extend"); draft_extend (and "draft extend", "draftextend") is
//            tried before draft and extend, verify before draft and decode.
//   vllm     vLLM's record_function scopes (with VLLM_CUSTOM_SCOPES_FOR_PROFILING=1):
//            "gpu_model_runner: forward" (a target forward: decode or verify by its tokens),
//            "gpu_model_runner: draft" (the proposer: its draft steps), and the pre-0.20 names.
//   sglang   none around passes: SGLang's profiler adds no range around a forward; its decode
//            and verify forwards are CUDA-graph replays (the import's graph_replay passes).
//   auto     vllm's, then pytorch's (sglang adds none).
// Every built-in map ignores the ranges torch and NCCL add themselves (ProfilerStep#N,
// nccl:all_reduce, ...), which are never passes.
//
// A user's map (a PassNameMap textproto, proto/specsim/pass_names.proto) goes before the built-in
// one; --phases' exact names (the old option) are rules of their own (ExactPassNameMap).
#pragma once

#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/status.h"

namespace specsim::profile {

// The kinds a rule gives (pass_names.proto PassNameKind).
enum class PassNameKind { kDecode, kVerify, kDraft, kDraftExtend, kTarget, kOther, kIgnore };

// "decode", "verify", "draft", "draft_extend", "target", "other", "ignore".
const char* PassNameKindName(PassNameKind kind);

struct PassNameRule {
  std::string pattern;
  PassNameKind kind = PassNameKind::kIgnore;
  std::string source;    // where the rule comes from: "pytorch #2", "names.textproto rules[0]", ...
  std::string why;       // what it stands for (the framework code that names the range)
  std::regex re;         // `pattern`, compiled (icase)
  int tokens_group = 0;  // the capture group holding the pass's tokens per sequence (0: none)
  // The tokens per sequence `range_name` states through tokens_group (a positive integer), or 0.
  int TokensIn(const std::string& range_name) const;
  // "pytorch #2 /verify/ -> verify"
  std::string Describe() const;
};

struct PassNameMap {
  std::vector<PassNameRule> rules;
  // The first rule matching `range_name`, or null.
  const PassNameRule* Match(const std::string& range_name) const;
};

// The built-in map `which`: "pytorch", "vllm", "sglang", "auto" or "none" (no rule); else
// InvalidArgument naming the flag and the allowed values.
StatusOr<PassNameMap> BuiltinPassNameMap(const std::string& which);

// BuiltinPassNameMap("auto").
PassNameMap DefaultPassNameMap();

// One rule per name, the exact name (^name$), of the kind its name says (decode, verify, draft,
// draft_extend; any other name: other).
PassNameMap ExactPassNameMap(const std::vector<std::string>& names);

// A PassNameMap textproto: InvalidArgument naming `filename`, the rule (rules[i]) and the field
// for an empty pattern, a pattern that is not a regular expression, or a kind left unspecified.
StatusOr<PassNameMap> ParsePassNameMap(std::string_view text, std::string_view filename);
StatusOr<PassNameMap> LoadPassNameMapFile(const std::string& path);

// `first`'s rules, then `then`'s.
PassNameMap ConcatPassNameMaps(PassNameMap first, const PassNameMap& then);

}  // namespace specsim::profile
