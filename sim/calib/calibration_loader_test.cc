#include "sim/calib/calibration_loader.h"

#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <string>

namespace specsim::calib {
namespace {

config::Calibration Parse(const std::string& text) {
  config::Calibration c;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &c)) << text;
  return c;
}

// The error of one bad entry: it names the file, the entry's field path and the value.
void ExpectRefused(const std::string& text, const std::string& field, const std::string& value) {
  auto loaded = CalibrationFromProto(Parse(text), "bad.textproto");
  ASSERT_FALSE(loaded.ok()) << text;
  const std::string& m = loaded.status().message();
  EXPECT_EQ(m.rfind("bad.textproto: ", 0), 0u) << m;
  EXPECT_NE(m.find(field), std::string::npos) << m;
  EXPECT_NE(m.find(value), std::string::npos) << m;
}

TEST(CalibrationLoader, EveryBadEntryIsAnErrorNamingItsField) {
  ExpectRefused(
      R"(nccl { protocols { transport: "shm" protocol: "simple" } protocols { transport: "shm" protocol: "bogus" } })",
      "nccl.protocols[1].protocol", "\"bogus\"");
  ExpectRefused(R"(nccl { protocols { transport: "nvlink" protocol: "ll" } })", "nccl.protocols[0].transport",
                "\"nvlink\"");
  ExpectRefused(R"(nccl { protocols { transport: "shm" protocol: "ll" op: "alltoall" } })", "nccl.protocols[0].op",
                "\"alltoall\"");
  ExpectRefused(R"(nccl { protocols { transport: "shm" protocol: "ll" wire_efficiency: 1.5 } })",
                "nccl.protocols[0].wire_efficiency", "1.5");
  ExpectRefused(R"(nccl { protocols { transport: "shm" protocol: "ll" hop_latency_us: -2 } })",
                "nccl.protocols[0].hop_latency_us", "-2");
  ExpectRefused(R"(custom_allreduce { transport: "nvlink" flag_latency_us: 2 })", "custom_allreduce[0].transport",
                "\"nvlink\"");
  ExpectRefused(R"(fabric { p2p { path_class: "NODE2" } })", "fabric.p2p[0].path_class", "\"NODE2\"");
  ExpectRefused(R"(fabric { under_load_extra_ns { key: "h2d" value: 5 } })", "fabric.under_load_extra_ns[\"h2d\"]",
                "5");
  ExpectRefused(R"(fabric { zero_copy_read { latency_ns: -4 } })", "fabric.zero_copy_read.latency_ns", "-4");
  ExpectRefused(R"(host { graph_launch_us: -1 })", "host.graph_launch_us", "-1");
  ExpectRefused(R"(host { ops { op: "linear" quantiles_us: [5, 3] } })", "host.ops[0].quantiles_us", "quantile 1 = 3");
  ExpectRefused(R"(host { ops { op: "linear" quantiles_us: [5] } })", "host.ops[0].quantiles_us", "1 quantiles");
  ExpectRefused(R"(host { ops { op: "a" quantiles_us: [1, 2] } ops { op: "a" quantiles_us: [1, 2] } })",
                "host.ops[1].op", "\"a\"");
  ExpectRefused(R"(compute { gemm_libraries { gemm_compute_efficiency: 0.5 skinny_gemm_memory_efficiency: 0.7 } })",
                "compute.gemm_libraries[0].library", "\"\"");
  // Numbers out of the range calibration.proto declares (sim/io/field_ranges.h).
  ExpectRefused(R"(compute { memory_efficiency: 2 })", "compute.memory_efficiency", "2");
  ExpectRefused(R"(compute { kernel_floor_ns: 1e300 })", "compute.kernel_floor_ns", "1e+300");
  ExpectRefused(R"(fabric { h2d_pinned { bandwidth_gbps: 1e-300 } })", "fabric.h2d_pinned.bandwidth_gbps", "1e-300");
  ExpectRefused(R"(fabric { kernel_read_outstanding_bytes_per_sm: 1e-6 })",
                "fabric.kernel_read_outstanding_bytes_per_sm", "1e-06");
  ExpectRefused(R"(compute { sampling_row_rate_glogits: 1e-9 })", "compute.sampling_row_rate_glogits", "1e-09");
}

TEST(CalibrationLoader, AFittedZeroIsKeptAndAnAbsentCostIsTheDefault) {
  auto c = CalibrationFromProto(Parse("host { library_issue_us: 0 jitter_mean_us: 0.5 }"), "x");
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_TRUE(c->host.library_issue_us.has_value());
  EXPECT_EQ(*c->host.library_issue_us, 0.0);
  EXPECT_FALSE(c->host.graph_launch_us.has_value());
  EXPECT_EQ(c->host.jitter.kind, llm::Jitter::Kind::kExponential);
  EXPECT_EQ(c->host.jitter.mean_us, 0.5);
}

// The older all-transport fields reach the planner as one entry per transport for their protocol,
// and a file's per-transport entry wins over them field by field.
TEST(CalibrationLoader, AllTransportFieldsBecomeEntriesUnderThePerTransportOnes) {
  auto c = CalibrationFromProto(Parse(R"(nccl {
    base_latency_simple_us: 20 hop_latency_ll_us: 0.7 ll_wire_efficiency: 0.45
    protocols { transport: "shm" protocol: "simple" base_latency_us: 11 channel_gbps: 7.2 }
  })"),
                                "x");
  ASSERT_TRUE(c.ok()) << c.status().message();
  const auto& per = c->nccl.protocol.per_transport;
  using coll::NcclProto;
  using coll::NcclTransport;
  for (NcclTransport t : {NcclTransport::kP2pNvLink, NcclTransport::kP2pPcie, NcclTransport::kShm}) {
    const coll::ProtocolCost& ll = per.at({t, NcclProto::kLl});
    EXPECT_EQ(*ll.hop_latency_us, 0.7);
    EXPECT_EQ(*ll.wire_efficiency, 0.45);
    EXPECT_FALSE(ll.base_latency_us.has_value());
    EXPECT_FALSE(per.count({t, NcclProto::kLl128}));
  }
  EXPECT_EQ(*per.at({NcclTransport::kP2pPcie, NcclProto::kSimple}).base_latency_us, 20);
  const coll::ProtocolCost& shm = per.at({NcclTransport::kShm, NcclProto::kSimple});
  EXPECT_EQ(*shm.base_latency_us, 11);
  EXPECT_EQ(*shm.channel_gbps, 7.2);
}

// What a command predicts with: the defaults of the box, the file's values over them.
TEST(CalibrationLoader, ParamsTakeTheFilesValuesOverTheDefaults) {
  CalibParams defaults;
  defaults.fabric.h2d_pinned = {3000, 50};
  defaults.fabric.d2h_pinned = {3100, 51};
  auto c = CalibrationFromProto(Parse(R"(
    fabric { h2d_pinned { bandwidth_gbps: 55 } under_load_extra_ns { key: "d2h/h2d" value: 300 } }
    compute { kernel_floor_ns: 1200 }
    custom_allreduce { transport: "host" flag_latency_us: 2.5 }
    nccl { local_call_overhead_ns: 800 }
  )"),
                                "x");
  ASSERT_TRUE(c.ok()) << c.status().message();
  const CalibParams p = CalibParamsOf(*c, defaults);
  EXPECT_EQ(p.fabric.h2d_pinned.latency_ns, 3000);  // not in the file: the default
  EXPECT_EQ(p.fabric.h2d_pinned.bandwidth_gbps, 55);
  EXPECT_EQ(p.fabric.d2h_pinned.bandwidth_gbps, 51);
  EXPECT_EQ(p.fabric.under_load_extra_ns.at("d2h/h2d"), 300);
  EXPECT_EQ(p.compute.kernel_floor_ns, 1200);
  EXPECT_EQ(p.compute.memory_efficiency, compute::ComputeParams{}.memory_efficiency);
  EXPECT_EQ(p.custom.host_flag_latency_us, 2.5);
  EXPECT_EQ(p.custom.peer_flag_latency_us, 0);
  EXPECT_EQ(p.nccl.local_call_overhead_ns, 800);
}

TEST(CalibrationLoader, AFileErrorNamesTheFileAndLine) {
  auto missing = LoadCalibration("/nonexistent/calibration.textproto");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/calibration.textproto"), std::string::npos);
  auto bundled = LoadCalibration("configs/calibration/h200-2x.textproto");
  ASSERT_TRUE(bundled.ok()) << bundled.status().message();
  EXPECT_FALSE(bundled->nccl.protocol.empty());
  EXPECT_TRUE(bundled->host.library_issue_us.has_value());
}

}  // namespace
}  // namespace specsim::calib
