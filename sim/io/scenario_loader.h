// Loading a serving scenario (proto/specsim/scenario.proto, text format), checking it, resolving
// the files it names, and `--set field.path=value` overrides.
//
// Checks of ValidateScenario (each error "FILE: FIELD = VALUE: RULE", all problems together):
//   numbers: every numeric field in the unit and range scenario.proto (framework.proto for
//     framework_overrides) declares beside it (field_ranges.h): e.g. tensor_parallel in [1, 1024],
//     batch_size in [1, 1e6], speculation.num_steps and topk in [0, 64], num_draft_tokens in
//     [0, 4096], acceptance probabilities in [0, 1], histogram counts in [0, 1e15], cycles in
//     [0, 1e6], channels in [0, 64]; values no hardware or software of today has are warnings;
//   hardware, model non-empty; parallelism and serving present;
//   parallelism.expert_parallel, when > 1, divides tensor_parallel; gpus empty or exactly
//     tensor_parallel distinct indices;
//   serving.max_context_length 0 or >= context_length; activation_dtype, kv_cache_dtype set
//     (BF16, FP8, FP4, INT4); weight_dtype set when weight_source is DTYPE (unset with
//     weight_source unset: the checkpoint's formats, and then expert_weight_dtype must be unset
//     too);
//   speculation: no `speculation` block means no speculation. With a block, method must be set
//     (NONE, EAGLE3, MTP). NONE ignores every other speculation field (so `--set
//     speculation.method=NONE` gives the baseline of a speculative scenario). EAGLE3 needs
//     draft_model; MTP must leave it empty (the draft is the target's own NEXTN layer). Both:
//     num_steps >= 1, topk >= 1, num_draft_tokens >= 2; topk == 1 needs num_draft_tokens ==
//     num_steps + 1 (SGLang's rule for chains); topk > 1 needs num_draft_tokens <= 1 + topk +
//     (num_steps - 1) * topk^2 (the candidates SGLang's tree building chooses from); at least
//     one of acceptance_probabilities or accept_length_histogram (num_steps + 1 values, sum > 0;
//     index i = cycles that accepted i drafts);
//   communication.allreduce_algorithm in {"", auto, ring, tree, oneshot, twoshot}; protocol in
//     {"", ll, simple}; p2p_level in {"", pix, pxb, phb, sys};
//   framework_overrides: only the fields set (framework_loader.h: valid capture modes and jitter
//     distribution). The profile itself is checked by ScenarioFramework.
//
// The framework profile (ScenarioFramework): the file `framework` names (empty:
// kDefaultFrameworkPath, "configs/frameworks/sglang.textproto"), loaded with
// LoadFrameworkProtoFile; then, when serving.cuda_graphs is false, every capture mode EAGER
// (whichever profile: cuda_graphs false means no CUDA graphs, so `--set serving.cuda_graphs=false`
// keeps working on scenarios that name a profile); then framework_overrides merged
// (MergeFrameworkOverrides: set scalars, capture modes other than CAPTURE_MODE_UNSPECIFIED, jitter
// field by field); then the whole profile checked. When the rule or overrides changed anything,
// the profile's `source` says what ("...; capture eager everywhere (serving.cuda_graphs false);
// framework_overrides: eager_op_host_us") and its name is kept.
//
// Path resolution (LoadScenarioFile; the fields hardware, model, speculation.draft_model,
// calibration and framework): an absolute path is kept. A relative path P is looked up
//   1. relative to the scenario file's directory: DIR/P, when that file exists on disk;
//   2. as a repository-relative path: when the scenario sits in a directory ending in
//      "configs/scenarios", ROOT/P with ROOT the directory above configs/, when it exists;
//   3. else P is kept as given: it is then read relative to the working directory, or else from
//      the embedded copy of a bundled file of that name (file_io.h). So bundled scenarios say
//      `model: "models/kimi-k2.textproto"` and work from any directory, from disk or embedded.
// A path found by none of these is an error naming the field and every place looked at.
// Paths set by ApplyOverride are not resolved again: they are relative to the working directory
// or bundled paths (rule 3).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sim/core/status.h"
#include "sim/llm/framework_profile.h"
#include "specsim/scenario.pb.h"

namespace specsim::io {

// Checks `scenario` (rules above); `filename` prefixes every error message and warning (values no
// hardware or software of today has, added to `warnings` when given).
Status ValidateScenario(const config::Scenario& scenario, std::string_view filename,
                        std::vector<std::string>* warnings = nullptr);

// Parses a text-format Scenario (errors as in textproto.h) and validates it. Paths are left as
// written.
StatusOr<config::Scenario> ParseScenario(std::string_view text, std::string_view filename);

// Rewrites the relative paths of `scenario` as described above for a scenario read from
// `scenario_path` (`embedded`: it was the embedded copy, so only rule 3 applies). InvalidArgument
// naming the field when a file is found nowhere. REQUIRES: scenario != nullptr.
Status ResolveScenarioPaths(config::Scenario* scenario, const std::string& scenario_path, bool embedded);

// ReadConfigFile (disk, else the embedded copy of a bundled path such as
// "configs/scenarios/kimi-k2-eagle3-rtxpro6000-8x.textproto"), ParseScenario,
// ResolveScenarioPaths, then ScenarioFramework (so a scenario whose profile does not load or
// check fails here; the profile itself is dropped: see LoadScenarioWithFramework).
StatusOr<config::Scenario> LoadScenarioFile(const std::string& path);

// The framework profile `scenario` runs under (rules above), its paths already resolved.
// `filename` prefixes every error; errors in the profile file name that file (and its line:col).
// Call it again after --set overrides (they may change framework, framework_overrides or
// serving.cuda_graphs).
StatusOr<llm::FrameworkProfile> ScenarioFramework(const config::Scenario& scenario, std::string_view filename);

// A scenario file loaded with its framework profile.
struct LoadedScenarioFile {
  config::Scenario scenario;        // paths resolved (LoadScenarioFile)
  llm::FrameworkProfile framework;  // ScenarioFramework(scenario)
};

// LoadScenarioFile, keeping the profile.
StatusOr<LoadedScenarioFile> LoadScenarioWithFramework(const std::string& path);

// Applies one `--set` assignment "field.path=value" to `scenario` through protobuf reflection:
// the path walks nested messages by field name (e.g. speculation.num_steps); scalars parse from
// the value (integers, floating point, bool as true/false/1/0, strings as written); enums by
// value name (case-insensitive, e.g. speculation.method=EAGLE3 or eagle3); repeated scalar
// fields take a comma list "a,b,c" that replaces the whole list ("" empties it).
// InvalidArgument starting "--set ASSIGNMENT:" for a malformed assignment, an unknown field (the
// message lists the fields allowed at that level), a message-typed target, a bad number, or an
// unknown enum value (the message lists the allowed values). `*scenario` is unchanged on error.
// Run ValidateScenario after the last override. REQUIRES: scenario != nullptr.
Status ApplyOverride(config::Scenario* scenario, std::string_view assignment);

}  // namespace specsim::io
