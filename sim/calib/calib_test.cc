// Tests of sim/calib: the solver, trace loading, the hold-out split, the SVG writer, hardware from a
// trace, parameters, the predictor, and the CI bound on every committed trace's held-out errors.
// The fits' tests (known parameters recovered from synthetic traces, refusals) are in fit_*_test.cc,
// one file per fitter.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <stack>

#include "sim/calib/calibration_loader.h"
#include "sim/calib/compare.h"
#include "sim/calib/fit.h"
#include "sim/calib/hardware_from_trace.h"
#include "sim/calib/least_squares.h"
#include "sim/calib/params.h"
#include "sim/calib/predictors.h"
#include "sim/calib/test_traces.h"
#include "sim/calib/svg.h"
#include "sim/calib/trace_io.h"
#include "sim/core/check.h"
#include "sim/core/median.h"
#include "sim/io/hardware_loader.h"
#include "sim/net/routing.h"

namespace specsim::calib {
namespace {

using testing::AddCopy;
using testing::AddGemm;
using testing::H200;

TEST(LeastSquaresTest, RecoversALineAndReportsResiduals) {
  // t = 3 + 2 b: exact data, zero residual.
  LinearProblem p;
  p.names = {"a", "b"};
  p.defaults = {0, 0};
  for (double b : {1.0, 10.0, 100.0}) p.AddRow({1, b}, 3 + 2 * b, 1 / (3 + 2 * b));
  auto s = SolveLeastSquares(p, false, "line");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_NEAR(s->x[0], 3, 1e-9);
  EXPECT_NEAR(s->x[1], 2, 1e-9);
  EXPECT_EQ(s->points[1], 3);
  EXPECT_NEAR(s->residual_rms[0], 0, 1e-12);
}

TEST(LeastSquaresTest, RefusesInseparableUnknownsAndKeepsDefaultsWhenAsked) {
  // One size only: latency and bandwidth trade off.
  LinearProblem p;
  p.names = {"latency", "inverse_bandwidth"};
  p.defaults = {5, 0.5};
  p.AddRow({1, 100}, 60, 1);
  p.AddRow({1, 100}, 61, 1);
  auto s = SolveLeastSquares(p, false, "copies");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("cannot determine latency, inverse_bandwidth"), std::string::npos)
      << s.status().message();
  auto kept = SolveLeastSquares(p, true, "copies");
  ASSERT_TRUE(kept.ok());
  EXPECT_FALSE(kept->determined[0]);
  EXPECT_EQ(kept->x[0], 5);
}

TEST(LeastSquaresTest, AGiveUpOrderKeepsOnlyItsFirstUnknownOfACollinearSet) {
  // Rows bind either "hop" (x2) or "rate"; every row has "base": base = hop / 2 - rate / 2.14 is
  // a null vector holding all three. By default all three are kept; giving up "hop" first keeps
  // only it and solves base and rate (here from exact data, hop held at 2).
  LinearProblem p;
  p.names = {"base", "hop", "rate"};
  p.defaults = {1, 2, 1};
  // Truth: base 3, hop 2, rate 5.
  p.AddRow({1, 2, 0}, 3 + 2 * 2, 1);
  p.AddRow({1, 2, 0}, 3 + 2 * 2, 0.5);
  p.AddRow({1, 0, -2.14}, 3 - 2.14 * 5, 1);
  p.AddRow({1, 0, -2.14}, 3 - 2.14 * 5, 0.5);
  auto all = SolveLeastSquares(p, true, "steps");
  ASSERT_TRUE(all.ok());
  EXPECT_FALSE(all->determined[0]);
  EXPECT_FALSE(all->determined[1]);
  EXPECT_FALSE(all->determined[2]);
  p.give_up_order = {1};
  auto kept = SolveLeastSquares(p, true, "steps");
  ASSERT_TRUE(kept.ok());
  EXPECT_FALSE(kept->determined[1]);
  EXPECT_EQ(kept->x[1], 2);
  ASSERT_TRUE(kept->determined[0] && kept->determined[2]);
  EXPECT_NEAR(kept->x[0], 3, 1e-9);
  EXPECT_NEAR(kept->x[2], 5, 1e-9);
}

TEST(LeastSquaresTest, AnUntouchedUnknownHasNoItems) {
  LinearProblem p;
  p.names = {"a", "unused"};
  p.defaults = {0, 7};
  p.AddRow({1, 0}, 2, 1);
  auto s = SolveLeastSquares(p, false, "x");
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(s->has_items[1]);
  EXPECT_EQ(s->x[1], 7);
  EXPECT_NEAR(s->x[0], 2, 1e-12);
}

// A row weighted 1/t for a t of 1e-307 us would be inf, and the SVD's state undefined: non-finite
// rows are an error, and such an item does not load at all.
TEST(LeastSquaresTest, NonFiniteRowsAreAnErrorNotACrash) {
  LinearProblem p;
  p.names = {"latency", "inverse_rate"};
  p.defaults = {0, 0};
  p.AddRow({1, 100}, 5, 1);
  p.AddRow({1, 1e300}, 1e-304, 1e304);  // weight x coefficient overflows
  auto s = SolveLeastSquares(p, true, "fabric.h2d_pinned");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("fabric.h2d_pinned: the items' values overflow"), std::string::npos)
      << s.status().message();
}

// A trace whose items are all unmeasured (median 0, which loads) has nothing to fit: an error, not
// a calibration. Values outside their ranges do not load at all (trace_io_test.cc).
TEST(FitTest, ATraceWithoutMeasuredItemsHasNothingToFit) {
  trace::Trace none;
  none.set_schema_version(1);
  AddCopy(&none, trace::DIRECTION_H2D, 1024);
  EXPECT_TRUE(ValidateTraceItems(none, "t.pb").ok());
  const net::Topology topo = H200();
  auto r = Fit(none, {}, topo, DefaultParams(topo, 0));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("nothing to fit"), std::string::npos) << r.status().message();
}

TEST(HoldoutTest, SplitIsDeterministicPerSuiteAndSeedDependent) {
  trace::Trace t;
  for (int i = 0; i < 50; ++i) AddCopy(&t, trace::KIND_H2D_COPY, trace::DIRECTION_H2D, 1 + i);
  for (int i = 0; i < 20; ++i) AddGemm(&t, 1 + i, 4096, 4096);
  const HoldoutSplit a = SplitHoldout(t, 0.3, 7), b = SplitHoldout(t, 0.3, 7), c = SplitHoldout(t, 0.3, 8);
  EXPECT_EQ(a.test, b.test);
  EXPECT_NE(a.test, c.test);
  EXPECT_EQ(a.test.size() + a.train.size(), 70u);
  int pcie = 0;
  for (int i : a.test) pcie += t.items(i).suite() == trace::SUITE_PCIE;
  EXPECT_EQ(pcie, 15);                                   // round(0.3 * 50)
  EXPECT_EQ(static_cast<int>(a.test.size()) - pcie, 6);  // round(0.3 * 20)
  // Train and test partition the items.
  std::set<int> all(a.test.begin(), a.test.end());
  all.insert(a.train.begin(), a.train.end());
  EXPECT_EQ(all.size(), 70u);
}

// By family: a GEMM weight's items over every m stay together, train or test, round(0.3 x 10)
// families held out; the family is the name without its last component.
TEST(HoldoutTest, ByFamilyHoldsOutWholeFamilies) {
  EXPECT_EQ(HoldoutFamilyOf("kernels/gemm/llama-3.1-70b/tp2/qkv/m16"), "kernels/gemm/llama-3.1-70b/tp2/qkv");
  EXPECT_EQ(HoldoutFamilyOf("plain"), "plain");
  trace::Trace t;
  for (int f = 0; f < 10; ++f)
    for (int m : {1, 8, 64})
      AddGemm(&t, m, 1024 * (f + 1), 4096)->set_name("gemm/f" + std::to_string(f) + "/m" + std::to_string(m));
  const HoldoutSplit a = SplitHoldoutByFamily(t, 0.3, 7), b = SplitHoldoutByFamily(t, 0.3, 7);
  EXPECT_EQ(a.test, b.test);
  EXPECT_EQ(a.test.size(), 9u);  // 3 families of 3 items
  std::set<std::string> test_families, train_families;
  for (int i : a.test) test_families.insert(HoldoutFamilyOf(t.items(i).name()));
  for (int i : a.train) train_families.insert(HoldoutFamilyOf(t.items(i).name()));
  EXPECT_EQ(test_families.size(), 3u);
  EXPECT_EQ(train_families.size(), 7u);
  for (const std::string& f : test_families) EXPECT_EQ(train_families.count(f), 0u) << f;
  std::set<int> seeds_differ;
  for (uint64_t seed = 1; seed <= 5; ++seed) seeds_differ.insert(SplitHoldoutByFamily(t, 0.3, seed).test.front());
  EXPECT_GT(seeds_differ.size(), 1u);
}

TEST(StatsTest, PercentileInterpolates) {
  EXPECT_DOUBLE_EQ(PercentileOf({1, 2, 3, 4}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(PercentileOf({5}, 0.9), 5);
  EXPECT_NEAR(PercentileOf({0, 10}, 0.9), 9, 1e-12);
}

// A minimal XML well-formedness check: declaration, balanced tags, quoted attributes, no raw '&'.
bool WellFormed(const std::string& s, std::string* why) {
  std::stack<std::string> open;
  size_t i = 0;
  if (s.rfind("<?xml", 0) != 0) return *why = "no XML declaration", false;
  i = s.find("?>") + 2;
  while ((i = s.find('<', i)) != std::string::npos) {
    size_t end = s.find('>', i);
    if (end == std::string::npos) return *why = "unterminated tag", false;
    std::string tag = s.substr(i + 1, end - i - 1);
    if (tag.empty()) return *why = "empty tag", false;
    if (std::count(tag.begin(), tag.end(), '"') % 2) return *why = "unbalanced quotes in " + tag, false;
    if (tag[0] == '/') {
      if (open.empty() || open.top() != tag.substr(1)) return *why = "mismatched </" + tag.substr(1) + ">", false;
      open.pop();
    } else if (tag.back() != '/') {
      open.push(tag.substr(0, tag.find_first_of(" \n")));
    }
    i = end + 1;
  }
  for (size_t a = s.find('&'); a != std::string::npos; a = s.find('&', a + 1))
    if (s.compare(a, 5, "&amp;") && s.compare(a, 4, "&lt;") && s.compare(a, 4, "&gt;") && s.compare(a, 6, "&quot;") &&
        s.compare(a, 6, "&apos;"))
      return *why = "raw &", false;
  if (!open.empty()) return *why = "unclosed <" + open.top() + ">", false;
  return true;
}

TEST(SvgTest, ScatterIsWellFormedWithLegendAndEscapedNames) {
  std::vector<ItemResult> items;
  const char* suites[] = {"pcie", "kernels", "decode", "collectives"};
  for (int i = 0; i < 8; ++i) {
    ItemResult r;
    r.suite = suites[i % 4];
    r.name = "item<" + std::to_string(i) + ">&\"x\"";
    r.simulated = true;
    r.measured_us = 1.5 * (i + 1) * (i + 1);
    r.predicted_us = r.measured_us * (1 + 0.05 * (i - 4));
    items.push_back(r);
  }
  const std::string svg = ScatterSvg(items, "a & b");
  std::string why;
  EXPECT_TRUE(WellFormed(svg, &why)) << why;
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  for (const char* s : suites) EXPECT_NE(svg.find(std::string(">") + s + "</text>"), std::string::npos) << s;
  EXPECT_EQ(std::count(svg.begin(), svg.end(), '\n') > 10, true);
  EXPECT_NE(svg.find("item&lt;3&gt;&amp;&quot;x&quot;"), std::string::npos);
  // An empty plot is still a valid document.
  EXPECT_TRUE(WellFormed(ScatterSvg({}, "empty"), &why)) << why;
}

TEST(HardwareFromTraceTest, CommittedTraceRoundTripsThroughTheLoader) {
  auto t = LoadTrace(std::string(SPECSIM_SOURCE_DIR) + "/traces/h200-1x-2026-11-29.pb");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  auto hw = HardwareFromTrace(*t, "h200-1x-from-trace");
  ASSERT_TRUE(hw.ok()) << hw.status().ToString();
  const std::string text = HardwareTextProto(*hw, *t);
  auto topo = io::ParseHardware(text, "from-trace.textproto");
  ASSERT_TRUE(topo.ok()) << topo.status().ToString() << "\n" << text;
  ASSERT_EQ(topo->num_gpus(), 1);
  EXPECT_EQ(topo->gpu_spec(0).sm_count, 132);
  EXPECT_EQ(topo->gpu_spec(0).arch, "sm90");
  EXPECT_DOUBLE_EQ(topo->gpu_spec(0).memory_bandwidth_gbps, 4800);
  EXPECT_NEAR(topo->gpu_spec(0).memory_gib, 139.8, 0.5);
  EXPECT_EQ(topo->links[topo->links.size() - 1].pcie_gen, 5);
}

TEST(HardwareFromTraceTest, PathClassesBecomeSwitchesSocketsAndNvlink) {
  trace::Trace t;
  trace::Environment* env = t.mutable_environment();
  env->set_cpu_model("AMD EPYC 9654");
  for (int i = 0; i < 4; ++i) {
    trace::Gpu* g = env->add_gpus();
    g->set_index(i);
    g->set_name("NVIDIA RTX PRO 6000 Blackwell Server Edition");
    g->set_compute_capability_major(12);
    g->set_sm_count(188);
    g->set_memory_bytes(int64_t{96} << 30);
    g->set_pcie_generation_current(5);
    g->set_pcie_width_current(16);
    g->set_numa_node(i < 3 ? 0 : 1);
  }
  // 0-1 PIX, 0/1-2 PXB, 3 on the other socket.
  auto pair = [&](int a, int b, trace::PathClass c) {
    for (auto [s, d] : {std::pair{a, b}, std::pair{b, a}}) {
      trace::PeerPair* p = env->add_peers();
      p->set_src(s);
      p->set_dst(d);
      p->set_path_class(c);
    }
  };
  pair(0, 1, trace::PATH_PIX);
  pair(0, 2, trace::PATH_PXB);
  pair(1, 2, trace::PATH_PXB);
  for (int i = 0; i < 3; ++i) pair(i, 3, trace::PATH_SYS);
  auto hw = HardwareFromTrace(t, "four");
  ASSERT_TRUE(hw.ok()) << hw.status().ToString();
  EXPECT_EQ(hw->cpu_vendor(), config::Hardware::AMD);
  auto topo = io::ParseHardware(HardwareTextProto(*hw, t), "four.textproto");
  ASSERT_TRUE(topo.ok()) << topo.status().ToString();
  net::Router router(*topo);
  EXPECT_EQ(router.GpuPathClass(0, 1), net::PathClass::kPix);
  EXPECT_EQ(router.GpuPathClass(0, 2), net::PathClass::kPxb);
  EXPECT_EQ(router.GpuPathClass(0, 3), net::PathClass::kSys);
  EXPECT_DOUBLE_EQ(topo->gpu_spec(0).memory_bandwidth_gbps, 1597);
}

TEST(HardwareFromTraceTest, UnknownGpuNamesWhatIsMissing) {
  trace::Trace t;
  trace::Gpu* g = t.mutable_environment()->add_gpus();
  g->set_name("Some Future GPU");
  auto hw = HardwareFromTrace(t, "x");
  ASSERT_FALSE(hw.ok());
  EXPECT_NE(hw.status().message().find("memory_bandwidth_gbps"), std::string::npos);
  EXPECT_NE(hw.status().message().find("Some Future GPU"), std::string::npos);
}

// Environment values no GPU reports are named as trace data (they made a hardware config that
// failed to load, reported as "internal error"), each at its boundary.
TEST(HardwareFromTraceTest, EnvironmentValuesOutOfRangeNameTheTraceField) {
  auto trace_with = [](auto edit) {
    trace::Trace t;
    trace::Gpu* g = t.mutable_environment()->add_gpus();
    g->set_name("NVIDIA H200");
    g->set_compute_capability_major(9);
    g->set_sm_count(132);
    g->set_memory_bytes(int64_t{141} << 30);
    g->set_pcie_generation_current(5);
    g->set_pcie_width_current(16);
    edit(g);
    return t;
  };
  EXPECT_TRUE(HardwareFromTrace(trace_with([](trace::Gpu*) {}), "x").ok());
  EXPECT_TRUE(HardwareFromTrace(trace_with([](trace::Gpu* g) { g->set_numa_node(-1); }), "x").ok());
  struct Case {
    const char* field;
    std::function<void(trace::Gpu*)> edit;
  };
  for (const Case& c : std::vector<Case>{
           {"environment.gpus[0].sm_count = 0", [](trace::Gpu* g) { g->set_sm_count(0); }},
           {"environment.gpus[0].memory_bytes = 0", [](trace::Gpu* g) { g->set_memory_bytes(0); }},
           {"environment.gpus[0].memory_bytes = 17592186044417",
            [](trace::Gpu* g) { g->set_memory_bytes((int64_t{1} << 44) + 1); }},
           {"environment.gpus[0].pcie_generation_current = 7",
            [](trace::Gpu* g) { g->set_pcie_generation_current(7); }},
           {"environment.gpus[0].pcie_width_max = -1", [](trace::Gpu* g) { g->set_pcie_width_max(-1); }},
           {"environment.gpus[0].numa_node = -2", [](trace::Gpu* g) { g->set_numa_node(-2); }},
           {"environment.gpus[0].l2_cache_bytes = -5", [](trace::Gpu* g) { g->set_l2_cache_bytes(-5); }},
       }) {
    auto hw = HardwareFromTrace(trace_with(c.edit), "x");
    ASSERT_FALSE(hw.ok()) << c.field;
    EXPECT_NE(hw.status().message().find(c.field), std::string::npos) << hw.status().message();
  }
}

TEST(ParamsTest, FabricCalibrationSetsHostLinkAndGpuModel) {
  net::Topology topo = H200();
  config::FabricCalibration f;
  f.mutable_h2d_pinned()->set_bandwidth_gbps(55);
  f.mutable_d2h_pinned()->set_bandwidth_gbps(56);
  f.set_copy_engines_per_direction(2);
  f.set_kernel_read_outstanding_bytes_per_sm(30000);
  ApplyFabricCalibration(f, &topo);
  EXPECT_NEAR(topo.links[0].payload_gbps(), 55, 1e-9);
  EXPECT_EQ(topo.gpu_spec(0).copy_engines_per_direction, 2);
  EXPECT_EQ(topo.gpu_spec(0).kernel_read_outstanding_bytes_per_sm, 30000);
}

// ToCalibrationProto, then the file read back as every command reads it.
CalibParams ReadBack(const CalibParams& p, const net::Topology& topo) {
  auto loaded = CalibrationFromProto(ToCalibrationProto(p), "round-trip");
  SPECSIM_CHECK(loaded.ok()) << loaded.status().message();
  return CalibParamsOf(*loaded, DefaultParams(topo, 0));
}

TEST(ParamsTest, CalibrationProtoRoundTrips) {
  const net::Topology topo = H200();
  CalibParams p = DefaultParams(topo, 0);
  p.fabric.h2d_pinned = {1234, 50};
  p.compute.gemm_compute_efficiency = 0.6;
  p.nccl.local_call_overhead_ns = 900;
  p.bench.l2_resident_bandwidth_gbps = 9000;
  p.host.jitter = llm::ExponentialJitter(0.25);
  CalibParams q = ReadBack(p, topo);
  EXPECT_EQ(q.fabric.h2d_pinned.latency_ns, 1234);
  EXPECT_EQ(q.host.jitter.kind, llm::Jitter::Kind::kExponential);
  EXPECT_EQ(q.host.jitter.mean_us, 0.25);
  EXPECT_EQ(q.compute.gemm_compute_efficiency, 0.6);
  EXPECT_EQ(q.nccl.local_call_overhead_ns, 900);
  EXPECT_EQ(q.bench.l2_resident_bandwidth_gbps, 9000);
}

// A fit may hold a host cost or an NCCL latency at its bound 0 (fit_context.h SolveWithinBounds):
// the file keeps that 0 instead of leaving it out, which a reader took for "the default".
TEST(ParamsTest, AFittedZeroSurvivesTheCalibrationFile) {
  const net::Topology topo = H200();
  CalibParams p = DefaultParams(topo, 0);
  p.host.graph_launch_us = 0.0;
  p.host.library_issue_us = 12.0;
  coll::ProtocolCost& simple = p.nccl.protocol.per_op[{coll::NcclTransport::kP2pNvLink, coll::NcclProto::kSimple, 0}];
  simple.base_latency_us = 15.0;
  simple.hop_latency_us = 0.0;
  ASSERT_TRUE(ToCalibrationProto(p).host().has_graph_launch_us());
  CalibParams q = ReadBack(p, topo);
  ASSERT_TRUE(q.host.graph_launch_us.has_value());
  EXPECT_EQ(*q.host.graph_launch_us, 0.0);
  EXPECT_EQ(*q.host.library_issue_us, 12.0);
  EXPECT_FALSE(q.host.collective_issue_us.has_value());  // never set: the default
  const auto& back = q.nccl.protocol.per_op.at({coll::NcclTransport::kP2pNvLink, coll::NcclProto::kSimple, 0});
  ASSERT_TRUE(back.hop_latency_us.has_value());
  EXPECT_EQ(*back.hop_latency_us, 0.0);
  EXPECT_EQ(*back.base_latency_us, 15.0);
}

TEST(PredictorTest, ListsWhatItCannotSimulateWithAReason) {
  const net::Topology topo = H200();
  trace::Trace t;
  trace::Item* it = t.add_items();
  it->set_kind(trace::KIND_ATTENTION);
  it->mutable_attention()->set_kv_shared(true);
  Predictor p(t, topo, DefaultParams(topo, 0));
  Prediction pr = p.Predict(*it);
  EXPECT_FALSE(pr.simulated);
  EXPECT_NE(pr.reason.find("MLA"), std::string::npos);
  trace::Item* far = AddCopy(&t, trace::KIND_H2D_COPY, trace::DIRECTION_H2D, 4);
  far->mutable_transfer()->set_gpu(5);
  EXPECT_FALSE(p.Predict(*far).simulated);
}

// Issue 39: the host-staged suite's latency items are measured for a model specsim does not have
// yet: compare says so per item, and calibrate fits around them with one note per kind.
TEST(PredictorTest, HostStagedItemsAreNotSimulatedAndCalibrateNotesThem) {
  const net::Topology topo = H200();
  trace::Trace t;
  t.set_schema_version(1);
  AddCopy(&t, trace::KIND_H2D_COPY, trace::DIRECTION_H2D, 1 << 20)->mutable_stats()->set_median_us(30.0);
  for (trace::Kind kind : {trace::KIND_HOST_FLAG_ROUNDTRIP, trace::KIND_HOST_SMALL_READS}) {
    for (int i = 0; i < 2; ++i) {
      trace::Item* it = t.add_items();
      it->set_kind(kind);
      it->set_suite(trace::SUITE_HOST_STAGED);
      it->set_name(trace::Kind_Name(kind) + std::to_string(i));
      if (kind == trace::KIND_HOST_FLAG_ROUNDTRIP)
        it->mutable_host_flag()->set_rounds(100);
      else
        it->mutable_host_small_reads()->set_blocks(4);
      it->mutable_stats()->set_median_us(1.5);
    }
  }
  Predictor p(t, topo, DefaultParams(topo, 0));
  for (const trace::Item& it : t.items()) {
    if (it.kind() == trace::KIND_H2D_COPY) continue;
    const Prediction pr = p.Predict(it);
    EXPECT_FALSE(pr.simulated);
    EXPECT_NE(pr.reason.find("host_staged"), std::string::npos) << pr.reason;
  }
  FitOptions options;
  options.fix_undetermined = true;
  auto fit = Fit(t, {}, topo, DefaultParams(topo, 0), options);
  ASSERT_TRUE(fit.ok()) << fit.status().message();
  ASSERT_EQ(fit->notes.size(), 2u);
  EXPECT_NE(fit->notes[0].find("2 KIND_HOST_FLAG_ROUNDTRIP items ignored"), std::string::npos) << fit->notes[0];
  EXPECT_NE(fit->notes[1].find("2 KIND_HOST_SMALL_READS items ignored"), std::string::npos) << fit->notes[1];
}

// The CI bound (issue 5, item 5): on every committed trace (traces/*.pb), compare --holdout 0.3 over
// split seeds 1..10 (CompareHoldoutSeeds), per suite: the median over the seeds of the held-out
// median absolute error below the suite's bound, and the median over the seeds of the held-out
// p90 below its p90 bound. One seed is one draw of which items are held out (on the 1x H200 trace
// the decode suite's held-out median is 3.0% with seed 1 and 3.0-11.9% over seeds 1..10), so the
// bounds hold the median over seeds, not one split.
//
// kDefaultBounds applies to every trace; a trace's entry in CiBounds() (by file stem) replaces the
// bounds of the suites it lists, just above what
//   specsim compare traces/<stem>.pb --holdout 0.3       (median-of-medians, median-of-p90s)
// gives; when the model improves, lower them, and delete an entry its trace no longer needs.
struct SuiteBounds {
  double median;  // on the median over seeds of the held-out median |error|
  double p90;     // on the median over seeds of the held-out p90 |error|
};
using TraceBounds = std::map<std::string, SuiteBounds>;  // by suite

const TraceBounds kDefaultBounds = {{"pcie", {0.05, 0.25}},
                                    {"collectives", {0.10, 0.25}},
                                    {"kernels", {0.06, 0.25}},
                                    {"decode", {0.10, 0.25}},
                                    {"pacing", {0.10, 0.25}}};

const std::map<std::string, TraceBounds>& CiBounds() {
  static const std::map<std::string, TraceBounds> table = {
      // Single-kernel items are predicted as specsim-validate times them
      // (predictors.h TimedKernelNs: host-bound calls measure the host's period, GPU-bound ones
      // device + the timed call's gap, fitted from graph-captured loops), not as issue + device;
      // attention is fitted per kernel (compute/attention_cost.h); GEMMs pay part of the smaller of
      // their memory and compute terms (gemm_overlap); one-rank NCCL calls (a local copy) have
      // their own copy ramp and bandwidth. Held out now (median over seeds 1..10 [min..max]; median
      // p90):
      // h200-1x-2026-11-29: pcie 5.2% [2.8..6.8] p90 22.4%; collectives 3.3% [1.6..7.1] p90 10.8%
      //   (the one-rank local copy has its own costs); kernels 5.0% [3.7..6.0] p90 15.0%;
      //   decode 3.5% [2.3..6.3] p90 12.7%.
      {"h200-1x-2026-11-29", {{"pcie", {0.06, 0.25}}}},
      // The verify-width trace (issue 11: flash_mma and simt_reference attention, cuBLASLt GEMMs,
      // decode verify-width sweeps; GEMM costs fitted per library): kernels 4.3% [2.5..5.5] p90
      // 16.2%, decode 2.8% [2.2..3.5] p90 6.0% (issue 11's 7% target pinned); pcie 3.1% p90 17.1%;
      // collectives (one rank) 10.5% [3.2..31.4] p90 65%: a seed that holds out launch items moves
      // the graph gap and kernel floor under the one-rank graph replays (~3.3 us each).
      {"h200-1x-2026-11-30", {{"collectives", {0.12, 0.80}}, {"decode", {0.07, 0.15}}}},
      // MLA kernels at TP8 shapes (DeepSeek-V3 16 heads, Kimi-K2 8 per GPU; flash_mla): kernels
      // 8.1% [7.4..9.6] p90 23.0%, from the GEMMs: TP8's are 9-20 us calls near the timed-call
      // law's host-bound corner (kv_a, o, down predicted +12..+36%, expert / shared down -15..-38%
      // under cuBLASLt); the attention regimes are within 2.6% (median). TP1 shapes meet the
      // defaults (4.4% p90 10.1%), as does the Kimi-K2 decode trace (7.8%, p90 14.5%: decode items
      // only, the compute model at its defaults; 1.7% with the TP1 kernels trace's calibration).
      {"h200-1x-mla-tp8-2026-11-30", {{"kernels", {0.10, 0.25}}}},
      // The same TP8 shapes with flash_mla 016d02d plus batch 8 at 32 K / 64 K (issue 11), on another
      // machine: kernels 11.0% [9.6..11.8] p90 23.1%, the TP8 GEMMs again (this host's launch items
      // ran 14% faster than h200-1x-mla-tp8-2026-12-01's, short GEMMs up to 28%: the host-bound corner
      // of the timed-call law moved); attention held out within 3.6% (q = 1), 1.7%, 0.8%.
      {"h200-1x-mla-tp8-2026-12-01b", {{"kernels", {0.13, 0.30}}}},
      // Our one-shot / two-shot as 2, 4 and 8 rank groups on one H200 with vLLM's barrier and flag
      // layout (issue 39), predicted from the trace's flag round trips, the 0.35 us line
      // serialization, the release at two-shot's middle barrier (a round trip to host memory) and
      // the fabric's read cap (nothing in the suite is fitted): 14.9% [4.2..16.7] p90 24.3% held
      // out; 14.5% median over all 24 items.
      {"h200-1x-host-staged-2026-12-03-g", {{"host_staged", {0.17, 0.45}}}},
      // The same kernels at sizes no earlier run had (4, 8, 14, 32, 128 KiB), measured after the
      // model's parameters were set (another H200 host: its flag round trip 4.32 us): 15.2%
      // median over all 30 items (one-shot under 32 KiB +8..+23%: its start barrier passes faster
      // than the floor), 13.7% [8.8..22.8] p90 18.8% held out.
      {"h200-1x-host-staged-2026-12-04", {{"host_staged", {0.18, 0.45}}}},
      // The 2x H200 traces (one box; default NCCL, NCCL_PROTO=LL / Simple, NCCL_P2P_DISABLE=1 "shm"
      // and its LL / Simple variants) meet kDefaultBounds (issue 9's targets). Measured: default
      // pcie 1.6% p90 10.0%, collectives 3.3% / 10.6%, kernels 3.4% / 11.3%, decode 5.2% [1.3..9.1]
      // / 9.4%, pacing 3.8% / 11.9%; shm collectives 2.6% / 7.9%, kernels 3.3% / 14.9%, decode 3.4%
      // [3.0..7.9] / 8.4%, pacing 2.7% / 10.0%; ll 3.9% / 12.0%; simple 4.1% / 10.2%; shm-ll 3.9%
      // / 9.4%; shm-simple 2.5% / 8.1%.
  };
  return table;
}

TEST(CiBoundsTest, CompareHoldoutSeedsOfEveryCommittedTrace) {
  int traces = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(SPECSIM_SOURCE_DIR) + "/traces")) {
    if (entry.path().extension() != ".pb") continue;
    ++traces;
    SCOPED_TRACE(entry.path().string());
    TraceBounds bounds = kDefaultBounds;
    if (auto known = CiBounds().find(entry.path().stem().string()); known != CiBounds().end())
      for (const auto& [suite, b] : known->second) bounds[suite] = b;
    auto t = LoadTrace(entry.path().string());
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    auto hw = HardwareFromTrace(*t, "ci");
    ASSERT_TRUE(hw.ok()) << hw.status().ToString();
    auto topo = io::TopologyFromHardware(*hw, "ci");
    ASSERT_TRUE(topo.ok()) << topo.status().ToString();
    auto r = CompareHoldoutSeeds(*t, *topo, DefaultParams(*topo, 0), 0.3, 10);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    // The host_staged suite's flag round trips and small reads are the host-staged custom
    // allreduce model's inputs, not predictions; of its custom allreduce as rank groups on one GPU
    // only vLLM's layout (framework barrier, block-major flags) is modelled. A trace of that suite
    // without such items has no suite to bound, and must have none.
    bool host_staged_only = t->items_size() > 0, vllm_rank_groups = false;
    for (const trace::Item& it : t->items()) {
      host_staged_only = host_staged_only && it.suite() == trace::SUITE_HOST_STAGED;
      vllm_rank_groups = vllm_rank_groups || (it.collective().rank_groups_on_one_gpu() > 1 &&
                                              it.collective().custom_barrier() == trace::BARRIER_FRAMEWORK &&
                                              it.collective().custom_flags_block_major());
    }
    if (host_staged_only && !vllm_rank_groups) {
      EXPECT_TRUE(r->suites.empty());
      continue;
    }
    EXPECT_FALSE(r->suites.empty());
    for (const SuiteSeedSummary& s : r->suites) {
      auto b = bounds.find(s.suite);
      ASSERT_NE(b, bounds.end()) << s.suite << ": no bound for this suite (add it to kDefaultBounds)";
      EXPECT_LT(s.median_abs_error_median, b->second.median)
          << s.suite << " held-out median, median over " << s.seeds << " seeds (n = " << s.n_min << ", min "
          << s.median_abs_error_min << ", max " << s.median_abs_error_max << ")";
      EXPECT_LT(s.p90_abs_error_median, b->second.p90) << s.suite << " held-out p90, median over the seeds";
    }
  }
  EXPECT_GE(traces, 1);
}

}  // namespace
}  // namespace specsim::calib

namespace specsim::calib {
namespace {

// A committed trace named as in the README (traces/...) loads from any directory: the source tree
// specsim was built from is searched after the working directory; other relative paths are not.
TEST(TraceIoTest, CommittedTracesLoadFromAnyDirectory) {
  const std::filesystem::path before = std::filesystem::current_path();
  const std::filesystem::path elsewhere = std::filesystem::temp_directory_path();
  std::filesystem::current_path(elsewhere);
  auto committed = LoadTrace("traces/h200-1x-2026-11-30.pb");
  auto dotted = LoadTrace("./traces/h200-2x-ll-2026-11-30.pb");
  auto other = LoadTrace("configs/h200-1x-2026-11-30.pb");
  std::filesystem::current_path(before);
  ASSERT_TRUE(committed.ok()) << committed.status().ToString();
  EXPECT_GT(committed->items_size(), 100);
  EXPECT_TRUE(dotted.ok()) << dotted.status().ToString();
  EXPECT_FALSE(other.ok());
}

}  // namespace
}  // namespace specsim::calib
