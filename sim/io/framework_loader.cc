#include "sim/io/framework_loader.h"

#include <fmt/format.h>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/text_format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/io/enum_names.h"
#include "sim/io/field_ranges.h"
#include "sim/io/file_io.h"
#include "sim/io/model_loader.h"
#include "sim/io/textproto.h"

namespace specsim::io {
namespace {

namespace pb = google::protobuf;
using config::FrameworkProfile;
using config::Jitter;
using config::PhaseCapture;

constexpr const char* kCostFields[] = {"eager_op_host_us", "graph_replay_host_us", "decode_step_host_us",
                                       "spec_cycle_host_us", "tensor_op_host_us"};
constexpr const char* kPhases[] = {"decode", "draft", "verify", "draft_extend"};

std::string Number(double v) { return fmt::format("{}", v); }

// One problem: the field path (dots, "[i]" for repeated elements), its value, the rule.
struct Problem {
  std::string path;
  std::string value;
  std::string rule;
};

// The 1-based "LINE:COL" of the field at `path` in the parsed text, or of the innermost message on
// the way that appears there; "" when unknown.
std::string LocationOf(const pb::TextFormat::ParseInfoTree* tree, const std::string& path) {
  if (tree == nullptr) return "";
  const pb::Descriptor* d = FrameworkProfile::descriptor();
  std::string found;
  size_t start = 0;
  while (d != nullptr && tree != nullptr) {
    const size_t dot = path.find('.', start);
    std::string name = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    int index = -1;
    if (const size_t bracket = name.find('['); bracket != std::string::npos) {
      index = std::atoi(name.c_str() + bracket + 1);
      name.resize(bracket);
    }
    const pb::FieldDescriptor* f = d->FindFieldByName(name);
    if (f == nullptr) break;
    if (f->is_repeated() && index < 0) index = 0;  // the list as a whole: its first element
    const pb::TextFormat::ParseLocation loc = tree->GetLocation(f, index);
    if (loc.line < 0) break;
    found = fmt::format("{}:{}", loc.line + 1, loc.column + 1);
    if (dot == std::string::npos || f->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE) break;
    tree = tree->GetTreeForNested(f, index);
    d = f->message_type();
    start = dot + 1;
  }
  return found;
}

// The serving framework's custom-allreduce rule (world sizes, NVLink limit, size limit).
void CheckCustomAllreduceRule(const config::CustomAllreduceRule& c, bool partial, std::vector<Problem>* out) {
  if (!partial && c.world_sizes_size() == 0)
    out->push_back({"custom_allreduce.world_sizes", "(empty)",
                    "required when custom_allreduce is given: the world sizes its kernel supports, e.g. [2, 4, 6, 8]"});
}

// The NCCL environment: whether the user's passes through, and what the framework sets itself.
void CheckNcclEnvironment(const config::NcclEnvironment& e, bool partial, std::vector<Problem>* out) {
  if (!partial && !e.has_passes_user_environment())
    out->push_back({"nccl_environment.passes_user_environment", "(unset)",
                    "required when nccl_environment is given: true (workers inherit the shell's NCCL_* "
                    "variables) or false"});
  for (const auto& [list, field] : {std::pair{&e.sets(), "sets"}, std::pair{&e.sets_if_unset(), "sets_if_unset"}}) {
    for (int i = 0; i < list->size(); ++i) {
      const std::string& name = list->Get(i).name();
      if (name.empty() || name.find_first_of(" =\t") != std::string::npos)
        out->push_back({fmt::format("nccl_environment.{}[{}].name", field, i), "\"" + name + "\"",
                        "must be a variable name, non-empty, without spaces or '=' (e.g. NCCL_CUMEM_ENABLE)"});
    }
  }
}

// The capture flags: phases by name, modes set, flags non-empty, "{n}" in the batch-size flag.
void CheckGraphFlags(const config::GraphCaptureFlags& g, std::vector<Problem>* out) {
  if (g.has_max_batch_size() && g.max_batch_size().find("{n}") == std::string::npos)
    out->push_back({"graph_flags.max_batch_size", "\"" + g.max_batch_size() + "\"",
                    "must hold {n} where the batch size goes, e.g. \"--cuda-graph-max-bs {n}\""});
  const pb::EnumDescriptor* modes = config::CaptureMode_descriptor();
  for (int i = 0; i < g.phase_flags_size(); ++i) {
    const config::PhaseModeFlag& f = g.phase_flags(i);
    const std::string at = fmt::format("graph_flags.phase_flags[{}]", i);
    if (std::none_of(std::begin(kPhases), std::end(kPhases), [&](const char* p) { return f.phase() == p; }))
      out->push_back({at + ".phase", "\"" + f.phase() + "\"", "must be one of decode, draft, verify, draft_extend"});
    if (f.mode() == config::CAPTURE_MODE_UNSPECIFIED || !config::CaptureMode_IsValid(f.mode()))
      out->push_back({at + ".mode", EnumValueName(modes, f.mode()), "must be set, one of " + AllowedEnumValues(modes)});
    if (f.flag().empty()) out->push_back({at + ".flag", "\"\"", "must be non-empty: the launch flag"});
  }
}

// EP: how it is enabled, what it communicates, its all-to-all backends.
void CheckExpertParallel(const config::ExpertParallelRule& e, bool partial, std::vector<Problem>* out) {
  if (!partial && e.enable_flag().empty())
    out->push_back({"expert_parallel.enable_flag", e.has_enable_flag() ? "\"\"" : "(unset)",
                    "required when expert_parallel is given: the launch flag, \"{n}\" for the EP size"});
  const pb::EnumDescriptor* comms = config::EpCommunication_descriptor();
  const int c = e.default_communication();
  if ((!partial && c == config::EP_COMMUNICATION_UNSPECIFIED) ||
      (c != config::EP_COMMUNICATION_UNSPECIFIED && !config::EpCommunication_IsValid(c)))
    out->push_back({"expert_parallel.default_communication", EnumValueName(comms, c),
                    "must be set, one of " + AllowedEnumValues(comms)});
  for (int i = 0; i < e.all_to_all_backends_size(); ++i) {
    const config::AllToAllBackend& b = e.all_to_all_backends(i);
    const std::string at = fmt::format("expert_parallel.all_to_all_backends[{}]", i);
    if (b.name().empty()) out->push_back({at + ".name", "\"\"", "must be non-empty, e.g. \"deepep\""});
    if (b.flag().empty() == b.env().empty())
      out->push_back({at, "flag \"" + b.flag() + "\", env \"" + b.env() + "\"",
                      "exactly one of flag (a launch flag) and env (NAME=VALUE) selects the backend"});
    if (!b.env().empty() && b.env().find('=') == std::string::npos)
      out->push_back({at + ".env", "\"" + b.env() + "\"", "must be NAME=VALUE"});
  }
}

// The loop's host waits: named, placed on passes of their loop, an event only on an earlier pass;
// a cycle's in the order the host meets them.
void CheckHostWaits(const FrameworkProfile& p, std::vector<Problem>* out) {
  const pb::EnumDescriptor* passes = config::LoopPass_descriptor();
  using Workers = config::CycleOps;
  // `worker`: the waits one worker meets (a wait of every worker counts for each), for the order and
  // event rules; WORKERS_UNSPECIFIED: every wait, for the rest.
  auto check = [&](const pb::RepeatedPtrField<config::HostWait>& waits, const char* field, bool cycle,
                   config::CycleOps::Workers worker) {
    auto met = [worker](const config::HostWait& w) {
      return worker == Workers::WORKERS_UNSPECIFIED || w.workers() == Workers::WORKERS_UNSPECIFIED ||
             w.workers() == Workers::DRAFTING_AND_NGRAM || w.workers() == worker;
    };
    const bool order_only = worker != Workers::WORKERS_UNSPECIFIED;
    int last = 0;
    for (int i = 0; i < waits.size(); ++i) {
      const config::HostWait& w = waits.Get(i);
      if (!met(w)) continue;
      const std::string at = fmt::format("{}[{}]", field, i);
      if (!order_only) {
        if (!cycle && w.workers() != Workers::WORKERS_UNSPECIFIED)
          out->push_back({at + ".workers", EnumValueName(Workers::Workers_descriptor(), w.workers()),
                          "only a cycle's wait names its workers (a plain step has no speculative worker)"});
        if (cycle && !Workers::Workers_IsValid(w.workers()))
          out->push_back({at + ".workers", EnumValueName(Workers::Workers_descriptor(), w.workers()),
                          "must be DRAFTING, NGRAM, DRAFTING_AND_NGRAM or unset (every worker)"});
        if (w.workers() == Workers::NGRAM && (w.after() != config::VERIFY || w.waits_for() != config::VERIFY))
          out->push_back({at + ".after", EnumValueName(passes, w.after()),
                          "an n-gram worker's wait is after VERIFY, waiting for VERIFY (its cycle has no draft)"});
      }
      if (!order_only && w.name().empty())
        out->push_back({at + ".name", "\"\"", "must name what waits, as the source writes it"});
      const int a = w.after(), f = w.waits_for();
      auto of_loop = [cycle](int pass) {
        return cycle ? (pass == config::VERIFY || pass == config::DRAFT_EXTEND || pass == config::DRAFT)
                     : pass == config::DECODE;
      };
      const bool a_ok = of_loop(a), f_ok = of_loop(f);
      const std::string allowed = cycle ? "VERIFY, DRAFT_EXTEND, DRAFT" : "DECODE";
      if (!order_only && !a_ok) out->push_back({at + ".after", EnumValueName(passes, a), "must be one of " + allowed});
      if (!order_only && !f_ok)
        out->push_back({at + ".waits_for", EnumValueName(passes, f), "must be one of " + allowed});
      if (!order_only && a_ok && f_ok && f > a)
        out->push_back({at + ".waits_for", EnumValueName(passes, f),
                        "must be `after` (" + EnumValueName(passes, a) +
                            ") or a pass issued before it in the cycle (verify, draft extend, draft)"});
      if (a_ok && a < last && (order_only || !cycle))
        out->push_back({at + ".after", EnumValueName(passes, a),
                        "waits are listed in the order the host meets them: after " + EnumValueName(passes, last) +
                            " comes before"});
      if (a_ok) last = std::max(last, a);
    }
    // One event per cycle: the waits on an earlier pass all wait on the same one.
    int event_pass = 0;
    for (int i = 0; i < waits.size() && (order_only || !cycle); ++i) {
      const config::HostWait& w = waits.Get(i);
      if (!met(w) || w.waits_for() == w.after() || w.waits_for() == config::LOOP_PASS_UNSPECIFIED) continue;
      if (event_pass != 0 && w.waits_for() != event_pass)
        out->push_back({fmt::format("{}[{}].waits_for", field, i), EnumValueName(passes, w.waits_for()),
                        "the cycle records one event: every wait on an earlier pass waits on the same one (" +
                            EnumValueName(passes, event_pass) + ")"});
      event_pass = w.waits_for();
    }
  };
  check(p.step_host_waits(), "step_host_waits", /*cycle=*/false, Workers::WORKERS_UNSPECIFIED);
  check(p.cycle_host_waits(), "cycle_host_waits", /*cycle=*/true, Workers::WORKERS_UNSPECIFIED);
  // The order the host meets them and the cycle's one event, for the drafting workers (an n-gram
  // worker's own waits are all after its verify, on its verify: no order or event to check).
  check(p.cycle_host_waits(), "cycle_host_waits", /*cycle=*/true, Workers::DRAFTING);
}

// The cycle's own launches: named, cited, before a pass of the cycle, not empty.
void CheckCycleOps(const FrameworkProfile& p, std::vector<Problem>* out) {
  const pb::EnumDescriptor* passes = config::LoopPass_descriptor();
  for (int i = 0; i < p.cycle_ops_size(); ++i) {
    const config::CycleOps& c = p.cycle_ops(i);
    const std::string at = fmt::format("cycle_ops[{}]", i);
    if (c.name().empty()) out->push_back({at + ".name", "\"\"", "must name the work as the source does"});
    if (c.source().empty()) out->push_back({at + ".source", "\"\"", "must cite repo, path @commit and function"});
    if (c.before() != config::VERIFY && c.before() != config::DRAFT_EXTEND && c.before() != config::DRAFT)
      out->push_back({at + ".before", EnumValueName(passes, c.before()), "must be one of VERIFY, DRAFT_EXTEND, DRAFT"});
    if (c.kernels() + c.kernels_per_sequence() < 1)
      out->push_back({at + ".kernels", std::to_string(c.kernels()),
                      "kernels + kernels_per_sequence must be at least 1 (an empty group says nothing)"});
    if (c.every_draft_step() && c.before() != config::DRAFT)
      out->push_back({at + ".every_draft_step", "true",
                      "only with before: DRAFT (the draft steps are the only pass met several times a cycle)"});
    if ((c.every_draft_step() || c.draft_vocab_map()) && c.workers() != config::CycleOps::DRAFTING)
      out->push_back({at + ".workers", EnumValueName(config::CycleOps::Workers_descriptor(), c.workers()),
                      "must be DRAFTING with every_draft_step or draft_vocab_map (the n-gram worker has no draft "
                      "steps and no draft head)"});
    if (c.workers() == config::CycleOps::WORKERS_UNSPECIFIED || !config::CycleOps::Workers_IsValid(c.workers()))
      out->push_back({at + ".workers", EnumValueName(config::CycleOps::Workers_descriptor(), c.workers()),
                      "must be set: DRAFTING, NGRAM or DRAFTING_AND_NGRAM"});
  }
}

// The attention backend rules: where they apply, what they run, where that was read.
void CheckAttentionBackends(const FrameworkProfile& p, std::vector<Problem>* out) {
  const pb::EnumDescriptor* modes = config::CaptureMode_descriptor();
  for (int i = 0; i < p.attention_backends_size(); ++i) {
    const config::AttentionBackendRule& b = p.attention_backends(i);
    const std::string at = fmt::format("attention_backends[{}]", i);
    if (b.gpu_archs_size() == 0)
      out->push_back({at + ".gpu_archs", "(empty)", "required: the GPU architectures, e.g. \"sm90\""});
    if (b.cache() == config::ATTENTION_CACHE_UNSPECIFIED || !config::AttentionCache_IsValid(b.cache()))
      out->push_back({at + ".cache", EnumValueName(config::AttentionCache_descriptor(), b.cache()),
                      "must be set, one of GQA, MLA"});
    if (b.topk() == config::TOPK_CONDITION_UNSPECIFIED || !config::TopkCondition_IsValid(b.topk()))
      out->push_back({at + ".topk", EnumValueName(config::TopkCondition_descriptor(), b.topk()),
                      "must be set, one of ANY_TOPK, TOPK_ONE, TOPK_ABOVE_ONE"});
    for (const auto& [field, value] : {std::pair<const char*, const std::string*>{"backend", &b.backend()},
                                       {"decode_kernel", &b.decode_kernel()},
                                       {"verify_kernel", &b.verify_kernel()},
                                       {"source", &b.source()}})
      if (value->empty()) out->push_back({at + "." + field, "\"\"", "required, non-empty"});
    if (b.has_gqa_draft_decode_kernel() != b.has_gqa_draft_verify_kernel() ||
        (b.has_gqa_draft_decode_kernel() &&
         (b.gqa_draft_decode_kernel().empty() || b.gqa_draft_verify_kernel().empty())))
      out->push_back({at + ".gqa_draft_decode_kernel", b.gqa_draft_decode_kernel(),
                      "set both gqa_draft_decode_kernel and gqa_draft_verify_kernel, non-empty, or neither"});
    if (b.has_gqa_draft_decode_kernel() && b.cache() != config::MLA)
      out->push_back({at + ".gqa_draft_decode_kernel", b.gqa_draft_decode_kernel(),
                      "only with cache: MLA (a GQA backend's own decode_kernel / verify_kernel serve its draft)"});
    const pb::Descriptor* cd = PhaseCapture::descriptor();
    for (const char* phase : kPhases) {
      const int mode = b.capture().GetReflection()->GetEnumValue(b.capture(), cd->FindFieldByName(phase));
      if (mode != config::CAPTURE_MODE_UNSPECIFIED && !config::CaptureMode_IsValid(mode))
        out->push_back(
            {at + ".capture." + phase, EnumValueName(modes, mode), "must be one of " + AllowedEnumValues(modes)});
    }
  }
}

// The kernel inventory: every field set in a block, with its source.
void CheckKernelInventory(const config::KernelInventory& k, std::vector<Problem>* out) {
  if (!k.has_fused_add_rmsnorm() || !k.has_fused_rope_kv_store() || !k.has_rotary_kernels() ||
      !k.has_rotary_per_tensor() || !k.has_kv_store_kernels() || !k.has_fused_activation() || !k.has_query_copy() ||
      !k.has_strided_views() || !k.has_merge_heads_copy() || !k.has_mask_bias_above_q1())
    out->push_back({"kernel_inventory", "(a field unset)",
                    "every field is required in a kernel_inventory block: fused_add_rmsnorm, fused_rope_kv_store, "
                    "rotary_kernels, rotary_per_tensor, kv_store_kernels, fused_activation, query_copy, strided_views, "
                    "merge_heads_copy, mask_bias_above_q1"});
  if (k.source().empty())
    out->push_back({"kernel_inventory.source", "\"\"", "required: where the inventory was read (code, a profile)"});
}

// The speculation methods, the capture bound and the speculative defaults.
void CheckBoundsAndDefaults(const FrameworkProfile& p, std::vector<Problem>* out) {
  if (p.has_graph_pool()) {
    const config::GraphPool& g = p.graph_pool();
    const pb::EnumDescriptor* outputs = config::GraphPool::Outputs_descriptor();
    const pb::EnumDescriptor* output = config::GraphPool::Output_descriptor();
    if (g.outputs() == config::GraphPool::OUTPUTS_UNSPECIFIED || !config::GraphPool::Outputs_IsValid(g.outputs()))
      out->push_back({"graph_pool.outputs", EnumValueName(outputs, g.outputs()),
                      "must be set, one of " + AllowedEnumValues(outputs)});
    if (g.output() == config::GraphPool::OUTPUT_UNSPECIFIED || !config::GraphPool::Output_IsValid(g.output()))
      out->push_back(
          {"graph_pool.output", EnumValueName(output, g.output()), "must be set, one of " + AllowedEnumValues(output)});
    for (int i = 0; i < g.small_sizes_size(); ++i)
      if (g.small_sizes(i) < 1)
        out->push_back(
            {fmt::format("graph_pool.small_sizes[{}]", i), std::to_string(g.small_sizes(i)), "must be >= 1"});
    if (g.source().empty()) out->push_back({"graph_pool.source", "\"\"", "required: where it was read"});
  }
  if (p.has_speculation_methods()) {
    const config::SpeculationMethods& m = p.speculation_methods();
    if (m.source().empty())
      out->push_back({"speculation_methods.source", "\"\"", "required: where each fact was read (repo, path @commit)"});
    if (!m.has_ngram_verify_padded() && !m.ngram_launch().empty())
      out->push_back({"speculation_methods.ngram_verify_padded", "(unset)",
                      "required with ngram_launch: whether every sequence verifies num_draft_tokens every cycle"});
    const config::CaptureMode ragged = m.ngram_ragged_verify_capture();
    const google::protobuf::EnumDescriptor* modes = config::CaptureMode_descriptor();
    if (m.has_ngram_verify_padded() && !m.ngram_verify_padded() && ragged == config::CAPTURE_MODE_UNSPECIFIED)
      out->push_back({"speculation_methods.ngram_ragged_verify_capture", EnumValueName(modes, ragged),
                      "required with ngram_verify_padded false: the capture of a verify batch whose sequences "
                      "scheduled different token counts, one of " +
                          AllowedEnumValues(modes)});
    else if (ragged != config::CAPTURE_MODE_UNSPECIFIED && !config::CaptureMode_IsValid(ragged))
      out->push_back({"speculation_methods.ngram_ragged_verify_capture", EnumValueName(modes, ragged),
                      "must be one of " + AllowedEnumValues(modes)});
  }
  if (p.has_capture_bound()) {
    const config::CaptureBound& c = p.capture_bound();
    if (c.unit() == config::CaptureBound::UNIT_UNSPECIFIED || !config::CaptureBound::Unit_IsValid(c.unit()))
      out->push_back({"capture_bound.unit", EnumValueName(config::CaptureBound::Unit_descriptor(), c.unit()),
                      "must be set, one of BATCH, TOKENS"});
    if (!c.has_default_max() || !c.has_default_max_from_tp4())
      out->push_back({"capture_bound", "(default_max or default_max_from_tp4 unset)",
                      "both required: the largest captured pass below TP 4 and from TP 4 on"});
    if (c.max_gpu_memory_gb() < c.min_gpu_memory_gb())
      out->push_back({"capture_bound.max_gpu_memory_gb", Number(c.max_gpu_memory_gb()),
                      "must be >= min_gpu_memory_gb (" + Number(c.min_gpu_memory_gb()) + ")"});
    if (!c.flag().empty() && c.flag().find("{n}") == std::string::npos)
      out->push_back({"capture_bound.flag", "\"" + c.flag() + "\"", "must hold {n} where the bound goes"});
  }
  if (p.has_speculative_defaults()) {
    const config::SpeculativeDefaults& sd = p.speculative_defaults();
    int fallbacks = 0;
    for (int i = 0; i < sd.shapes_size(); ++i) {
      const config::DefaultSpeculativeShape& sh = sd.shapes(i);
      const std::string at = fmt::format("speculative_defaults.shapes[{}]", i);
      if (!sh.has_num_steps() || !sh.has_topk() || !sh.has_num_draft_tokens())
        out->push_back({at, "(num_steps, topk or num_draft_tokens unset)", "all three required"});
      for (int f : sh.families())
        if (f == config::Model::FAMILY_UNSPECIFIED || !config::Model::Family_IsValid(f))
          out->push_back({at + ".families", EnumValueName(config::Model::Family_descriptor(), f),
                          "must be one of " + AllowedEnumValues(config::Model::Family_descriptor())});
      if (sh.families_size() == 0) {
        ++fallbacks;
        if (i != sd.shapes_size() - 1)
          out->push_back({at + ".families", "(empty)", "only the last shape may be the fallback (no families)"});
      }
    }
    if (fallbacks != 1)
      out->push_back({"speculative_defaults.shapes", fmt::format("({} without families)", fallbacks),
                      "exactly one shape, the last, must have no families: the fallback for every other family"});
    if (sd.max_running_requests() > 0 && sd.max_running_requests_flag().find("{n}") == std::string::npos)
      out->push_back({"speculative_defaults.max_running_requests_flag", "\"" + sd.max_running_requests_flag() + "\"",
                      "must hold {n} where the count goes (required with a cap)"});
  }
}

// Host-cost jitter: a distribution and its parameters.
void CheckJitter(const Jitter& j, bool partial, std::vector<Problem>* out) {
  const pb::EnumDescriptor* dists = Jitter::Distribution_descriptor();
  const int dist = j.distribution();
  const bool dist_unset = dist == Jitter::DISTRIBUTION_UNSPECIFIED;
  if ((dist_unset && !partial) || (!dist_unset && !Jitter::Distribution_IsValid(dist))) {
    out->push_back({"jitter.distribution", EnumValueName(dists, dist),
                    (partial ? "must be one of " : "must be set when a jitter block is present, one of ") +
                        AllowedEnumValues(dists)});
  }
}

// Field rules shared by whole profiles (`partial` false: every field required) and overrides
// (`partial` true: only the fields set are checked).
void CheckProfile(const FrameworkProfile& p, bool partial, std::vector<Problem>* out) {
  const pb::Reflection* r = p.GetReflection();
  const pb::Descriptor* d = p.GetDescriptor();
  if (!partial && p.name().empty()) {
    out->push_back({"name", p.has_name() ? "\"\"" : "(unset)", "required: the profile's short name, e.g. \"sglang\""});
  }
  const pb::EnumDescriptor* modes = config::CaptureMode_descriptor();
  const pb::Descriptor* cd = PhaseCapture::descriptor();
  for (const char* phase : kPhases) {
    const pb::FieldDescriptor* f = cd->FindFieldByName(phase);
    const int mode = p.capture().GetReflection()->GetEnumValue(p.capture(), f);
    const bool unset = mode == config::CAPTURE_MODE_UNSPECIFIED;
    if ((unset && !partial) || (!unset && !config::CaptureMode_IsValid(mode))) {
      out->push_back({std::string("capture.") + phase, EnumValueName(modes, mode),
                      (partial ? "must be one of " : "must be set, one of ") + AllowedEnumValues(modes)});
    }
  }
  for (const char* name : kCostFields) {
    const pb::FieldDescriptor* f = d->FindFieldByName(name);
    if (!r->HasField(p, f)) {
      if (!partial) {
        out->push_back({name, "(unset)",
                        "required: microseconds, finite and >= 0 (write 0 for none; where it comes from in "
                        "host_cost_sources)"});
      }
    }
  }
  if (!partial && !p.has_sync_each_step()) {
    out->push_back({"sync_each_step", "(unset)",
                    "required: true (the decode loop waits for the GPU every step) or false (the "
                    "host runs ahead)"});
  }
  if (!partial && !p.has_sync_each_cycle()) {
    out->push_back({"sync_each_cycle", "(unset)",
                    "required: true (the speculative loop waits for the GPU every cycle) or false (the "
                    "host runs ahead)"});
  }
  if (!partial && p.version().empty())
    out->push_back(
        {"version", p.has_version() ? "\"\"" : "(unset)",
         "required: the version of the framework's source the profile follows, e.g. \"SGLang main @004c82e\""});
  if (!partial) {
    CheckHostWaits(p, out);
    CheckCycleOps(p, out);
    CheckAttentionBackends(p, out);
    CheckBoundsAndDefaults(p, out);
    if (p.has_kernel_inventory()) CheckKernelInventory(p.kernel_inventory(), out);
  }
  if (p.has_custom_allreduce()) CheckCustomAllreduceRule(p.custom_allreduce(), partial, out);
  if (p.has_nccl_environment()) CheckNcclEnvironment(p.nccl_environment(), partial, out);
  if (p.has_graph_flags()) CheckGraphFlags(p.graph_flags(), out);
  if (p.has_expert_parallel()) CheckExpertParallel(p.expert_parallel(), partial, out);
  if (p.has_jitter()) CheckJitter(p.jitter(), partial, out);
}

// The provenance of every host cost (framework.proto HostCostSource). `from_file`: a profile file,
// where SCENARIO_OVERRIDE (written only by MergeFrameworkOverrides) is an error.
void CheckHostCostSources(const FrameworkProfile& p, bool from_file, std::vector<Problem>* out) {
  using config::HostCostSource;
  const config::HostCostSources& all = p.host_cost_sources();
  const pb::Reflection* r = p.GetReflection();
  const pb::Descriptor* d = p.GetDescriptor();
  const pb::Descriptor* sd = config::HostCostSources::descriptor();
  const pb::EnumDescriptor* kinds = HostCostSource::Kind_descriptor();
  const std::string kinds_allowed = "FITTED, UNMEASURED, DEFINITION";
  for (const char* name : kCostFields) {
    const auto& s = static_cast<const HostCostSource&>(all.GetReflection()->GetMessage(all, sd->FindFieldByName(name)));
    const double value = r->GetDouble(p, d->FindFieldByName(name));
    const std::string at = std::string("host_cost_sources.") + name;
    const int kind = s.kind();
    const bool override_kind = kind == HostCostSource::SCENARIO_OVERRIDE;
    if (kind == HostCostSource::KIND_UNSPECIFIED || !HostCostSource::Kind_IsValid(kind) ||
        (override_kind && from_file)) {
      out->push_back({at + ".kind", EnumValueName(kinds, kind),
                      override_kind ? "SCENARIO_OVERRIDE is written by a scenario's framework_overrides, not in a "
                                      "profile: one of " +
                                          kinds_allowed
                                    : std::string("required: where ") + name + " comes from, one of " + kinds_allowed +
                                          " (FITTED: fitted_from and host; UNMEASURED: low_us, high_us and "
                                          "citation; DEFINITION: definition)"});
      continue;
    }
    auto require = [&](bool ok, const std::string& field, const std::string& shown, const std::string& what) {
      if (!ok) out->push_back({at + "." + field, shown, "required for " + EnumValueName(kinds, kind) + ": " + what});
    };
    const bool ranged = s.has_low_us() || s.has_high_us();
    switch (kind) {
      case HostCostSource::FITTED:
        require(!s.fitted_from().empty(), "fitted_from", s.has_fitted_from() ? "\"\"" : "(unset)",
                "the traces or calibration it was fitted from, and how");
        require(!s.host().empty(), "host", s.has_host() ? "\"\"" : "(unset)",
                "the host's CPU model, as the trace's environment.cpu_model reports it");
        break;
      case HostCostSource::UNMEASURED:
        require(s.has_low_us(), "low_us", "(unset)", "the low end of the range the value lies in, us");
        require(s.has_high_us(), "high_us", "(unset)", "the high end of the range the value lies in, us");
        require(!s.citation().empty(), "citation", s.has_citation() ? "\"\"" : "(unset)",
                "the public figure the range comes from (URL, or repository and path / thread)");
        break;
      case HostCostSource::DEFINITION:
        require(!s.definition().empty(), "definition", s.has_definition() ? "\"\"" : "(unset)",
                "why the value is what it is");
        if (ranged) out->push_back({at, "low_us/high_us set", "DEFINITION has no range: the value is defined"});
        break;
      default:  // SCENARIO_OVERRIDE (in memory): the user's value
        if (ranged) out->push_back({at, "low_us/high_us set", "SCENARIO_OVERRIDE has no range: the user's value"});
        break;
    }
    if (kind == HostCostSource::FITTED && s.has_low_us() != s.has_high_us())
      out->push_back({at, s.has_low_us() ? "low_us without high_us" : "high_us without low_us",
                      "a range needs both ends (low_us <= value <= high_us)"});
    if (s.has_low_us() && s.has_high_us() && std::isfinite(value) && !(s.low_us() <= value && value <= s.high_us()))
      out->push_back({name, Number(value),
                      fmt::format("must lie in its range [{}, {}] us ({}.low_us, high_us)", Number(s.low_us()),
                                  Number(s.high_us()), at)});
  }
  if (all.jitter().empty())
    out->push_back({"host_cost_sources.jitter", all.has_jitter() ? "\"\"" : "(unset)",
                    "required: where the jitter block comes from (fitted from which trace, or why NONE)"});
}

llm::HostCostSource ToHostCostSource(const config::HostCostSource& s) {
  llm::HostCostSource out;
  using K = llm::HostCostSource::Kind;
  switch (s.kind()) {
    case config::HostCostSource::FITTED: out.kind = K::kFitted; break;
    case config::HostCostSource::UNMEASURED: out.kind = K::kUnmeasured; break;
    case config::HostCostSource::DEFINITION: out.kind = K::kDefinition; break;
    case config::HostCostSource::SCENARIO_OVERRIDE: out.kind = K::kScenarioOverride; break;
    default: out.kind = K::kUnstated; break;
  }
  out.fitted_from = s.fitted_from();
  out.host = s.host();
  out.citation = s.citation();
  out.definition = s.definition();
  out.has_range = s.has_low_us() && s.has_high_us();
  out.low_us = s.low_us();
  out.high_us = s.high_us();
  return out;
}

llm::CaptureMode ToCaptureMode(config::CaptureMode m) {
  switch (m) {
    case config::PIECEWISE: return llm::CaptureMode::kPiecewise;
    case config::EAGER: return llm::CaptureMode::kEager;
    default: return llm::CaptureMode::kFull;  // FULL (others rejected by CheckProfile)
  }
}

llm::Jitter ToJitter(const Jitter& j) {
  llm::Jitter out;
  switch (j.distribution()) {
    case Jitter::EXPONENTIAL: out.kind = llm::Jitter::Kind::kExponential; break;
    case Jitter::LOGNORMAL: out.kind = llm::Jitter::Kind::kLognormal; break;
    case Jitter::EMPIRICAL: out.kind = llm::Jitter::Kind::kEmpirical; break;
    default: out.kind = llm::Jitter::Kind::kNone; break;
  }
  out.mean_us = j.mean_us();
  out.sigma = j.sigma();
  out.quantiles_us.assign(j.quantiles_us().begin(), j.quantiles_us().end());
  return out;
}

// The jitter block as one value for messages: {distribution: X mean_us: m ...}.
std::string JitterText(const Jitter& j) {
  std::string out = "{distribution: " + EnumValueName(Jitter::Distribution_descriptor(), j.distribution());
  if (j.has_mean_us()) out += " mean_us: " + Number(j.mean_us());
  if (j.has_sigma()) out += " sigma: " + Number(j.sigma());
  if (j.quantiles_us_size() > 0) {
    out += " quantiles_us: [";
    for (int i = 0; i < j.quantiles_us_size(); ++i) out += (i ? ", " : "") + Number(j.quantiles_us(i));
    out += "]";
  }
  return out + "}";
}

std::string QuantilesText(const Jitter& j) {
  std::string out = "[";
  for (int i = 0; i < j.quantiles_us_size(); ++i) out += (i ? ", " : "") + Number(j.quantiles_us(i));
  return out + "]";
}

llm::FrameworkProfile::EpCommunication ToEpCommunication(config::EpCommunication c) {
  using E = llm::FrameworkProfile::EpCommunication;
  switch (c) {
    case config::EP_ALLREDUCE: return E::kAllReduce;
    case config::EP_ALLGATHER_REDUCESCATTER: return E::kAllGatherReduceScatter;
    case config::EP_ALL_TO_ALL: return E::kAllToAll;
    default: return E::kUnstated;
  }
}

// The NCCL environment, capture flags and EP rule. REQUIRES: CheckProfile found no problem.
llm::LoopPass ToLoopPass(int pass) {
  switch (pass) {
    case config::DECODE: return llm::LoopPass::kDecode;
    case config::DRAFT_EXTEND: return llm::LoopPass::kDraftExtend;
    case config::DRAFT: return llm::LoopPass::kDraft;
    default: return llm::LoopPass::kVerify;
  }
}

std::optional<llm::CaptureMode> ToOptionalCapture(int mode) {
  if (mode == config::CAPTURE_MODE_UNSPECIFIED) return std::nullopt;
  return ToCaptureMode(static_cast<config::CaptureMode>(mode));
}

// The loop's named host waits and the speculative cycle's own launches, with the workers they are for.
void ConvertWaitsAndCycleOps(const FrameworkProfile& p, llm::FrameworkProfile* out) {
  for (const config::HostWait& w : p.step_host_waits())
    out->step_host_waits.push_back({w.name(), ToLoopPass(w.after()), ToLoopPass(w.waits_for()), w.source()});
  for (const config::HostWait& w : p.cycle_host_waits())
    out->cycle_host_waits.push_back({w.name(), ToLoopPass(w.after()), ToLoopPass(w.waits_for()), w.source(),
                                     w.workers() != config::CycleOps::NGRAM,
                                     w.workers() != config::CycleOps::DRAFTING});
  for (const config::CycleOps& c : p.cycle_ops())
    out->cycle_ops.push_back({c.name(), ToLoopPass(c.before()), c.kernels(), c.source(),
                              c.workers() != config::CycleOps::NGRAM, c.workers() != config::CycleOps::DRAFTING,
                              c.kernels_per_sequence(), c.every_draft_step(), c.draft_vocab_map()});
}

// The source-read decisions: host waits, attention backends, capture bound, speculative defaults.
void ConvertDecisions(const FrameworkProfile& p, llm::FrameworkProfile* out) {
  out->version = p.version();
  if (p.has_graph_pool()) {
    const config::GraphPool& g = p.graph_pool();
    auto& o = out->graph_pool;
    o.stated = true;
    using O = llm::FrameworkProfile::GraphPool;
    using Outputs = llm::GraphPoolSpec::Outputs;
    o.outputs = g.outputs() == config::GraphPool::KEPT_PER_SIZE       ? Outputs::kKeptPerSize
                : g.outputs() == config::GraphPool::ONE_SHARED_BUFFER ? Outputs::kOneSharedBuffer
                                                                      : Outputs::kNotKept;
    o.output = g.output() == config::GraphPool::LOGITS_FP32   ? O::Output::kLogitsFp32
               : g.output() == config::GraphPool::LOGITS_BF16 ? O::Output::kLogitsBf16
                                                              : O::Output::kHiddenBf16;
    o.small_sizes.assign(g.small_sizes().begin(), g.small_sizes().end());
    o.step = g.has_step() ? g.step() : 8;
    o.source = g.source();
  }
  if (p.has_speculation_methods()) {
    const config::SpeculationMethods& m = p.speculation_methods();
    auto& o = out->speculation_methods;
    o.stated = true;
    o.draft_model_launch = m.draft_model_launch();
    o.ngram_launch = m.ngram_launch();
    o.draft_model_chain_only = m.draft_model_chain_only();
    o.ngram_verify_padded = !m.has_ngram_verify_padded() || m.ngram_verify_padded();
    o.ngram_ragged_verify_capture = ToOptionalCapture(m.ngram_ragged_verify_capture());
    o.source = m.source();
  }
  ConvertWaitsAndCycleOps(p, out);
  for (const config::AttentionBackendRule& b : p.attention_backends()) {
    llm::AttentionBackendRule r;
    r.gpu_archs.assign(b.gpu_archs().begin(), b.gpu_archs().end());
    r.mla = b.cache() == config::MLA;
    r.topk = b.topk() == config::TOPK_ONE         ? llm::AttentionBackendRule::Topk::kOne
             : b.topk() == config::TOPK_ABOVE_ONE ? llm::AttentionBackendRule::Topk::kAboveOne
                                                  : llm::AttentionBackendRule::Topk::kAny;
    r.backend = b.backend();
    r.decode_kernel = b.decode_kernel();
    r.verify_kernel = b.verify_kernel();
    r.gqa_draft_decode_kernel = b.gqa_draft_decode_kernel();
    r.gqa_draft_verify_kernel = b.gqa_draft_verify_kernel();
    r.source = b.source();
    r.decode = ToOptionalCapture(b.capture().decode());
    r.draft = ToOptionalCapture(b.capture().draft());
    r.verify = ToOptionalCapture(b.capture().verify());
    r.draft_extend = ToOptionalCapture(b.capture().draft_extend());
    out->attention_backends.push_back(std::move(r));
  }
  if (p.has_capture_bound()) {
    const config::CaptureBound& c = p.capture_bound();
    auto& b = out->capture_bound;
    b.stated = true;
    b.tokens = c.unit() == config::CaptureBound::TOKENS;
    b.default_max = c.default_max();
    b.default_max_from_tp4 = c.default_max_from_tp4();
    b.min_gpu_memory_gb = c.min_gpu_memory_gb();
    b.max_gpu_memory_gb = c.max_gpu_memory_gb();
    b.flag = c.flag();
    b.source = c.source();
  }
  if (p.has_speculative_defaults()) {
    const config::SpeculativeDefaults& sd = p.speculative_defaults();
    auto& d = out->speculative_defaults;
    d.stated = true;
    for (const config::DefaultSpeculativeShape& sh : sd.shapes()) {
      std::vector<llm::ModelFamily> families;
      for (int f : sh.families()) families.push_back(ToModelFamily(static_cast<config::Model::Family>(f)));
      d.shapes.push_back({std::move(families), sh.num_steps(), sh.topk(), sh.num_draft_tokens()});
    }
    d.max_running_requests = sd.max_running_requests();
    d.max_running_requests_flag = sd.max_running_requests_flag();
    d.source = sd.source();
  }
}

void ConvertRules(const FrameworkProfile& p, llm::FrameworkProfile* out) {
  ConvertDecisions(p, out);
  if (p.has_kernel_inventory()) {
    const config::KernelInventory& k = p.kernel_inventory();
    llm::KernelInventory& inv = out->kernel_inventory;
    inv.add_norm = k.fused_add_rmsnorm();
    inv.rope_kv_store = k.fused_rope_kv_store();
    inv.rotary_kernels = k.rotary_kernels();
    inv.rotary_per_tensor = k.rotary_per_tensor();
    inv.kv_store_kernels = k.kv_store_kernels();
    inv.query_copy = k.query_copy();
    inv.strided_views = k.strided_views();
    inv.activation = k.fused_activation();
    inv.merge_heads_copy = k.merge_heads_copy();
    inv.mask_bias_above_q1 = k.mask_bias_above_q1();
    out->kernel_inventory_source = k.source();
  }
  if (p.has_nccl_environment()) {
    const config::NcclEnvironment& e = p.nccl_environment();
    out->nccl_environment.stated = true;
    out->nccl_environment.passes_user_environment = e.passes_user_environment();
    for (const config::EnvVariable& v : e.sets()) out->nccl_environment.sets.emplace_back(v.name(), v.value());
    for (const config::EnvVariable& v : e.sets_if_unset())
      out->nccl_environment.sets_if_unset.emplace_back(v.name(), v.value());
    out->nccl_environment.source = e.source();
  }
  const config::GraphCaptureFlags& g = p.graph_flags();
  out->graph_flags.disable_all = g.disable_all();
  out->graph_flags.max_batch_size = g.max_batch_size();
  out->graph_flags.source = g.source();
  for (const config::PhaseModeFlag& f : g.phase_flags())
    out->graph_flags.phase_flags.push_back({f.phase(), ToCaptureMode(f.mode()), f.flag()});
  if (p.has_expert_parallel()) {
    const config::ExpertParallelRule& e = p.expert_parallel();
    out->expert_parallel.stated = true;
    out->expert_parallel.enable_flag = e.enable_flag();
    out->expert_parallel.default_communication = ToEpCommunication(e.default_communication());
    out->expert_parallel.source = e.source();
    for (const config::AllToAllBackend& b : e.all_to_all_backends())
      out->expert_parallel.all_to_all_backends.push_back(
          {b.name(), b.flag(), b.env(), b.needs_full_nvlink(), b.source()});
  }
}

// Checks and converts; errors "DISPLAY[:LINE:COL]: PATH = VALUE: RULE", all together.
StatusOr<llm::FrameworkProfile> Convert(const FrameworkProfile& p, std::string_view display,
                                        const pb::TextFormat::ParseInfoTree* tree, bool from_file) {
  std::vector<Problem> problems;
  // Every number in the unit and range framework.proto declares (it states no plausible bounds).
  for (const RangeFinding& f : RangeFindings(p))
    if (f.error) problems.push_back({f.path, Number(f.value), f.rule});
  CheckProfile(p, /*partial=*/false, &problems);
  CheckHostCostSources(p, from_file, &problems);
  llm::FrameworkProfile out;
  if (p.has_jitter()) out.jitter = ToJitter(p.jitter());
  const bool jitter_fields_ok =
      std::none_of(problems.begin(), problems.end(), [](const Problem& q) { return q.path.rfind("jitter", 0) == 0; });
  if (p.has_jitter() && jitter_fields_ok) {
    // What the field checks above do not cover: the empirical list's length and order.
    const Status s = llm::ValidateJitter(out.jitter, "jitter");
    if (!s.ok()) {
      const bool list = s.message().find("quantiles_us") != std::string::npos;
      problems.push_back({list ? "jitter.quantiles_us" : "jitter",
                          list ? QuantilesText(p.jitter()) : JitterText(p.jitter()), s.message()});
    }
  }
  if (!problems.empty()) {
    std::string message;
    for (const Problem& q : problems) {
      const std::string at = LocationOf(tree, q.path);
      message += fmt::format("{}{}{}: {} = {}: {}", message.empty() ? "" : "\n", display, at.empty() ? "" : ":" + at,
                             q.path, q.value, q.rule);
    }
    return InvalidArgumentError(message);
  }
  out.name = p.name();
  out.source = p.source();
  out.capture.decode = ToCaptureMode(p.capture().decode());
  out.capture.draft = ToCaptureMode(p.capture().draft());
  out.capture.verify = ToCaptureMode(p.capture().verify());
  out.capture.draft_extend = ToCaptureMode(p.capture().draft_extend());
  out.eager_op_host_us = p.eager_op_host_us();
  out.graph_replay_host_us = p.graph_replay_host_us();
  out.decode_step_host_us = p.decode_step_host_us();
  out.spec_cycle_host_us = p.spec_cycle_host_us();
  out.tensor_op_host_us = p.tensor_op_host_us();
  const config::HostCostSources& sources = p.host_cost_sources();
  out.SourceOf(llm::HostCost::kEagerOp) = ToHostCostSource(sources.eager_op_host_us());
  out.SourceOf(llm::HostCost::kGraphReplay) = ToHostCostSource(sources.graph_replay_host_us());
  out.SourceOf(llm::HostCost::kDecodeStep) = ToHostCostSource(sources.decode_step_host_us());
  out.SourceOf(llm::HostCost::kSpecCycle) = ToHostCostSource(sources.spec_cycle_host_us());
  out.SourceOf(llm::HostCost::kTensorOp) = ToHostCostSource(sources.tensor_op_host_us());
  out.jitter_source = sources.jitter();
  out.sync_each_step = p.sync_each_step();
  out.sync_each_cycle = p.sync_each_cycle();
  out.attention_decode = p.attention().decode();
  out.attention_verify = p.attention().verify();
  out.attention_mla_decode = p.attention().mla_decode();
  out.attention_mla_verify = p.attention().mla_verify();
  if (p.has_custom_allreduce()) {
    const config::CustomAllreduceRule& c = p.custom_allreduce();
    out.custom_allreduce.stated = true;
    out.custom_allreduce.world_sizes.assign(c.world_sizes().begin(), c.world_sizes().end());
    out.custom_allreduce.max_world_size_without_full_nvlink = c.max_world_size_without_full_nvlink();
    out.custom_allreduce.max_bytes = c.max_bytes();
    out.custom_allreduce.source = c.source();
    out.custom_allreduce.one_shot_only_world_sizes.assign(c.one_shot_only_world_sizes().begin(),
                                                          c.one_shot_only_world_sizes().end());
  }
  ConvertRules(p, &out);
  return out;
}

// Parses `text`, checks and converts it (field errors located in `text`); `*proto` receives the
// parsed message.
StatusOr<llm::FrameworkProfile> ParseAndConvert(std::string_view text, std::string_view filename,
                                                FrameworkProfile* proto) {
  ASSIGN_OR_RETURN(*proto, ParseTextProto<FrameworkProfile>(text, filename));
  // Parsed once more (it parses: the first pass succeeded) to learn where each field is.
  pb::TextFormat::ParseInfoTree tree;
  pb::TextFormat::Parser parser;
  parser.WriteLocationsTo(&tree);
  FrameworkProfile again;
  pb::io::ArrayInputStream input(text.data(), static_cast<int>(text.size()));
  const bool located = parser.Parse(&input, &again);
  return Convert(*proto, filename, located ? &tree : nullptr, /*from_file=*/true);
}

}  // namespace

StatusOr<llm::FrameworkProfile> FrameworkFromProto(const FrameworkProfile& profile, const std::string& display_name) {
  return Convert(profile, display_name, nullptr, /*from_file=*/false);
}

StatusOr<FrameworkProfile> ParseFrameworkProto(std::string_view text, std::string_view filename) {
  FrameworkProfile proto;
  RETURN_IF_ERROR(ParseAndConvert(text, filename, &proto).status());
  return proto;
}

StatusOr<llm::FrameworkProfile> ParseFramework(std::string_view text, std::string_view filename) {
  FrameworkProfile proto;
  return ParseAndConvert(text, filename, &proto);
}

StatusOr<FrameworkProfile> LoadFrameworkProtoFile(const std::string& path, std::string* display_name) {
  ASSIGN_OR_RETURN(ConfigText file, ReadConfigFile(path));
  if (display_name != nullptr) *display_name = file.display_name;
  return ParseFrameworkProto(file.text, file.display_name);
}

StatusOr<llm::FrameworkProfile> LoadFrameworkFile(const std::string& path) {
  ASSIGN_OR_RETURN(ConfigText file, ReadConfigFile(path));
  return ParseFramework(file.text, file.display_name);
}

std::vector<std::string> FrameworkOverrideProblems(const FrameworkProfile& overrides, const std::string& prefix) {
  std::vector<Problem> problems;
  CheckProfile(overrides, /*partial=*/true, &problems);
  for (const char* field :
       {"version", "step_host_waits", "cycle_host_waits", "cycle_ops", "attention_backends", "capture_bound",
        "speculative_defaults", "kernel_inventory", "speculation_methods", "graph_pool"}) {
    const pb::FieldDescriptor* f = overrides.GetDescriptor()->FindFieldByName(field);
    const bool set = f->is_repeated() ? overrides.GetReflection()->FieldSize(overrides, f) > 0
                                      : overrides.GetReflection()->HasField(overrides, f);
    if (set)
      problems.push_back({field, "(set)",
                          "not allowed in overrides: it is what the framework's source decides; name another "
                          "profile (scenario `framework`, e.g. configs/frameworks/sglang-v1.textproto) or copy one"});
  }
  if (overrides.has_host_cost_sources())
    problems.push_back({"host_cost_sources", "(set)",
                        "not allowed in overrides: a host cost set here is the user's value (provenance "
                        "SCENARIO_OVERRIDE, no range, no band); change the profile file to change provenance"});
  std::vector<std::string> out;
  for (const Problem& p : problems) out.push_back(fmt::format("{}{} = {}: {}", prefix, p.path, p.value, p.rule));
  return out;
}

void MergeFrameworkOverrides(const FrameworkProfile& overrides, FrameworkProfile* profile) {
  SPECSIM_CHECK(profile != nullptr);
  // Protobuf's merge is the rule for everything but a repeated field, which it appends to.
  if (overrides.jitter().quantiles_us_size() > 0) profile->mutable_jitter()->clear_quantiles_us();
  profile->MergeFrom(overrides);
  // A cost the scenario sets is the user's value: its provenance says so, without a range (no band).
  const pb::Reflection* r = overrides.GetReflection();
  const pb::Descriptor* d = overrides.GetDescriptor();
  config::HostCostSources* sources = profile->mutable_host_cost_sources();
  for (const char* name : kCostFields) {
    if (!r->HasField(overrides, d->FindFieldByName(name))) continue;
    auto* s = static_cast<config::HostCostSource*>(sources->GetReflection()->MutableMessage(
        sources, config::HostCostSources::descriptor()->FindFieldByName(name)));
    s->Clear();
    s->set_kind(config::HostCostSource::SCENARIO_OVERRIDE);
  }
}

std::string OverriddenFrameworkFields(const FrameworkProfile& overrides) {
  std::string out;
  auto add = [&](const std::string& name) { out += (out.empty() ? "" : ", ") + name; };
  const pb::Reflection* r = overrides.GetReflection();
  const pb::Descriptor* d = overrides.GetDescriptor();
  for (const char* name : {"name", "source"}) {
    if (r->HasField(overrides, d->FindFieldByName(name))) add(name);
  }
  const pb::Descriptor* cd = PhaseCapture::descriptor();
  for (const char* phase : kPhases) {
    if (overrides.capture().GetReflection()->GetEnumValue(overrides.capture(), cd->FindFieldByName(phase)) != 0) {
      add(std::string("capture.") + phase);
    }
  }
  for (const char* name : kCostFields) {
    if (r->HasField(overrides, d->FindFieldByName(name))) add(name);
  }
  if (overrides.has_sync_each_step()) add("sync_each_step");
  if (overrides.has_sync_each_cycle()) add("sync_each_cycle");
  if (overrides.attention().has_decode()) add("attention.decode");
  if (overrides.attention().has_verify()) add("attention.verify");
  const Jitter& j = overrides.jitter();
  if (j.distribution() != Jitter::DISTRIBUTION_UNSPECIFIED) add("jitter.distribution");
  if (j.has_mean_us()) add("jitter.mean_us");
  if (j.has_sigma()) add("jitter.sigma");
  if (j.quantiles_us_size() > 0) add("jitter.quantiles_us");
  return out;
}

}  // namespace specsim::io
