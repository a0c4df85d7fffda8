#include "sim/io/file_io.h"
#include "sim/tools/simulate_command.h"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>

#include "sim/advise/framework_rules.h"
#include "sim/advise/variants.h"
#include "sim/llm/speculative_cycle.h"
#include "sim/scenario/host_cost_band.h"
#include "sim/scenario/scenario.h"
#include "sim/tools/chrome_trace.h"
#include "sim/tools/config_files.h"
#include "sim/tools/weights_report.h"

namespace specsim::tools {

namespace {

// One row of a --compare-algos table: tokens/s and two columns of the table's own (ms).
struct VariantRow {
  std::string name;
  double baseline = 0, speculative = 0, a = 0, b = 0;
  std::string refusal;  // the framework's rule against this choice on this box (advise::AllreduceRefusal)
};

std::string DTypeLabel(config::DType d) { return config::DType_Name(d); }

// The memory plan as JSON (--memory --json): per GPU, bytes per line with its note.
nlohmann::json MemoryPlanJson(const llm::MemoryPlan& plan) {
  nlohmann::json lines = nlohmann::json::array();
  for (const llm::MemoryLine& l : plan.lines) lines.push_back({{"name", l.name}, {"bytes", l.bytes}, {"note", l.note}});
  return {{"title", plan.title},
          {"lines", lines},
          {"total_bytes", plan.total_bytes},
          {"capacity_bytes", plan.capacity_bytes},
          {"free_bytes", plan.free_bytes()},
          {"fits", plan.fits}};
}

nlohmann::json BreakdownJson(const llm::CycleBreakdown& b) {
  return {{"draft_compute", b.draft_compute_ms},   {"draft_comm", b.draft_comm_ms},
          {"draft_wait", b.draft_wait_ms},         {"verify_compute", b.verify_compute_ms},
          {"verify_comm", b.verify_comm_ms},       {"verify_wait", b.verify_wait_ms},
          {"launch_sync", b.launch_sync_ms},       {"wait_max", b.wait_max_ms},
          {"host_bound_share", b.host_bound_share}};
}

nlohmann::json PassJson(const llm::PassTiming& p) {
  return {{"total_ms", MillisFromPicos(p.total_ps)},
          {"compute_ms", MillisFromPicos(p.compute_ps)},
          {"comm_ms", MillisFromPicos(p.comm_ps)},
          {"wait_ms", MillisFromPicos(p.wait_ps)},
          {"launch_ms", MillisFromPicos(p.launch_ps)},
          {"kernels", p.kernels},
          {"collectives", p.collectives}};
}

std::string JitterLabel(const llm::Jitter& j) {
  switch (j.kind) {
    case llm::Jitter::Kind::kNone: return "none";
    case llm::Jitter::Kind::kExponential: return fmt::format("exponential, mean {:.2g} us", j.mean_us);
    case llm::Jitter::Kind::kLognormal:
      return fmt::format("lognormal, mean {:.2g} us, sigma {:.2g}", j.mean_us, j.sigma);
    case llm::Jitter::Kind::kEmpirical: return fmt::format("empirical, {} quantiles", j.quantiles_us.size());
  }
  return "?";
}

// How the ranks' hosts drive the GPUs in this run: the assumptions behind every figure.
struct PacingAssumptions {
  std::string framework = "none (every phase from serving.cuda_graphs)";
  std::string source;
  std::string decode = "full", draft = "full", verify = "full", draft_extend = "full";
  bool sync_each_step = true, sync_each_cycle = true;
  std::string jitter = "none";
  std::string version;
  std::vector<std::string> step_waits, cycle_waits;  // the named host waits, "NAME (after P, waits for Q)"
  std::vector<std::string> decisions;                // what the profile's rules decided (framework_decisions.h)
  std::string kernels;                               // the kernel inventory (forward_pass.h KernelInventory)
  std::string cycle_ops;                             // the cycle's own launches outside its passes
};

// "28 eager kernels (before verify 6, before draft_extend 13, before draft 9), ..." for the groups
// the scenario's worker runs (llm::CycleOpsOf) at its batch and num_steps (a group met before every
// draft step counts num_steps - 1 times); "" for none.
std::string CycleOpsLabel(const std::vector<llm::CycleOps>& ops, bool ngram, int batch, int num_steps,
                          double tensor_op_us) {
  int total = 0;
  std::vector<std::pair<llm::LoopPass, int>> by_pass;
  for (const llm::CycleOps& c : ops) {
    const int n = c.LaunchesPerCycle(batch, num_steps);
    total += n;
    auto it = std::find_if(by_pass.begin(), by_pass.end(), [&](const auto& p) { return p.first == c.before; });
    if (it == by_pass.end())
      by_pass.emplace_back(c.before, n);
    else
      it->second += n;
  }
  if (total == 0) return "";
  std::sort(by_pass.begin(), by_pass.end());  // the cycle's order: verify, draft extend, draft
  std::vector<std::string> parts;
  for (const auto& [pass, n] : by_pass)
    parts.push_back(!ngram ? fmt::format("before {} {}", llm::LoopPassName(pass), n)
                    // The n-gram cycle has no draft extend nor draft: its groups after verify.
                    : pass == llm::LoopPass::kDraftExtend ? fmt::format("after verify {}", n)
                    : pass == llm::LoopPass::kDraft       ? fmt::format("after its waits {}", n)
                                                          : fmt::format("before verify {}", n));
  return fmt::format(
      "{} eager kernels ({}), each a small tensor op's host cost (tensor_op_host_us {} us, or the calibration's "
      "per-call draws) and a minimal kernel",
      total, fmt::join(parts, ", "), tensor_op_us);
}

// "NAME (after P)" for a stream sync, "NAME (after P, on Q's event)" for a wait on an earlier pass.
std::vector<std::string> WaitLabels(const std::vector<llm::HostWait>& waits) {
  std::vector<std::string> out;
  for (const llm::HostWait& w : waits)
    out.push_back(w.after == w.waits_for ? fmt::format("{} (after {})", w.name, llm::LoopPassName(w.after))
                                         : fmt::format("{} (after {}, on {}'s event)", w.name,
                                                       llm::LoopPassName(w.after), llm::LoopPassName(w.waits_for)));
  return out;
}

PacingAssumptions PacingOf(const llm::DecodeSetup& st) {
  PacingAssumptions a;
  if (st.framework) {
    const llm::FrameworkProfile& f = *st.framework;
    a.framework = f.name;
    a.source = f.source;
    a.decode = llm::CaptureModeName(f.capture.decode);
    a.draft = llm::CaptureModeName(f.capture.draft);
    a.verify = llm::CaptureModeName(f.capture.verify);
    a.draft_extend = llm::CaptureModeName(f.capture.draft_extend);
    a.sync_each_step = f.sync_each_step;
    a.sync_each_cycle = f.sync_each_cycle;
    a.version = f.version;
    if (f.sync_each_step) a.step_waits = WaitLabels(f.step_host_waits);
    if (f.sync_each_cycle) a.cycle_waits = WaitLabels(llm::CycleWaitsOf(st));
    a.cycle_ops = CycleOpsLabel(llm::CycleOpsOf(st), st.speculation.method == llm::SpeculationMethod::kNgram, st.batch,
                                st.speculation.num_steps, f.tensor_op_host_us);
    a.decisions = f.decisions;
    a.kernels = f.kernel_inventory.Describe() +
                (f.kernel_inventory_source.empty() ? "" : " [" + f.kernel_inventory_source + "]");
    a.jitter = JitterLabel(f.jitter.kind != llm::Jitter::Kind::kNone ? f.jitter : st.driver.jitter);
  } else {
    const std::string mode = st.cuda_graphs ? "full" : "eager";
    a.decode = a.draft = a.verify = a.draft_extend = mode;
    a.sync_each_step = a.sync_each_cycle = true;  // the decode loop's default without a profile
    a.jitter = JitterLabel(st.driver.jitter);
  }
  return a;
}

// One cycle (or plain step), after a warm-up, as every rank's host thread and GPU stream: pid r + 1
// is rank r, tid 1 its host thread (launches, syncs, host work), tid 2 its GPU stream (kernels,
// collective wait, collective transfer). Each track's slices are sequential (Perfetto-valid: no two
// slices of one track partly overlap; a test checks it).
Status WriteCycleTrace(llm::DecodeSimulator& sim, const llm::DecodeResult& result, const std::string& path) {
  const llm::DecodeSetup& setup = sim.setup();
  int accepted = 0;
  if (result.speculative) {
    const auto& spec = setup.speculation;
    accepted = std::clamp(static_cast<int>(std::lround(result.tau - 1)), 0,
                          llm::MaxAcceptedPerCycle(spec.num_steps, spec.num_draft_tokens));
  }
  ASSIGN_OR_RETURN(std::vector<llm::RankSlice> slices, sim.LoopTimeline(1, result.speculative, accepted));
  SimTime origin = slices.empty() ? 0 : slices.front().start_ps;
  for (const llm::RankSlice& s : slices) origin = std::min(origin, s.start_ps);
  TraceEventWriter events;
  for (int r = 0; r < setup.parallel.tp; ++r) {
    events.ProcessName(r + 1,
                       fmt::format("rank {} (GPU {})", r, r < static_cast<int>(setup.gpus.size()) ? setup.gpus[r] : r));
    events.ProcessSortIndex(r + 1, r);
    events.ThreadName(r + 1, 1, "host thread");
    events.ThreadName(r + 1, 2, "GPU stream");
  }
  for (const llm::RankSlice& s : slices)
    events.Slice(s.rank + 1, s.host ? 1 : 2, s.name, s.category, MicrosFromPicos(s.start_ps - origin),
                 MicrosFromPicos(s.end_ps - s.start_ps));
  return io::WriteFileAtomically(path, events.ToString());
}

// --compare-algos: the scenario once per allreduce choice (calibrated NCCL costs kept).
StatusOr<std::vector<VariantRow>> AllreduceVariantRows(const scenario::LoadedScenario& loaded) {
  std::vector<VariantRow> rows;  // a: step comm, b: verify comm (ms)
  const std::optional<advise::BoxFacts> box = loaded.setup.framework
                                                  ? std::optional<advise::BoxFacts>(advise::BoxFactsOf(
                                                        *loaded.topology, loaded.setup.parallel.tp, loaded.setup.gpus))
                                                  : std::nullopt;
  for (const advise::AllreduceVariant& v : advise::AllreduceVariants(advise::VariantList::kCompareAlgos)) {
    llm::DecodeSetup setup = loaded.setup;
    auto choice = scenario::AllreduceChoice(v.Communication());
    if (!choice.ok()) return choice.status();
    choice->protocol_overrides = setup.allreduce.protocol_overrides;  // calibrated NCCL costs stay
    setup.allreduce = *choice;
    auto vr = scenario::EvaluateSetup(setup);
    if (!vr.ok()) return vr.status().WithPrefix(v.name);
    rows.push_back({v.name, vr->baseline_tokens_per_s, vr->speculative ? vr->speculative_tokens_per_s : 0,
                    MillisFromPicos(vr->baseline_step.comm_ps), MillisFromPicos(vr->verify.comm_ps),
                    box ? advise::AllreduceRefusal(v, *loaded.setup.framework, *box) : ""});
  }
  return rows;
}

// --compare-algos: the scenario once per capture mode and host-sync variant (its own allreduce).
StatusOr<std::vector<VariantRow>> PacingVariantRows(const scenario::LoadedScenario& loaded) {
  std::vector<VariantRow> rows;  // a: verify comm, b: of which wait (ms)
  for (const advise::PacingVariant& v : advise::PacingVariants(advise::VariantList::kCompareAlgos)) {
    llm::DecodeSetup setup = loaded.setup;
    v.ApplyTo(&setup);
    auto vr = scenario::EvaluateSetup(setup);
    if (!vr.ok()) return vr.status().WithPrefix(v.name);
    rows.push_back({v.name, vr->baseline_tokens_per_s, vr->speculative ? vr->speculative_tokens_per_s : 0,
                    vr->speculative ? vr->breakdown.verify_comm_ms : 0,
                    vr->speculative ? vr->breakdown.verify_wait_ms : 0, ""});
  }
  return rows;
}

nlohmann::json BandFiguresJson(const scenario::BandFigures& f) {
  nlohmann::json j = {{"baseline_tokens_per_s", f.baseline_tokens_per_s}, {"baseline_step_ms", f.baseline_step_ms}};
  if (f.speculative) {
    j["speculative_tokens_per_s"] = f.speculative_tokens_per_s;
    j["cycle_ms"] = f.cycle_ms;
    j["speedup"] = f.speedup;
  }
  return j;
}

// The host-cost band as JSON: null without unmeasured costs.
nlohmann::json HostCostBandJson(const std::optional<scenario::HostCostBand>& band) {
  if (!band) return nullptr;
  return {{"unmeasured_costs", band->costs},
          {"low_cost", BandFiguresJson(band->low_cost)},
          {"high_cost", BandFiguresJson(band->high_cost)}};
}

// The band beside the point figures: "point [low-cost end .. high-cost end]".
void PrintHostCostBand(const llm::DecodeResult& r, const std::optional<scenario::HostCostBand>& band,
                       std::ostream& out) {
  if (!band) return;
  const scenario::BandFigures& lo = band->low_cost;
  const scenario::BandFigures& hi = band->high_cost;
  out << "#\n# host-cost band: every unmeasured framework host cost at the low end of its range, then every one "
         "at the high end (point [low-cost end .. high-cost end]):\n";
  out << fmt::format("  baseline     {:.1f} tokens/s [{:.1f} .. {:.1f}], step {:.3f} ms [{:.3f} .. {:.3f}]\n",
                     r.baseline_tokens_per_s, lo.baseline_tokens_per_s, hi.baseline_tokens_per_s, r.baseline_step_ms,
                     lo.baseline_step_ms, hi.baseline_step_ms);
  if (r.speculative)
    out << fmt::format(
        "  speculative  {:.1f} tokens/s [{:.1f} .. {:.1f}], cycle {:.3f} ms [{:.3f} .. {:.3f}], speedup {:.2f}x "
        "[{:.2f}x .. {:.2f}x]\n",
        r.speculative_tokens_per_s, lo.speculative_tokens_per_s, hi.speculative_tokens_per_s, r.cycle_ms, lo.cycle_ms,
        hi.cycle_ms, r.speedup, lo.speedup, hi.speedup);
  out << "#   unmeasured host costs (configs/frameworks/, host_cost_sources):\n";
  for (const std::string& c : band->costs) out << "#     " << c << "\n";
}

// Where the run's NCCL step costs came from (llm::CollectiveInfo::step_costs), each once, in order.
std::vector<std::string> UniqueStepCosts(const llm::DecodeResult& r) {
  std::vector<std::string> out;
  for (const llm::CollectiveInfo& c : r.collectives)
    if (!c.step_costs.empty() && std::find(out.begin(), out.end(), c.step_costs) == out.end())
      out.push_back(c.step_costs);
  return out;
}

// Where the kernels' costs come from: the GEMMs' fitted library or the defaults, each attention
// regime's fitted implementation or the roofline, and the memory-bound kernels' roofline.
std::string KernelCostsText(const scenario::LoadedScenario& loaded) {
  const llm::DecodeSetup& st = loaded.setup;
  const compute::ComputeParams& c = st.compute;
  const bool calibrated = !loaded.calibration.empty();
  const std::string gemms =
      calibrated ? fmt::format("fitted on {} ({})", c.gemm_library.empty() ? "cublasGemmEx" : c.gemm_library,
                               loaded.calibration)
                 : "the documented default efficiencies (no calibration)";
  const bool mla = st.target.is_mla();
  auto regime = [&](int64_t q, const std::string& label) {
    if (const compute::AttentionImplementation* a = c.attention_regimes.For(q, mla))
      return a->costs_source.empty()
                 ? fmt::format("{}'s fitted costs", a->name)
                 : fmt::format("{} (its launch geometry on this GPU's SMs; costs {}, not measured here)", a->name,
                               a->costs_source);
    return fmt::format("roofline{}", label.empty() ? "" : " (no calibrated " + label + ")");
  };
  const llm::FrameworkProfile* f = st.framework ? &*st.framework : nullptr;
  const std::string q1 = f ? (mla ? f->attention_mla_decode : f->attention_decode) : "";
  const std::string q2 = f ? (mla ? f->attention_mla_verify : f->attention_verify) : "";
  return fmt::format(
      "GEMMs: {}; attention: q = 1 {}, q >= 2 {}; norms, elementwise and sampling: the memory roofline with {} "
      "ramps",
      gemms, regime(1, q1), regime(2, q2), calibrated ? "the calibration's" : "the default");
}

void PrintSimulateJson(const scenario::LoadedScenario& loaded, const llm::DecodeResult& r,
                       const std::vector<VariantRow>& algo_rows, const std::vector<VariantRow>& pacing_rows,
                       const std::optional<scenario::HostCostBand>& band, std::ostream& out) {
  nlohmann::json j;
  j["scenario"] = loaded.scenario.name();
  j["weights"] = WeightsJson(loaded.weights);
  j["baseline"] = {{"tokens_per_s", r.baseline_tokens_per_s}, {"step_ms", r.baseline_step_ms}};
  if (r.speculative) {
    j["speculative"] = {{"tokens_per_s", r.speculative_tokens_per_s},
                        {"tau", r.tau},
                        {"tau_expected", r.tau_expected},
                        {"cycle_ms", r.cycle_ms},
                        {"speedup", r.speedup},
                        {"cycles", r.cycles},
                        {"acceptance_basis", loaded.setup.speculation.acceptance_basis},
                        {"acceptance_approximate", loaded.setup.speculation.acceptance_approximate},
                        {"breakdown_ms", BreakdownJson(r.breakdown)}};
  } else {
    j["speculative"] = nullptr;
  }
  const PacingAssumptions pa = PacingOf(loaded.setup);
  j["pacing"] = {
      {"framework", pa.framework},
      {"framework_source", pa.source},
      {"capture",
       {{"decode", pa.decode}, {"draft", pa.draft}, {"verify", pa.verify}, {"draft_extend", pa.draft_extend}}},
      {"sync_each_step", pa.sync_each_step},
      {"sync_each_cycle", pa.sync_each_cycle},
      {"host_jitter", pa.jitter},
      {"framework_version", pa.version},
      {"step_host_waits", pa.step_waits},
      {"cycle_host_waits", pa.cycle_waits},
      {"framework_decisions", pa.decisions},
      {"layer_kernels", pa.kernels},
      {"ranks", loaded.setup.parallel.tp}};
  j["baseline"]["pass"] = PassJson(r.baseline_step);
  if (r.speculative) {
    j["speculative"]["verify_pass"] = PassJson(r.verify);
    j["speculative"]["draft_step_pass"] = PassJson(r.draft_step);
  }
  j["algorithms"] = nlohmann::json::array();
  for (const VariantRow& a : algo_rows)
    j["algorithms"].push_back(
        {{"name", a.name},
         {"baseline_tokens_per_s", a.baseline},
         {"speculative_tokens_per_s", a.speculative},
         {"framework_refusal", a.refusal.empty() ? nlohmann::json() : nlohmann::json(a.refusal)}});
  j["pacing_variants"] = nlohmann::json::array();
  for (const VariantRow& a : pacing_rows)
    j["pacing_variants"].push_back({{"name", a.name},
                                    {"baseline_tokens_per_s", a.baseline},
                                    {"speculative_tokens_per_s", a.speculative},
                                    {"verify_comm_ms", a.a},
                                    {"verify_wait_ms", a.b}});
  j["host_cost_band"] = HostCostBandJson(band);
  const std::string refusal = advise::ScenarioAllreduceRefusal(loaded);
  j["framework_refusal"] = refusal.empty() ? nlohmann::json() : nlohmann::json(refusal);
  j["collectives"] = nlohmann::json::array();
  for (const llm::CollectiveInfo& c : r.collectives) j["collectives"].push_back(c.description);
  j["nccl_step_costs"] = UniqueStepCosts(r);
  j["kernel_costs"] = KernelCostsText(loaded);
  out << j.dump(1) << "\n";
}

// The scenario, its memory and the host-pacing assumptions every figure depends on.
void PrintSimulateHeader(const scenario::LoadedScenario& loaded, const llm::MemoryPlan& plan,
                         const std::string& calibration_flag, std::ostream& out) {
  const config::Scenario& sc = loaded.scenario;
  const llm::DecodeSetup& st = loaded.setup;
  out << fmt::format("# specsim simulate: {}\n", sc.name().empty() ? loaded.path : sc.name());
  out << "#   " << ConfigFilesText(loaded.scenario, loaded.path, calibration_flag) << "\n";
  const scenario::WeightsUsed& w = loaded.weights;
  const std::string weights = w.from_checkpoint
                                  ? "as the checkpoint stores them"
                                  : DTypeLabel(sc.serving().weight_dtype()) +
                                        (sc.serving().expert_weight_dtype()
                                             ? " (experts " + DTypeLabel(sc.serving().expert_weight_dtype()) + ")"
                                             : "");
  out << fmt::format("#   {} TP{}{} on {}, batch {}, context {}, weights {}, CUDA graphs {}\n", st.target.name,
                     st.parallel.tp, st.parallel.ep > 1 ? fmt::format(" EP{}", st.parallel.ep) : "", st.topology->name,
                     st.batch, st.context_length, weights, st.cuda_graphs ? "on" : "off");
  out << WeightFormatsLine(w);
  out << fmt::format(
      "#   allreduce: {}; memory: {:.1f} of {:.1f} GiB per GPU\n",
      sc.communication().allreduce_algorithm().empty() ? "auto" : sc.communication().allreduce_algorithm(),
      plan.total_bytes / (1 << 30), plan.capacity_bytes / (1 << 30));
  if (const std::string refusal = advise::ScenarioAllreduceRefusal(loaded); !refusal.empty())
    out << "#   [framework rule] this allreduce is not what the framework runs here: " << refusal << "\n";
  out << "#   kernel costs: " << KernelCostsText(loaded) << "\n";
  {
    // The pacing assumptions: every figure below depends on them (docs/commands.md: framework profiles).
    const PacingAssumptions pa = PacingOf(st);
    out << fmt::format("#   assumed host pacing: framework {}{}; {} rank timelines\n", pa.framework,
                       pa.source.empty() ? "" : " (" + pa.source + ")", st.parallel.tp);
    out << fmt::format("#     capture: decode {}, draft {}, verify {}, draft extend {}; host sync {}; host jitter {}\n",
                       pa.decode, pa.draft, pa.verify, pa.draft_extend,
                       pa.sync_each_step && pa.sync_each_cycle ? "every step and cycle"
                       : pa.sync_each_step                     ? "every plain step"
                       : pa.sync_each_cycle                    ? "every speculative cycle"
                                                               : "never (host runs ahead)",
                       pa.jitter);
    if (!pa.version.empty()) out << fmt::format("#     version: {}\n", pa.version);
    if (!pa.kernels.empty()) out << fmt::format("#     layer kernels: {}\n", pa.kernels);
    if (!pa.step_waits.empty())
      out << fmt::format("#     host waits per plain step: {}\n", fmt::join(pa.step_waits, "; "));
    if (!pa.cycle_waits.empty())
      out << fmt::format("#     host waits per speculative cycle: {}\n", fmt::join(pa.cycle_waits, "; "));
    if (!pa.cycle_ops.empty() && st.speculation.method != llm::SpeculationMethod::kNone)
      out << fmt::format("#     launches per speculative cycle outside its passes: {}\n", pa.cycle_ops);
    for (const std::string& d : pa.decisions) out << "#     " << d << "\n";
  }
  out << "#\n";
}

// Baseline and speculative throughput, and where the cycle (or the step) goes.
void PrintThroughputAndBreakdown(const llm::DecodeSetup& st, const llm::DecodeResult& r, std::ostream& out) {
  out << fmt::format("  {:<26} {:>12} {:>10} {:>6} {:>8}\n", "", "step (ms)", "tokens/s", "tau", "speedup");
  out << fmt::format("  {:<26} {:>12.3f} {:>10.1f} {:>6.2f} {:>8}\n", "baseline (no speculation)", r.baseline_step_ms,
                     r.baseline_tokens_per_s, 1.0, "1.00x");
  if (r.speculative) {
    const auto& sp = st.speculation;
    out << fmt::format(
        "  {:<26} {:>12.3f} {:>10.1f} {:>6.2f} {:>7.2f}x\n",
        fmt::format("{} {}/{}/{}", llm::SpeculationMethodName(sp.method), sp.num_steps, sp.topk, sp.num_draft_tokens),
        r.cycle_ms, r.speculative_tokens_per_s, r.tau, r.speedup);
    out << fmt::format("#   (speculative: mean cycle over {} sampled cycles; tau expected {:.3f})\n", r.cycles,
                       r.tau_expected);
    out << fmt::format("#   acceptance: {}{}\n", sp.acceptance_basis,
                       sp.acceptance_approximate ? " (converted from another shape through the tree model)" : "");
    out << "#\n# where the cycle goes (ms per cycle):\n";
    const auto& b = r.breakdown;
    out << fmt::format("  {:>14} {:>12} {:>15} {:>12} {:>12}\n", "draft compute", "draft comm", "verify compute",
                       "verify comm", "launch/sync");
    out << fmt::format("  {:>14.3f} {:>12.3f} {:>15.3f} {:>12.3f} {:>12.3f}\n", b.draft_compute_ms, b.draft_comm_ms,
                       b.verify_compute_ms, b.verify_comm_ms, b.launch_sync_ms);
    out << fmt::format(
        "#   of the comm, waiting for the last rank: draft {:.3f}, verify {:.3f} ms (rank 0; the longest "
        "wait of any rank, summed over collectives: {:.3f} ms); host-bound share of the cycle {:.0f}%\n",
        b.draft_wait_ms, b.verify_wait_ms, b.wait_max_ms, 100 * b.host_bound_share);
    out << fmt::format(
        "#   verify pass: {} kernels, {} collectives ({:.3f} ms, of which {:.3f} wait); baseline step: "
        "{:.3f} ms compute, {:.3f} ms comm (of which {:.3f} wait)\n",
        r.verify.kernels, r.verify.collectives, MillisFromPicos(r.verify.comm_ps), MillisFromPicos(r.verify.wait_ps),
        MillisFromPicos(r.baseline_step.compute_ps), MillisFromPicos(r.baseline_step.comm_ps),
        MillisFromPicos(r.baseline_step.wait_ps));
  }
  if (!r.speculative) {
    out << fmt::format(
        "#   baseline step: {:.3f} ms compute, {:.3f} ms comm (of which {:.3f} waiting for the last "
        "rank), {:.3f} ms launch/sync\n",
        MillisFromPicos(r.baseline_step.compute_ps), MillisFromPicos(r.baseline_step.comm_ps),
        MillisFromPicos(r.baseline_step.wait_ps), MillisFromPicos(r.baseline_step.launch_ps));
  }
}

// The --compare-algos tables: one row per variant, baseline and speculative tokens/s, the
// speedup and two variant-specific columns.
void PrintVariants(const std::string& title, const std::string& what, const std::string& col_a,
                   const std::string& col_b, const std::vector<VariantRow>& rows, std::ostream& out) {
  if (rows.empty()) return;
  out << "#\n# --compare-algos: the same scenario per " << title << "\n";
  out << fmt::format("  {:<32} {:>16} {:>18} {:>9} {:>18} {:>16}\n", what, "baseline tok/s", "speculative tok/s",
                     "speedup", col_a, col_b);
  std::vector<std::string> refusals;  // footnotes, in the order the rows name them
  for (const VariantRow& a : rows) {
    std::string tag;
    if (!a.refusal.empty()) {
      auto it = std::find(refusals.begin(), refusals.end(), a.refusal);
      if (it == refusals.end()) it = refusals.insert(refusals.end(), a.refusal);
      tag = fmt::format("  [framework rule {}]", it - refusals.begin() + 1);
    }
    out << fmt::format("  {:<32} {:>16.1f} {:>18.1f} {:>8.2f}x {:>18.3f} {:>16.3f}{}\n", a.name, a.baseline,
                       a.speculative, a.speculative > 0 ? a.speculative / a.baseline : 0.0, a.a, a.b, tag);
  }
  for (size_t i = 0; i < refusals.size(); ++i) out << fmt::format("#   [framework rule {}] {}\n", i + 1, refusals[i]);
}

// Whether `set` assigns one of the serving fields that choose the target's weight formats.
bool SetsWeightFormats(const std::vector<std::string>& set) {
  for (const std::string& o : set) {
    for (const char* field : {"serving.weight_dtype=", "serving.expert_weight_dtype=", "serving.weight_source="}) {
      if (o.rfind(field, 0) == 0) return true;
    }
  }
  return false;
}

// The --set overrides with --model and --draft in front (so an explicit --set still wins).
std::vector<std::string> SimulateOverrides(const SimulateFlags& flags) {
  std::vector<std::string> front;
  if (!flags.model.empty()) {
    front.push_back("model=" + flags.model);
    if (!SetsWeightFormats(flags.set)) front.push_back("serving.weight_source=CHECKPOINT");
  }
  if (!flags.draft.empty()) front.push_back("speculation.draft_model=" + flags.draft);
  front.insert(front.end(), flags.set.begin(), flags.set.end());
  return front;
}

}  // namespace

int RunSimulate(const SimulateFlags& flags, std::ostream& out, std::ostream& err) {
  auto fail = [&err](const Status& s) {
    err << "specsim simulate: " << s.message() << "\n";
    return 2;
  };
  const std::vector<std::string> overrides = SimulateOverrides(flags);
  auto loaded_or = scenario::LoadScenario(flags.scenario, overrides, flags.calibration);
  if (!loaded_or.ok()) return fail(loaded_or.status());
  scenario::LoadedScenario& loaded = *loaded_or;
  for (const std::string& w : loaded.warnings) err << w << "\n";

  if (flags.memory) {
    auto plan = scenario::PlanScenarioMemory(loaded);
    if (!plan.ok()) return fail(plan.status().WithPrefix(loaded.path));
    if (flags.json)
      out << nlohmann::json{{"memory", MemoryPlanJson(*plan)}, {"weights", WeightsJson(loaded.weights)}}.dump(1)
          << "\n";
    else
      out << llm::FormatMemoryPlan(*plan);
    return plan->fits ? 0 : 3;
  }
  auto evaluation = scenario::Evaluate(loaded);
  if (!evaluation.ok()) return fail(evaluation.status());
  const llm::MemoryPlan* plan = &evaluation->memory;
  if (!evaluation->result) {
    err << "specsim simulate: " << loaded.path << ": does not fit in GPU memory:\n" << llm::FormatMemoryPlan(*plan);
    return 3;
  }
  const llm::DecodeResult& r = *evaluation->result;
  // The same scenario at both ends of its framework's unmeasured host costs (none: no band).
  auto band = scenario::EvaluateHostCostBand(loaded.setup);
  if (!band.ok()) return fail(band.status().WithPrefix(loaded.path));

  std::vector<VariantRow> algo_rows, pacing_rows;
  if (flags.compare_algos) {
    auto a = AllreduceVariantRows(loaded);
    if (!a.ok()) return fail(a.status());
    algo_rows = *std::move(a);
    auto p = PacingVariantRows(loaded);
    if (!p.ok()) return fail(p.status());
    pacing_rows = *std::move(p);
  }
  if (!flags.trace.empty()) {
    Status s = WriteCycleTrace(*evaluation->simulator, r, flags.trace);
    if (!s.ok()) {
      err << "specsim simulate: --trace " << s.message() << "\n";
      return io::kWriteFailedExitCode;
    }
  }

  if (flags.json) {
    PrintSimulateJson(loaded, r, algo_rows, pacing_rows, *band, out);
    return 0;
  }
  PrintSimulateHeader(loaded, *plan, flags.calibration, out);
  PrintThroughputAndBreakdown(loaded.setup, r, out);
  PrintHostCostBand(r, *band, out);
  out << "#\n# collectives (each simulated on the fabric once, reused per occurrence):\n";
  for (const llm::CollectiveInfo& c : r.collectives) out << "#   " << c.description << "\n";
  for (const std::string& s : UniqueStepCosts(r)) out << "#   NCCL step costs: " << s << "\n";
  PrintVariants("allreduce choice", "allreduce", "step comm (ms)", "verify comm (ms)", algo_rows, out);
  PrintVariants("capture mode and host sync (the scenario's allreduce)", "pacing", "verify comm (ms)", "of which wait",
                pacing_rows, out);
  if (!flags.trace.empty())
    out << "# trace: " << flags.trace << " (one " << (r.speculative ? "cycle" : "step")
        << ", every rank's host thread and GPU stream; open in ui.perfetto.dev)\n";
  return 0;
}

}  // namespace specsim::tools
