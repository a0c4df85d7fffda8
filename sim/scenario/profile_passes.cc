#include "sim/scenario/profile_passes.h"

#include <algorithm>
#include <optional>

#include "sim/io/model_loader.h"
#include "sim/llm/decode_simulator.h"
#include "sim/profile/kernel_class.h"

namespace specsim::scenario {
namespace {

// The GEMM costs a profile's passes take: those fitted on a profile's own aten::mm kernels
// (profile::kTorchGemmLibrary) when the calibration has them, else cuBLASLt's (PyTorch's bf16
// matmuls run cuBLASLt: the test profile's nvjet and cublasLt::splitKreduce kernels), else the
// calibration's main GEMM costs.
std::string PassGemmLibrary(const compute::ComputeParams& c) {
  if (c.gemm_library == profile::kTorchGemmLibrary) return c.gemm_library;
  for (const auto& g : c.gemm_libraries)
    if (g.library == profile::kTorchGemmLibrary) return g.library;
  return "cublasLt";
}

// The pass kind of a graph replay with no phase name, from its allreduces; nullopt (and `why`) when
// they do not tell it.
std::optional<llm::PassKind> GraphReplayPassKind(const profile::PassGroup& g, const llm::DecodeSetup& base,
                                                 std::string* why) {
  // A replay with no phase name: a target forward when it runs two or more layers' allreduces
  // pairs (dense TP: two per layer), the draft's when one pair and the scenario has a draft.
  // One token per sequence (allreduce elements = batch x hidden) is a decode / draft step,
  // more a verify / draft extend.
  const int pairs = g.allreduces / 2;
  const bool one_token = g.allreduce_elements == int64_t{base.target.hidden_size} * std::max(1, base.batch);
  if (g.allreduce_elements <= 0) {
    *why =
        "a graph replay whose allreduce size is unknown (no eager call of the same kind in the profile): "
        "its tokens per pass cannot be told";
    return std::nullopt;
  }
  if (pairs >= 2) return one_token ? llm::PassKind::kTargetDecode : llm::PassKind::kVerify;
  if (pairs == 1 && base.draft) return one_token ? llm::PassKind::kDraftStep : llm::PassKind::kDraftExtend;
  *why = "a graph replay with " + std::to_string(g.allreduces) +
         " allreduces: not a dense TP forward whose layers can be counted (name the passes with "
         "record_function ranges: --phases)";
  return std::nullopt;
}

// A target forward named neither decode nor verify (the name map's "target": vLLM's forward): one
// token per sequence is a decode, more a verify; unknown tokens: a verify when the scenario
// speculates.
llm::PassKind TargetPassKind(const profile::PassGroup& g, const llm::DecodeSetup& base) {
  if (g.allreduce_elements > 0)
    return g.allreduce_elements == int64_t{base.target.hidden_size} * std::max(1, base.batch)
               ? llm::PassKind::kTargetDecode
               : llm::PassKind::kVerify;
  return base.speculation.num_draft_tokens > 0 ? llm::PassKind::kVerify : llm::PassKind::kTargetDecode;
}

// The pass kind of a group: the name map's kind of its range (profile::PassGroup::kind), or for a
// graph replay by its allreduces; nullopt (and `why`) when the simulator has none for it.
std::optional<llm::PassKind> PassKindOf(const profile::PassGroup& g, const llm::DecodeSetup& base, std::string* why) {
  if (g.kind == "decode") return llm::PassKind::kTargetDecode;
  if (g.kind == "verify") return llm::PassKind::kVerify;
  if (g.kind == "draft") return llm::PassKind::kDraftStep;
  if (g.kind == "draft_extend") return llm::PassKind::kDraftExtend;
  if (g.kind == "target") return TargetPassKind(g, base);
  if (g.phase == profile::kGraphReplayPhase) return GraphReplayPassKind(g, base, why);
  *why = "the name map gives '" + g.phase + "' the kind '" + g.kind + "' (" + g.rule +
         "): not a pass the simulator has (decode, verify, draft, draft_extend, target)";
  return std::nullopt;
}

// Tokens per sequence of a pass of `model`: from its first allreduce (elements / hidden / batch)
// when torch recorded it, else from its range's name when the name map's rule reads it
// (tokens_group), else 1 for decode and draft steps and the scenario's num_draft_tokens for verify
// and draft extend.
int PassTokens(const profile::PassGroup& g, const llm::ModelSpec& model, const llm::DecodeSetup& base,
               llm::PassKind kind) {
  const int64_t batch = std::max(1, base.batch);
  if (g.allreduce_elements > 0 && model.hidden_size > 0 && g.allreduce_elements % (model.hidden_size * batch) == 0)
    return static_cast<int>(g.allreduce_elements / (model.hidden_size * batch));
  if (g.name_tokens > 0) return g.name_tokens;
  return kind == llm::PassKind::kTargetDecode || kind == llm::PassKind::kDraftStep
             ? 1
             : std::max(1, base.speculation.num_draft_tokens);
}

// The attention implementation of a target forward of `tokens` query tokens per sequence: the one
// the profile's eager attention calls of that width and batch ran (kernel_calls.h), "" when none did.
std::string PassAttentionImplementation(const std::vector<profile::AttentionGroup>& attention, int64_t batch,
                                        int64_t tokens) {
  for (const profile::AttentionGroup& a : attention)
    if (a.batch == batch && a.query_tokens == tokens && !a.implementation.empty()) return a.implementation;
  return "";
}

// The scenario run as the profile ran the pass: a dense target's layers from the pass's allreduces
// (two per layer; `layers` says how many the pass runs), the profile's GEMM library and attention
// kernel (when the calibration has its costs), every phase a full graph (graph groups) or eager.
llm::DecodeSetup PassSetup(const profile::PassGroup& g, const llm::DecodeSetup& base, bool target, int tokens,
                           const std::vector<profile::AttentionGroup>& attention, int* layers) {
  const llm::ModelSpec& model = target ? base.target : *base.draft;
  llm::DecodeSetup setup = base;
  // The attention kernel the profile ran at this width, with the calibration's fitted costs for it.
  if (const compute::AttentionImplementation* a =
          setup.compute.FindAttentionImplementation(PassAttentionImplementation(attention, base.batch, tokens))) {
    setup.compute.attention_regimes.decode = {*a};
    setup.compute.attention_regimes.verify = {*a};
  }
  *layers = model.num_layers;
  if (target && !model.is_moe() && g.allreduces >= 2 && g.allreduces % 2 == 0) {
    *layers = g.allreduces / 2;
    setup.target.num_layers = *layers;
  }
  setup.compute = setup.compute.WithGemmLibrary(PassGemmLibrary(setup.compute));
  const llm::CaptureMode mode = g.graph ? llm::CaptureMode::kFull : llm::CaptureMode::kEager;
  if (!setup.framework) setup.framework = llm::FrameworkProfile{};
  setup.framework->capture = {mode, mode, mode, mode};
  setup.cuda_graphs = g.graph;
  return setup;
}

// The pass of p.kind and p.tokens simulated: its busy (compute + communication), launch and
// per-class time; p.ok, or p.why.
void SimulatePass(const llm::DecodeSetup& setup, llm::PassKind kind, PassPrediction* p) {
  auto sim = llm::DecodeSimulator::Create(setup);
  if (!sim.ok()) {
    p->why = sim.status().message();
    return;
  }
  auto t = (*sim)->Pass(kind, p->tokens);
  if (!t.ok()) {
    p->why = t.status().message();
    return;
  }
  p->busy_us = static_cast<double>(t->compute_ps + t->comm_ps) * 1e-6;
  p->launch_us = static_cast<double>(t->launch_ps) * 1e-6;
  auto by_class = (*sim)->PassDeviceTimeByClass(kind, p->tokens);
  if (by_class.ok())
    for (const auto& [c, ns] : *by_class) p->class_us[profile::ProfileClassOfSimulatorClass(c)] += ns * 1e-3;
  p->ok = true;
}

// The target forwards captured in graphs, as decode-suite items that compare's decode predictor
// re-simulates (DecodeParams.gpu_busy_only): the scenario's model (in the trace's models), batch and
// context, the pass's tokens and layers, the run's GEMM library as its kernels name it. Eager passes
// are left out: under a profiler they measure its host cost.
void AddDecodeItems(const std::vector<std::pair<const profile::PassGroup*, PassPrediction>>& predicted,
                    const LoadedScenario& loaded, const config::Model& model, int ranks, bool gemm_items,
                    const std::vector<profile::AttentionGroup>& attention, trace::Trace* trace) {
  const llm::DecodeSetup& s = loaded.setup;
  trace::ModelShape* shape = trace->add_models();
  shape->set_name(s.target.name);
  *shape->mutable_config() = model;
  for (const auto& [g, p] : predicted) {
    if (!g->graph || !p.target) continue;
    trace::Item* it = trace->add_items();
    it->set_suite(trace::SUITE_DECODE);
    it->set_kind(trace::KIND_DECODE_STEP);
    it->set_name("profile/pass/" + g->phase + (g->run.empty() ? "" : "/" + g->run) + "/graph/q" +
                 std::to_string(p.tokens));
    trace::DecodeParams* d = it->mutable_decode();
    d->set_model(s.target.name);
    d->set_tp(ranks);
    for (int r = 0; r < ranks; ++r) d->add_gpus(r);
    d->set_batch(s.batch);
    d->set_context(s.context_length);
    d->set_query_tokens(p.tokens);
    d->set_layers_run(p.layers);
    d->set_cuda_graph(true);
    d->set_capture("graph");
    d->set_gpu_busy_only(true);
    // The kernels it ran. Attention: the implementation the profile's eager calls of the same
    // width and batch ran (a graph replays the kernels its capture chose for the shape), whose
    // costs calibrate fits on those calls; without any, "profile" names none and the roofline
    // attention applies. Its GEMMs are the profile's aten::mm calls: when the trace
    // has their eager kernels as GEMM items, the costs fitted on those (calibrate makes the decode
    // items' library the main one); else cuBLASLt's (PassGemmLibrary).
    const std::string attention_impl = PassAttentionImplementation(attention, s.batch, p.tokens);
    d->set_attention_implementation(attention_impl.empty() ? "profile" : attention_impl);
    d->set_gemm_library(gemm_items ? profile::kTorchGemmLibrary : "cublasLt");
    for (const auto& [c, us] : g->busy_us) (*d->mutable_busy_us_by_class())[profile::ComparedClassOf(c)] += us;
    trace::Stats* st = it->mutable_stats();
    st->set_iterations(g->passes);
    st->set_median_us(g->busy_total_us);
    st->set_timer("kineto");
  }
}

}  // namespace

PassPrediction PredictPassGroup(const profile::PassGroup& g, const LoadedScenario& loaded,
                                const std::vector<profile::AttentionGroup>& attention) {
  PassPrediction p;
  const llm::DecodeSetup& base = loaded.setup;
  const std::optional<llm::PassKind> kind = PassKindOf(g, base, &p.why);
  if (!kind) return p;
  p.kind = llm::PassKindName(*kind);
  p.target = *kind == llm::PassKind::kTargetDecode || *kind == llm::PassKind::kVerify;
  if (!p.target && !base.draft) {
    p.why = "the scenario has no draft model";
    return p;
  }
  p.tokens = PassTokens(g, p.target ? base.target : *base.draft, base, *kind);
  SimulatePass(PassSetup(g, base, p.target, p.tokens, attention, &p.layers), *kind, &p);
  return p;
}

ProfilePasses PredictProfilePasses(const profile::ProfileImport& imported, const LoadedScenario& loaded) {
  ProfilePasses s;
  for (const profile::PassGroup& g : imported.passes) {
    PassPrediction p = PredictPassGroup(g, loaded, imported.kernel_call_groups.attention);
    if (p.ok)
      s.predicted.push_back({&g, std::move(p)});
    else
      s.unpredicted.push_back({&g, p.why});
  }
  return s;
}

Status AddPassItems(const ProfilePasses& passes, const LoadedScenario& loaded, profile::ProfileImport* imported) {
  ASSIGN_OR_RETURN(const config::Model model, io::LoadModelProto(loaded.scenario.model()));
  AddDecodeItems(passes.predicted, loaded, model, imported->ranks, !imported->gemms.empty(),
                 imported->kernel_call_groups.attention, &imported->trace);
  return OkStatus();
}

}  // namespace specsim::scenario
