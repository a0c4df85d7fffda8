#include "sim/fuzz/fuzz_support.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <utility>

#include "sim/coll/collective_planner.h"
#include "sim/coll/executor.h"
#include "sim/core/check.h"
#include "sim/io/embedded_files.h"
#include "sim/io/scenario_loader.h"
#include "sim/net/routing.h"
#include "sim/scenario/scenario.h"

namespace specsim::fuzz {

const config::Scenario& DefaultScenario() {
  // Parsed once per process: every input starts from the same scenario.
  static const config::Scenario* const kScenario = [] {
    auto text = io::EmbeddedFile(scenario::kDefaultScenario);
    SPECSIM_CHECK(text.has_value()) << scenario::kDefaultScenario << " is not embedded";
    auto parsed = io::ParseScenario(*text, scenario::kDefaultScenario);
    SPECSIM_CHECK(parsed.ok()) << parsed.status().message();
    auto* s = new config::Scenario(*std::move(parsed));
    Status resolved = io::ResolveScenarioPaths(s, scenario::kDefaultScenario, /*embedded=*/true);
    SPECSIM_CHECK(resolved.ok()) << resolved.message();
    return s;
  }();
  return *kScenario;
}

std::string WriteTempFile(std::string_view slot, std::string_view suffix, std::string_view contents) {
  const std::string path = (std::filesystem::temp_directory_path() / ("specsim-fuzz-" + std::to_string(getpid()) + "-" +
                                                                      std::string(slot) + std::string(suffix)))
                               .string();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  out.close();
  SPECSIM_CHECK(out.good()) << "cannot write " << path;
  return path;
}

void EvaluateBounded(config::Scenario scenario, const std::string& calibration_path) {
  const int cycles = scenario.speculation().cycles();
  scenario.mutable_speculation()->set_cycles(cycles <= 0 ? kFuzzCycles : std::min(cycles, kFuzzCycles));
  auto loaded = scenario::BuildScenario(std::move(scenario), "fuzzed.textproto", {}, calibration_path);
  if (!loaded.ok()) return;
  // Without speculation no cycle is drawn (SetSpeculation leaves the settings' default).
  SPECSIM_CHECK(loaded->setup.speculation.method == llm::SpeculationMethod::kNone ||
                loaded->setup.speculation.cycles <= kFuzzCycles)
      << "cycles " << loaded->setup.speculation.cycles;
  auto evaluation = scenario::Evaluate(*loaded);
  if (!evaluation.ok() || !evaluation->result.has_value()) return;
  // An accepted scenario's result is a finite, non-negative throughput (NaN fails both).
  for (double tokens_per_s : {evaluation->result->baseline_tokens_per_s, evaluation->result->speculative_tokens_per_s})
    SPECSIM_CHECK(tokens_per_s >= 0 && tokens_per_s < 1e12) << "tokens/s " << tokens_per_s;
}

void TimeCollectivesBounded(const net::Topology& topology, int64_t bytes, const coll::ProtocolOverrides& nccl) {
  net::Router router(topology);
  const int ranks = std::min(topology.num_gpus(), kFuzzRanks);
  if (ranks < 2) return;
  coll::CollectiveRequest base;
  base.bytes = bytes;
  base.protocol_overrides = nccl;
  for (int g = 0; g < ranks; ++g) base.gpus.push_back(g);
  std::vector<coll::CollectiveRequest> requests;
  for (bool p2p_disable : {false, true})
    for (coll::Algorithm algorithm :
         {coll::Algorithm::kRing, coll::Algorithm::kTree, coll::Algorithm::kOneShot, coll::Algorithm::kTwoShot}) {
      coll::CollectiveRequest r = base;
      r.algorithm = algorithm;
      r.p2p_disable = p2p_disable;
      requests.push_back(r);
    }
  coll::CollectiveRequest all_to_all = base;
  all_to_all.collective = coll::Collective::kAllToAll;
  all_to_all.algorithm = coll::Algorithm::kDirect;
  requests.push_back(all_to_all);
  coll::CollectivePlanner planner(router);
  coll::CollectiveTimer timer(router);
  for (const coll::CollectiveRequest& request : requests) {
    auto plan = planner.Plan(request);
    if (!plan.ok()) continue;
    coll::CollectiveTiming timing = timer.Time(plan->schedule, plan->rank_gpus);
    SPECSIM_CHECK(timing.duration_ps >= 0) << "negative collective time " << timing.duration_ps;
  }
}

}  // namespace specsim::fuzz
