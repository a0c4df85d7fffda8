#include "sim/tools/advise_command.h"

#include <fmt/format.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sim/advise/advisor.h"
#include "sim/advise/launch_commands.h"
#include "sim/advise/published_acceptance.h"
#include "sim/io/framework_loader.h"
#include "sim/io/hardware_loader.h"
#include "sim/llm/acceptance.h"
#include "sim/llm/decode_simulator.h"
#include "sim/llm/speculative_cycle.h"
#include "sim/net/peer_access.h"
#include "sim/io/model_loader.h"
#include "sim/io/scenario_loader.h"
#include "sim/tools/config_files.h"
#include "sim/tools/weights_report.h"
#include "sim/scenario/scenario.h"

namespace specsim::tools {

namespace {

// `flag`'s comma-separated numbers, each in [lo, hi]; `expected` says what they are, for the error.
StatusOr<std::vector<double>> ParseNumbers(const std::string& flag, const std::string& text, double lo, double hi,
                                           const std::string& expected) {
  std::vector<double> v;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    try {
      size_t pos = 0;
      const double x = std::stod(item, &pos);
      if (pos != item.size() || !(x >= lo && x <= hi)) throw std::invalid_argument(item);
      v.push_back(x);
    } catch (...) {
      return InvalidArgumentError(flag + " '" + text + "': expected " + expected);
    }
  }
  if (v.empty()) return InvalidArgumentError(flag + " is empty");
  return v;
}

// --accept-lengths: the counts of an accept-length histogram.
StatusOr<std::vector<double>> ParseHistogram(const std::string& text) {
  return ParseNumbers("--accept-lengths", text, 0, 1e15,
                      "counts in [0, 1e15] separated by commas, index i = cycles that accepted i draft tokens, "
                      "e.g. 80,120,150,180,200,270");
}

// --acceptance: per-position probabilities.
StatusOr<std::vector<double>> ParseAcceptance(const std::string& text) {
  return ParseNumbers("--acceptance", text, 0, 1, "probabilities in [0, 1] separated by commas, e.g. 0.85,0.75,0.65");
}

// The scenario the search starts from: --scenario, or one made from the flags; the flags
// override it, and TP defaults to the box's GPU count.
StatusOr<config::Scenario> BaseScenario(const AdviseFlags& flags) {
  const bool dtype_given = !flags.weight_dtype.empty() || !flags.expert_weight_dtype.empty();
  config::Scenario base;
  if (!flags.scenario.empty()) {
    ASSIGN_OR_RETURN(base, io::LoadScenarioFile(flags.scenario));
  } else {
    if (flags.hardware.empty() || flags.model.empty())
      return InvalidArgumentError("give --hardware and --model (or --scenario)");
    base.set_name("advise");
    base.mutable_serving()->set_batch_size(1);
    base.mutable_serving()->set_context_length(4096);
    // No weight dtype: the model's checkpoint formats (serving.weight_source), unless a dtype flag is
    // given (then BF16 for the tensors it does not name).
    if (dtype_given) base.mutable_serving()->set_weight_dtype(config::BF16);
    base.mutable_serving()->set_activation_dtype(config::BF16);
    base.mutable_serving()->set_kv_cache_dtype(config::BF16);
    base.mutable_serving()->set_cuda_graphs(true);
  }
  // Flags given with values the search cannot take (the defaults are 0 / -1 and never given).
  if (flags.tp_given && flags.tp < 1) return InvalidArgumentError(fmt::format("--tp {}: must be >= 1", flags.tp));
  if (flags.batch_given && flags.batch < 1)
    return InvalidArgumentError(fmt::format("--batch {}: must be >= 1", flags.batch));
  if (flags.context_given && flags.context < 0)
    return InvalidArgumentError(fmt::format("--context {}: must be >= 0", flags.context));
  std::vector<std::string> overrides;
  if (!flags.hardware.empty()) overrides.push_back("hardware=" + flags.hardware);
  if (!flags.model.empty()) overrides.push_back("model=" + flags.model);
  // A scenario's dtypes were chosen for its own model: --model without a dtype flag takes the
  // checkpoint's formats, as simulate --model does; a dtype flag takes the dtypes.
  if (dtype_given) {
    overrides.push_back("serving.weight_source=DTYPE");
  } else if (!flags.model.empty() && !flags.scenario.empty()) {
    overrides.push_back("serving.weight_source=CHECKPOINT");
  }
  if (!flags.draft.empty()) overrides.push_back("speculation.draft_model=" + flags.draft);
  if (flags.batch > 0) overrides.push_back(fmt::format("serving.batch_size={}", flags.batch));
  if (flags.context >= 0) overrides.push_back(fmt::format("serving.context_length={}", flags.context));
  if (!flags.weight_dtype.empty()) overrides.push_back("serving.weight_dtype=" + flags.weight_dtype);
  if (!flags.expert_weight_dtype.empty())
    overrides.push_back("serving.expert_weight_dtype=" + flags.expert_weight_dtype);
  if (!flags.kv_dtype.empty()) overrides.push_back("serving.kv_cache_dtype=" + flags.kv_dtype);
  if (!flags.calibration.empty()) overrides.push_back("calibration=" + flags.calibration);
  overrides.push_back("speculation.seed=1");
  overrides.push_back("speculation.cycles=1000");
  for (const std::string& o : overrides) {
    Status s = io::ApplyOverride(&base, o);
    if (!s.ok()) return s.WithPrefix(o);
  }
  // A draft named by --draft on a scenario without a speculation method: EAGLE-3 for a head, a
  // standalone draft (DRAFT_MODEL) for any other model, from the chain
  // 3/1/4 (SGLang's default shape for DeepSeek-V3-architecture models, docs/reference/speculative-decoding.md);
  // the search covers the other shapes. Without a draft: no speculation in the base (the search
  // adds MTP where the target has MTP layers). Either way the base scenario would otherwise have a
  // speculation block (the seed and cycles above) and no method, which does not load.
  config::Speculation* sp = base.mutable_speculation();
  if (sp->method() == config::Speculation::METHOD_UNSPECIFIED) {
    if (sp->draft_model().empty()) {
      sp->set_method(config::Speculation::NONE);
    } else {
      // An EAGLE-3 head runs as EAGLE3; any other model as a standalone draft (DRAFT_MODEL).
      ASSIGN_OR_RETURN(llm::ModelSpec draft, io::LoadModelFile(sp->draft_model()));
      sp->set_method(draft.is_eagle3() ? config::Speculation::EAGLE3 : config::Speculation::DRAFT_MODEL);
      if (sp->num_steps() == 0) sp->set_num_steps(3);
      if (sp->topk() == 0) sp->set_topk(1);
      if (sp->num_draft_tokens() == 0) sp->set_num_draft_tokens(4);
    }
  }
  if (flags.tp > 0) {
    base.mutable_parallelism()->set_tensor_parallel(flags.tp);
  } else if (base.parallelism().tensor_parallel() <= 0) {
    ASSIGN_OR_RETURN(net::Topology box, io::LoadHardwareFile(base.hardware()));
    base.mutable_parallelism()->set_tensor_parallel(box.num_gpus());
  }
  return base;
}

// The acceptance the search uses: --acceptance, else the scenario's; --accept-lengths replaces the
// scenario's histogram (measured with its speculation shape); with none of them the draft's
// published acceptance (`fallback` says so). Error when speculation is possible and no acceptance
// is known anywhere.
StatusOr<std::vector<double>> SearchAcceptance(const AdviseFlags& flags, bool can_speculate,
                                               const llm::ModelSpec& target, config::Scenario* base,
                                               std::string* fallback) {
  std::vector<double> acceptance;
  if (!flags.acceptance.empty()) {
    ASSIGN_OR_RETURN(acceptance, ParseAcceptance(flags.acceptance));
  }
  if (!flags.accept_lengths.empty()) {
    // Measured with the base scenario's speculation shape (its num_steps / topk / num_draft_tokens).
    ASSIGN_OR_RETURN(std::vector<double> h, ParseHistogram(flags.accept_lengths));
    config::Speculation* sp = base->mutable_speculation();
    if (sp->num_steps() < 1)
      return InvalidArgumentError(
          "--accept-lengths needs the shape it was measured with: a --scenario whose "
          "speculation block sets num_steps, topk and num_draft_tokens");
    const int64_t size = llm::AcceptLengthHistogramSize(sp->num_steps());
    if (static_cast<int64_t>(h.size()) != size)
      return InvalidArgumentError(
          fmt::format("--accept-lengths has {} counts: the scenario's num_steps = {} "
                      "needs {} (index i = i draft tokens accepted, 0..num_steps)",
                      h.size(), sp->num_steps(), size));
    *sp->mutable_accept_length_histogram() = {h.begin(), h.end()};
    sp->set_histogram_num_steps(0);
    sp->set_histogram_topk(0);
    sp->set_histogram_num_draft_tokens(0);
  }
  const config::Speculation& known = base->speculation();
  if (can_speculate && acceptance.empty() && known.acceptance_probabilities_size() == 0 &&
      known.accept_length_histogram_size() == 0) {
    auto published = advise::ApplyPublishedAcceptance(target, base);
    if (!published.ok())
      return InvalidArgumentError(
          "speculation is possible (a draft model or MTP layers) but no acceptance is known (" +
          published.status().message() +
          "): give --acceptance p1,p2,... (per-position acceptance of the draft's top-1 token, e.g. 0.85,0.75,0.65) "
          "or --accept-lengths h0,h1,... (a histogram measured with the scenario's speculation shape), or set them "
          "in the scenario");
    *fallback = *published;
    return std::vector<double>{};  // in the scenario now, tied to its topk
  }
  if (acceptance.empty())
    acceptance.assign(known.acceptance_probabilities().begin(), known.acceptance_probabilities().end());
  return acceptance;
}

// The launch lines' context: the scenario's models, paths, TP, batch and dtypes.
StatusOr<advise::LaunchContext> LaunchContextOf(const config::Scenario& base, const scenario::LoadedScenario& loaded,
                                                int tp, const advise::BoxFacts& box) {
  advise::LaunchContext launch;
  // Both frameworks' rules, whichever the scenario names: advise prints a line for each.
  ASSIGN_OR_RETURN(launch.sglang, io::LoadFrameworkFile("configs/frameworks/sglang.textproto"));
  ASSIGN_OR_RETURN(launch.vllm, io::LoadFrameworkFile("configs/frameworks/vllm.textproto"));
  launch.box = box;
  launch.target = loaded.setup.target;
  if (!base.speculation().draft_model().empty()) {
    ASSIGN_OR_RETURN(launch.draft, io::LoadModelFile(base.speculation().draft_model()));
  }
  launch.model_path = base.model();
  launch.draft_path = base.speculation().draft_model();
  launch.tp = tp;
  launch.batch = loaded.setup.batch;
  launch.weight_dtype = loaded.setup.weight_dtype;
  launch.kv_dtype = loaded.setup.kv_dtype;
  return launch;
}

// What advise found, and what printing it needs.
struct AdviseReport {
  const AdviseFlags& flags;
  const config::Scenario& base;
  const llm::ModelSpec& target;
  const net::Topology& box;
  int tp = 1;
  std::vector<double> acceptance;
  std::string acceptance_fallback;  // the draft's published acceptance, when advise used it
  const advise::AdviseResult& result;
  double seconds = 0;
  advise::LaunchContext launch;
  const advise::Evaluated* baseline = nullptr;  // no speculation, NCCL auto, the first pacing, no EP
  scenario::WeightsUsed weights;                // where the target's weight formats come from
  const advise::Evaluated& winner() const { return result.ranked.front(); }
};

void PrintAdviseJson(const AdviseReport& r, std::ostream& out) {
  nlohmann::json j;
  j["evaluated"] = r.result.evaluated;
  j["space_size"] = r.result.space_size;
  j["did_not_fit"] = r.result.did_not_fit;
  j["top"] = nlohmann::json::array();
  for (int i = 0; i < std::min<int>(r.flags.top, static_cast<int>(r.result.ranked.size())); ++i) {
    const advise::Evaluated& e = r.result.ranked[i];
    nlohmann::json range = nullptr;
    if (const std::optional<llm::NcclRangeTokens> rg = llm::NcclRangeOf(e.result))
      range = {rg->low_tokens_per_s, rg->high_tokens_per_s};
    j["top"].push_back({{"configuration", e.candidate.Label()},
                        {"tokens_per_s", e.tokens_per_s},
                        {"tokens_per_s_nccl_range", range},
                        {"tokens_per_s_per_sequence", e.tokens_per_s / e.batch},
                        {"ms_per_token_per_sequence", e.ms_per_token_per_sequence},
                        {"takes", advise::EffortName(e.takes.effort)},
                        {"steps", e.takes.steps},
                        {"priced", e.takes.priced}});
  }
  j["framework"] = r.result.framework;
  j["weights"] = WeightsJson(r.weights);
  j["acceptance_fallback"] = r.acceptance_fallback;
  j["driver_p2p_mode"] = net::DriverP2pModeName(r.box.driver_p2p_mode);
  j["harder"] = nlohmann::json::array();
  for (const advise::Evaluated& e : r.result.harder)
    j["harder"].push_back({{"configuration", e.candidate.Label()},
                           {"tokens_per_s", e.tokens_per_s},
                           {"takes", advise::EffortName(e.takes.effort)},
                           {"steps", e.takes.steps}});
  j["families"] = nlohmann::json::array();
  for (const advise::FamilyVerdict& f : r.result.families)
    j["families"].push_back(
        {{"family", f.family}, {"best", f.best}, {"tokens_per_s", f.tokens_per_s}, {"bottleneck", f.bottleneck}});
  const advise::HostCostBandVerdict& b = r.result.band;
  if (b.costs.empty()) {
    j["host_cost_band"] = nullptr;
  } else {
    j["host_cost_band"] = {{"unmeasured_costs", b.costs},
                           {"winner_low_cost_tokens_per_s", b.winner_low_cost_tokens_per_s},
                           {"winner_high_cost_tokens_per_s", b.winner_high_cost_tokens_per_s},
                           {"low_cost_winner", b.low_cost_winner},
                           {"low_cost_winner_tokens_per_s", b.low_cost_winner_tokens_per_s},
                           {"high_cost_winner", b.high_cost_winner},
                           {"high_cost_winner_tokens_per_s", b.high_cost_winner_tokens_per_s},
                           {"winner_changes", b.winner_changes}};
  }
  j["sglang"] = advise::SglangCommand(r.launch, r.winner().candidate);
  j["vllm"] = advise::VllmCommand(r.launch, r.winner().candidate);
  out << j.dump(1) << "\n";
}

// The header: what was searched, with which acceptance and framework.
void PrintAdviseHeader(const AdviseReport& r, std::ostream& out, std::ostream& err) {
  out << fmt::format("# specsim advise: {} on {}, TP{}, batch {}, context {}\n", r.target.name, r.box.name, r.tp,
                     r.base.serving().batch_size(), r.base.serving().context_length());
  out << "#   " << ConfigFilesText(r.base, r.flags.scenario, r.flags.calibration, "built from the flags") << "\n";
  out << WeightFormatsLine(r.weights);
  if (!r.acceptance.empty()) {
    std::string a;
    for (double p : r.acceptance) a += fmt::format("{}{:g}", a.empty() ? "" : ",", p);
    out << "#   acceptance per position: " << a
        << " (the top-1 token's, extended with its last value; trees through the expected EAGLE-2 tree)\n";
  }
  if (!r.acceptance_fallback.empty())
    out << "#   no acceptance given (no histogram, no per-position probabilities): using " << r.acceptance_fallback
        << "\n";
  if (r.base.speculation().accept_length_histogram_size() > 0) {
    std::string h;
    for (double c : r.base.speculation().accept_length_histogram()) h += fmt::format("{}{:g}", h.empty() ? "" : ",", c);
    const auto& sp = r.base.speculation();
    out << fmt::format(
        "#   accept-length histogram {} measured with {}/{}/{}: exact for that shape; its per-depth "
        "acceptance for the others{}\n",
        h, sp.histogram_num_steps() > 0 ? sp.histogram_num_steps() : sp.num_steps(),
        sp.histogram_topk() > 0 ? sp.histogram_topk() : std::max(1, sp.topk()),
        sp.histogram_num_draft_tokens() > 0 ? sp.histogram_num_draft_tokens() : sp.num_draft_tokens(),
        r.acceptance.empty() ? "" : " (where no per-position acceptance is given)");
  }
  out << fmt::format(
      "#   evaluated {} of {} configurations ({}){}\n", r.result.evaluated, r.result.space_size,
      r.flags.exhaustive ? "exhaustive" : "pruned: allreduce choices ranked first, then speculation settings",
      r.result.did_not_fit > 0 ? fmt::format("; {} did not fit in memory", r.result.did_not_fit) : "");
  // Wall time goes to stderr so that stdout is the same on every run.
  if (r.flags.progress)
    err << fmt::format("specsim advise: {} configurations in {:.1f} s\n", r.result.evaluated, r.seconds);
  out << fmt::format("#   framework {}: its custom allreduce {} on this box (configs/frameworks/{}.textproto)\n",
                     r.result.framework.empty() ? "(none)" : r.result.framework,
                     r.result.custom_allreduce_by_default ? "runs by default" : "does not run as released",
                     r.result.framework.empty() ? "*" : r.result.framework);
  out << fmt::format("#   driver PCIe P2P: {} (hardware driver_p2p_mode); the custom allreduce's peer reads {}\n",
                     net::DriverP2pModeName(r.box.driver_p2p_mode),
                     r.launch.box.peer_reads_not_direct.empty()
                         ? "go GPU to GPU"
                         : "are priced through host memory: " + r.launch.box.peer_reads_not_direct);
}

// The winner's figure at both ends of the framework's unmeasured host costs, and whether the winner
// changes there.
void PrintAdviseBand(const AdviseReport& r, std::ostream& out) {
  const advise::HostCostBandVerdict& b = r.result.band;
  if (b.costs.empty()) return;
  out << fmt::format(
      "#\n# host-cost band: the winner {:.1f} tok/s [{:.1f} .. {:.1f}] with every unmeasured host "
      "cost at its low .. high end\n",
      r.winner().tokens_per_s, b.winner_low_cost_tokens_per_s, b.winner_high_cost_tokens_per_s);
  if (b.winner_changes) {
    out << fmt::format(
        "#   the winner depends on unmeasured host costs: at the low end {} ({:.1f} tok/s), at the high end {} "
        "({:.1f} tok/s), at the point values {}\n",
        b.low_cost_winner, b.low_cost_winner_tokens_per_s, b.high_cost_winner, b.high_cost_winner_tokens_per_s,
        r.winner().candidate.Label());
  } else {
    out << fmt::format("#   the winner is the same at both ends (among its {} closest contenders)\n",
                       advise::kBandContenders);
  }
  out << "#   unmeasured host costs (configs/frameworks/, host_cost_sources):\n";
  for (const std::string& c : b.costs) out << "#     " << c << "\n";
}

// The ranking, the harder options, the families and the launch lines of the winner.
void PrintAdviseTables(const AdviseReport& r, std::ostream& out) {
  out << "#\n# top configurations (what runs as is first, then by what it takes)\n";
  out << fmt::format("  {:>4} {:>9} {:>9} {:>10} {:>15} {:>8}  {:<30} {}\n", "rank", "tok/s", "tok/s/seq", "ms/tok/seq",
                     "NCCL range", "vs base", "takes", "configuration");
  bool any_range = false;
  for (int i = 0; i < std::min<int>(r.flags.top, static_cast<int>(r.result.ranked.size())); ++i) {
    const advise::Evaluated& e = r.result.ranked[i];
    const std::optional<llm::NcclRangeTokens> range = llm::NcclRangeOf(e.result);
    any_range = any_range || range.has_value();
    const std::string range_text =
        range ? fmt::format("[{:.1f}..{:.1f}]", range->low_tokens_per_s, range->high_tokens_per_s) : "-";
    out << fmt::format("  {:>4} {:>9.1f} {:>9.1f} {:>10.3f} {:>15} {:>7.2f}x  {:<30} {}\n", i + 1, e.tokens_per_s,
                       e.tokens_per_s / e.batch, e.ms_per_token_per_sequence, range_text,
                       r.baseline ? e.tokens_per_s / r.baseline->tokens_per_s : 0.0, advise::EffortName(e.takes.effort),
                       e.candidate.Label());
  }
  if (any_range)
    out << "#   (NCCL range: tok/s with every NCCL collective at the uncalibrated transport model's range around its "
           "time, slower NCCL first; exact in CUDA graphs, an outer bound for eager rows; '-' where a collective is "
           "calibrated or a custom kernel, or ranks waited)\n";
  out << "#   (tok/s: the whole batch's throughput; tok/s/seq and ms/tok/seq: what one sequence sees)\n";
  if (r.baseline)
    out << fmt::format("#   (vs base: against no speculation, NCCL auto, CUDA graphs: {:.1f} tok/s)\n",
                       r.baseline->tokens_per_s);
  PrintAdviseBand(r, out);
  if (!r.result.harder.empty()) {
    out << "#\n# harder options: faster than the winner, and what each takes\n";
    for (const advise::Evaluated& e : r.result.harder)
      out << fmt::format("  {:>9.1f} tok/s ({:+.0f}%)  {}\n      {}\n", e.tokens_per_s,
                         100.0 * (e.tokens_per_s / r.winner().tokens_per_s - 1), e.candidate.Label(), e.takes.Text());
  }
  out << "#\n# families: the best of each, and what sinks it against the winner\n";
  for (const advise::FamilyVerdict& f : r.result.families) {
    if (f.tokens_per_s <= 0) {
      out << fmt::format("  {:<38} {}\n", f.family, f.bottleneck);
    } else if (f.bottleneck.empty()) {
      out << fmt::format("  {:<38} {:>8.1f} tok/s  the winner's family\n", f.family, f.tokens_per_s);
    } else {
      out << fmt::format("  {:<38} {:>8.1f} tok/s  {}\n", f.family, f.tokens_per_s, f.bottleneck);
    }
  }
  out << "#\n# to reproduce the winner (flags read in the frameworks' current sources, sim/advise/launch_commands.h;\n"
         "# older releases may name some differently):\n";
  auto indent = [](std::string s) {
    for (size_t p = s.find('\n'); p != std::string::npos; p = s.find('\n', p + 3)) s.replace(p, 1, "\n  ");
    return "  " + s;
  };
  out << "# SGLang\n" << indent(advise::SglangCommand(r.launch, r.winner().candidate)) << "\n";
  out << "# vLLM\n" << indent(advise::VllmCommand(r.launch, r.winner().candidate)) << "\n";
}

}  // namespace

int RunAdvise(const AdviseFlags& flags, std::ostream& out, std::ostream& err) {
  auto fail = [&err](const Status& s) {
    err << "specsim advise: " << s.message() << "\n";
    return 2;
  };
  auto base_or = BaseScenario(flags);
  if (!base_or.ok()) return fail(base_or.status());
  config::Scenario base = *std::move(base_or);
  const int tp = base.parallelism().tensor_parallel();
  auto hardware = scenario::BuildScenario(base, "advise", {"speculation.method=NONE"}, "");
  if (!hardware.ok()) return fail(hardware.status());
  const llm::ModelSpec& target = hardware->setup.target;
  const bool can_speculate = !base.speculation().draft_model().empty() || target.num_nextn_predict_layers > 0;
  std::string fallback;
  auto acceptance = SearchAcceptance(flags, can_speculate, target, &base, &fallback);
  if (!acceptance.ok()) return fail(acceptance.status());

  const advise::BoxFacts box = advise::BoxFactsOf(*hardware->topology, tp, hardware->setup.gpus);
  advise::SearchSpace space = advise::DefaultSearchSpace(base, target, box);
  advise::AdviseOptions options;
  options.acceptance = *acceptance;
  options.exhaustive = flags.exhaustive;
  options.threads = flags.threads;
  options.progress = flags.progress;
  const auto start = std::chrono::steady_clock::now();
  auto result = advise::Advise(base, space, options, err);
  if (!result.ok() && result.status().code() == StatusCode::kResourceExhausted) {
    err << "specsim " << result.status().message() << "\n";  // "advise: no configuration fits ..."
    return 3;  // as simulate: a scenario that does not fit in GPU memory (README, exit codes)
  }
  if (!result.ok()) return fail(result.status());
  AdviseReport report{flags, base, target,  *hardware->topology, tp, *acceptance, fallback, *result,
                      0,     {},   nullptr, hardware->weights};
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  auto launch = LaunchContextOf(base, *hardware, tp, box);
  if (!launch.ok()) return fail(launch.status());
  report.launch = *std::move(launch);
  for (const advise::Evaluated& e : result->ranked)
    if (e.candidate.spec.method == config::Speculation::NONE && e.candidate.comm.name == "NCCL auto" &&
        e.candidate.pacing.name == space.pacing.front().name && e.candidate.expert_parallel == 1)
      report.baseline = &e;
  if (flags.json) {
    PrintAdviseJson(report, out);
    return 0;
  }
  PrintAdviseHeader(report, out, err);
  PrintAdviseTables(report, out);
  return 0;
}

}  // namespace specsim::tools
