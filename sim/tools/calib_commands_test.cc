// specsim calibrate / compare / hardware-from-trace / collective --calibration through their
// testable runners, on the committed trace.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sim/io/hardware_loader.h"
#include "sim/tools/calib_setup.h"
#include "sim/tools/calibrate_command.h"
#include "sim/tools/collective_command.h"
#include "sim/tools/compare_command.h"
#include "sim/tools/hardware_from_trace_command.h"
#include "specsim/trace.pb.h"

namespace specsim::tools {
namespace {

const std::string kTrace = std::string(SPECSIM_SOURCE_DIR) + "/traces/h200-1x-2026-11-29.pb";

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("specsim_calib_" + name)).string();
}

TEST(CalibrateCommandTest, WritesACalibrationThatCompareAndCollectiveAccept) {
  const std::string calib = TempPath("calib.textproto");
  std::ostringstream out, err;
  CalibrateFlags f;
  f.trace = kTrace;
  f.output = calib;
  ASSERT_EQ(RunCalibrate(f, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("fabric.h2d_pinned.bandwidth_gbps"), std::string::npos);
  EXPECT_NE(out.str().find("points"), std::string::npos);
  auto c = LoadCalibrationFile(calib);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_GT(c->fabric().h2d_pinned().bandwidth_gbps(), 40);
  EXPECT_GT(c->fitted_size(), 10);

  std::ostringstream cout_, cerr_;
  CompareFlags cf;
  cf.trace = kTrace;
  cf.calibration = calib;
  cf.json = true;
  ASSERT_EQ(RunCompare(cf, cout_, cerr_), 0) << cerr_.str();
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

TEST(CompareCommandTest, HoldoutSvgAndMaxError) {
  const std::string svg = TempPath("compare.svg");
  std::ostringstream out, err;
  CompareFlags f;
  f.trace = kTrace;
  f.holdout = 0.3;
  f.seed = 1;
  f.svg = svg;
  ASSERT_EQ(RunCompare(f, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("held-out 30%"), std::string::npos);
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
}

TEST(CalibrateCommandTest, RefusesAnUndeterminedParameter) {
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
  std::ostringstream out, err;
  CalibrateFlags f;
  f.trace = path;
  EXPECT_EQ(RunCalibrate(f, out, err), 2);
  EXPECT_NE(err.str().find("cannot determine fabric.d2h_pinned.latency_ns"), std::string::npos) << err.str();
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
}

}  // namespace
}  // namespace specsim::tools
