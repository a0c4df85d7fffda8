#include "sim/tools/import_profile_command.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sim/calib/trace_io.h"
#include "sim/tools/compare_command.h"

namespace specsim::tools {
namespace {

const std::string kProfile = std::string(SPECSIM_SOURCE_DIR) + "/traces/profiles/torch-tp2-h200-2026-11-30/default";

// `specsim compare PB --json` on the profile's box (the 2x H200) with its calibration; null (and a
// test failure) when compare does not exit 0.
nlohmann::json CompareOnTheBox(const std::string& pb) {
  CompareFlags c;
  c.trace = pb;
  c.hardware = std::string(SPECSIM_SOURCE_DIR) + "/configs/hardware/h200-2x-nvlink.textproto";
  c.calibration = std::string(SPECSIM_SOURCE_DIR) + "/configs/calibration/h200-2x.textproto";
  c.json = true;
  std::ostringstream out, err;
  const int rc = RunCompare(c, out, err);
  EXPECT_EQ(rc, 0) << err.str();
  return rc == 0 ? nlohmann::json::parse(out.str()) : nlohmann::json();
}

// `specsim compare PB --hardware <the 2x H200> --holdout 0.3 --json`: calibrated from the trace
// alone, median over seeds 1..10; null (and a test failure) when compare does not exit 0.
// The held-out compare of `pb`'s elementwise items alone, or of every other item: the elementwise
// law (ramp + bytes at one efficiency) is weaker than the GEMM / attention / norm ones and is
// checked on its own.
nlohmann::json HeldOutOnTheBox(const std::string& pb, bool elementwise = false) {
  auto t = calib::LoadTrace(pb);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  if (!t.ok()) return nlohmann::json();
  trace::Trace kept = *t;
  kept.clear_items();
  for (const trace::Item& it : t->items())
    if ((it.kind() == trace::KIND_ELEMENTWISE) == elementwise) *kept.add_items() = it;
  const std::string part = pb + (elementwise ? ".elementwise.pb" : ".rest.pb");
  {
    std::ofstream f(part, std::ios::binary);
    kept.SerializeToOstream(&f);
  }
  CompareFlags c;
  c.trace = part;
  c.hardware = std::string(SPECSIM_SOURCE_DIR) + "/configs/hardware/h200-2x-nvlink.textproto";
  c.holdout = 0.3;
  c.json = true;
  std::ostringstream out, err;
  const int rc = RunCompare(c, out, err);
  std::filesystem::remove(part);
  EXPECT_EQ(rc, 0) << err.str();
  return rc == 0 ? nlohmann::json::parse(out.str()) : nlohmann::json();
}

TEST(ImportProfileCommandTest, TheCommittedProfileToATraceThatCompareReads) {
  const std::string pb =
      (std::filesystem::temp_directory_path() / ("specsim_profile_" + std::to_string(::getpid()) + ".pb")).string();
  ImportProfileFlags flags;
  flags.paths = {kProfile};
  flags.output = pb;
  std::ostringstream out, err;
  ASSERT_EQ(RunImportProfile(flags, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("2 rank(s), 7560 kernels"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("verify [spec.graph/n4] graph, 125 kernels"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("profile/nccl/allreduce/graph/n2/8KiB"), std::string::npos);
  auto t = calib::LoadTrace(pb);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  // 12 NCCL calls; from the eager calls, 15 GEMM shapes (5 weights x m = 1, 4, 8), 3 attention
  // widths (q = 1, 4, 8), 3 RMSNorm sizes (1, 4, 8 tokens; aten::_fused_rms_norm) and 3 argmax
  // row counts (1, 4, 8).
  // Besides, every eager pass group's operators as host-op items (per operator, tokens and rank)
  // and the groups as host loops (sim/profile/host_ops.h), which compare prices as pacing items.
  // And the eager elementwise calls (residual adds, rotary's mul / neg / cat, cache copies, SiLU and
  // mul), one item per operator and size.
  int host_ops = 0, host_loops = 0, elementwise = 0;
  for (const trace::Item& it : t->items()) {
    host_ops += it.kind() == trace::KIND_HOST_OP;
    host_loops += it.kind() == trace::KIND_HOST_LOOP;
    elementwise += it.kind() == trace::KIND_ELEMENTWISE;
  }
  EXPECT_EQ(elementwise, 40);  // grouped by operator, size and kernel kind (vectorized or strided)
  EXPECT_EQ(t->items_size() - host_ops - host_loops, 12 + 15 + 3 + 3 + 3 + elementwise);
  EXPECT_GT(host_ops, 0);
  EXPECT_GT(host_loops, 0);
  EXPECT_NE(out.str().find("profile/gemm/aten/m8/n14336/k4096"), std::string::npos) << out.str();
  // compare predicts every item on the box's hardware config (kernel time only).
  const nlohmann::json j = CompareOnTheBox(pb);
  ASSERT_FALSE(j.is_null());
  std::map<std::string, int> n;
  for (const auto& suite : j["suites"]) n[suite["suite"]] = suite["n"];
  EXPECT_EQ(n["collectives"], 12) << j["suites"].dump();
  EXPECT_EQ(n["kernels"], 15 + 3 + 3 + 3 + elementwise) << j["suites"].dump();
  EXPECT_EQ(n["pacing"], host_ops + host_loops) << j["suites"].dump();
  EXPECT_TRUE(j["not_simulated"].empty()) << j["not_simulated"].dump();
  // Calibrating from the profile alone: its GEMM costs, checked on held-out GEMM calls (fitted on
  // 70% of the items, seeds 1..10; the GEMMs are within 2.2% median on the committed profile).
  {
    const nlohmann::json h = HeldOutOnTheBox(pb);
    ASSERT_FALSE(h.is_null());
    bool kernels = false;
    for (const auto& suite : h["suites"])
      if (suite["suite"] == "kernels") {
        kernels = true;
        EXPECT_LT(suite["median_abs_error_median"].get<double>(), 0.06) << suite.dump();
      }
    EXPECT_TRUE(kernels) << h["suites"].dump();
    // The elementwise items fitted and checked on their own (70/30, seeds 1..10): 18.3% median over
    // the seeds [10.2..32.9%] on the committed profile; within 25%. (The json is named: a range-for
    // over a temporary's member would iterate a destroyed object.)
    const nlohmann::json ew = HeldOutOnTheBox(pb, /*elementwise=*/true);
    bool ew_kernels = false;
    for (const auto& suite : ew["suites"])
      if (suite["suite"] == "kernels") {
        ew_kernels = true;
        EXPECT_LT(suite["median_abs_error_median"].get<double>(), 0.25) << suite.dump();
      }
    EXPECT_TRUE(ew_kernels) << ew.dump().substr(0, 400);
  }
  // Without --hardware: the imported trace has no links to build a box from.
  CompareFlags bare;
  bare.trace = pb;
  std::ostringstream bout, berr;
  EXPECT_EQ(RunCompare(bare, bout, berr), 2);
  EXPECT_NE(berr.str().find("does not describe the box's links"), std::string::npos) << berr.str();
  std::filesystem::remove(pb);

  flags.output.clear();
  flags.json = true;
  std::ostringstream jout, jerr;
  ASSERT_EQ(RunImportProfile(flags, jout, jerr), 0) << jerr.str();
  EXPECT_NE(jout.str().find("\"wait_us_mean\""), std::string::npos);
}

// The done-when of the profile issue: calibrated from the committed fused profiles alone (GEMM,
// NCCL, attention and RMSNorm calls of their eager passes), the graph-captured target forwards
// (decode and every verify width) are predicted within 10% held out: fitted on 70% of the items,
// median over seeds 1..10 of the held-out decode items' median error. Measured: batch 8 5.3%
// [3.3..7.3], batch 1 5.1% [1.4..6.2] (with GEMM and NCCL items alone: 25.8% and 27.0%).
TEST(ImportProfileCommandTest, CalibratedFromTheFusedProfileAloneDecodeIsWithinTenPercentHeldOut) {
  struct Case {
    const char* dir;
    const char* batch;
    const char* context;
  };
  for (const Case& k : {Case{"fused-b8", "8", "4096"}, Case{"fused-b1", "1", "1024"}}) {
    const std::string pb = (std::filesystem::temp_directory_path() /
                            ("specsim_profile_" + std::string(k.dir) + std::to_string(::getpid()) + ".pb"))
                               .string();
    ImportProfileFlags flags;
    flags.paths = {std::string(SPECSIM_SOURCE_DIR) + "/traces/profiles/torch-tp2-h200-fused-2026-11-30/" + k.dir};
    flags.scenario = std::string(SPECSIM_SOURCE_DIR) + "/configs/scenarios/llama-3.1-8b-eagle3-h200-2x.textproto";
    flags.set = {std::string("serving.batch_size=") + k.batch, std::string("serving.context_length=") + k.context,
                 "speculation.topk=1", "speculation.num_draft_tokens=6"};
    flags.output = pb;
    std::ostringstream out, err;
    ASSERT_EQ(RunImportProfile(flags, out, err), 0) << err.str();
    const nlohmann::json h = HeldOutOnTheBox(pb);
    ASSERT_FALSE(h.is_null());
    std::map<std::string, double> median;
    for (const auto& suite : h["suites"]) median[suite["suite"]] = suite["median_abs_error_median"].get<double>();
    ASSERT_TRUE(median.count("decode")) << h["suites"].dump();
    EXPECT_LT(median["decode"], 0.10) << k.dir << " " << h["suites"].dump();
    EXPECT_LT(median["kernels"], 0.05) << k.dir << " " << h["suites"].dump();
    std::filesystem::remove(pb);
  }
}

// compare on a profiler's trace adds, per pass, measured busy against predicted device time by
// kernel class, per NCCL call the ranks' wait for the last rank against the transfer, and the five
// largest disagreements with what their prediction rests on. On the fused batch-8 profile the eager
// calls wait for the other rank (the host under the profiler) far longer than graph replays do.
TEST(ImportProfileCommandTest, CompareReportsPassClassesNcclWaitsAndDisagreements) {
  const std::string pb =
      (std::filesystem::temp_directory_path() / ("specsim_profile_report_" + std::to_string(::getpid()) + ".pb"))
          .string();
  ImportProfileFlags flags;
  flags.paths = {std::string(SPECSIM_SOURCE_DIR) + "/traces/profiles/torch-tp2-h200-fused-2026-11-30/fused-b8"};
  flags.scenario = std::string(SPECSIM_SOURCE_DIR) + "/configs/scenarios/llama-3.1-8b-eagle3-h200-2x.textproto";
  flags.set = {"serving.batch_size=8", "serving.context_length=4096", "speculation.topk=1",
               "speculation.num_draft_tokens=6"};
  flags.output = pb;
  std::ostringstream out, err;
  ASSERT_EQ(RunImportProfile(flags, out, err), 0) << err.str();
  const nlohmann::json j = CompareOnTheBox(pb);
  ASSERT_TRUE(j.contains("profile")) << j.dump().substr(0, 400);
  const nlohmann::json& p = j["profile"];
  ASSERT_EQ(p["passes"].size(), 5u);  // the graph decode and the verify of 2, 4, 8, 16 tokens
  for (const auto& row : p["passes"]) {
    for (const char* c : {"attention", "gemm", "nccl", "norm", "other", "sampling"}) {
      EXPECT_GT(row["measured_us"].value(c, 0.0), 0) << row.dump();
      EXPECT_GT(row["predicted_us"].value(c, 0.0), 0) << row.dump();
    }
    EXPECT_FALSE(row["largest_gap_class"].get<std::string>().empty());
  }
  std::map<std::string, double> share;
  for (const auto& c : p["collectives"]) share[c["item"]] = c["wait_share"].get<double>();
  ASSERT_TRUE(share.count("profile/nccl/allreduce/eager/n2/1MiB") &&
              share.count("profile/nccl/allreduce/graph/n2/1MiB"));
  EXPECT_GT(share["profile/nccl/allreduce/eager/n2/1MiB"], 2 * share["profile/nccl/allreduce/graph/n2/1MiB"]);
  ASSERT_EQ(p["disagreements"].size(), 5u);
  for (size_t i = 1; i < p["disagreements"].size(); ++i)
    EXPECT_GE(std::abs(p["disagreements"][i - 1]["error"].get<double>()),
              std::abs(p["disagreements"][i]["error"].get<double>()));
  for (const auto& d : p["disagreements"]) EXPECT_FALSE(d["cause"].get<std::string>().empty());
  std::filesystem::remove(pb);
}

// Each pass group against a scenario: tokens per pass from the allreduce size (graph replays via
// the eager calls of the same channels), layers from the allreduce count.
TEST(ImportProfileCommandTest, PassGroupsAgainstAScenario) {
  ImportProfileFlags flags;
  flags.paths = {kProfile};
  flags.scenario = std::string(SPECSIM_SOURCE_DIR) + "/configs/scenarios/llama-3.1-8b-eagle3-h200-2x.textproto";
  flags.set = {"serving.context_length=1024", "speculation.topk=1", "speculation.num_draft_tokens=6"};
  std::ostringstream out, err;
  ASSERT_EQ(RunImportProfile(flags, out, err), 0) << err.str();
  const std::string o = out.str();
  ASSERT_NE(o.find("passes against"), std::string::npos) << o;
  // "verify [spec.graph/n8] graph, 125 kernels", predicted as a verify of 8 tokens over 4 layers.
  const size_t row = o.find("verify [spec.graph/n8] graph, 125 kernels", o.find("passes against"));
  ASSERT_NE(row, std::string::npos) << o;
  const std::string line = o.substr(row, o.find('\n', row) - row);
  std::istringstream fields(line.substr(line.find("kernels") + 7));
  std::string as;
  int tokens = 0, layers = 0;
  fields >> as >> tokens >> layers;
  EXPECT_EQ(as, "verify") << line;
  EXPECT_EQ(tokens, 8) << line;
  EXPECT_EQ(layers, 4) << line;
  // The by-class table names the largest gap of each graph pass.
  EXPECT_NE(o.find("largest gap: "), std::string::npos) << o;
  EXPECT_NE(o.find("attention "), std::string::npos);
  // With -o the graph target forwards become decode items that compare re-simulates alike.
  const std::string pb =
      (std::filesystem::temp_directory_path() / ("specsim_passes_" + std::to_string(::getpid()) + ".pb")).string();
  flags.output = pb;
  std::ostringstream wout, werr;
  ASSERT_EQ(RunImportProfile(flags, wout, werr), 0) << werr.str();
  auto t = calib::LoadTrace(pb);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  int passes = 0;
  for (const trace::Item& it : t->items())
    if (it.suite() == trace::SUITE_DECODE) {
      ++passes;
      EXPECT_TRUE(it.decode().gpu_busy_only()) << it.name();
      EXPECT_EQ(it.decode().layers_run(), 4) << it.name();
    }
  EXPECT_EQ(passes, 3);  // decode (q1), verify q4, verify q8
  const nlohmann::json j = CompareOnTheBox(pb);
  ASSERT_FALSE(j.is_null());
  bool decode_suite = false;
  for (const auto& suite : j["suites"]) decode_suite = decode_suite || (suite["suite"] == "decode" && suite["n"] == 3);
  EXPECT_TRUE(decode_suite) << j["suites"].dump();
  EXPECT_TRUE(j["not_simulated"].empty()) << j["not_simulated"].dump();
  std::filesystem::remove(pb);
  flags.output.clear();
  // A scenario that does not load is exit 2 with its reason.
  flags.set = {"speculation.topk=1"};  // num_draft_tokens 8 != num_steps + 1
  std::ostringstream out2, err2;
  EXPECT_EQ(RunImportProfile(flags, out2, err2), 2);
  EXPECT_NE(err2.str().find("num_draft_tokens"), std::string::npos) << err2.str();
}

TEST(ImportProfileCommandTest, RefusesNcclEnvValuesThePredictorsDoNotModel) {
  // The campaign's NCCL_ALGO=bogus was accepted, written to every NCCL item, and failed later.
  ImportProfileFlags flags;
  flags.paths = {kProfile};
  for (const auto& [kv, allowed] : std::vector<std::pair<std::string, std::string>>{
           {"NCCL_ALGO=bogus", "allowed values of NCCL_ALGO are ring, tree"},
           {"NCCL_PROTO=fast", "allowed values of NCCL_PROTO are ll, ll128, simple"},
           {"NCCL_P2P_LEVEL=NVL", "allowed values of NCCL_P2P_LEVEL are pix, pxb, phb, sys"},
           {"NCCL_P2P_DISABLE=yes", "allowed values of NCCL_P2P_DISABLE are 0, 1"},
           {"NCCL_MAX_NCHANNELS=1000", "allowed values of NCCL_MAX_NCHANNELS are integers 1..64"},
           {"NCCL_MIN_NCHANNELS=-3", "allowed values of NCCL_MIN_NCHANNELS are integers 1..64"}}) {
    flags.nccl_env = {kv};
    std::ostringstream out, err;
    EXPECT_EQ(RunImportProfile(flags, out, err), 2) << kv;
    EXPECT_NE(err.str().find("--nccl-env " + kv + ": " + allowed), std::string::npos) << err.str();
  }
  // Modelled values (any case) and variables the predictors do not read are accepted.
  flags.nccl_env = {"NCCL_ALGO=Ring", "NCCL_PROTO=LL", "NCCL_MAX_NCHANNELS=16", "NCCL_DEBUG=INFO"};
  flags.json = true;
  std::ostringstream out, err;
  EXPECT_EQ(RunImportProfile(flags, out, err), 0) << err.str();
}

TEST(ImportProfileCommandTest, RefusesAScenarioOfAnotherTensorParallelSize) {
  // The campaign's TP4 scenario was predicted against a 2-rank profile without a word.
  ImportProfileFlags flags;
  flags.paths = {kProfile};
  flags.scenario = std::string(SPECSIM_SOURCE_DIR) + "/configs/scenarios/llama-3.1-8b-eagle3-rtxpro6000-4x.textproto";
  std::ostringstream out, err;
  EXPECT_EQ(RunImportProfile(flags, out, err), 2);
  EXPECT_NE(err.str().find("parallelism.tensor_parallel 4, but the profile has 2 rank(s)"), std::string::npos)
      << err.str();
}

TEST(ImportProfileCommandTest, SaysWhichEventsItDroppedAndWhy) {
  // A one-rank trace: two kernels, one of a negative duration, one without a start.
  const std::string path =
      (std::filesystem::temp_directory_path() / ("specsim_dropped_" + std::to_string(::getpid()) + ".json")).string();
  {
    std::ofstream f(path);
    f << R"({"traceEvents": [
      {"ph": "X", "cat": "kernel", "name": "a", "ts": 10, "dur": 2, "args": {"correlation": 1}},
      {"ph": "X", "cat": "kernel", "name": "b", "ts": 12, "dur": -5, "args": {"correlation": 2}},
      {"ph": "X", "cat": "kernel", "name": "c", "dur": 3, "args": {"correlation": 3}}]})";
  }
  ImportProfileFlags flags;
  flags.paths = {path};
  std::ostringstream out, err;
  ASSERT_EQ(RunImportProfile(flags, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("dropped 1 kernel events: duration not a finite number in [0, 8.64e+10] us (dur)"),
            std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("dropped 1 kernel events: start time missing (ts)"), std::string::npos) << out.str();
  flags.json = true;
  std::ostringstream jout, jerr;
  ASSERT_EQ(RunImportProfile(flags, jout, jerr), 0) << jerr.str();
  const nlohmann::json j = nlohmann::json::parse(jout.str());
  ASSERT_EQ(j["dropped_events"].size(), 2u) << j["dropped_events"].dump();
  EXPECT_EQ(j["dropped_events"][0]["category"], "kernel");
  EXPECT_EQ(j["dropped_events"][0]["events"], 1);
  EXPECT_EQ(j["kernels"], 1);
  std::filesystem::remove(path);
}

TEST(ImportProfileCommandTest, BadPathsAreExitTwoWithTheReason) {
  ImportProfileFlags flags;
  flags.paths = {"/nonexistent/profile"};
  std::ostringstream out, err;
  EXPECT_EQ(RunImportProfile(flags, out, err), 2);
  EXPECT_NE(err.str().find("/nonexistent/profile: no such file or directory"), std::string::npos) << err.str();
  // One rank of two: the missing one is named.
  flags.paths = {kProfile + "/rank0.trace.json.gz"};
  std::ostringstream out2, err2;
  EXPECT_EQ(RunImportProfile(flags, out2, err2), 2);
  EXPECT_NE(err2.str().find("missing rank(s) 1 of world size 2"), std::string::npos) << err2.str();
  // A directory without traces.
  flags.paths = {std::string(SPECSIM_SOURCE_DIR) + "/configs"};
  std::ostringstream out3, err3;
  EXPECT_EQ(RunImportProfile(flags, out3, err3), 2);
  EXPECT_NE(err3.str().find("no *.json or *.json.gz profiler traces"), std::string::npos) << err3.str();
}

}  // namespace
}  // namespace specsim::tools
