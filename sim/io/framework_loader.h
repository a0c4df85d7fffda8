// Loading a serving framework's profile (proto/specsim/framework.proto, text format) into the
// simulator's plain llm::FrameworkProfile (sim/llm/framework_profile.h), with every input error
// reported as a Status. Bundled profiles live in configs/frameworks/ and are embedded in the
// binary, so "configs/frameworks/sglang.textproto" loads from any directory (file_io.h).
//
// Checks of a profile (each error one line "FILE[:LINE:COL]: FIELD = VALUE: RULE", all problems
// together; LINE:COL, 1-based, of the field's name when the profile was parsed from text, or of
// the enclosing block's name for a field left unset inside it):
//   numbers: every numeric field in the unit and range framework.proto declares beside it
//     (field_ranges.h: host costs in [0, 1e6] us, jitter sigma in [0, 5], world sizes in
//     [2, 1024]);
//   name: set and non-empty; source: may be unset (= "");
//   capture.decode, capture.draft, capture.verify, capture.draft_extend: set, one of FULL,
//     PIECEWISE, EAGER (CAPTURE_MODE_UNSPECIFIED or an unknown number is an error);
//   eager_op_host_us, graph_replay_host_us, decode_step_host_us, spec_cycle_host_us: set (an
//     explicit 0 is fine);
//   host_cost_sources (framework.proto HostCostSource): for each of the four costs a kind, FITTED
//     (fitted_from and host non-empty; low_us/high_us optional, both or neither), UNMEASURED
//     (low_us, high_us and citation), DEFINITION (definition, no range); the cost within
//     [low_us, high_us] when a range is given; SCENARIO_OVERRIDE only in memory (a profile file
//     may not write it: MergeFrameworkOverrides writes it for each cost an override sets);
//     host_cost_sources.jitter non-empty;
//   sync_each_step, sync_each_cycle: set (true or false);
//   version: set and non-empty (the version of the framework's source the profile follows);
//   step_host_waits / cycle_host_waits: each named, after and waits_for among the loop's passes
//     (DECODE for a step; VERIFY, DRAFT_EXTEND, DRAFT for a cycle), waits_for the same pass or
//     one issued before it, listed in the order the host meets them, at most one earlier pass
//     waited on by event;
//   attention_backends: each with GPU architectures, cache (GQA, MLA), topk condition, backend,
//     both kernels and a source; capture modes valid where set;
//   capture_bound: unit (BATCH, TOKENS), both default bounds, memory range ordered, "{n}" in its
//     flag; speculative_defaults: every shape complete, exactly one fallback (no families), last,
//     families declared, "{n}" in the request flag when a cap is set;
//   overrides may not set version, the waits, backends, bound or defaults (another profile does);
//   jitter: absent = no jitter (NONE); present: distribution set (NONE, EXPONENTIAL, LOGNORMAL,
//     EMPIRICAL), mean_us and sigma unset = 0, then llm::ValidateJitter's rules (EMPIRICAL: >= 2
//     quantiles_us, non-decreasing).
// Overrides (a scenario's framework_overrides, scenario.proto) are partial profiles:
// FrameworkOverrideProblems checks only the fields they set (their numbers are checked with the
// scenario's, ValidateScenario);
// MergeFrameworkOverrides applies them; the merged profile is then checked as a whole.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sim/core/status.h"
#include "sim/llm/framework_profile.h"
#include "specsim/framework.pb.h"

namespace specsim::io {

// The profile a scenario runs under when it names none (scenario.proto: `framework`).
inline constexpr const char* kDefaultFrameworkPath = "configs/frameworks/sglang.textproto";

// Checks `profile` (rules above) and converts it. `display_name` prefixes every error line.
StatusOr<llm::FrameworkProfile> FrameworkFromProto(const config::FrameworkProfile& profile,
                                                   const std::string& display_name);

// Parses text-format FrameworkProfile (errors as in textproto.h) and checks it; field errors carry
// the field's line:col in `text`. The checked proto, for callers that merge overrides into it.
StatusOr<config::FrameworkProfile> ParseFrameworkProto(std::string_view text, std::string_view filename);

// ParseFrameworkProto, then the conversion.
StatusOr<llm::FrameworkProfile> ParseFramework(std::string_view text, std::string_view filename);

// A profile file read with ReadConfigFile (file_io.h): the file on disk, else the embedded copy of
// a bundled path such as "configs/frameworks/vllm.textproto" (errors then name "<path> (embedded
// copy)"). NotFound when neither exists. `display_name` (may be null) receives the name used in
// messages.
StatusOr<config::FrameworkProfile> LoadFrameworkProtoFile(const std::string& path, std::string* display_name = nullptr);
StatusOr<llm::FrameworkProfile> LoadFrameworkFile(const std::string& path);

// The problems of a partial profile, one "PREFIXFIELD = VALUE: RULE" string each (no file name):
// capture modes and the jitter distribution valid enum numbers (0 = not overridden), the rules'
// names and flags, no host_cost_sources (an overridden cost is the user's value: no band). Not the numbers' ranges (ValidateScenario checks those). Empty when fine.
std::vector<std::string> FrameworkOverrideProblems(const config::FrameworkProfile& overrides,
                                                   const std::string& prefix);

// Applies `overrides` to `*profile`: optional scalars when set, capture modes other than
// CAPTURE_MODE_UNSPECIFIED, the jitter field by field (distribution when set, mean_us and sigma
// when set, quantiles_us when non-empty, replacing the whole list); each host cost set gets the
// provenance SCENARIO_OVERRIDE (no range: simulate and advise show no band for it). REQUIRES: profile != nullptr.
void MergeFrameworkOverrides(const config::FrameworkProfile& overrides, config::FrameworkProfile* profile);

// The names of the fields `overrides` sets, e.g. "eager_op_host_us, capture.verify" ("" if none).
std::string OverriddenFrameworkFields(const config::FrameworkProfile& overrides);

}  // namespace specsim::io
