#include "sim/scenario/scenario.h"

#include <fmt/format.h>

#include "sim/net/peer_access.h"

#include "sim/calib/calibration_loader.h"
#include "sim/calib/params.h"
#include "sim/calib/trace_io.h"
#include "sim/coll/nccl_transport.h"
#include "sim/compute/profiled_attention.h"
#include "sim/io/hardware_loader.h"
#include "sim/io/model_loader.h"
#include "sim/io/scenario_loader.h"
#include "sim/io/textproto.h"
#include "sim/llm/framework_decisions.h"
#include "sim/llm/graph_pool.h"
#include "sim/llm/ngram.h"
#include "sim/io/file_io.h"
#include "specsim/calibration.pb.h"

namespace specsim::scenario {

namespace {

StatusOr<compute::DType> ToDType(config::DType d, const std::string& field) {
  switch (d) {
    case config::BF16: return compute::DType::kBf16;
    case config::FP8: return compute::DType::kFp8;
    case config::FP4: return compute::DType::kFp4;
    case config::INT4: return compute::DType::kInt4;
    default: return InvalidArgumentError(field + " is not set: allowed values are BF16, FP8, FP4, INT4");
  }
}

}  // namespace

Status ChooseAttentionCosts(const config::AttentionCosts& choice, const llm::FrameworkProfile& framework, bool mla,
                            const std::string& calibration, compute::ComputeParams* compute,
                            std::vector<std::string>* warnings) {
  const std::vector<compute::AttentionImplementation>& have = compute->attention_implementations;
  std::string names;
  for (const compute::AttentionImplementation& a : have) names += (names.empty() ? "" : ", ") + a.name;
  auto pick = [&](const std::string& name, const std::string& field) -> StatusOr<compute::AttentionImplementation> {
    if (calibration.empty())
      return InvalidArgumentError(field + " = \"" + name +
                                  "\": attention costs come from a calibration, and none is given "
                                  "(scenario `calibration` or --calibration)");
    if (const compute::AttentionImplementation* a = compute->FindAttentionImplementation(name)) return *a;
    return InvalidArgumentError(field + " = \"" + name + "\": calibration " + calibration +
                                " has no such attention implementation (it has: " + (names.empty() ? "none" : names) +
                                ")");
  };
  compute->attention_regimes = {};
  compute::AttentionRegimes& r = compute->attention_regimes;
  // The target's regimes: MLA's latent-cache ones for an MLA target, else the GQA ones (which a
  // GQA draft head of an MLA target also takes, from the framework's names).
  auto& target_decode = mla ? r.mla_decode : r.decode;
  auto& target_verify = mla ? r.mla_verify : r.verify;
  if (!choice.decode().empty() || !choice.verify().empty()) {
    // Explicit: the scenario applies a kernel's fitted costs to its target's attention.
    const std::string decode = choice.decode().empty() ? choice.verify() : choice.decode();
    const std::string verify = choice.verify().empty() ? decode : choice.verify();
    ASSIGN_OR_RETURN(compute::AttentionImplementation d, pick(decode, "attention_costs.decode"));
    ASSIGN_OR_RETURN(compute::AttentionImplementation v, pick(verify, "attention_costs.verify"));
    target_decode = {d};
    target_verify = {v};
    return OkStatus();
  }
  // Implicit only for the kernels the framework profile says it runs, per cache kind: the
  // scenario's calibration first, else a bundled calibration that fitted that kernel on another GPU
  // (TransferredAttentionKernel: the geometry is recomputed for this GPU's SMs; the costs are that
  // GPU's, said in costs_source).
  auto find = [&](const std::string& name) -> std::optional<compute::AttentionImplementation> {
    if (name.empty()) return std::nullopt;
    if (const compute::AttentionImplementation* a = compute->FindAttentionImplementation(name)) return *a;
    return TransferredAttentionKernel(name);
  };
  const std::optional<compute::AttentionImplementation> d = find(framework.attention_decode);
  const std::optional<compute::AttentionImplementation> v = find(framework.attention_verify);
  const std::optional<compute::AttentionImplementation> md = find(framework.attention_mla_decode);
  const std::optional<compute::AttentionImplementation> mv = find(framework.attention_mla_verify);
  if (d) r.decode = {*d};
  if (v) r.verify = {*v};
  if (md) r.mla_decode = {*md};
  if (mv) r.mla_verify = {*mv};
  // A fit of the scenario's own calibration applied (not only bundled ones).
  auto own_fit = [](const std::optional<compute::AttentionImplementation>& a) {
    return a.has_value() && a->costs_source.empty();
  };
  const bool own = mla ? own_fit(md) || own_fit(mv) : own_fit(d) || own_fit(v);
  if (!have.empty() && !own) {
    const std::string& dn = mla ? framework.attention_mla_decode : framework.attention_decode;
    const std::string& vn = mla ? framework.attention_mla_verify : framework.attention_verify;
    warnings->push_back(
        "calibration " + calibration + ": attention costs fitted for " + names + " are not applied to " +
        (framework.name.empty() ? "the framework" : framework.name) + "'s " + (mla ? "MLA " : "") + "attention (" +
        (dn.empty() && vn.empty() ? std::string("kernels not stated") : "decode " + dn + ", verify " + vn) +
        "); it keeps the roofline attention terms. Apply one explicitly with "
        "--set attention_costs.decode=NAME (and attention_costs.verify=NAME).");
  }
  return OkStatus();
}

namespace {

// kKernelCostCalibrations, read once per process (immutable bundled data, like the embedded files
// they fall back to: a sweep builds a scenario per point). A file that does not load is left out:
// scenario_test keeps every one loading.
const std::vector<std::pair<std::string, calib::LoadedCalibration>>& KernelCostCalibrations() {
  static const auto* const kLoaded = [] {
    auto* loaded = new std::vector<std::pair<std::string, calib::LoadedCalibration>>;
    for (const char* path : kKernelCostCalibrations)
      if (StatusOr<calib::LoadedCalibration> c = calib::LoadCalibration(path); c.ok())
        loaded->emplace_back(path, std::move(c).value());
    return loaded;
  }();
  return *kLoaded;
}

}  // namespace

std::optional<compute::AttentionImplementation> TransferredAttentionKernel(const std::string& name) {
  // The kernel's own fit, else the fit of another launch of the same kernel source with this
  // name's geometry (compute::SameKernelBodyAs), else of a kernel of the same class
  // (compute::SameCostClassAs: FlashAttention-3's, not measured, and FlashInfer's where no bundled fit
  // has it, priced per KV token as FlashAttention-2).
  const std::string body = compute::SameKernelBodyAs(name);
  const std::string cost_class = compute::SameCostClassAs(name);
  for (const std::string& fitted : {name, body, cost_class}) {
    if (fitted.empty()) continue;
    for (const auto& [path, c] : KernelCostCalibrations()) {
      const compute::AttentionImplementation* a = c.compute.FindAttentionImplementation(fitted);
      if (a == nullptr) continue;
      compute::AttentionImplementation out = *a;
      if (fitted != name) {
        StatusOr<compute::AttentionImplementation> geometry = compute::AttentionKernelOfName(name);
        if (!geometry.ok()) return std::nullopt;
        out = compute::WithCostsOf(*geometry, *a);
      }
      const std::string gpu = c.proto.provenance().gpu_name();
      const std::string relation = fitted == name   ? std::string()
                                   : fitted == body ? "of " + fitted + ", the same kernel body, "
                                                    : "of " + fitted + ", another kernel of its class (" + name +
                                                          "'s own not measured; per KV token of its tiles), ";
      out.costs_source = relation + "fitted on " + (gpu.empty() ? std::string("another GPU") : gpu) + " (" + path + ")";
      return out;
    }
  }
  return std::nullopt;
}

StatusOr<coll::CollectiveRequest> AllreduceChoice(const config::Communication& c) {
  coll::CollectiveRequest request;
  const std::string algo = c.allreduce_algorithm().empty() ? "auto" : c.allreduce_algorithm();
  auto a = coll::ParseAlgorithm(algo);
  if (!a.ok() || *a == coll::Algorithm::kDirect)
    return InvalidArgumentError("communication.allreduce_algorithm = '" + algo +
                                "': allowed values are auto, ring, tree, oneshot, twoshot");
  request.algorithm = *a;
  if (!c.protocol().empty()) {
    ASSIGN_OR_RETURN(coll::NcclProto p, coll::ParseNcclProto(c.protocol()));
    request.protocol = p;
  }
  if (c.channels() < 0) return InvalidArgumentError("communication.channels must be >= 0 (0: NCCL's choice)");
  request.channels = c.channels();
  if (!c.p2p_level().empty()) {
    ASSIGN_OR_RETURN(net::PathClass level, coll::ParseP2pLevel(c.p2p_level()));
    request.p2p_level = level;
  }
  request.p2p_disable = c.p2p_disable();
  return request;
}

llm::AcceptanceData AcceptanceDataOf(const config::Speculation& sp) {
  llm::AcceptanceData d;
  d.chain_probabilities.assign(sp.acceptance_probabilities().begin(), sp.acceptance_probabilities().end());
  d.chain_probabilities_topk = std::max(1, sp.acceptance_probabilities_topk());
  d.histogram.assign(sp.accept_length_histogram().begin(), sp.accept_length_histogram().end());
  d.histogram_num_steps = sp.histogram_num_steps() > 0 ? sp.histogram_num_steps() : sp.num_steps();
  d.histogram_topk = sp.histogram_topk() > 0 ? sp.histogram_topk() : std::max(1, sp.topk());
  d.histogram_num_draft_tokens =
      sp.histogram_num_draft_tokens() > 0 ? sp.histogram_num_draft_tokens() : sp.num_draft_tokens();
  return d;
}

StatusOr<LoadedScenario> LoadScenario(const std::string& path_in, const std::vector<std::string>& overrides,
                                      const std::string& calibration_path) {
  const std::string path = path_in.empty() ? kDefaultScenario : path_in;
  ASSIGN_OR_RETURN(config::Scenario scenario, io::LoadScenarioFile(path));
  return BuildScenario(std::move(scenario), path, overrides, calibration_path);
}

namespace {

// The target model and how it is split over the box's GPUs. `where`: "path: " for messages.
Status SetTargetAndParallelism(const config::Scenario& s, const std::string& where, const net::Topology& topology,
                               llm::DecodeSetup* setup, std::vector<std::string>* warnings) {
  ASSIGN_OR_RETURN(setup->target, io::LoadModelFile(s.model(), warnings));
  setup->parallel.tp = s.parallelism().tensor_parallel();
  setup->parallel.ep = std::max(1, s.parallelism().expert_parallel());
  setup->gpus.assign(s.parallelism().gpus().begin(), s.parallelism().gpus().end());
  if (setup->parallel.tp > topology.num_gpus())
    return InvalidArgumentError(where + "parallelism.tensor_parallel = " + std::to_string(setup->parallel.tp) + ": '" +
                                topology.name + "' has only " + std::to_string(topology.num_gpus()) + " GPUs");
  return OkStatus();
}

// The target's weight formats (serving.weight_source, scenario.h WeightsUsed): the scenario's
// dtypes into setup->weight_dtype / expert_weight_dtype, or the checkpoint's formats into
// setup->weight_formats (setup->target must be loaded).
StatusOr<WeightsUsed> SetWeightFormats(const config::Serving& sv, const std::string& where, llm::DecodeSetup* setup) {
  WeightsUsed used;
  const bool checkpoint = sv.weight_source() == config::Serving::CHECKPOINT ||
                          (sv.weight_source() == config::Serving::WEIGHT_SOURCE_UNSPECIFIED &&
                           sv.weight_dtype() == config::DTYPE_UNSPECIFIED);
  if (checkpoint) {
    const llm::CheckpointQuantization& q = setup->target.quantization;
    setup->weight_formats = llm::FormatsFromCheckpoint(q);
    used.from_checkpoint = true;
    used.source =
        q.quantized ? "checkpoint (quantization " + q.method + ")" : "checkpoint (no quantization stated: bf16)";
    used.formats = llm::DescribeWeightFormats(setup->target, *setup->weight_formats);
    return used;
  }
  ASSIGN_OR_RETURN(setup->weight_dtype, ToDType(sv.weight_dtype(), where + "serving.weight_dtype"));
  used.source = "serving.weight_dtype";
  if (sv.expert_weight_dtype() != config::DTYPE_UNSPECIFIED) {
    // A dense model has no routed experts: the dtype would be silently ignored.
    if (!setup->target.is_moe())
      return InvalidArgumentError(where + "serving.expert_weight_dtype: model '" + setup->target.name +
                                  "' is dense (no routed experts): leave it unset (serving.weight_dtype sets "
                                  "every weight)");
    ASSIGN_OR_RETURN(compute::DType e, ToDType(sv.expert_weight_dtype(), where + "serving.expert_weight_dtype"));
    setup->expert_weight_dtype = e;
    used.source += ", expert_weight_dtype";
  }
  used.formats = llm::DescribeWeightFormats(setup->target,
                                            llm::FormatsFromDtypes(setup->weight_dtype, setup->expert_weight_dtype));
  return used;
}

// Batch, context, data types and CUDA graphs of the `serving` block.
Status SetServing(const config::Serving& sv, const std::string& where, llm::DecodeSetup* setup, WeightsUsed* weights) {
  setup->batch = sv.batch_size();
  setup->context_length = sv.context_length();
  ASSIGN_OR_RETURN(*weights, SetWeightFormats(sv, where, setup));
  ASSIGN_OR_RETURN(setup->activation_dtype, ToDType(sv.activation_dtype(), where + "serving.activation_dtype"));
  ASSIGN_OR_RETURN(setup->kv_dtype, ToDType(sv.kv_cache_dtype(), where + "serving.kv_cache_dtype"));
  setup->cuda_graphs = sv.cuda_graphs();
  return OkStatus();
}

// A calibration file's compute, fabric, NCCL and host parts applied to the loaded scenario, with a
// warning when it was fitted on another box.
Status ApplyCalibrationToScenario(const std::string& path, LoadedScenario* loaded) {
  ASSIGN_OR_RETURN(calib::LoadedCalibration c, calib::LoadCalibration(path));
  loaded->warnings.insert(loaded->warnings.end(), c.warnings.begin(), c.warnings.end());
  if (loaded->topology->num_gpus() > 0) {
    const std::string warning =
        calib::CalibrationWarning(c.proto, c.source, loaded->topology->gpu_spec(0).name, loaded->topology->num_gpus());
    if (!warning.empty()) loaded->warnings.push_back(warning);
  }
  llm::DecodeSetup& setup = loaded->setup;
  setup.compute = c.compute;
  // The fabric part (copy engines, copy setup, outstanding read bytes, host-link rate) changes the
  // scenario's hardware: a calibration belongs to the box its trace was measured on.
  calib::ApplyFabricCalibration(c.fabric(), loaded->topology.get());
  // NCCL's per-step costs per (transport, protocol[, op]) with their channel rates: what the 2-GPU
  // fits write. (The custom-allreduce values are fitted on specsim-validate's own kernels, not on a
  // serving framework's: they stay with compare.)
  setup.allreduce.protocol_overrides = c.nccl.protocol;
  setup.allreduce.nccl_step_work = c.nccl.step_work;
  // The ranks' host costs (issue per op class, graph launch, sync wake, natural jitter).
  setup.driver = c.host;
  return OkStatus();
}

// The speculation method, its shape, the acceptance model for that shape and the EAGLE-3 draft.
Status SetSpeculation(const config::Speculation& sp, const std::string& where, llm::DecodeSetup* setup,
                      std::vector<std::string>* warnings) {
  llm::SpeculationSettings& spec = setup->speculation;
  switch (sp.method()) {
    case config::Speculation::EAGLE3: spec.method = llm::SpeculationMethod::kEagle3; break;
    case config::Speculation::MTP: spec.method = llm::SpeculationMethod::kMtp; break;
    case config::Speculation::DRAFT_MODEL: spec.method = llm::SpeculationMethod::kDraftModel; break;
    case config::Speculation::NGRAM: spec.method = llm::SpeculationMethod::kNgram; break;
    default: spec.method = llm::SpeculationMethod::kNone; break;
  }
  if (spec.method == llm::SpeculationMethod::kNone) return OkStatus();
  spec.num_steps = sp.num_steps();
  spec.topk = sp.topk();
  spec.num_draft_tokens = sp.num_draft_tokens();
  spec.seed = sp.seed();
  spec.cycles = sp.cycles() > 0 ? sp.cycles() : 1000;
  auto acceptance = llm::AcceptanceForShape(AcceptanceDataOf(sp), spec.num_steps, spec.topk, spec.num_draft_tokens);
  if (!acceptance.ok()) return acceptance.status().WithPrefix(where + "speculation");
  spec.acceptance = acceptance->model;
  spec.acceptance_basis = acceptance->basis;
  spec.acceptance_approximate = acceptance->approximate;
  if (spec.method == llm::SpeculationMethod::kEagle3 || spec.method == llm::SpeculationMethod::kDraftModel) {
    if (sp.draft_model().empty())
      return InvalidArgumentError(where + "speculation.draft_model: required with method " +
                                  config::Speculation::Method_Name(sp.method()) + " (the draft's model file)");
    ASSIGN_OR_RETURN(llm::ModelSpec draft, io::LoadModelFile(sp.draft_model(), warnings));
    if (spec.method == llm::SpeculationMethod::kDraftModel) {
      if (draft.is_eagle3())
        return InvalidArgumentError(where + "speculation.draft_model = " + sp.draft_model() +
                                    ": an EAGLE-3 head; DRAFT_MODEL takes a standalone language model (method EAGLE3 "
                                    "runs heads)");
      RETURN_IF_ERROR(llm::ValidateForPass(draft, setup->parallel)
                          .WithPrefix(where + "speculation.draft_model " + sp.draft_model() +
                                      " (sharded over the target's " + std::to_string(setup->parallel.tp) + " GPUs)"));
    }
    setup->draft = draft;
  }
  if (spec.method == llm::SpeculationMethod::kNgram) {
    const config::NgramSpeculation& ng = sp.ngram();
    if (!sp.has_ngram())
      return InvalidArgumentError(where +
                                  "speculation.ngram: required with method NGRAM (match_probability: how often a "
                                  "sequence's recent tokens match earlier ones in your workload; "
                                  "host_match_us_per_sequence)");
    spec.proposed_acceptance = spec.acceptance;
    auto cycle = llm::NgramCycleAcceptance(*spec.acceptance, ng.match_probability());
    if (!cycle.ok()) return cycle.status().WithPrefix(where);
    spec.acceptance = *cycle;
    spec.acceptance_basis = fmt::format("{} for proposed drafts, mixed with no match at match probability {:g}",
                                        spec.acceptance_basis, ng.match_probability());
    spec.ngram_match_probability = ng.match_probability();
    spec.ngram_host_match_us_per_sequence = ng.host_match_us_per_sequence();
    if (setup->framework && setup->framework->speculation_methods.stated)
      spec.ngram_verify_padded = setup->framework->speculation_methods.ngram_verify_padded;
  }
  return OkStatus();
}

// What the framework's source-read rules decide for this box, model and speculative shape
// (framework_decisions.h), applied to setup->framework. A capture phase the scenario set itself
// (framework_overrides.capture, or serving.cuda_graphs false) stays as set.
void ApplyFrameworkRules(const config::Scenario& s, llm::DecodeSetup* setup) {
  llm::FrameworkProfile& framework = *setup->framework;
  llm::FrameworkScenario fs;
  const GpuSpec& gpu = setup->topology->gpu_spec(setup->gpus.empty() ? 0 : setup->gpus[0]);
  fs.gpu_arch = gpu.arch;
  fs.gpu_memory_gib = gpu.memory_gib;
  fs.mla = setup->target.is_mla();
  fs.family = setup->target.family;
  fs.tp = setup->parallel.tp;
  fs.batch = setup->batch;
  const llm::SpeculationSettings& sp = setup->speculation;
  fs.speculative = sp.method != llm::SpeculationMethod::kNone;
  fs.num_steps = sp.num_steps;
  fs.topk = std::max(1, sp.topk);
  fs.num_draft_tokens = sp.num_draft_tokens;
  llm::UserCapturePhases user = llm::UserCapturePhases::All();
  if (s.serving().cuda_graphs()) {
    const config::PhaseCapture& c = s.framework_overrides().capture();
    user = {c.decode() != config::CAPTURE_MODE_UNSPECIFIED, c.draft() != config::CAPTURE_MODE_UNSPECIFIED,
            c.verify() != config::CAPTURE_MODE_UNSPECIFIED, c.draft_extend() != config::CAPTURE_MODE_UNSPECIFIED};
  }
  framework.decisions = llm::ApplyFrameworkDecisions(fs, user, &framework);
}

}  // namespace

StatusOr<LoadedScenario> BuildScenario(config::Scenario scenario, const std::string& name,
                                       const std::vector<std::string>& overrides, const std::string& calibration_path) {
  LoadedScenario loaded;
  loaded.path = name;
  loaded.scenario = std::move(scenario);
  config::Scenario& s = loaded.scenario;
  for (const std::string& o : overrides) RETURN_IF_ERROR(io::ApplyOverride(&s, o).WithPrefix("--set " + o));
  RETURN_IF_ERROR(io::ValidateScenario(s, loaded.path, &loaded.warnings));
  const std::string where = loaded.path + ": ";
  // How the framework drives the GPUs (configs/frameworks/, the scenario's overrides applied).
  ASSIGN_OR_RETURN(llm::FrameworkProfile framework, io::ScenarioFramework(s, loaded.path));

  ASSIGN_OR_RETURN(net::Topology topology, io::LoadHardwareFile(s.hardware(), &loaded.warnings));
  if (!s.communication().driver_p2p_mode().empty()) {
    auto mode = net::ParseDriverP2pMode(s.communication().driver_p2p_mode());
    if (!mode.ok()) return mode.status().WithPrefix(where + "communication.driver_p2p_mode");
    topology.driver_p2p_mode = *mode;
    for (int g = 0; g < topology.num_gpus() && *mode == net::DriverP2pMode::kBar1Forced; ++g)
      if (!net::Bar1P2pSupported(topology.gpu_spec(g).arch))
        return InvalidArgumentError(where + "communication.driver_p2p_mode = bar1: GPU " + std::to_string(g) + " is " +
                                    topology.gpu_spec(g).arch +
                                    ", and the driver has BAR1 P2P only for sm90 and later "
                                    "(docs/reference/peer-access.md)");
  }
  loaded.topology = std::make_unique<net::Topology>(std::move(topology));
  llm::DecodeSetup& setup = loaded.setup;
  setup.topology = loaded.topology.get();
  RETURN_IF_ERROR(SetTargetAndParallelism(s, where, *loaded.topology, &setup, &loaded.warnings));
  RETURN_IF_ERROR(SetServing(s.serving(), where, &setup, &loaded.weights));
  setup.framework = framework;
  setup.pacing_seed = s.speculation().seed() + 1;
  auto choice = AllreduceChoice(s.communication());
  if (!choice.ok()) return choice.status().WithPrefix(loaded.path);
  setup.allreduce = *choice;

  // Compute parameters: documented defaults, then the calibration file (flag beats scenario).
  const std::string calib = !calibration_path.empty() ? calibration_path : s.calibration();
  loaded.calibration = calib;
  if (!calib.empty()) RETURN_IF_ERROR(ApplyCalibrationToScenario(calib, &loaded));
  RETURN_IF_ERROR(SetSpeculation(s.speculation(), where, &setup, &loaded.warnings));
  ApplyFrameworkRules(s, &setup);
  RETURN_IF_ERROR(ChooseAttentionCosts(s.attention_costs(), *setup.framework, setup.target.is_mla(), calib,
                                       &setup.compute, &loaded.warnings)
                      .WithPrefix(loaded.path));
  return loaded;
}

namespace {

// The CUDA-graph pool the scenario's framework fills (llm/graph_pool.h): its capture list up to its
// bound and what it keeps, or graphs at the served batch only without a stated pool; none when
// every phase runs eagerly.
llm::RuntimeMemorySpec RuntimeMemoryOf(const llm::DecodeSetup& setup, const net::GpuSpec& gpu) {
  llm::RuntimeMemorySpec runtime;
  const bool speculative = setup.speculation.method != llm::SpeculationMethod::kNone;
  const int per_sequence = speculative ? setup.speculation.num_draft_tokens : 1;
  bool graphs = setup.cuda_graphs;
  if (setup.framework) {
    const llm::PhaseCapture& c = setup.framework->capture;
    graphs = (speculative ? c.verify : c.decode) != llm::CaptureMode::kEager;
  }
  if (!graphs) return runtime;
  llm::GraphPoolSpec pool;
  pool.library_workspace_bytes = llm::CublasWorkspaceBytes(gpu.arch);
  pool.captured_tokens = {static_cast<int64_t>(setup.batch) * per_sequence};
  if (setup.framework && setup.framework->graph_pool.stated && setup.framework->capture_bound.stated) {
    const auto& g = setup.framework->graph_pool;
    const auto& bound = setup.framework->capture_bound;
    int largest = bound.MaxFor(setup.parallel.tp);
    // The request pool cuts the list (SGLang cuda_graph_runner.py @21514ff get_batch_sizes_to_capture:
    // capture_bs <= req_to_token_pool.size), which under speculation holds the request cap unless
    // the launch line raises it to the batch (advise's does).
    const auto& defaults = setup.framework->speculative_defaults;
    if (!bound.tokens && speculative && defaults.stated && defaults.max_running_requests > 0)
      largest = std::min(largest, std::max(setup.batch, defaults.max_running_requests));
    pool.captured_tokens.clear();
    for (int64_t size : llm::CaptureSizes(g.small_sizes, g.step, largest))
      pool.captured_tokens.push_back(bound.tokens ? size : size * per_sequence);
    using O = llm::FrameworkProfile::GraphPool;
    pool.outputs = g.outputs;
    const double vocab = setup.target.vocab_size;
    pool.output_bytes_per_token = g.output == O::Output::kLogitsFp32   ? vocab * 4
                                  : g.output == O::Output::kLogitsBf16 ? vocab * 2
                                                                       : setup.target.hidden_size * 2.0;
  }
  runtime.graph_pool = pool;
  return runtime;
}

}  // namespace

StatusOr<llm::MemoryPlan> PlanScenarioMemory(const LoadedScenario& loaded) {
  const llm::DecodeSetup& setup = loaded.setup;
  llm::ServingShape shape;
  shape.batch = setup.batch;
  const int max_ctx = loaded.scenario.serving().max_context_length();
  shape.max_context = max_ctx > 0 ? max_ctx : std::max(1, setup.context_length);
  shape.max_tokens_per_sequence =
      setup.speculation.method == llm::SpeculationMethod::kNone ? 1 : setup.speculation.num_draft_tokens;
  shape.weight_dtype = setup.weight_dtype;
  shape.expert_weight_dtype = setup.expert_weight_dtype;
  shape.weight_formats = setup.weight_formats;
  shape.activation_dtype = setup.activation_dtype;
  shape.kv_dtype = setup.kv_dtype;
  shape.mtp_draft = setup.speculation.method == llm::SpeculationMethod::kMtp;
  shape.standalone_draft = setup.speculation.method == llm::SpeculationMethod::kDraftModel;
  llm::CommBufferSpec comm;
  if (setup.allreduce.algorithm == coll::Algorithm::kOneShot || setup.allreduce.algorithm == coll::Algorithm::kTwoShot)
    comm.custom_allreduce_mib = 16;  // vLLM/SGLang's registered in/out buffers (memory_plan.h)
  // NCCL's buffers follow the channels a scenario forces (NCCL_MIN/MAX_NCHANNELS).
  if (loaded.scenario.communication().channels() > 0) comm.nccl_channels = loaded.scenario.communication().channels();
  const int first_gpu = setup.gpus.empty() ? 0 : setup.gpus[0];
  const net::GpuSpec& gpu = setup.topology->gpu_spec(first_gpu);
  return llm::PlanMemory(setup.target, setup.draft, setup.parallel, shape, gpu, comm, RuntimeMemoryOf(setup, gpu));
}

StatusOr<Evaluation> Evaluate(const LoadedScenario& loaded) {
  Evaluation e;
  ASSIGN_OR_RETURN(e.memory, PlanScenarioMemory(loaded));
  if (!e.memory.fits) return e;
  auto sim = llm::DecodeSimulator::Create(loaded.setup);
  if (!sim.ok()) return sim.status().WithPrefix(loaded.path);
  auto result = (*sim)->Run();
  if (!result.ok()) return result.status().WithPrefix(loaded.path);
  e.result = std::move(*result);
  e.simulator = std::move(*sim);
  return e;
}

StatusOr<llm::DecodeResult> EvaluateSetup(const llm::DecodeSetup& setup) {
  ASSIGN_OR_RETURN(std::unique_ptr<llm::DecodeSimulator> sim, llm::DecodeSimulator::Create(setup));
  return sim->Run();
}

}  // namespace specsim::scenario
