// Tests of the trace loader's checks (trace_io.h): the unit and range proto/specsim/trace.proto
// declares beside every numeric field, checked by LoadTrace and ValidateTraceItems through the
// generic validator (sim/io/field_ranges.h). A value the model cannot represent is refused naming
// the file and the field; the schema declares a range for every numeric field; every committed
// trace loads.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "sim/calib/test_traces.h"
#include "sim/calib/trace_io.h"

namespace specsim::calib {
namespace {

using testing::AddAttention;
using testing::AddCopy;
using testing::AddGemm;
using testing::AddNorm;

// A trace that loads: an attention call (items[0], "attention/1"), an RMSNorm ("norm/2"), a GEMM
// ("gemm/3") and a host copy ("copy/4"), each measured.
trace::Trace ValidTrace() {
  trace::Trace t;
  t.set_schema_version(1);
  AddAttention(&t, 8, 1, 4096);
  AddNorm(&t, 8, 4096);
  AddGemm(&t, 8, 4096, 4096);
  AddCopy(&t, trace::DIRECTION_H2D, 65536);
  for (trace::Item& it : *t.mutable_items()) {
    it.mutable_stats()->set_iterations(20);
    it.mutable_stats()->set_median_us(12.5);
  }
  return t;
}

// `t` written as a binary trace to a file of the test's own; its path.
std::string WriteTrace(const trace::Trace& t, const std::string& stem) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("specsim_trace_io_test_" + stem + ".pb")).string();
  std::ofstream out(path, std::ios::binary);
  t.SerializeToOstream(&out);
  return path;
}

TEST(TraceIoTest, AValidTraceLoadsWithoutWarnings) {
  const std::string path = WriteTrace(ValidTrace(), "valid");
  std::vector<std::string> warnings;
  auto t = LoadTrace(path, &warnings);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->items_size(), 4);
  EXPECT_TRUE(warnings.empty()) << warnings.front();
}

// One value the model cannot represent, and how the error names it after "FILE: ".
struct BadValue {
  std::string stem;
  std::function<void(trace::Trace*)> set;
  std::string named;
};

TEST(TraceIoTest, AValueOutsideItsRangeIsRefusedNamingTheFileAndTheField) {
  const std::vector<BadValue> cases = {
      {"batch", [](trace::Trace* t) { t->mutable_items(0)->mutable_attention()->set_batch(-1); },
       "items[0] (attention/1).attention.batch = -1: must be in [1, "},
      {"hidden", [](trace::Trace* t) { t->mutable_items(1)->mutable_rmsnorm()->set_hidden(-4096); },
       "items[1] (norm/2).rmsnorm.hidden = -4096: must be in [1, "},
      // The attention model needs a cached token (predictors.cc: has_attention_call).
      {"context", [](trace::Trace* t) { t->mutable_items(0)->mutable_attention()->set_context(0); },
       "items[0] (attention/1).attention.context = 0: must be in [1, "},
      {"q_heads", [](trace::Trace* t) { t->mutable_items(0)->mutable_attention()->set_q_heads(0); },
       "items[0] (attention/1).attention.q_heads = 0: must be in [1, "},
      {"head_dim", [](trace::Trace* t) { t->mutable_items(0)->mutable_attention()->set_head_dim(-128); },
       "items[0] (attention/1).attention.head_dim = -128: must be in [1, "},
      {"tokens", [](trace::Trace* t) { t->mutable_items(1)->mutable_rmsnorm()->set_tokens(0); },
       "items[1] (norm/2).rmsnorm.tokens = 0: must be in [1, "},
      {"medians",
       [](trace::Trace* t) {
         for (trace::Item& it : *t->mutable_items()) it.mutable_stats()->set_median_us(1e300);
       },
       "items[2] (gemm/3).stats.median_us = 1e+300: must be in [0.001, 1e+09] us"},
      // Issue 15: a measurement of 1e-307 us weighed 1e307 in the fit.
      {"tiny_median", [](trace::Trace* t) { t->mutable_items(3)->mutable_stats()->set_median_us(1e-307); },
       "items[3] (copy/4).stats.median_us = 1e-307: must be in [0.001, 1e+09] us"},
      {"bytes", [](trace::Trace* t) { t->mutable_items(3)->mutable_transfer()->set_bytes(-8); },
       "items[3] (copy/4).transfer.bytes = -8: must be in [0, 1099511627776] bytes"},
      {"gemm_m", [](trace::Trace* t) { t->mutable_items(2)->mutable_gemm()->set_m(0); },
       "items[2] (gemm/3).gemm.m = 0: must be in [1, 2147483647] rows"},
  };
  for (const BadValue& c : cases) {
    SCOPED_TRACE(c.stem);
    trace::Trace t = ValidTrace();
    c.set(&t);
    const Status s = ValidateTraceItems(t, "t.pb");
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find("t.pb: " + c.named), std::string::npos) << s.message();
    const std::string path = WriteTrace(t, c.stem);
    auto loaded = LoadTrace(path);
    ASSERT_FALSE(loaded.ok());
    EXPECT_NE(loaded.status().message().find(path + ": " + c.named), std::string::npos) << loaded.status().message();
  }
}

TEST(TraceIoTest, ZeroMeansNotMeasuredOrNotRecorded) {
  trace::Trace t = ValidTrace();
  t.mutable_items(3)->mutable_stats()->set_median_us(0);  // not measured: the fits skip it
  t.mutable_items(0)->mutable_attention()->set_tp(0);     // not recorded
  t.mutable_environment()->add_gpus()->set_sm_count(0);   // a profile without device properties
  EXPECT_TRUE(ValidateTraceItems(t, "t.pb").ok()) << ValidateTraceItems(t, "t.pb").ToString();
}

TEST(TraceIoTest, ImplausibleValuesAreWarnings) {
  trace::Trace t = ValidTrace();
  t.mutable_items(2)->set_tflops(1e5);  // no GPU of today
  std::vector<std::string> warnings;
  EXPECT_TRUE(ValidateTraceItems(t, "t.pb", &warnings).ok());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("warning: t.pb: items[2] (gemm/3).tflops = 100000"), std::string::npos) << warnings[0];
}

TEST(TraceIoTest, TheBoxAndACollectiveListEachGpuOnce) {
  trace::Trace t = ValidTrace();
  // One GPU listed twice in the environment (listed 1,000 times it became a 1,000-GPU box).
  t.mutable_environment()->add_gpus()->set_index(0);
  t.mutable_environment()->add_gpus()->set_index(0);
  Status s = ValidateTraceItems(t, "t.pb");
  EXPECT_NE(s.message().find("t.pb: environment.gpus[1].index = 0: listed twice"), std::string::npos) << s.message();
  t = ValidTrace();
  testing::AddAllreduce(&t, 2, 1 << 20, "")->mutable_collective()->set_gpus(1, 0);
  s = ValidateTraceItems(t, "t.pb");
  EXPECT_NE(s.message().find("t.pb: items[4] (allreduce/5).collective.gpus: GPU 0 is listed twice"), std::string::npos)
      << s.message();
}

// Every committed trace (traces/ and its subdirectories) is in range, and plausible.
TEST(TraceIoTest, EveryCommittedTraceLoadsWithoutWarnings) {
  int traces = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(std::string(SPECSIM_SOURCE_DIR) + "/traces")) {
    if (entry.path().extension() != ".pb") continue;
    ++traces;
    std::vector<std::string> warnings;
    auto t = LoadTrace(entry.path().string(), &warnings);
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_TRUE(warnings.empty()) << entry.path() << ": " << warnings.front();
  }
  EXPECT_GE(traces, 60);
}

}  // namespace
}  // namespace specsim::calib
