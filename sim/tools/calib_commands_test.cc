// specsim calibrate / compare / hardware-from-trace / collective --calibration through their
// testable runners, on the committed trace (and small synthetic ones).
#include <fmt/format.h>
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "sim/calib/calibration_loader.h"
#include "sim/calib/trace_io.h"
#include "sim/io/hardware_loader.h"
#include "sim/calib/calib_inputs.h"
#include "sim/tools/kept_defaults.h"
#include "sim/tools/calibrate_command.h"
#include "sim/tools/collective_command.h"
#include "sim/tools/nccl_transport_command.h"
#include "sim/tools/compare_command.h"
#include "sim/tools/hardware_from_trace_command.h"
#include "specsim/trace.pb.h"

namespace specsim::tools {
namespace {

// A written calibration as every command reads it (calib::LoadCalibration), as its file's message.
StatusOr<config::Calibration> ReadCalibration(const std::string& path) {
  ASSIGN_OR_RETURN(calib::LoadedCalibration c, calib::LoadCalibration(path));
  return c.proto;
}

const std::string kTrace = std::string(SPECSIM_SOURCE_DIR) + "/traces/h200-1x-2026-11-29.pb";

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("specsim_calib_" + name)).string();
}

// --exclude leaves the matching items out of the fit (and says how many); a regex that does not
// parse, or that leaves no item, is exit 2 naming the flag.
TEST(CalibrateCommandTest, ExcludeLeavesMatchingItemsOutOfTheFit) {
  CalibrateFlags f;
  f.traces = {kTrace};
  f.exclude = "^pcie/";
  std::ostringstream out, err;
  ASSERT_EQ(RunCalibrate(f, out, err), 0) << err.str();
  EXPECT_NE(err.str().find("--exclude '^pcie/':"), std::string::npos) << err.str();
  EXPECT_NE(err.str().find("items left out of the fit"), std::string::npos) << err.str();
  // Without its host-copy items the host link keeps its defaults: listed as not fitted.
  EXPECT_EQ(out.str().find("fabric.h2d_pinned.bandwidth_gbps  "), std::string::npos);
  EXPECT_NE(out.str().find("fabric.h2d_pinned: no items"), std::string::npos) << out.str().substr(0, 2000);
  EXPECT_NE(out.str().find("--exclude '^pcie/'"), std::string::npos);  // in the written command line
  for (const char* bad : {"(", "."}) {
    CalibrateFlags b = f;
    b.exclude = bad;
    std::ostringstream bout, berr;
    EXPECT_EQ(RunCalibrate(b, bout, berr), 2) << bad;
    EXPECT_NE(berr.str().find("--exclude '"), std::string::npos) << berr.str();
  }
}

TEST(CalibrateCommandTest, WritesACalibrationThatCompareAndCollectiveAccept) {
  const std::string calib = TempPath("calib.textproto");
  std::ostringstream out, err;
  CalibrateFlags f;
  f.traces = {kTrace};
  f.output = calib;
  ASSERT_EQ(RunCalibrate(f, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("fabric.h2d_pinned.bandwidth_gbps"), std::string::npos);
  EXPECT_NE(out.str().find("points"), std::string::npos);
  auto c = ReadCalibration(calib);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_GT(c->fabric().h2d_pinned().bandwidth_gbps(), 40);
  EXPECT_GT(c->fitted_size(), 10);
  // Provenance: the box of the trace (traces/README.md: 1x NVIDIA H200, NCCL 2.28.3, driver 580.159.04).
  EXPECT_EQ(c->source(), kTrace);
  ASSERT_TRUE(c->has_provenance());
  EXPECT_EQ(c->provenance().gpu_name(), "NVIDIA H200");
  EXPECT_EQ(c->provenance().gpu_count(), 1);
  EXPECT_EQ(c->provenance().nccl_version(), "2.28.3");
  EXPECT_EQ(c->provenance().driver_version(), "580.159.04");
  EXPECT_FALSE(c->provenance().hostname().empty());
  ASSERT_EQ(c->provenance().traces_size(), 1);
  EXPECT_EQ(c->provenance().traces(0), kTrace);

  std::ostringstream cout_, cerr_;
  CompareFlags cf;
  cf.trace = kTrace;
  cf.calibration = calib;
  cf.json = true;
  ASSERT_EQ(RunCompare(cf, cout_, cerr_), 0) << cerr_.str();
  EXPECT_EQ(cerr_.str().find("warning"), std::string::npos) << cerr_.str();  // fitted on this very box
  auto j = nlohmann::json::parse(cout_.str());
  ASSERT_TRUE(j.contains("suites"));
  ASSERT_TRUE(j.contains("items"));
  EXPECT_EQ(j["suites"].size(), 4u);
  for (const auto& s : j["suites"]) {
    EXPECT_TRUE(s.contains("median_abs_error") && s.contains("p90_abs_error") && s.contains("max_abs_error"));
  }
  // Every item is either predicted or listed as not simulated, with a reason.
  EXPECT_EQ(j["items"].size() + j["not_simulated"].size(), 563u);
  for (const auto& n : j["not_simulated"]) EXPECT_FALSE(n["reason"].get<std::string>().empty());

  std::ostringstream kout, kerr;
  CollectiveFlags k;
  k.hardware = "configs/hardware/rtxpro6000-4x-pcie-switch.textproto";
  k.algo = "ring";
  k.sizes = "1M";
  k.calibration = calib;
  EXPECT_EQ(RunCollective(k, kout, kerr), 0) << kerr.str();
}

TEST(CompareCommandTest, OneSeedHoldoutSvgAndMaxError) {
  const std::string svg = TempPath("compare.svg");
  std::ostringstream out, err;
  CompareFlags f;
  f.trace = kTrace;
  f.holdout = 0.3;
  f.seed = 1;
  f.seed_given = true;
  f.svg = svg;
  ASSERT_EQ(RunCompare(f, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("held-out 30% (seed 1)"), std::string::npos);
  std::ifstream in(svg);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(text.find("</svg>"), std::string::npos);
  // Same seed, same output.
  std::ostringstream again, err2;
  f.svg.clear();
  ASSERT_EQ(RunCompare(f, again, err2), 0);
  EXPECT_EQ(again.str(), out.str());
  // A bound no suite meets.
  f.max_error = 1e-6;
  std::ostringstream o3, e3;
  EXPECT_EQ(RunCompare(f, o3, e3), 1);
  EXPECT_NE(e3.str().find("--max-error"), std::string::npos);
  // Issue 15, item 8: a NaN bound could never fail; it is refused.
  f.max_error = std::nan("");
  std::ostringstream o4, e4;
  EXPECT_EQ(RunCompare(f, o4, e4), 2);
  EXPECT_NE(e4.str().find("--max-error nan: must be a finite number >= 0"), std::string::npos) << e4.str();
  // Issue 43: infinity could never fail either; 0 is a bound (any error fails it), not "no check".
  f.max_error = std::numeric_limits<double>::infinity();
  std::ostringstream o5, e5;
  EXPECT_EQ(RunCompare(f, o5, e5), 2);
  EXPECT_NE(e5.str().find("--max-error inf: must be a finite number >= 0"), std::string::npos) << e5.str();
  f.max_error = 0;
  std::ostringstream o6, e6;
  EXPECT_EQ(RunCompare(f, o6, e6), 1) << e6.str();
  f.max_error.reset();
  std::ostringstream o7, e7;
  EXPECT_EQ(RunCompare(f, o7, e7), 0) << e7.str();
}

nlohmann::json CompareJson(CompareFlags f) {
  f.json = true;
  std::ostringstream out, err;
  EXPECT_EQ(RunCompare(f, out, err), 0) << err.str();
  return nlohmann::json::parse(out.str());
}

// --holdout alone: the median over seeds 1..10 with the spread; items of seed 1 only.
TEST(CompareCommandTest, HoldoutSummarisesSeedsOneToTen) {
  CompareFlags f;
  f.trace = kTrace;
  f.holdout = 0.3;
  std::ostringstream out, err;
  ASSERT_EQ(RunCompare(f, out, err), 0) << err.str();
  const std::string text = out.str();
  EXPECT_NE(text.find("median-of-medians"), std::string::npos) << text;
  EXPECT_NE(text.find("median-of-p90s"), std::string::npos) << text;
  EXPECT_NE(text.find("held-out items of seed 1 only"), std::string::npos) << text;
  EXPECT_NE(text.find("fitted on 70% of " + kTrace + "'s items, errors on the held-out 30%, seeds 1..10"),
            std::string::npos)
      << text;

  const nlohmann::json j = CompareJson(f);
  EXPECT_EQ(j["seeds"], 10);
  EXPECT_EQ(j["items_seed"], 1);
  ASSERT_EQ(j["suites"].size(), 4u);
  double largest = 0;
  for (const auto& s : j["suites"]) {
    SCOPED_TRACE(s["suite"].get<std::string>());
    EXPECT_EQ(s["seeds"], 10);
    EXPECT_GT(s["n"].get<int>(), 0);
    std::vector<double> m = s["median_abs_error_per_seed"];
    ASSERT_EQ(m.size(), 10u);
    std::sort(m.begin(), m.end());
    EXPECT_DOUBLE_EQ(s["median_abs_error_median"].get<double>(), (m[4] + m[5]) / 2);
    EXPECT_DOUBLE_EQ(s["median_abs_error_min"].get<double>(), m[0]);
    EXPECT_DOUBLE_EQ(s["median_abs_error_max"].get<double>(), m[9]);
    EXPECT_TRUE(s.contains("p90_abs_error_median"));
    largest = std::max(largest, s["median_abs_error_median"].get<double>());
  }
  // The item rows are exactly seed 1's held-out items, once each (not every seed's).
  CompareFlags one = f;
  one.seed = 1;
  one.seed_given = true;
  const nlohmann::json j1 = CompareJson(one);
  EXPECT_EQ(j["items"], j1["items"]);
  EXPECT_EQ(j["not_simulated"], j1["not_simulated"]);
  // Seed 1 alone is another figure than the median over the seeds.
  bool differs = false;
  for (size_t i = 0; i < j1["suites"].size(); ++i)
    differs |= j1["suites"][i]["median_abs_error"] != j["suites"][i]["median_abs_error_median"];
  EXPECT_TRUE(differs);

  // --max-error applies to the median over the seeds: just above the largest median passes (even
  // where one seed's median is above it), just below fails.
  f.max_error = largest * 1.001;
  std::ostringstream o2, e2;
  EXPECT_EQ(RunCompare(f, o2, e2), 0) << e2.str();
  f.max_error = largest * 0.999;
  std::ostringstream o3, e3;
  EXPECT_EQ(RunCompare(f, o3, e3), 1);
  EXPECT_NE(e3.str().find("median over the seeds"), std::string::npos) << e3.str();

  // --seeds N uses seeds 1..N.
  f.max_error.reset();
  f.seeds = 3;
  const nlohmann::json j3 = CompareJson(f);
  EXPECT_EQ(j3["seeds"], 3);
  for (size_t i = 0; i < j3["suites"].size(); ++i) {
    std::vector<double> three = j3["suites"][i]["median_abs_error_per_seed"];
    std::vector<double> ten = j["suites"][i]["median_abs_error_per_seed"];
    ASSERT_EQ(three.size(), 3u);
    EXPECT_EQ(three, std::vector<double>(ten.begin(), ten.begin() + 3));
  }
}

TEST(CompareCommandTest, WarnsWhenTheCalibrationIsFromAnotherBoxOrHasNoProvenance) {
  const std::string calib = TempPath("prov_calib.textproto");
  {
    std::ostringstream out, err;
    CalibrateFlags c;
    c.traces = {kTrace};
    c.output = calib;
    ASSERT_EQ(RunCalibrate(c, out, err), 0) << err.str();
  }
  auto c = ReadCalibration(calib);
  ASSERT_TRUE(c.ok());
  auto write = [](const std::string& path, const config::Calibration& cal) {
    std::string text;
    google::protobuf::TextFormat::PrintToString(cal, &text);
    std::ofstream(path) << text;
  };
  config::Calibration two = *c;
  two.mutable_provenance()->set_gpu_count(2);
  const std::string two_path = TempPath("prov_two.textproto");
  write(two_path, two);
  config::Calibration old = *c;
  old.clear_provenance();
  const std::string old_path = TempPath("prov_old.textproto");
  write(old_path, old);

  CompareFlags f;
  f.trace = kTrace;
  f.calibration = two_path;
  std::ostringstream o1, e1;
  EXPECT_EQ(RunCompare(f, o1, e1), 0) << e1.str();
  EXPECT_NE(e1.str().find("warning: calibration " + two_path + " was fitted on 2x NVIDIA H200 (" + kTrace +
                          "); this trace is from 1x NVIDIA H200: GPU count: 2 in the calibration, 1 in the trace"),
            std::string::npos)
      << e1.str();
  EXPECT_EQ(o1.str().find("warning"), std::string::npos);  // on stderr only

  f.calibration = old_path;
  std::ostringstream o2, e2;
  EXPECT_EQ(RunCompare(f, o2, e2), 0) << e2.str();
  EXPECT_NE(e2.str().find("warning: calibration " + old_path + " records no provenance"), std::string::npos)
      << e2.str();

  // A warning never changes the exit code: --max-error still decides it.
  f.holdout = 0.3;
  f.seeds = 2;
  f.max_error = 1e-6;
  std::ostringstream o3, e3;
  EXPECT_EQ(RunCompare(f, o3, e3), 1);
  EXPECT_NE(e3.str().find("records no provenance"), std::string::npos);
}

// `specsim compare TRACE --calibration CALIB --json`, parsed; nullopt on a non-zero exit. `err`
// receives what it wrote on stderr either way.
std::optional<nlohmann::json> CompareJson(const std::string& trace, const std::string& calib, std::string* err) {
  CompareFlags f;
  f.trace = trace;
  f.calibration = calib;
  f.json = true;
  std::ostringstream out, e;
  const int rc = RunCompare(f, out, e);
  *err = e.str();
  if (rc != 0) return std::nullopt;
  return nlohmann::json::parse(out.str());
}

// The committed calibration of the 2x H200 box (configs/calibration/h200-2x.textproto, fitted on
// all six traces h200-2x-*-2026-11-30) predicts every one of them, the SHM items through the SHM
// path and the NVLink items over NVLink, within issue 9's bounds: suite medians pcie <= 5%,
// collectives <= 10%, decode <= 10% (kernels <= 6%, pacing <= 10%), every suite's p90 <= 25%. A
// change to the model or to the fit that breaks one trace's items fails here. No warning either:
// the calibration's provenance is the box of every trace.
TEST(CompareCommandTest, CommittedTwoGpuCalibrationPredictsEveryTwoGpuTrace) {
  const std::string calib = std::string(SPECSIM_SOURCE_DIR) + "/configs/calibration/h200-2x.textproto";
  const std::map<std::string, double> median_bound = {
      {"pcie", 0.05}, {"collectives", 0.10}, {"kernels", 0.06}, {"decode", 0.10}, {"pacing", 0.10}};
  int traces = 0;
  for (const char* env : {"default", "shm", "ll", "simple", "shm-ll", "shm-simple"}) {
    const std::string trace = std::string(SPECSIM_SOURCE_DIR) + "/traces/h200-2x-" + env + "-2026-11-30.pb";
    SCOPED_TRACE(trace);
    std::string err;
    const std::optional<nlohmann::json> compared = CompareJson(trace, calib, &err);
    ASSERT_TRUE(compared.has_value()) << err;
    EXPECT_EQ(err.find("warning"), std::string::npos) << err;
    const nlohmann::json& j = *compared;
    ASSERT_FALSE(j["suites"].empty());
    for (const auto& s : j["suites"]) {
      const std::string suite = s["suite"];
      auto b = median_bound.find(suite);
      ASSERT_NE(b, median_bound.end()) << suite;
      EXPECT_LT(s["median_abs_error"].get<double>(), b->second) << suite;
      EXPECT_LT(s["p90_abs_error"].get<double>(), 0.25) << suite;
    }
    ++traces;
  }
  EXPECT_EQ(traces, 6);
}

// The same calibration against measurements it never saw: the decode and pacing suites run three
// times in a row per NCCL environment on a fresh 2x H200 machine the next day (traces/repeat/,
// made after specsim-validate's decode loop moved to flash_mma attention and gained verify-width
// sweeps). Per run (h200-2x-repeat-*-2026-12-01-r1..r3): TP decode in every capture mode within 10%
// (medians 1.7-5.4%), and the GPU-bound loops (graph-captured layer loops, loops with a slow
// rank) within 10% (1.6-8.3%). Not bounded: the host-bound loops (eager, balanced ranks, no slow
// rank), 12-28% off: this machine's host threads issued 15-40% faster than the calibration
// day's, and these loops are not repeatable to 10% on one machine either (the same loop three
// times in a row: spreads up to 37%; traces/README.md). Host costs are a property of the running
// host; GPU-side costs carry over.
TEST(CompareCommandTest, CommittedTwoGpuCalibrationPredictsLaterRunsOnAnotherMachine) {
  const std::string calib = std::string(SPECSIM_SOURCE_DIR) + "/configs/calibration/h200-2x.textproto";
  const std::vector<std::string> bounded = {"decode eager",
                                            "decode graph",
                                            "decode piecewise",
                                            "pacing layers graph balanced",
                                            "pacing layers graph slow rank",
                                            "pacing layers eager slow rank"};
  int traces = 0;
  for (const char* env : {"default", "shm"}) {
    for (int run = 1; run <= 3; ++run) {
      const std::string trace =
          fmt::format("{}/traces/repeat/h200-2x-repeat-{}-2026-12-01-r{}.pb", SPECSIM_SOURCE_DIR, env, run);
      SCOPED_TRACE(trace);
      std::string err;
      const std::optional<nlohmann::json> compared = CompareJson(trace, calib, &err);
      ASSERT_TRUE(compared.has_value()) << err;
      const nlohmann::json& j = *compared;
      std::map<std::string, double> median;
      for (const auto& r : j["regimes"]) median[r["regime"].get<std::string>()] = r["median_abs_error"].get<double>();
      for (const std::string& regime : bounded) {
        ASSERT_TRUE(median.count(regime)) << regime;
        EXPECT_LT(median[regime], 0.10) << regime;
      }
      for (const auto& s : j["suites"])
        if (s["suite"] == "decode") EXPECT_LT(s["median_abs_error"].get<double>(), 0.10);
      ++traces;
    }
  }
  EXPECT_EQ(traces, 6);
}

// A trace whose D2H copies all have one size cannot separate that class's latency from its
// bandwidth: the class keeps its defaults, listed, and the rest of the trace is fitted.
TEST(CalibrateCommandTest, KeepsTheDefaultsOfAnUndeterminedGroup) {
  trace::Trace t;
  t.set_schema_version(1);
  trace::Gpu* g = t.mutable_environment()->add_gpus();
  g->set_name("NVIDIA H200");
  g->set_sm_count(132);
  g->set_memory_bytes(int64_t{141} << 30);
  g->set_compute_capability_major(9);
  for (int i = 0; i < 3; ++i) {
    trace::Item* it = t.add_items();
    it->set_suite(trace::SUITE_PCIE);
    it->set_kind(trace::KIND_D2H_COPY);
    it->set_name("d2h/" + std::to_string(i));
    it->mutable_transfer()->set_bytes(4096);
    it->mutable_transfer()->set_direction(trace::DIRECTION_D2H);
    it->mutable_transfer()->set_host_memory(trace::HOST_PINNED);
    it->mutable_stats()->set_median_us(4 + 0.1 * i);
  }
  const std::string path = TempPath("one_size.pb");
  {
    std::ofstream f(path, std::ios::binary);
    t.SerializeToOstream(&f);
  }
  auto in = calib::LoadCalibInputs(path, "", "");
  ASSERT_TRUE(in.ok()) << in.status().ToString();
  const calib::TransferClass kept = in->params.fabric.d2h_pinned;

  const std::string calib = TempPath("one_size.textproto");
  std::ostringstream out, err;
  CalibrateFlags f;
  f.traces = {path};
  f.output = calib;
  ASSERT_EQ(RunCalibrate(f, out, err), 0) << err.str();
  const std::string text = out.str();
  const size_t heading = text.find("not fitted: these parameters keep their defaults");
  ASSERT_NE(heading, std::string::npos) << text;
  EXPECT_NE(text.find("fabric.d2h_pinned.latency_ns: not separable by the items used", heading), std::string::npos)
      << text;
  EXPECT_NE(text.find(fmt::format("fabric.d2h_pinned.latency_ns = {:.6g}", kept.latency_ns), heading),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(fmt::format("fabric.d2h_pinned.bandwidth_gbps = {:.6g}", kept.bandwidth_gbps), heading),
            std::string::npos)
      << text;
  // The written calibration carries the defaults for the class, and does not list it as fitted.
  auto c = ReadCalibration(calib);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_DOUBLE_EQ(c->fabric().d2h_pinned().latency_ns(), kept.latency_ns);
  for (const auto& v : c->fitted()) EXPECT_NE(v.name().rfind("fabric.d2h_pinned", 0), 0u) << v.name();
}

TEST(CalibrateCommandTest, KeptDefaultsResolveNamesToTheirValues) {
  calib::FitResult fit;
  fit.params.fabric.duplex_factor = 0.85;
  fit.params.fabric.multi_stream_overhead_ns = 0;
  fit.params.fabric.copy_engines_per_direction = 2;
  fit.not_fitted = {"fabric.duplex_factor, fabric.multi_stream_overhead_ns: no bidirectional copies (default kept)",
                    "fabric.copy_engines_per_direction: no concurrent-copy items (default kept)",
                    "fabric.p2p (per path class): no GPU-to-GPU items",
                    "fabric.copy_engines_per_direction: no concurrent-copy items (default kept)"};
  const std::vector<KeptDefault> k = KeptDefaults(fit);
  ASSERT_EQ(k.size(), 3u);  // the repeated entry once
  EXPECT_EQ(k[0].names, "fabric.duplex_factor, fabric.multi_stream_overhead_ns");
  EXPECT_EQ(k[0].reason, "no bidirectional copies (default kept)");
  EXPECT_EQ(k[0].values,
            (std::vector<std::string>{"fabric.duplex_factor = 0.85",
                                      "fabric.multi_stream_overhead_ns = 0 (written as unset: readers use the built-in "
                                      "default)"}));
  EXPECT_EQ(k[1].values, std::vector<std::string>{"fabric.copy_engines_per_direction = 2"});
  EXPECT_TRUE(k[2].values.empty());
}

// Several traces of one box fitted together; traces of different boxes refused, naming both.
TEST(CalibrateCommandTest, SeveralTracesOfOneBox) {
  auto t = calib::LoadTrace(kTrace);
  ASSERT_TRUE(t.ok());
  const std::string a = TempPath("box-a.pb"), b = TempPath("box-b.pb"), other = TempPath("box-2gpu.pb");
  {
    std::ofstream fa(a, std::ios::binary), fb(b, std::ios::binary);
    t->SerializeToOstream(&fa);
    t->SerializeToOstream(&fb);
  }
  const std::string calib = TempPath("two_traces.textproto");
  std::ostringstream out, err;
  CalibrateFlags f;
  f.traces = {a, b};
  f.output = calib;
  ASSERT_EQ(RunCalibrate(f, out, err), 0) << err.str();
  EXPECT_NE(out.str().find(fmt::format("Calibration of {}, {} ({} items)", a, b, 2 * t->items_size())),
            std::string::npos)
      << out.str();
  auto c = ReadCalibration(calib);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->source(), a + "," + b);
  ASSERT_EQ(c->provenance().traces_size(), 2);
  EXPECT_EQ(c->provenance().traces(1), b);
  EXPECT_EQ(c->provenance().gpu_count(), 1);
  // The same measurements twice fit the same values as once.
  std::ostringstream o1, e1;
  CalibrateFlags single;
  single.traces = {kTrace};
  single.output = TempPath("one_trace.textproto");
  ASSERT_EQ(RunCalibrate(single, o1, e1), 0) << e1.str();
  auto c1 = ReadCalibration(single.output);
  ASSERT_TRUE(c1.ok());
  EXPECT_NEAR(c->fabric().h2d_pinned().bandwidth_gbps(), c1->fabric().h2d_pinned().bandwidth_gbps(), 1e-6);

  trace::Trace two = *t;
  *two.mutable_environment()->add_gpus() = two.environment().gpus(0);
  two.mutable_environment()->mutable_gpus(1)->set_index(1);  // a second GPU, not GPU 0 listed twice
  {
    std::ofstream fo(other, std::ios::binary);
    two.SerializeToOstream(&fo);
  }
  f.traces = {a, other};
  std::ostringstream o2, e2;
  EXPECT_EQ(RunCalibrate(f, o2, e2), 2);
  EXPECT_NE(e2.str().find(other + " and " + a + " are not from the same box"), std::string::npos) << e2.str();
  EXPECT_NE(e2.str().find("2 GPUs in " + other + ", 1 in " + a), std::string::npos) << e2.str();
}

TEST(HardwareFromTraceCommandTest, WritesAConfigTheLoaderAccepts) {
  const std::string path = TempPath("box.textproto");
  std::ostringstream out, err;
  HardwareFromTraceFlags f;
  f.trace = kTrace;
  f.output = path;
  ASSERT_EQ(RunHardwareFromTrace(f, out, err), 0) << err.str();
  auto t = io::LoadHardwareFile(path);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->name, "h200-1x");
  EXPECT_EQ(t->num_gpus(), 1);
}

TEST(CompareCommandTest, BadInputIsExitTwo) {
  std::ostringstream out, err;
  CompareFlags f;
  f.trace = "/nonexistent.pb";
  EXPECT_EQ(RunCompare(f, out, err), 2);
  f.trace = kTrace;
  f.holdout = 1.5;
  EXPECT_EQ(RunCompare(f, out, err), 2);
  f.holdout = 0.3;
  f.seeds = 0;
  EXPECT_EQ(RunCompare(f, out, err), 2);
  EXPECT_NE(err.str().find("--seeds 0"), std::string::npos) << err.str();
  CalibrateFlags c;
  EXPECT_EQ(RunCalibrate(c, out, err), 2);  // no trace
}

// nccl-transport on the 2x H200's LL calls over NVLink and SHM: both transfers are reported, each
// within its --max-error; JSON carries the shipped fields; bad input is exit 2 naming the flag or file.
TEST(NcclTransportCommand, FitsOnOneTransportAndChecksTheOther) {
  const std::string src = SPECSIM_SOURCE_DIR;
  NcclTransportFlags f;
  f.traces = {src + "/traces/h200-2x-ll-2026-11-30.pb", src + "/traces/h200-2x-shm-ll-2026-11-30.pb"};
  f.hardware = src + "/configs/hardware/h200-2x-nvlink.textproto";
  f.calibration = src + "/configs/calibration/h200-2x.textproto";
  f.max_error = 0.25;
  std::ostringstream out, err;
  ASSERT_EQ(RunNcclTransport(f, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("transfer: fitted on p2p_nvlink"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("checked on shm"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("uncalibrated range"), std::string::npos) << out.str();
  f.json = true;
  std::ostringstream jout, jerr;
  ASSERT_EQ(RunNcclTransport(f, jout, jerr), 0) << jerr.str();
  const nlohmann::json j = nlohmann::json::parse(jout.str());
  ASSERT_EQ(j["transfers"].size(), 2u);
  for (const auto& t : j["transfers"]) EXPECT_LT(t["median_abs_error"].get<double>(), 0.25);
  // A bound nothing meets is exit 1 and says which bound.
  f.json = false;
  f.max_error = 0;
  std::ostringstream o1, e1;
  EXPECT_EQ(RunNcclTransport(f, o1, e1), 1);
  EXPECT_NE(e1.str().find("--max-error"), std::string::npos) << e1.str();
  NcclTransportFlags bad = f;
  bad.max_bytes = "0";
  std::ostringstream o2, e2;
  EXPECT_EQ(RunNcclTransport(bad, o2, e2), 2);
  EXPECT_NE(e2.str().find("--max-bytes"), std::string::npos) << e2.str();
  bad = f;
  bad.max_bytes = "16";  // below every call: nothing in the latency regime
  std::ostringstream o3, e3;
  EXPECT_EQ(RunNcclTransport(bad, o3, e3), 2);
  EXPECT_NE(e3.str().find("nothing to fit"), std::string::npos) << e3.str();
  bad = f;
  bad.traces = {src + "/traces/no-such-trace.pb"};
  std::ostringstream o4, e4;
  EXPECT_EQ(RunNcclTransport(bad, o4, e4), 2);
  EXPECT_NE(e4.str().find("no-such-trace.pb"), std::string::npos) << e4.str();
}

}  // namespace
}  // namespace specsim::tools
