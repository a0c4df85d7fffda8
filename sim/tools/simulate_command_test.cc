#include "sim/tools/simulate_command.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "sim/coll/protocol.h"
#include "sim/io/embedded_files.h"
#include "sim/scenario/scenario.h"

namespace specsim::tools {
namespace {

struct Output {
  int code;
  std::string out, err;
};

Output Simulate(SimulateFlags flags) {
  std::ostringstream out, err;
  int code = RunSimulate(flags, out, err);
  return {code, out.str(), err.str()};
}

TEST(SimulateCommand, DefaultScenarioPrintsBaselineAndSpeculative) {
  SimulateFlags f;
  f.json = true;
  Output o = Simulate(f);
  ASSERT_EQ(o.code, 0) << o.err;
  auto j = nlohmann::json::parse(o.out);
  EXPECT_GT(j["baseline"]["tokens_per_s"].get<double>(), 0);
  EXPECT_GT(j["baseline"]["step_ms"].get<double>(), 0);
  const auto& s = j["speculative"];
  EXPECT_NEAR(s["tau"].get<double>(), 2.9, 0.15);  // acceptance [0.85, 0.75, 0.65]: tau 2.902
  double sum = 0;
  for (const char* k : {"draft_compute", "draft_comm", "verify_compute", "verify_comm", "launch_sync"})
    sum += s["breakdown_ms"][k].get<double>();
  EXPECT_NEAR(sum, s["cycle_ms"].get<double>(), 1e-6);
  EXPECT_NEAR(s["tokens_per_s"].get<double>(), s["tau"].get<double>() / s["cycle_ms"].get<double>() * 1e3, 1e-6);
}

TEST(SimulateCommand, RerunIsByteIdentical) {
  SimulateFlags f;
  f.compare_algos = true;
  EXPECT_EQ(Simulate(f).out, Simulate(f).out);
}

TEST(SimulateCommand, CompareAlgosChangesBothBaselineAndSpeculative) {
  SimulateFlags f;
  f.json = true;
  f.compare_algos = true;
  Output o = Simulate(f);
  ASSERT_EQ(o.code, 0) << o.err;
  auto rows = nlohmann::json::parse(o.out)["algorithms"];
  ASSERT_GE(rows.size(), 8u);
  std::set<long> baselines, speculatives;
  for (const auto& r : rows) {
    baselines.insert(std::lround(r["baseline_tokens_per_s"].get<double>() * 10));
    speculatives.insert(std::lround(r["speculative_tokens_per_s"].get<double>() * 10));
  }
  EXPECT_GE(baselines.size(), 3u);
  EXPECT_GE(speculatives.size(), 3u);
}

// The pacing rows of --compare-algos, with 20 us exponential host jitter per op: the full-graph
// rows keep the collectives' wait near zero (the host runs ahead of the GPU), the eager verify row
// makes the verify collectives wait for the slowest of 8 hosts (about a millisecond per cycle: its
// hosts, at the profile's 36.36 us per op plus the jitter, barely keep up with the GPU) and loses
// tokens/s; every row names what it changed.
TEST(SimulateCommand, CompareAlgosTriesCaptureModesAndHostSyncs) {
  SimulateFlags f;
  f.json = true;
  f.compare_algos = true;
  f.set = {"framework_overrides.jitter.distribution=EXPONENTIAL", "framework_overrides.jitter.mean_us=20"};
  Output o = Simulate(f);
  ASSERT_EQ(o.code, 0) << o.err;
  std::map<std::string, nlohmann::json> rows;
  const nlohmann::json j = nlohmann::json::parse(o.out);
  for (const auto& r : j["pacing_variants"]) rows[r["name"].get<std::string>()] = r;
  for (const char* name :
       {"as the profile says", "every phase full graph", "verify piecewise", "verify eager", "every phase piecewise",
        "every phase eager", "no host sync (host runs ahead)", "host sync every step and cycle"})
    ASSERT_TRUE(rows.count(name)) << name;
  const auto& full = rows["every phase full graph"];
  const auto& eager = rows["verify eager"];
  EXPECT_LT(full["verify_wait_ms"].get<double>(), 0.1);
  EXPECT_GT(eager["verify_wait_ms"].get<double>(), 0.5);
  // (The loss is a few percent of the cycle, not more: the default scenario's verify pass is mostly
  // GPU time, SGLang's Triton verify attention walking the 4096-token prefix.)
  EXPECT_LT(eager["speculative_tokens_per_s"].get<double>(), 0.99 * full["speculative_tokens_per_s"].get<double>());
  // Verify's capture does not touch the baseline (a plain decode step).
  EXPECT_DOUBLE_EQ(eager["baseline_tokens_per_s"].get<double>(), full["baseline_tokens_per_s"].get<double>());
}

TEST(SimulateCommand, EveryBundledScenarioSimulates) {
  int scenarios = 0;
  for (std::string_view name : io::EmbeddedFileNames()) {
    if (name.rfind("configs/scenarios/", 0) != 0) continue;
    SimulateFlags f;
    f.scenario = std::string(name);
    f.json = true;
    Output o = Simulate(f);
    EXPECT_EQ(o.code, 0) << name << ": " << o.err;
    ++scenarios;
  }
  EXPECT_GE(scenarios, 3);
}

TEST(SimulateCommand, EveryBundledTargetModelSimulatesOnTheDefaultBox) {
  int models = 0;
  for (std::string_view name : io::EmbeddedFileNames()) {
    if (name.rfind("models/", 0) != 0 || name.rfind("models/hf/", 0) == 0 ||
        name.find("eagle3") != std::string_view::npos)
      continue;
    SimulateFlags f;
    f.model = std::string(name);
    // The default scenario's INT4 (--model alone takes the checkpoint's formats: Kimi-K2's FP8 does
    // not fit on the box; ModelFlagPlansTheCheckpointsFormats).
    f.set = {"speculation.method=NONE", "serving.weight_source=DTYPE"};
    f.json = true;
    Output o = Simulate(f);
    ASSERT_EQ(o.code, 0) << name << ": " << o.err;
    EXPECT_GT(nlohmann::json::parse(o.out)["baseline"]["tokens_per_s"].get<double>(), 1.0) << name;
    ++models;
  }
  EXPECT_GE(models, 7);
}

// Issue 38: a framework with unmeasured host costs gets a band (JSON fields, low-cost end faster);
// cpp-graph (costs by definition) gets none, in JSON and in text.
TEST(SimulateCommand, HostCostBandForUnmeasuredCosts) {
  SimulateFlags f;
  f.json = true;
  f.scenario = "configs/scenarios/llama-3.1-8b-eagle3-h200-2x.textproto";
  Output o = Simulate(f);
  ASSERT_EQ(o.code, 0) << o.err;
  const nlohmann::json j = nlohmann::json::parse(o.out);
  const nlohmann::json& band = j["host_cost_band"];
  ASSERT_TRUE(band.is_object()) << o.out;
  EXPECT_FALSE(band["unmeasured_costs"].empty());
  const double low = band["low_cost"]["speculative_tokens_per_s"].get<double>();
  const double high = band["high_cost"]["speculative_tokens_per_s"].get<double>();
  const double point = j["speculative"]["tokens_per_s"].get<double>();
  EXPECT_GT(low, high);
  EXPECT_GE(low, point);
  EXPECT_GE(point, high);
  EXPECT_LE(band["low_cost"]["cycle_ms"].get<double>(), band["high_cost"]["cycle_ms"].get<double>());
  EXPECT_GE(band["low_cost"]["baseline_tokens_per_s"].get<double>(),
            band["high_cost"]["baseline_tokens_per_s"].get<double>());

  f.set = {"framework=configs/frameworks/cpp-graph.textproto"};
  o = Simulate(f);
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_TRUE(nlohmann::json::parse(o.out)["host_cost_band"].is_null());
  f.json = false;
  o = Simulate(f);
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.out.find("host-cost band"), std::string::npos);
}

TEST(SimulateCommand, SetOverridesAField) {
  SimulateFlags a, b;
  a.json = b.json = true;
  b.set = {"serving.batch_size=4"};
  auto ja = nlohmann::json::parse(Simulate(a).out), jb = nlohmann::json::parse(Simulate(b).out);
  EXPECT_GT(jb["baseline"]["tokens_per_s"].get<double>(), 2 * ja["baseline"]["tokens_per_s"].get<double>());
  b.set = {"serving.batch_sise=4"};
  Output o = Simulate(b);
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("batch_size"), std::string::npos) << o.err;
}

TEST(SimulateCommand, ModelFromAHuggingFaceConfigJson) {
  // The bundled Llama scenario, its model replaced by the HF config.json it was written from:
  // the same shapes, so the same prediction.
  SimulateFlags a, b;
  a.scenario = b.scenario = "configs/scenarios/llama-3.1-8b-eagle3-rtxpro6000-4x.textproto";
  a.json = b.json = true;
  b.model = std::string(SPECSIM_SOURCE_DIR) + "/models/hf/llama-3.1-8b.config.json";
  Output oa = Simulate(a), ob = Simulate(b);
  ASSERT_EQ(ob.code, 0) << ob.err;
  EXPECT_EQ(nlohmann::json::parse(oa.out)["baseline"], nlohmann::json::parse(ob.out)["baseline"]);
  b.model = std::string(SPECSIM_SOURCE_DIR) + "/README.md";
  EXPECT_EQ(Simulate(b).code, 2);
}

TEST(SimulateCommand, ScenarioThatDoesNotFitIsRefusedWithItsMemoryPlan) {
  SimulateFlags f;
  f.set = {"serving.weight_dtype=BF16", "serving.expert_weight_dtype=BF16"};
  Output o = Simulate(f);
  EXPECT_EQ(o.code, 3);
  EXPECT_NE(o.err.find("does not fit"), std::string::npos);
  EXPECT_NE(o.err.find("weights"), std::string::npos);
  f.set.clear();
  f.memory = true;
  Output m = Simulate(f);
  EXPECT_EQ(m.code, 0);
  EXPECT_NE(m.out.find("KV cache"), std::string::npos);
  // --memory --json: the same plan as JSON, its lines adding up to the total.
  f.json = true;
  Output j = Simulate(f);
  ASSERT_EQ(j.code, 0) << j.err;
  const nlohmann::json plan = nlohmann::json::parse(j.out)["memory"];
  double sum = 0;
  for (const auto& l : plan["lines"]) sum += l["bytes"].get<double>();
  EXPECT_NEAR(sum, plan["total_bytes"].get<double>(), 1);
  EXPECT_TRUE(plan["fits"].get<bool>());
  EXPECT_GT(plan["capacity_bytes"].get<double>(), plan["total_bytes"].get<double>());
}

TEST(SimulateCommand, CalibrationFileChangesThePrediction) {
  // A calibration whose kernel floor is 20 us: every one of the ~1100 kernels of a pass now
  // takes at least that, so the step gets much slower; a copy-engine count is applied to the box.
  const std::string path = ::testing::TempDir() + "/calib.textproto";
  {
    std::ofstream f(path);
    f << "compute { kernel_floor_ns: 20000 }\nfabric { copy_engines_per_direction: 2 }\n";
  }
  SimulateFlags a, b;
  a.json = b.json = true;
  b.calibration = path;
  Output oa = Simulate(a), ob = Simulate(b);
  ASSERT_EQ(ob.code, 0) << ob.err;
  const double plain = nlohmann::json::parse(oa.out)["baseline"]["step_ms"].get<double>();
  const double floored = nlohmann::json::parse(ob.out)["baseline"]["step_ms"].get<double>();
  EXPECT_GT(floored, plain + 1000 * 0.015);  // > 1000 kernels x (20 - 5) us more
  {
    std::ofstream f(path);
    f << "compute { kernel_floor_nss: 1 }\n";
  }
  Output bad = Simulate(b);
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("kernel_floor_ns"), std::string::npos) << bad.err;
}

// The 2x H200 calibration on the default scenario's 8x RTX PRO 6000 box: simulate runs (a warning
// never stops it) and says on stderr which box the calibration belongs to; on the 2x H200 scenario
// it says nothing.
TEST(SimulateCommand, WarnsWhenTheCalibrationIsFromAnotherBox) {
  SimulateFlags f;
  f.json = true;
  f.calibration = std::string(SPECSIM_SOURCE_DIR) + "/configs/calibration/h200-2x.textproto";
  Output o = Simulate(f);
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.err.find("warning: calibration " + f.calibration + " was fitted on 2x NVIDIA H200"), std::string::npos)
      << o.err;
  EXPECT_NE(o.err.find("GPU count: 2 in the calibration, 8 in the hardware config"), std::string::npos) << o.err;
  EXPECT_EQ(o.out.find("warning"), std::string::npos);
  SimulateFlags h;
  h.json = true;
  h.scenario = std::string(SPECSIM_SOURCE_DIR) + "/configs/scenarios/llama-3.1-8b-eagle3-h200-2x.textproto";
  Output oh = Simulate(h);
  ASSERT_EQ(oh.code, 0) << oh.err;
  EXPECT_EQ(oh.err.find("warning"), std::string::npos) << oh.err;
}

// --trace: one cycle of the default scenario (TP8) as 8 ranks x (host thread, GPU stream). Every
// rank's GPU runs the ~1100 kernels of the verify pass and its collectives (transfer slices); each
// track's slices are sequential, so that Perfetto nests nothing wrongly: sorted by start, a slice
// starts no earlier than the previous one ends.
// A scenario's calibration reaches its NCCL collectives whole: the per-(transport, protocol, op)
// step costs and channel rates the 2-GPU fits write, not only the older per-protocol fields.
// configs/calibration/h200-2x.textproto has NVLink (P2P) LL allreduce
// costs fitted from the default and LL traces.
TEST(SimulateCommand, ScenarioCalibrationCarriesPerTransportNcclCosts) {
  auto loaded = scenario::LoadScenario(
      std::string(SPECSIM_SOURCE_DIR) + "/configs/scenarios/llama-3.1-8b-eagle3-h200-2x.textproto", {}, "");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const coll::ProtocolOverrides& o = loaded->setup.allreduce.protocol_overrides;
  auto it = o.per_op.find(
      {coll::NcclTransport::kP2pNvLink, coll::NcclProto::kLl, static_cast<int>(coll::Collective::kAllReduce)});
  ASSERT_NE(it, o.per_op.end());
  EXPECT_TRUE(it->second.base_latency_us.has_value());
  EXPECT_TRUE(it->second.channel_gbps.has_value());
  // And the SHM path's own (fitted on the NCCL_P2P_DISABLE=1 traces).
  EXPECT_EQ(o.per_op.count(
                {coll::NcclTransport::kShm, coll::NcclProto::kSimple, static_cast<int>(coll::Collective::kAllReduce)}),
            1u);
}

TEST(SimulateCommand, TraceOfOneCycle) {
  SimulateFlags f;
  f.trace = ::testing::TempDir() + "/cycle.json";
  ASSERT_EQ(Simulate(f).code, 0);
  std::ifstream in(f.trace);
  auto j = nlohmann::json::parse(in);
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> tracks;
  std::map<int, int> compute, transfer, host;
  std::set<int> processes;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") processes.insert(e["pid"].get<int>());
    if (e["ph"] != "X") continue;
    const int pid = e["pid"], tid = e["tid"];
    const double ts = e["ts"], dur = e["dur"];
    EXPECT_GE(dur, 0);
    tracks[{pid, tid}].push_back({ts, ts + dur});
    compute[pid] += e["cat"] == "compute";
    transfer[pid] += e["cat"] == "comm-transfer";
    host[pid] += tid == 1;
  }
  EXPECT_EQ(processes.size(), 8u);
  for (int pid = 1; pid <= 8; ++pid) {
    EXPECT_GT(compute[pid], 1000) << "rank " << pid - 1;
    EXPECT_GT(transfer[pid], 120) << "rank " << pid - 1;
    EXPECT_GT(host[pid], 0) << "rank " << pid - 1;  // graph launches, the cycle's sync and host work
  }
  for (auto& [track, v] : tracks) {
    std::sort(v.begin(), v.end());
    for (size_t i = 1; i < v.size(); ++i)
      ASSERT_GE(v[i].first, v[i - 1].second - 1e-6)
          << "pid " << track.first << " tid " << track.second << " slice " << i;
  }
}

constexpr double kGiB = 1024.0 * 1024 * 1024;

// The weights line of `simulate --memory --json` (bytes per GPU) and the run's "weights" block.
std::pair<double, nlohmann::json> PlannedWeights(SimulateFlags f) {
  f.memory = f.json = true;
  Output o = Simulate(f);
  EXPECT_EQ(o.code, 0) << o.err;
  if (o.code != 0) return {0, {}};
  const nlohmann::json j = nlohmann::json::parse(o.out);
  return {j["memory"]["lines"][0]["bytes"].get<double>(), j["weights"]};
}

// Issue 16 item 1: `simulate --model gpt-oss-20b.config.json` planned the default scenario's INT4,
// not the checkpoint's MXFP4. --model now plans the checkpoint's formats and says so; an explicit
// --set of a weight dtype still wins.
TEST(SimulateCommand, ModelFlagPlansTheCheckpointsFormats) {
  SimulateFlags f;
  f.model = std::string(SPECSIM_SOURCE_DIR) + "/models/hf/gpt-oss-20b.config.json";
  f.set = {"parallelism.tensor_parallel=1", "speculation.method=NONE"};
  // gpt-oss-20b's checkpoint: 12.8 GiB (arXiv:2508.10925 table 1), here on one GPU.
  auto [checkpoint, w] = PlannedWeights(f);
  EXPECT_NEAR(checkpoint / kGiB, 12.8, 0.3);
  EXPECT_TRUE(w["from_checkpoint"].get<bool>());
  EXPECT_EQ(w["source"], "checkpoint (quantization mxfp4)");
  EXPECT_EQ(w["formats"], "attention, LM head bf16; routed experts fp4 g32 +8-bit scales");
  // The scenario's own INT4 (g32, bf16 scales: 4.5 bits) everywhere, attention and LM head included
  // (bf16 in the checkpoint): fewer bytes, 11.7 against 12.8 GiB.
  f.set.push_back("serving.weight_source=DTYPE");
  auto [int4, wi] = PlannedWeights(f);
  EXPECT_FALSE(wi["from_checkpoint"].get<bool>());
  EXPECT_EQ(wi["source"], "serving.weight_dtype");
  EXPECT_LT(int4 / kGiB, checkpoint / kGiB - 0.5);
  // An explicit dtype: BF16 is 20.9B x 2 B = ~38.9 GiB.
  f.set.back() = "serving.weight_dtype=BF16";
  auto [bf16, wb] = PlannedWeights(f);
  EXPECT_NEAR(bf16 / kGiB, 38.9, 1.0);
  EXPECT_EQ(wb["source"], "serving.weight_dtype");
  // The text report states the source in its header.
  f.set.pop_back();
  f.memory = f.json = false;
  Output o = Simulate(f);
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("weights as the checkpoint stores them"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("#   weight formats from checkpoint (quantization mxfp4): attention, LM head bf16; routed "
                       "experts fp4 g32 +8-bit scales"),
            std::string::npos)
      << o.out;
  // Kimi-K2-Instruct as published (FP8, ~1 TB) does not fit on the default 8 x 96 GB box.
  SimulateFlags kimi;
  kimi.model = "models/kimi-k2.textproto";
  EXPECT_EQ(Simulate(kimi).code, 3);
}

// An EAGLE-3 head's config.json as the draft (--draft): SpecForge's Llama-3.1-8B head has the
// bundled textproto head's shape, so the prediction is the same.
TEST(SimulateCommand, DraftFromAnEagle3ConfigJson) {
  SimulateFlags a, b;
  a.scenario = b.scenario = "configs/scenarios/llama-3.1-8b-eagle3-rtxpro6000-4x.textproto";
  a.json = b.json = true;
  b.draft = std::string(SPECSIM_SOURCE_DIR) + "/models/hf/eagle3-llama-3.1-8b.config.json";
  Output oa = Simulate(a), ob = Simulate(b);
  ASSERT_EQ(ob.code, 0) << ob.err;
  EXPECT_EQ(nlohmann::json::parse(oa.out)["speculative"], nlohmann::json::parse(ob.out)["speculative"]);
  // A head for another target (gpt-oss-20b: hidden 2880) is refused naming the field.
  b.draft = std::string(SPECSIM_SOURCE_DIR) + "/models/hf/eagle3-gpt-oss-20b.config.json";
  Output bad = Simulate(b);
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("hidden_size"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace specsim::tools
