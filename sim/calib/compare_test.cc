// Tests of the hold-out summary over seeds (compare.h), merging traces of one box and the
// calibration provenance checks (trace_io.h). Suite names carry "Calib" / "Compare" so that
// `ctest -R "calib|Calib|compare|Compare"` runs them.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "sim/calib/compare.h"
#include "sim/calib/params.h"
#include "sim/calib/predictors.h"
#include "sim/calib/test_traces.h"
#include "sim/calib/trace_io.h"
#include "sim/io/hardware_loader.h"

namespace specsim::calib {
namespace {

using testing::AddCopy;
using testing::AddGemm;
using testing::H200;

// Copies of many sizes in both directions and GEMMs of several shapes, "measured" as the
// predictor's time under shifted parameters times a deterministic +-(0..12)% wobble, so that
// held-out errors are non-zero and differ between splits.
trace::Trace SyntheticTrace(const net::Topology& topo) {
  trace::Trace t;
  t.set_schema_version(1);
  trace::Gpu* g = t.mutable_environment()->add_gpus();
  g->set_name("NVIDIA H200");
  g->set_async_engine_count(3);
  for (int i = 0; i < 16; ++i) {
    AddCopy(&t, trace::DIRECTION_H2D, int64_t{1} << (2 + 2 * i % 27));
    AddCopy(&t, trace::DIRECTION_D2H, int64_t{3} << (1 + 2 * i % 27));
  }
  for (int64_t n : {4096, 14336, 28672})
    for (int64_t m : {1, 8, 64, 512, 4096}) AddGemm(&t, m, n, 4096);
  CalibParams truth = DefaultParams(topo, 0);
  truth.fabric.h2d_pinned = {4300, 55.0};
  truth.fabric.d2h_pinned = {3500, 56.5};
  truth.compute.gemm_compute_efficiency = 0.7;
  const trace::Trace copy = t;
  Predictor p(copy, topo, truth);
  for (int i = 0; i < t.items_size(); ++i) {
    Prediction pr = p.Predict(t.items(i));
    EXPECT_TRUE(pr.simulated) << t.items(i).name() << ": " << pr.reason;
    const double wobble = 1 + 0.12 * std::sin(1.7 * i + 0.3);
    t.mutable_items(i)->mutable_stats()->set_median_us(pr.predicted_us * wobble);
  }
  return t;
}

TEST(CompareHoldoutSeedsTest, SummaryIsTheMedianOverSeedsOneToNOfOneByOneComparisons) {
  const net::Topology topo = H200();
  const trace::Trace t = SyntheticTrace(topo);
  const CalibParams start = DefaultParams(topo, 0);
  const int seeds = 6;  // even: the median interpolates between the 3rd and 4th value
  auto summary = CompareHoldoutSeeds(t, topo, start, 0.3, seeds);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  ASSERT_EQ(summary->per_seed.size(), static_cast<size_t>(seeds));
  ASSERT_EQ(summary->suites.size(), 2u);
  EXPECT_EQ(summary->suites[0].suite, "pcie");
  EXPECT_EQ(summary->suites[1].suite, "kernels");
  // The reference: Compare seed by seed, 1..N.
  std::map<std::string, std::vector<double>> medians, p90s;
  for (int seed = 1; seed <= seeds; ++seed) {
    CompareOptions o;
    o.holdout = 0.3;
    o.seed = static_cast<uint64_t>(seed);
    auto r = Compare(t, topo, start, o);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    // per_seed[seed - 1] is this seed's comparison: same held-out items, same errors.
    const ComparisonResult& mine = summary->per_seed[static_cast<size_t>(seed - 1)];
    ASSERT_EQ(mine.items.size(), r->items.size());
    for (size_t i = 0; i < r->items.size(); ++i) {
      EXPECT_EQ(mine.items[i].index, r->items[i].index) << "seed " << seed;
      EXPECT_DOUBLE_EQ(mine.items[i].error, r->items[i].error) << "seed " << seed;
    }
    for (const SuiteStats& s : r->suites) {
      medians[s.suite].push_back(s.median_abs_error);
      p90s[s.suite].push_back(s.p90_abs_error);
    }
  }
  for (const SuiteSeedSummary& s : summary->suites) {
    SCOPED_TRACE(s.suite);
    std::vector<double> m = medians[s.suite], p = p90s[s.suite];
    ASSERT_EQ(m.size(), static_cast<size_t>(seeds));
    EXPECT_EQ(s.seeds, seeds);
    EXPECT_EQ(s.median_abs_error_per_seed, m);
    std::sort(m.begin(), m.end());
    std::sort(p.begin(), p.end());
    EXPECT_DOUBLE_EQ(s.median_abs_error_median, (m[2] + m[3]) / 2);
    EXPECT_DOUBLE_EQ(s.median_abs_error_min, m.front());
    EXPECT_DOUBLE_EQ(s.median_abs_error_max, m.back());
    EXPECT_DOUBLE_EQ(s.p90_abs_error_median, (p[2] + p[3]) / 2);
    // The splits differ, so the spread is real; n is the held-out count round(0.3 * suite size).
    EXPECT_LT(s.median_abs_error_min, s.median_abs_error_max);
    EXPECT_EQ(s.n_min, s.n_max);
    EXPECT_EQ(s.n_min, s.suite == "pcie" ? 10 : 5);  // round(0.3 * 32), round(0.3 * 15)
  }
}

TEST(CompareHoldoutSeedsTest, RefusesNoHoldoutAndNoSeeds) {
  const net::Topology topo = H200();
  const trace::Trace t = SyntheticTrace(topo);
  auto zero = CompareHoldoutSeeds(t, topo, DefaultParams(topo, 0), 0, 10);
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.status().message().find("(0, 1)"), std::string::npos) << zero.status().message();
  EXPECT_FALSE(CompareHoldoutSeeds(t, topo, DefaultParams(topo, 0), 1, 10).ok());
  EXPECT_FALSE(CompareHoldoutSeeds(t, topo, DefaultParams(topo, 0), 0.3, 0).ok());
}

TEST(CompareSuiteStatisticsTest, PacingAfterTheOthersAndUnknownSuitesKept) {
  std::vector<ItemResult> items;
  for (const char* suite : {"pacing", "other", "pcie", "decode"}) {
    ItemResult r;
    r.suite = suite;
    r.simulated = true;
    r.error = -0.1;
    items.push_back(r);
  }
  const std::vector<SuiteStats> s = SuiteStatistics(items);
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0].suite, "pcie");
  EXPECT_EQ(s[1].suite, "decode");
  EXPECT_EQ(s[2].suite, "pacing");
  EXPECT_EQ(s[3].suite, "other");
  EXPECT_DOUBLE_EQ(s[2].median_abs_error, 0.1);
  EXPECT_STREQ(SuiteName(trace::SUITE_PACING), "pacing");
}

trace::Trace Box(int gpus, const std::string& name) {
  trace::Trace t;
  t.set_schema_version(1);
  trace::Environment* env = t.mutable_environment();
  env->set_hostname("box-a");
  env->set_nccl_version("2.28.3");
  env->set_driver_version("580.159.04");
  for (int i = 0; i < gpus; ++i) {
    trace::Gpu* g = env->add_gpus();
    g->set_index(i);
    g->set_name(name);
  }
  return t;
}

TEST(CalibMergeTracesTest, PrefixesNamesMergesModelsAndKeepsTheFirstEnvironment) {
  trace::Trace a = Box(2, "NVIDIA H200"), b = Box(2, "NVIDIA H200");
  (*b.mutable_environment()->mutable_nccl_env())["NCCL_PROTO"] = "LL";  // another NCCL setting: fine
  b.mutable_environment()->set_hostname("box-a-again");
  AddCopy(&a, trace::DIRECTION_H2D, 4)->set_name("pcie/h2d/4B");
  AddCopy(&a, trace::DIRECTION_D2H, 4)->set_name("pcie/d2h/4B");
  AddCopy(&b, trace::DIRECTION_H2D, 4)->set_name("pcie/h2d/4B");  // same name in both traces
  a.add_models()->set_name("llama");
  a.mutable_models(0)->set_layers(32);
  *b.add_models() = a.models(0);
  b.add_models()->set_name("qwen");
  b.add_notes()->set_message("skipped decode");
  auto m = MergeTraces({{"traces/h200-2x-a.pb", a}, {"/tmp/x/h200-2x-b.pb", b}});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ(m->items_size(), 3);
  EXPECT_EQ(m->items(0).name(), "h200-2x-a/pcie/h2d/4B");
  EXPECT_EQ(m->items(1).name(), "h200-2x-a/pcie/d2h/4B");
  EXPECT_EQ(m->items(2).name(), "h200-2x-b/pcie/h2d/4B");
  EXPECT_EQ(m->items(2).kind(), trace::KIND_H2D_COPY);  // the item itself is unchanged
  ASSERT_EQ(m->models_size(), 2);
  EXPECT_EQ(m->models(0).name(), "llama");
  EXPECT_EQ(m->models(1).name(), "qwen");
  EXPECT_EQ(m->environment().hostname(), "box-a");
  EXPECT_EQ(m->environment().nccl_env_size(), 0);
  ASSERT_EQ(m->notes_size(), 1);
  EXPECT_EQ(m->notes(0).message(), "h200-2x-b: skipped decode");
  // One trace: unchanged, names not prefixed.
  auto one = MergeTraces({{"traces/h200-2x-a.pb", a}});
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->items(0).name(), "pcie/h2d/4B");
  EXPECT_FALSE(MergeTraces({}).ok());
}

TEST(CalibMergeTracesTest, RefusesOtherBoxesDifferingModelsAndCollidingStems) {
  trace::Trace a = Box(2, "NVIDIA H200");
  AddCopy(&a, trace::DIRECTION_H2D, 4);
  auto count = MergeTraces({{"a.pb", a}, {"b.pb", Box(1, "NVIDIA H200")}});
  ASSERT_FALSE(count.ok());
  const std::string& cm = count.status().message();
  EXPECT_NE(cm.find("a.pb"), std::string::npos) << cm;
  EXPECT_NE(cm.find("b.pb"), std::string::npos) << cm;
  EXPECT_NE(cm.find("1 GPUs in b.pb, 2 in a.pb"), std::string::npos) << cm;

  trace::Trace other = Box(2, "NVIDIA H200");
  other.mutable_environment()->mutable_gpus(1)->set_name("NVIDIA H100 80GB HBM3");
  auto name = MergeTraces({{"a.pb", a}, {"c.pb", other}});
  ASSERT_FALSE(name.ok());
  EXPECT_NE(name.status().message().find("environment.gpus[1].name"), std::string::npos) << name.status().message();
  EXPECT_NE(name.status().message().find("NVIDIA H100 80GB HBM3"), std::string::npos) << name.status().message();

  trace::Trace m1 = a, m2 = Box(2, "NVIDIA H200");
  m1.add_models()->set_name("llama");
  m1.mutable_models(0)->set_layers(32);
  *m2.add_models() = m1.models(0);
  m2.mutable_models(0)->set_layers(80);
  auto model = MergeTraces({{"a.pb", m1}, {"d.pb", m2}});
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.status().message().find("model 'llama'"), std::string::npos) << model.status().message();
  EXPECT_NE(model.status().message().find("d.pb and a.pb"), std::string::npos) << model.status().message();

  auto stems = MergeTraces({{"x/a.pb", a}, {"y/a.pb", a}});
  ASSERT_FALSE(stems.ok());
  EXPECT_NE(stems.status().message().find("file stem 'a'"), std::string::npos) << stems.status().message();
}

TEST(CalibProvenanceTest, FromTraceAndMismatchesAgainstATrace) {
  const trace::Trace one = Box(1, "NVIDIA H200");
  config::Calibration c;
  EXPECT_FALSE(HasProvenance(c));
  const std::string none = CalibrationWarning(c, "old.textproto", one);
  EXPECT_NE(none.find("warning: calibration old.textproto records no provenance"), std::string::npos) << none;
  EXPECT_TRUE(CalibrationMismatches(c, one).empty());

  *c.mutable_provenance() = ProvenanceFromTrace(one, {"traces/h200-1x.pb"});
  EXPECT_TRUE(HasProvenance(c));
  EXPECT_EQ(c.provenance().gpu_name(), "NVIDIA H200");
  EXPECT_EQ(c.provenance().gpu_count(), 1);
  EXPECT_EQ(c.provenance().hostname(), "box-a");
  EXPECT_EQ(c.provenance().nccl_version(), "2.28.3");
  EXPECT_EQ(c.provenance().driver_version(), "580.159.04");
  ASSERT_EQ(c.provenance().traces_size(), 1);
  // Same box: nothing to say.
  EXPECT_TRUE(CalibrationMismatches(c, one).empty());
  EXPECT_EQ(CalibrationWarning(c, "c.textproto", one), "");

  const std::string two = CalibrationWarning(c, "c.textproto", Box(2, "NVIDIA H200"));
  EXPECT_EQ(two,
            "warning: calibration c.textproto was fitted on 1x NVIDIA H200 (traces/h200-1x.pb); this trace is from "
            "2x NVIDIA H200: GPU count: 1 in the calibration, 2 in the trace");
  const std::vector<std::string> gpu = CalibrationMismatches(c, Box(1, "NVIDIA H100 80GB HBM3"));
  ASSERT_EQ(gpu.size(), 1u);
  EXPECT_EQ(gpu[0], "GPU: NVIDIA H200 in the calibration, NVIDIA H100 80GB HBM3 in the trace");
}

TEST(CalibProvenanceTest, MismatchesAgainstAHardwareConfigsGpuModel) {
  config::Calibration c;
  *c.mutable_provenance() = ProvenanceFromTrace(Box(2, "NVIDIA H200"), {"a.pb"});
  // Hardware configs name GPU models ("H200"), traces CUDA devices ("NVIDIA H200").
  EXPECT_TRUE(CalibrationMismatches(c, "H200", 2).empty());
  EXPECT_EQ(CalibrationWarning(c, "c.textproto", "H200", 2), "");
  EXPECT_EQ(CalibrationMismatches(c, "H200", 8).size(), 1u);
  const std::vector<std::string> rtx = CalibrationMismatches(c, "RTX PRO 6000 Blackwell Server Edition", 2);
  ASSERT_EQ(rtx.size(), 1u);
  EXPECT_NE(rtx[0].find("RTX PRO 6000 Blackwell Server Edition in the hardware config"), std::string::npos) << rtx[0];
  const std::string w = CalibrationWarning(c, "c.textproto", "H100 SXM", 4);
  EXPECT_NE(w.find("this box has 4x H100 SXM"), std::string::npos) << w;
  EXPECT_NE(w.find("GPU count: 2 in the calibration, 4 in the hardware config"), std::string::npos) << w;
  EXPECT_NE(CalibrationWarning(config::Calibration(), "c.textproto", "H200", 2).find("records no provenance"),
            std::string::npos);
}

}  // namespace
}  // namespace specsim::calib

namespace specsim::calib {
namespace {

trace::Item* AddAttention(trace::Trace* t, int batch, int q, int64_t context, double us) {
  trace::Item* it = testing::AddAttention(t, batch, q, context);
  it->set_name("kernels/attention/m/tp1/b" + std::to_string(batch) + "/q" + std::to_string(q) + "/ctx" +
               std::to_string(context));
  it->mutable_attention()->set_model("m");
  it->mutable_attention()->set_tp(1);
  it->mutable_stats()->set_median_us(us);
  return it;
}

ItemResult Result(int index, double measured, double predicted) {
  ItemResult r;
  r.index = index;
  r.suite = "kernels";
  r.simulated = true;
  r.measured_us = measured;
  r.predicted_us = predicted;
  r.error = (predicted - measured) / measured;
  return r;
}

TEST(VerifyWidthShapes, RatiosAreToTheGroupsQ1AndGroupsDifferOnlyInQ) {
  trace::Trace t;
  AddAttention(&t, 8, 1, 4096, 40);    // 0
  AddAttention(&t, 8, 4, 4096, 50);    // 1
  AddAttention(&t, 8, 16, 4096, 100);  // 2
  AddAttention(&t, 1, 4, 4096, 30);    // 3: another group without its q = 1: no shape
  std::vector<ItemResult> items = {Result(0, 40, 44), Result(1, 50, 55), Result(2, 100, 88), Result(3, 30, 30)};
  const std::vector<ShapeGroup> shapes = VerifyWidthShapes(t, items);
  ASSERT_EQ(shapes.size(), 1u);
  EXPECT_EQ(shapes[0].name, "kernels/attention/m/tp1/flash_mma/b8/ctx4096");
  ASSERT_EQ(shapes[0].points.size(), 3u);
  // q16: measured 100 / 40 = 2.5, predicted 88 / 44 = 2.0: -20%.
  EXPECT_EQ(shapes[0].points[2].q, 16);
  EXPECT_DOUBLE_EQ(shapes[0].points[2].measured_ratio, 2.5);
  EXPECT_DOUBLE_EQ(shapes[0].points[2].predicted_ratio, 2.0);
  EXPECT_NEAR(shapes[0].points[2].error, -0.2, 1e-12);
  // q4: 1.25 both ways: a level error alone (+10% everywhere) is no shape error.
  EXPECT_NEAR(shapes[0].points[1].error, 0.0, 1e-12);
}

TEST(RegimeStatistics, SplitsByQueryTokensAndBindingSide) {
  trace::Trace t;
  AddAttention(&t, 8, 1, 16384, 140);  // bandwidth-bound under the costs below
  AddAttention(&t, 8, 16, 4096, 110);
  AddAttention(&t, 8, 64, 4096, 240);
  std::vector<ItemResult> items = {Result(0, 140, 147), Result(1, 110, 99), Result(2, 240, 240)};
  compute::ComputeParams cp;
  compute::AttentionImplementation impl = compute::SpecsimValidateKernel("flash_mma").value();
  impl.tile_ns = 100;  // tile path cheap: the q = 1, 16K-context call streams the cache
  impl.row_ns = 1;
  cp.attention_implementations.push_back(impl);
  const std::vector<SuiteStats> r = RegimeStatistics(t, items, cp, testing::H200());
  std::map<std::string, SuiteStats> by;
  for (const SuiteStats& s : r) by[s.suite] = s;
  ASSERT_TRUE(by.count("attention q=1") && by.count("attention q=2..16") && by.count("attention q>16"));
  EXPECT_NEAR(by["attention q=1"].median_abs_error, 0.05, 1e-12);
  EXPECT_NEAR(by["attention q=2..16"].median_abs_error, 0.10, 1e-12);
  EXPECT_EQ(by["attention q>16"].n, 1);
  ASSERT_TRUE(by.count("attention bandwidth-bound"));
  EXPECT_GE(by["attention bandwidth-bound"].n, 1);
}

TEST(RegimeStatistics, PacingByLoopCaptureAndBalanceDecodeByCapture) {
  trace::Trace t;
  auto layers = [&](const char* capture, trace::HostCost::Distribution host, int slow_rank) {
    trace::Item* it = t.add_items();
    it->set_suite(trace::SUITE_PACING);
    it->set_kind(trace::KIND_LAYER_LOOP);
    it->mutable_layer_loop()->set_capture(capture);
    it->mutable_layer_loop()->mutable_host_cost()->set_distribution(host);
    it->mutable_layer_loop()->set_slow_rank(slow_rank);
  };
  layers("graph", trace::HostCost::NONE, -1);        // 0
  layers("eager", trace::HostCost::NONE, 1);         // 1
  layers("eager", trace::HostCost::EXPONENTIAL, 1);  // 2
  trace::Item* skew = t.add_items();                 // 3
  skew->set_suite(trace::SUITE_PACING);
  skew->set_kind(trace::KIND_COLLECTIVE_SKEW);
  skew->mutable_skew()->set_slow_rank(-1);
  trace::Item* dec = t.add_items();  // 4
  dec->set_suite(trace::SUITE_DECODE);
  dec->set_kind(trace::KIND_DECODE_STEP);
  dec->mutable_decode()->set_capture("piecewise");
  std::vector<ItemResult> items = {Result(0, 100, 110), Result(1, 100, 95), Result(2, 100, 80), Result(3, 10, 13),
                                   Result(4, 1000, 1040)};
  const std::vector<SuiteStats> r = RegimeStatistics(t, items, compute::ComputeParams{}, testing::H200());
  std::map<std::string, SuiteStats> by;
  for (const SuiteStats& s : r) by[s.suite] = s;
  ASSERT_TRUE(by.count("pacing layers graph balanced"));
  EXPECT_NEAR(by["pacing layers graph balanced"].median_abs_error, 0.10, 1e-12);
  ASSERT_TRUE(by.count("pacing layers eager slow rank"));
  EXPECT_NEAR(by["pacing layers eager slow rank"].median_abs_error, 0.05, 1e-12);
  ASSERT_TRUE(by.count("pacing layers eager+host slow rank"));  // the host-cost loop kept apart
  EXPECT_NEAR(by["pacing layers eager+host slow rank"].median_abs_error, 0.20, 1e-12);
  ASSERT_TRUE(by.count("pacing skew balanced"));
  EXPECT_NEAR(by["pacing skew balanced"].median_abs_error, 0.30, 1e-12);
  ASSERT_TRUE(by.count("decode piecewise") && by.count("decode q=1"));
  EXPECT_NEAR(by["decode piecewise"].median_abs_error, 0.04, 1e-12);
}

TEST(PooledHeldOut, MedianOfTheSeedsThatHeldAnItemOut) {
  HoldoutSummary s;
  s.per_seed.resize(3);
  s.per_seed[0].items = {Result(0, 10, 11)};
  s.per_seed[1].items = {Result(0, 10, 13), Result(1, 20, 20)};
  s.per_seed[2].items = {Result(0, 10, 12)};
  const std::vector<ItemResult> pooled = PooledHeldOut(s);
  ASSERT_EQ(pooled.size(), 2u);
  EXPECT_DOUBLE_EQ(pooled[0].predicted_us, 12);  // median of 11, 13, 12
  EXPECT_NEAR(pooled[0].error, 0.2, 1e-12);
  EXPECT_DOUBLE_EQ(pooled[1].predicted_us, 20);
}

}  // namespace
}  // namespace specsim::calib
