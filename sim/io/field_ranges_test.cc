#include "sim/io/field_ranges.h"

#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "sim/io/test_matchers.h"
#include "specsim/calibration.pb.h"
#include "specsim/framework.pb.h"
#include "specsim/hardware.pb.h"
#include "specsim/model.pb.h"
#include "specsim/scenario.pb.h"
#include "specsim/trace.pb.h"

namespace specsim::io {
namespace {

namespace pb = google::protobuf;
using testing::Contains;

template <typename Proto>
Proto Parse(const std::string& text) {
  Proto p;
  EXPECT_TRUE(pb::TextFormat::ParseFromString(text, &p)) << text;
  return p;
}

TEST(FieldRanges, ValuesOutsideTheirRangeAreErrorsNamingFileFieldValueAndRange) {
  const auto hw = Parse<config::Hardware>(R"(
    gpu_models { name: "G" sm_count: 0 memory_gib: 80 memory_bandwidth_gbps: 1e9 bf16_dense_tflops: 1
                 copy_engines_per_direction: 1 kernel_read_outstanding_bytes_per_sm: 1 }
    links { a: "x" b: "y" bandwidth_gbps: 50 latency_ns: nan payload_efficiency: 0 })");
  const Status s = CheckFieldRanges(hw, "box.textproto");
  ASSERT_FALSE(s.ok());
  const std::string& m = s.message();
  EXPECT_TRUE(Contains(m, "box.textproto: gpu_models[0] (G).sm_count = 0: must be in [1, 100000] SMs")) << m;
  EXPECT_TRUE(Contains(m, "gpu_models[0] (G).memory_bandwidth_gbps = 1000000000: must be in [0.001, 1e+06] GB/s")) << m;
  EXPECT_TRUE(Contains(m, "links[0] (x<->y).latency_ns = nan: must be in [0, 1e+09] ns (at most a second)")) << m;
  // (0, 1]: the exclusive end is outside.
  EXPECT_TRUE(Contains(m, "links[0] (x<->y).payload_efficiency = 0: must be in [0.01, 1] fraction")) << m;
  // One line each, in field order.
  EXPECT_EQ(std::count(m.begin(), m.end(), '\n'), 3) << m;
}

TEST(FieldRanges, ZeroIsUnsetAndAbsentOptionalFieldsAndMessagesAreNotChecked) {
  // compute.kernel_floor_ns: [0, 1e9] with zero_is_unset; fabric.h2d_pinned.bandwidth_gbps:
  // [1e-3, 1e5] with zero_is_unset (0 = the default); host costs `optional` in [0, 1e6].
  EXPECT_TRUE(CheckFieldRanges(Parse<config::Calibration>("fabric { h2d_pinned { latency_ns: 5 } }"), "c").ok());
  EXPECT_TRUE(CheckFieldRanges(config::Calibration{}, "c").ok());
  const Status s = CheckFieldRanges(Parse<config::Calibration>("fabric { h2d_pinned { bandwidth_gbps: 1e-4 } }"), "c");
  EXPECT_TRUE(Contains(s.message(),
                       "fabric.h2d_pinned.bandwidth_gbps = 0.0001: must be in [0.001, 100000] GB/s, "
                       "or 0 (unset: the default)"))
      << s.message();
  // A present optional field at 0 is a value (a fit's 0), inside [0, 1e6].
  EXPECT_TRUE(CheckFieldRanges(Parse<config::Calibration>("host { graph_launch_us: 0 }"), "c").ok());
  EXPECT_FALSE(CheckFieldRanges(Parse<config::Calibration>("host { graph_launch_us: -1 }"), "c").ok());
}

TEST(FieldRanges, RepeatedElementsAndMapValuesAreEachChecked) {
  const auto sc = Parse<config::Scenario>("speculation { acceptance_probabilities: [0.5, 1.5, -0.1] }");
  const std::vector<RangeFinding> f = RangeFindings(sc);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].path, "speculation.acceptance_probabilities[1]");
  EXPECT_EQ(f[1].path, "speculation.acceptance_probabilities[2]");
  const auto c = Parse<config::Calibration>(
      R"(fabric { under_load_extra_ns { key: "h2d/d2h" value: 2e9 } under_load_extra_ns { key: "d2h/h2d" value: 5 } })");
  const std::vector<RangeFinding> g = RangeFindings(c);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].path, "fabric.under_load_extra_ns[\"h2d/d2h\"]");
  EXPECT_TRUE(g[0].error);
}

TEST(FieldRanges, ImplausibleValuesAreWarningsNotErrors) {
  // 200 TB/s of device memory: inside [1e-3, 1e6] GB/s, past the plausible 50,000 GB/s.
  const auto hw = Parse<config::Hardware>(R"(gpu_models { name: "G" sm_count: 132 memory_gib: 80
    memory_bandwidth_gbps: 200000 bf16_dense_tflops: 989 copy_engines_per_direction: 2
    kernel_read_outstanding_bytes_per_sm: 4096 })");
  std::vector<std::string> warnings;
  EXPECT_TRUE(CheckFieldRanges(hw, "box.textproto", &warnings).ok());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_TRUE(Contains(warnings[0],
                       "warning: box.textproto: gpu_models[0] (G).memory_bandwidth_gbps = 200000: "
                       "no hardware or software of today has it (plausible: >= 10 and <= 50000 GB/s)"))
      << warnings[0];
}

TEST(FieldRanges, SetNumericValueWritesTheVisitedField) {
  auto c = Parse<config::Calibration>(
      R"(host { library_issue_us: 3 } fabric { under_load_extra_ns { key: "h2d/h2d" value: 1 } }
         nccl { protocols { transport: "shm" protocol: "ll" hop_latency_us: 2 } })");
  std::vector<RangedValue> values;
  ForEachRangedValue(c, [&](const RangedValue& v) { values.push_back(v); });
  for (const RangedValue& v : values) SetNumericValue(v, 7);
  EXPECT_EQ(c.host().library_issue_us(), 7);
  EXPECT_EQ(c.fabric().under_load_extra_ns().at("h2d/h2d"), 7);
  EXPECT_EQ(c.nccl().protocols(0).hop_latency_us(), 7);
  // Integers are clamped to their type.
  auto sc = Parse<config::Scenario>("serving { batch_size: 1 }");
  ForEachRangedValue(sc, [&](const RangedValue& v) {
    if (v.path == "serving.batch_size") SetNumericValue(v, 1e300);
  });
  EXPECT_EQ(sc.serving().batch_size(), 2147483647);
}

// Every numeric field of the schemas a user hands specsim declares its unit and range
// (proto/specsim/range.proto): a field added without one fails here, not silently unchecked.
TEST(FieldRanges, EveryNumericFieldOfEverySchemaHasARange) {
  for (const pb::Descriptor* root :
       {config::Hardware::descriptor(), config::Calibration::descriptor(), config::Scenario::descriptor(),
        config::FrameworkProfile::descriptor(), config::Model::descriptor(), trace::Trace::descriptor()}) {
    EXPECT_TRUE(FieldsWithoutRange(root).empty())
        << root->full_name() << ": " << ::testing::PrintToString(FieldsWithoutRange(root));
  }
  // The walk reports what it should: FieldRange's own four doubles (min, max, plausible_min,
  // plausible_max) carry no range.
  EXPECT_EQ(FieldsWithoutRange(config::FieldRange::descriptor()).size(), 4u);
}

}  // namespace
}  // namespace specsim::io
