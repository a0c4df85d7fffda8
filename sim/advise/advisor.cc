#include "sim/advise/advisor.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "sim/core/parallel_for.h"
#include "sim/core/progress_line.h"
#include "sim/llm/draft_tree.h"
#include "sim/llm/speculative_cycle.h"
#include "sim/scenario/host_cost_band.h"
#include "sim/scenario/scenario.h"

namespace specsim::advise {

std::string SpecChoice::Label() const {
  switch (method) {
    case config::Speculation::EAGLE3: return fmt::format("EAGLE-3 {}/{}/{}", num_steps, topk, num_draft_tokens);
    case config::Speculation::MTP: return fmt::format("MTP {}/{}/{}", num_steps, topk, num_draft_tokens);
    case config::Speculation::DRAFT_MODEL:
      return fmt::format("draft model {}/{}/{}", num_steps, topk, num_draft_tokens);
    case config::Speculation::NGRAM: return fmt::format("n-gram {}/{}/{}", num_steps, topk, num_draft_tokens);
    default: return "off";
  }
}

std::string SpecChoice::Family() const {
  switch (method) {
    case config::Speculation::EAGLE3: return topk == 1 ? "EAGLE-3 chain" : "EAGLE-3 tree";
    case config::Speculation::MTP: return "MTP";
    case config::Speculation::DRAFT_MODEL: return "draft model";
    case config::Speculation::NGRAM: return "n-gram";
    default: return "no speculation";
  }
}

std::string Candidate::Label() const {
  return fmt::format("{}{}, {}, {}{}{}", spec.Label(), acceptance_approximate ? " (~acceptance)" : "", comm.name,
                     pacing.name, pacing.what_if ? " (what-if)" : "",
                     expert_parallel > 1 ? fmt::format(", EP{}", expert_parallel) : "");
}

SearchSpace DefaultSearchSpace(const config::Scenario& base, const llm::ModelSpec& target, const BoxFacts& box) {
  SearchSpace space;
  space.specs.push_back({config::Speculation::NONE, 0, 1, 1});
  const config::Speculation::Method base_method = base.speculation().method();
  if (base_method == config::Speculation::DRAFT_MODEL && !base.speculation().draft_model().empty()) {
    // A standalone draft: chains (vLLM's DraftModelProposer drafts chains only; SGLang's
    // STANDALONE takes trees too, searched only as the base scenario's own shape).
    for (int s = 1; s <= 6; ++s) space.specs.push_back({config::Speculation::DRAFT_MODEL, s, 1, s + 1});
  } else if (base_method == config::Speculation::NGRAM) {
    for (int s = 1; s <= 8; ++s) space.specs.push_back({config::Speculation::NGRAM, s, 1, s + 1});
  } else if (!base.speculation().draft_model().empty()) {
    for (int s = 1; s <= 5; ++s) space.specs.push_back({config::Speculation::EAGLE3, s, 1, s + 1});
    for (int k : {2, 4})
      for (int s : {2, 3, 4})
        for (int n : {4, 8, 16})
          if (n <= llm::MaxTreeDraftTokens(s, k)) space.specs.push_back({config::Speculation::EAGLE3, s, k, n});
  }
  if (target.num_nextn_predict_layers > 0)
    for (int s = 1; s <= 3; ++s) space.specs.push_back({config::Speculation::MTP, s, 1, s + 1});
  // The base scenario's own shape, whose acceptance may be measured (an accept-length histogram).
  const config::Speculation& own = base.speculation();
  const bool can = ((own.method() == config::Speculation::EAGLE3 || own.method() == config::Speculation::DRAFT_MODEL) &&
                    !own.draft_model().empty()) ||
                   (own.method() == config::Speculation::MTP && target.num_nextn_predict_layers > 0) ||
                   own.method() == config::Speculation::NGRAM;
  if (can && own.num_steps() >= 1 && own.num_draft_tokens() >= 2) {
    const SpecChoice mine{own.method(), own.num_steps(), std::max(1, own.topk()), own.num_draft_tokens()};
    if (std::none_of(space.specs.begin(), space.specs.end(),
                     [&](const SpecChoice& s) { return s.Label() == mine.Label(); }))
      space.specs.push_back(mine);
  }
  space.comms = AllreduceVariants(VariantList::kAdvise);
  // What forcing BAR1 P2P would buy where the box's driver mode keeps peer reads (or all peer
  // access) off the GPU-to-GPU path (net::PeerAccessOf).
  if (box.bar1_possible && !box.peer_reads_not_direct.empty()) {
    std::vector<AllreduceVariant> bar1;
    for (const AllreduceVariant& x : space.comms)
      if (x.custom_allreduce() || (box.no_pcie_p2p && x.p2p_level == "sys")) bar1.push_back(WithBar1P2p(x));
    space.comms.insert(space.comms.end(), bar1.begin(), bar1.end());
  }
  space.pacing = PacingVariants(VariantList::kAdvise);
  space.expert_parallel = {1};
  if (target.is_moe() && base.parallelism().tensor_parallel() > 1)
    space.expert_parallel.push_back(base.parallelism().tensor_parallel());
  return space;
}

config::Scenario CandidateScenario(config::Scenario s, const Candidate& c) {
  config::Speculation* sp = s.mutable_speculation();
  sp->set_method(c.spec.method);
  if (c.spec.method != config::Speculation::NONE) {
    // The shape only: its acceptance comes from what the base scenario knows
    // (llm::AcceptanceForShape, the same rules simulate applies).
    sp->set_num_steps(c.spec.num_steps);
    sp->set_topk(c.spec.topk);
    sp->set_num_draft_tokens(c.spec.num_draft_tokens);
    if (c.spec.method == config::Speculation::MTP) sp->clear_draft_model();
  }
  config::Communication* comm = s.mutable_communication();
  comm->set_allreduce_algorithm(c.comm.algorithm);
  comm->set_protocol(c.comm.protocol);
  comm->set_channels(c.comm.channels);
  comm->set_p2p_level(c.comm.p2p_level);
  comm->set_driver_p2p_mode(c.comm.driver_p2p_mode);
  if (c.comm.p2p_disable) comm->set_p2p_disable(true);
  c.pacing.ApplyTo(&s);
  s.mutable_parallelism()->set_expert_parallel(c.expert_parallel > 1 ? s.parallelism().tensor_parallel() : 0);
  return s;
}

namespace {

Evaluated Evaluate(const config::Scenario& base, const Candidate& c, const AdviseOptions& options) {
  Evaluated e;
  e.candidate = c;
  auto loaded = scenario::BuildScenario(CandidateScenario(base, c), "advise", {}, "");
  if (!loaded.ok()) {
    e.status = "error: " + loaded.status().message();
    return e;
  }
  auto ev = scenario::Evaluate(*loaded);
  if (!ev.ok()) {
    e.status = "error: " + ev.status().message();
    return e;
  }
  if (!ev->result) {
    e.status = fmt::format("does not fit ({:.1f} of {:.1f} GiB)", ev->memory.total_bytes / (1 << 30),
                           ev->memory.capacity_bytes / (1 << 30));
    return e;
  }
  const llm::DecodeResult* r = &*ev->result;
  e.result = *r;
  e.candidate.acceptance_approximate = loaded->setup.speculation.acceptance_approximate;
  e.tokens_per_s = r->speculative ? r->speculative_tokens_per_s : r->baseline_tokens_per_s;
  e.ms_per_token_per_sequence = r->speculative ? r->cycle_ms / r->tau : r->baseline_step_ms;
  e.batch = loaded->setup.batch;
  return e;
}

// `c` with every unmeasured host cost of its framework at `end`; tokens/s, or an error.
StatusOr<double> TokensPerSAtBandEnd(const config::Scenario& base, const Candidate& c, scenario::BandEnd end) {
  ASSIGN_OR_RETURN(scenario::LoadedScenario loaded,
                   scenario::BuildScenario(CandidateScenario(base, c), "advise", {}, ""));
  if (loaded.setup.framework) loaded.setup.framework = scenario::AtBandEnd(*loaded.setup.framework, end);
  ASSIGN_OR_RETURN(llm::DecodeResult r, scenario::EvaluateSetup(loaded.setup));
  return r.speculative ? r.speculative_tokens_per_s : r.baseline_tokens_per_s;
}

// The winner's contenders at both ends of the unmeasured host costs (HostCostBandVerdict).
Status BandVerdict(const config::Scenario& base, const llm::FrameworkProfile& framework, AdviseResult* result) {
  HostCostBandVerdict& v = result->band;
  v.costs = scenario::DescribeUnmeasured(framework);
  if (v.costs.empty() || result->ranked.empty()) return OkStatus();
  const Evaluated& winner = result->ranked.front();
  std::vector<const Evaluated*> contenders;
  for (const Evaluated& e : result->ranked)
    if (!e.candidate.optimistic() && e.takes.effort == winner.takes.effort &&
        static_cast<int>(contenders.size()) < kBandContenders)
      contenders.push_back(&e);
  for (scenario::BandEnd end : {scenario::BandEnd::kLow, scenario::BandEnd::kHigh}) {
    const bool low = end == scenario::BandEnd::kLow;
    std::string best;
    double best_tps = -1;
    for (const Evaluated* e : contenders) {
      auto tps = TokensPerSAtBandEnd(base, e->candidate, end);
      if (!tps.ok())
        return tps.status().WithPrefix(
            fmt::format("advise: host-cost band, {} end, {}", low ? "low" : "high", e->candidate.Label()));
      if (e == &winner) (low ? v.winner_low_cost_tokens_per_s : v.winner_high_cost_tokens_per_s) = *tps;
      if (*tps > best_tps) {
        best_tps = *tps;
        best = e->candidate.Label();
      }
    }
    (low ? v.low_cost_winner : v.high_cost_winner) = best;
    (low ? v.low_cost_winner_tokens_per_s : v.high_cost_winner_tokens_per_s) = best_tps;
    if (best != winner.candidate.Label()) v.winner_changes = true;
  }
  return OkStatus();
}

void EvaluateAll(const config::Scenario& base, std::vector<Evaluated>* out, const std::vector<Candidate>& candidates,
                 const AdviseOptions& options, ProgressLine* progress) {
  std::vector<Evaluated> results(candidates.size());
  ParallelFor(candidates.size(), options.threads, [&](size_t i) {
    results[i] = Evaluate(base, candidates[i], options);
    progress->Advance();
  });
  for (auto& r : results) out->push_back(std::move(r));
}

// Per-token cost components of an evaluated configuration, ms per generated token per sequence.
std::map<std::string, double> PerToken(const Evaluated& e) {
  const llm::DecodeResult& r = e.result;
  if (!r.speculative) {
    return {{"draft compute", 0},
            {"draft comm", 0},
            {"target compute", MillisFromPicos(r.baseline_step.compute_ps)},
            {"target comm", MillisFromPicos(r.baseline_step.comm_ps)},
            {"launch/sync", MillisFromPicos(r.baseline_step.launch_ps)}};
  }
  const double t = r.tau;
  return {{"draft compute", r.breakdown.draft_compute_ms / t},
          {"draft comm", r.breakdown.draft_comm_ms / t},
          {"target compute", r.breakdown.verify_compute_ms / t},
          {"target comm", r.breakdown.verify_comm_ms / t},
          {"launch/sync", r.breakdown.launch_sync_ms / t}};
}

// "ring/ll/4ch", "twoshot/36ch".
std::string HowItRan(const llm::CollectiveInfo& c) {
  return fmt::format("{}{}{}/{}ch", c.algorithm, c.protocol.empty() ? "" : "/", c.protocol, c.channels);
}

// The collective that changed against the winner: among those both ran at the same size, the one
// whose time per call differs most; "" when they share none.
std::string ChangedCollective(const llm::DecodeResult& family, const llm::DecodeResult& winner) {
  const llm::CollectiveInfo* f = nullptr;
  const llm::CollectiveInfo* w = nullptr;
  for (const llm::CollectiveInfo& a : family.collectives)
    for (const llm::CollectiveInfo& b : winner.collectives)
      if (a.kind == b.kind && a.bytes == b.bytes &&
          (f == nullptr || std::abs(a.time_us - b.time_us) > std::abs(f->time_us - w->time_us))) {
        f = &a;
        w = &b;
      }
  if (f == nullptr || (f->algorithm == w->algorithm && f->protocol == w->protocol && f->channels == w->channels &&
                       std::abs(f->time_us - w->time_us) < 0.05))
    return "";
  return fmt::format("{} of {} B: {:.1f} us per call ({}) vs the winner's {:.1f} us ({})", llm::CommKindName(f->kind),
                     f->bytes, f->time_us, HowItRan(*f), w->time_us, HowItRan(*w));
}

// A gap in ms per generated token, named in both units that decide: per token of one sequence (the
// latency each request sees) and, at batch > 1, per token of the whole batch (what throughput
// sees: the first divided by the batch).
// `signed_gap`: "+0.470" (against the winner) or "0.470" (a magnitude: "... faster").
std::string TokenGapText(double ms_per_token_per_sequence, int batch, bool signed_gap = true) {
  const char* number = signed_gap ? "{:+.3f}" : "{:.3f}";
  std::string text = fmt::format(fmt::runtime(number), ms_per_token_per_sequence) + " ms per token per sequence";
  if (batch > 1)
    text += fmt::format(fmt::runtime(signed_gap ? " ({:+.4f} ms per token of the batch of {})"
                                                : " ({:.4f} ms per token of the batch of {})"),
                        ms_per_token_per_sequence / batch, batch);
  return text;
}

// One step of the loop: a speculative cycle, or a plain decode step; ms.
double StepMs(const llm::DecodeResult& r) { return r.speculative ? r.cycle_ms : r.baseline_step_ms; }

std::string StepName(const llm::DecodeResult& r) {
  return r.speculative ? fmt::format("cycle of {:.2f} tokens", r.tau) : "decode step";
}

std::string Bottleneck(const Evaluated& family_best, const Evaluated& winner) {
  auto f = PerToken(family_best), w = PerToken(winner);
  std::string worst;
  double worst_delta = -1e300;
  for (const auto& [k, v] : f) {
    if (v - w[k] > worst_delta) {
      worst_delta = v - w[k];
      worst = k;
    }
  }
  const llm::DecodeResult& fr = family_best.result;
  const llm::DecodeResult& wr = winner.result;
  // Gaps per token of one sequence (its latency), of the batch (throughput), and per step (what one
  // pass of the loop costs).
  std::string text = fmt::format(
      "{} against the winner (per step: {:.2f} ms per {} vs the winner's {:.2f} ms per {}); most of it {} ({:.2f} vs "
      "{:.2f} ms per token per sequence)",
      TokenGapText(family_best.ms_per_token_per_sequence - winner.ms_per_token_per_sequence, winner.batch), StepMs(fr),
      StepName(fr), StepMs(wr), StepName(wr), worst, f[worst], w[worst]);
  if (worst == "target comm" || worst == "draft comm") {
    const std::string changed = ChangedCollective(fr, wr);
    if (!changed.empty()) {
      text += "; the collective that changed: " + changed;
    } else {
      // No shared size changed: the slowest distinct collective shows what the communication costs.
      const llm::CollectiveInfo* big = nullptr;
      for (const llm::CollectiveInfo& c : fr.collectives)
        if (big == nullptr || c.time_us > big->time_us) big = &c;
      if (big != nullptr) text += "; e.g. " + big->description;
    }
  }
  if (worst == "target compute" && !fr.speculative && wr.speculative)
    text += fmt::format(": one token per target pass, where the winner verifies {:.2f} per pass", wr.tau);
  if (worst == "launch/sync" && !family_best.candidate.cuda_graphs())
    text += ": eager launches cost more than CUDA-graph replay";
  return text;
}

}  // namespace

config::Scenario WithAcceptance(config::Scenario base, const std::vector<double>& acceptance) {
  config::Speculation* sp = base.mutable_speculation();
  if (!acceptance.empty()) *sp->mutable_acceptance_probabilities() = {acceptance.begin(), acceptance.end()};
  // The histogram stays tied to the shape it was measured with while candidates change the shape.
  if (sp->accept_length_histogram_size() > 0) {
    if (sp->histogram_num_steps() == 0) sp->set_histogram_num_steps(sp->num_steps());
    if (sp->histogram_topk() == 0) sp->set_histogram_topk(std::max(1, sp->topk()));
    if (sp->histogram_num_draft_tokens() == 0) sp->set_histogram_num_draft_tokens(sp->num_draft_tokens());
  }
  return base;
}

namespace {

// Every combination of the given choices.
std::vector<Candidate> Cross(const std::vector<SpecChoice>& specs, const std::vector<AllreduceVariant>& comms,
                             const std::vector<PacingVariant>& pacing, const std::vector<int>& eps) {
  std::vector<Candidate> v;
  for (const auto& s : specs)
    for (const auto& c : comms)
      for (const auto& g : pacing)
        for (int ep : eps) v.push_back({s, c, g, ep});
  return v;
}

// The fastest exact (non-upper-bound) configuration.
const Evaluated* FastestExact(const std::vector<Evaluated>& v) {
  const Evaluated* best = nullptr;
  for (const Evaluated& e : v)
    if (e.status == "ok" && !e.candidate.optimistic() && (best == nullptr || e.tokens_per_s > best->tokens_per_s))
      best = &e;
  return best;
}

// The fastest exact configuration of the lowest effort.
const Evaluated* LeastEffortFastestExact(const std::vector<Evaluated>& v) {
  const Evaluated* best = nullptr;
  for (const Evaluated& e : v) {
    if (e.status != "ok" || e.candidate.optimistic()) continue;
    if (best == nullptr || e.takes.effort < best->takes.effort ||
        (e.takes.effort == best->takes.effort && e.tokens_per_s > best->tokens_per_s))
      best = &e;
  }
  return best;
}

using EvaluateFn = std::function<void(const std::vector<Candidate>&)>;

// The pruned search: (1) every allreduce choice with no speculation and one reference
// speculation setting; (2) every speculation setting with the three best allreduce choices (and
// the first); (3) the fastest so far, and the fastest of what takes least, with every other
// pacing choice and expert parallelism flipped. `all` holds what `evaluate` appended.
void SearchPruned(const SearchSpace& space, const std::vector<Evaluated>& all, const EvaluateFn& evaluate) {
  const PacingVariant& pacing0 = space.pacing.front();
  const int ep0 = space.expert_parallel.front();
  std::vector<SpecChoice> reference = {space.specs.front()};
  for (const SpecChoice& s : space.specs) {
    if (s.method != config::Speculation::NONE && s.topk == 1 && (reference.size() == 1 || s.num_steps == 3)) {
      if (reference.size() == 1)
        reference.push_back(s);
      else
        reference[1] = s;
    }
  }
  evaluate(Cross(reference, space.comms, {pacing0}, {ep0}));
  std::map<std::string, double> comm_score;
  for (const Evaluated& e : all)
    if (e.status == "ok")
      comm_score[e.candidate.comm.name] = std::max(comm_score[e.candidate.comm.name], e.tokens_per_s);
  std::vector<AllreduceVariant> ranked = space.comms;
  std::stable_sort(ranked.begin(), ranked.end(), [&](const AllreduceVariant& a, const AllreduceVariant& b) {
    return comm_score[a.name] > comm_score[b.name];
  });
  std::vector<AllreduceVariant> keep(ranked.begin(), ranked.begin() + std::min<size_t>(3, ranked.size()));
  if (std::none_of(keep.begin(), keep.end(),
                   [&](const AllreduceVariant& c) { return c.name == space.comms.front().name; }))
    keep.push_back(space.comms.front());
  std::vector<SpecChoice> rest;
  for (const SpecChoice& s : space.specs)
    if (std::none_of(reference.begin(), reference.end(), [&](const SpecChoice& r) { return r.Label() == s.Label(); }))
      rest.push_back(s);
  evaluate(Cross(rest, keep, {pacing0}, {ep0}));
  std::vector<Candidate> flips;
  for (const Evaluated* best : {FastestExact(all), LeastEffortFastestExact(all)}) {
    if (best == nullptr) continue;
    for (const PacingVariant& g : space.pacing)
      for (int ep : space.expert_parallel) {
        const Candidate flip{best->candidate.spec, best->candidate.comm, g, ep};
        const bool seen_before =
            std::any_of(flips.begin(), flips.end(), [&](const Candidate& f) { return f.Label() == flip.Label(); });
        if ((g.name != best->candidate.pacing.name || ep != best->candidate.expert_parallel) && !seen_before)
          flips.push_back(flip);
      }
  }
  evaluate(flips);
}

// The ranking (fastest first; what-if pacings are listed but cannot be the winner; what runs as is
// before what takes more), the count that did not fit, and the harder options that beat the winner.
Status RankEvaluated(const std::vector<Evaluated>& all, AdviseResult* result) {
  const Evaluated* first_not_fitting = nullptr;  // named in the error when none fits
  for (const Evaluated& e : all) {
    if (e.status == "ok")
      result->ranked.push_back(e);
    else if (e.status.rfind("does not fit", 0) == 0) {
      ++result->did_not_fit;
      if (first_not_fitting == nullptr) first_not_fitting = &e;
    } else
      return InternalError("advise: configuration '" + e.candidate.Label() + "' failed: " + e.status);
  }
  std::stable_sort(result->ranked.begin(), result->ranked.end(), [](const Evaluated& a, const Evaluated& b) {
    if (a.candidate.optimistic() != b.candidate.optimistic()) return !a.candidate.optimistic();
    if (a.takes.effort != b.takes.effort) return a.takes.effort < b.takes.effort;
    return a.tokens_per_s > b.tokens_per_s;
  });
  if (result->ranked.empty())
    return ResourceExhaustedError(fmt::format(
        "advise: no configuration fits in GPU memory: {} evaluated, none fits{}", result->did_not_fit,
        first_not_fitting == nullptr
            ? std::string()
            : fmt::format(" (the first, '{}': {})", first_not_fitting->candidate.Label(), first_not_fitting->status)));
  const Evaluated& winner = result->ranked.front();
  if (winner.candidate.optimistic())
    return FailedPreconditionError("advise: only what-if pacings fit (a host that never waits for the GPU)");
  for (Effort level : {Effort::kLaunchFlag, Effort::kEnvironment, Effort::kDriverSetting, Effort::kCodeChange}) {
    if (level <= winner.takes.effort) continue;
    const Evaluated* best = nullptr;
    for (const Evaluated& e : result->ranked)
      if (!e.candidate.optimistic() && e.takes.effort == level &&
          (best == nullptr || e.tokens_per_s > best->tokens_per_s))
        best = &e;
    if (best != nullptr && best->tokens_per_s > winner.tokens_per_s) result->harder.push_back(*best);
  }
  return OkStatus();
}

using FamilyMember = std::function<bool(const Candidate&)>;

// Speculation families, allreduce families, pacing choices, expert parallelism.
std::vector<std::pair<std::string, FamilyMember>> FamiliesOf(const SearchSpace& space) {
  std::vector<std::pair<std::string, FamilyMember>> families;
  std::set<std::string> seen;
  for (const SpecChoice& s : space.specs)
    if (seen.insert(s.Family()).second)
      families.push_back({s.Family(), [f = s.Family()](const Candidate& c) { return c.spec.Family() == f; }});
  for (const AllreduceVariant& c : space.comms)
    if (seen.insert(c.family).second)
      families.push_back({c.family, [f = c.family](const Candidate& x) { return x.comm.family == f; }});
  if (space.pacing.size() > 1)
    for (const PacingVariant& g : space.pacing)
      if (seen.insert(g.family).second)
        families.push_back({g.family, [f = g.family](const Candidate& c) { return c.pacing.family == f; }});
  if (space.expert_parallel.size() > 1)
    families.push_back({"expert parallelism (TP+EP)", [](const Candidate& c) { return c.expert_parallel > 1; }});
  return families;
}

// What sinks the family's best against the winner ("" for the winner's own family).
std::string FamilyBottleneck(const Evaluated& best, const Evaluated& winner, bool winners_family) {
  if (winners_family) return "";
  if (!best.candidate.optimistic() && best.takes.effort > winner.takes.effort &&
      best.tokens_per_s > winner.tokens_per_s)
    return fmt::format("{} faster than the winner ({:.2f} ms per {} vs {:.2f} ms per {}){}, but it {}",
                       TokenGapText(winner.ms_per_token_per_sequence - best.ms_per_token_per_sequence, winner.batch,
                                    /*signed_gap=*/false),
                       StepMs(best.result), StepName(best.result), StepMs(winner.result), StepName(winner.result),
                       ChangedCollective(best.result, winner.result).empty()
                           ? ""
                           : "; the collective that changed: " + ChangedCollective(best.result, winner.result),
                       best.takes.Text());
  if (best.candidate.pacing.what_if && best.tokens_per_s > winner.tokens_per_s)
    return fmt::format(
        "what-if only: {:.1f} tok/s if the host never waited for the GPU (acceptance kept on the GPU, "
        "scheduling overlapped); not chosen: check that your framework can run so",
        best.tokens_per_s);
  return Bottleneck(best, winner);
}

FamilyVerdict VerdictOf(const std::string& name, const FamilyMember& member, const std::vector<Evaluated>& all,
                        const std::vector<Evaluated>& ranked) {
  const Evaluated& winner = ranked.front();
  FamilyVerdict v;
  v.family = name;
  // The family's best configuration of the least effort it has, what-ifs only for a family of
  // what-ifs.
  const Evaluated* best = nullptr;
  for (int pass = 0; pass < 2 && best == nullptr; ++pass) {
    for (const Evaluated& e : ranked) {
      if (!member(e.candidate) || (pass == 0 && e.candidate.optimistic())) continue;
      if (best == nullptr || e.takes.effort < best->takes.effort ||
          (e.takes.effort == best->takes.effort && e.tokens_per_s > best->tokens_per_s))
        best = &e;
    }
  }
  if (best == nullptr) {
    bool any = false;
    for (const Evaluated& e : all) any = any || member(e.candidate);
    v.bottleneck = any ? "does not fit in GPU memory" : "not evaluated (pruned)";
    return v;
  }
  v.best = best->candidate.Label();
  v.tokens_per_s = best->tokens_per_s;
  v.bottleneck = FamilyBottleneck(*best, winner, member(winner.candidate));
  return v;
}

}  // namespace

StatusOr<AdviseResult> Advise(const config::Scenario& base_in, const SearchSpace& space, const AdviseOptions& options,
                              std::ostream& progress) {
  const config::Scenario base = WithAcceptance(base_in, options.acceptance);
  if (space.specs.empty() || space.comms.empty() || space.pacing.empty() || space.expert_parallel.empty())
    return InvalidArgumentError("advise: empty search space");
  AdviseResult result;
  result.space_size = space.size();
  // The framework and box the rules read (framework_rules.h).
  auto loaded = scenario::BuildScenario(base, "advise", {}, "");
  if (!loaded.ok()) return loaded.status();
  const llm::FrameworkProfile framework = loaded->setup.framework.value_or(llm::FrameworkProfile{});
  const BoxFacts box = BoxFactsOf(*loaded->topology, loaded->setup.parallel.tp, loaded->setup.gpus);
  result.framework = framework.name;
  result.custom_allreduce_by_default = CustomAllreduceByDefault(framework, box);
  std::vector<Evaluated> all;
  const size_t hint = options.exhaustive ? space.size() : space.comms.size() * 2 + space.specs.size() * 3 + 2;
  ProgressLine line(options.progress ? &progress : nullptr, [hint](size_t done, double) {
    return fmt::format("  evaluated {} configurations (of about {})", done, hint);
  });
  auto evaluate = [&](const std::vector<Candidate>& candidates) {
    const size_t first = all.size();
    EvaluateAll(base, &all, candidates, options, &line);
    for (size_t i = first; i < all.size(); ++i) all[i].takes = WhatCandidateTakes(all[i].candidate, framework, box);
  };
  if (options.exhaustive) {
    evaluate(Cross(space.specs, space.comms, space.pacing, space.expert_parallel));
  } else {
    SearchPruned(space, all, evaluate);
  }
  line.Finish();
  result.evaluated = static_cast<int>(all.size());
  RETURN_IF_ERROR(RankEvaluated(all, &result));
  for (const auto& [name, member] : FamiliesOf(space))
    result.families.push_back(VerdictOf(name, member, all, result.ranked));
  RETURN_IF_ERROR(BandVerdict(base, framework, &result));
  return result;
}

}  // namespace specsim::advise
