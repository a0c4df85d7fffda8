#include "sim/calib/nccl_tests_log.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "sim/calib/calib_inputs.h"
#include "sim/calib/compare.h"
#include "sim/calib/fit.h"
#include "sim/calib/trace_io.h"
#include "sim/io/file_io.h"

namespace specsim::calib {
namespace {

const std::string kLogs = std::string(SPECSIM_SOURCE_DIR) + "/traces/nccl-tests/h200-1x-2026-12-01/";

// The committed all_reduce_perf log (one H200, -b 8 -e 128M -f 2): 25 rows, two halves each; the
// first row's times (7.09 out of place, 0.49 in place) and the header's NCCL and GPU.
TEST(NcclTestsLog, ReadsBothHalvesOfEveryRowOfARealLog) {
  auto text = io::ReadFileToString(kLogs + "all_reduce_perf-h200-1gpu.log");
  ASSERT_TRUE(text.ok());
  ASSERT_TRUE(LooksLikeNcclTestsLog(*text));
  auto t = ParseNcclTestsLog(*text, "all_reduce.log");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->tool(), "nccl-tests");
  EXPECT_EQ(t->tool_version(), "2.19.6");
  EXPECT_EQ(t->environment().nccl_version(), "2.28.3");
  ASSERT_EQ(t->environment().gpus_size(), 1);
  EXPECT_EQ(t->environment().gpus(0).name(), "NVIDIA H200");
  ASSERT_EQ(t->items_size(), 50);
  const trace::Item& first = t->items(0);
  EXPECT_EQ(first.name(), "nccl-tests/all_reduce_perf/out-of-place/eager/n1/8B");
  EXPECT_EQ(first.collective().op(), trace::ALLREDUCE);
  EXPECT_EQ(first.collective().bytes(), 8);
  EXPECT_EQ(first.collective().count(), 4);
  EXPECT_EQ(first.collective().dtype(), trace::DTYPE_BF16);
  EXPECT_EQ(first.collective().nranks(), 1);
  EXPECT_FALSE(first.collective().in_place());
  EXPECT_DOUBLE_EQ(first.stats().median_us(), 7.09);
  EXPECT_EQ(first.stats().iterations(), 20);  // "iters: 20", not "warmup iters: 1" or "agg iters: 1"
  EXPECT_TRUE(t->items(1).collective().in_place());
  EXPECT_DOUBLE_EQ(t->items(1).stats().median_us(), 0.49);
  EXPECT_EQ(t->items(49).name(), "nccl-tests/all_reduce_perf/in-place/eager/n1/128MiB");
}

// The other three tests: all-gather's first row is size 0 (8 B of bf16 round to 0 per rank),
// dropped with a note; all-to-all reads as ALLTOALL.
TEST(NcclTestsLog, ReadsTheOtherTestsAndDropsSizeZero) {
  for (const char* test : {"all_gather", "reduce_scatter", "alltoall"}) {
    auto text = io::ReadFileToString(kLogs + test + "_perf-h200-1gpu.log");
    ASSERT_TRUE(text.ok()) << test;
    auto t = ParseNcclTestsLog(*text, test);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_EQ(t->items_size(), 48) << test;  // 24 rows of a size above 0
    ASSERT_EQ(t->notes_size(), 1) << test;
    EXPECT_NE(t->notes(0).message().find("1 rows of size 0"), std::string::npos);
  }
  auto a2a = ParseNcclTestsLog(*io::ReadFileToString(kLogs + "alltoall_perf-h200-1gpu.log"), "a2a");
  ASSERT_TRUE(a2a.ok());
  EXPECT_EQ(a2a->items(0).collective().op(), trace::ALLTOALL);
}

// Two ranks on one host, NCCL_DEBUG=INFO lines (NCCL_PROTO set), graph launches, and a launcher's
// "0: " prefix on a row: ranks map to their devices, the variable reaches the items.
TEST(NcclTestsLog, RanksDevicesEnvironmentAndGraphs) {
  const std::string log =
      "# nccl-tests version 2.19.6 nccl-headers=22803 nccl-library=22803\n"
      "# Collective test starting: all_gather_perf\n"
      "# nThread 1 nGpus 2 minBytes 1024 maxBytes 2048 step: 2(factor) warmup iters: 5 iters: 50 agg iters: 2 "
      "validation: 0 graph: 10 unalign: 0\n"
      "#\n# Using devices\n"
      "#  Rank  0 Group  0 Pid   1230 on      box device  2 [0000:17:00] NVIDIA RTX PRO 6000\n"
      "#  Rank  1 Group  0 Pid   1230 on      box device  5 [0000:31:00] NVIDIA RTX PRO 6000\n"
      "box:1230:1230 [0] NCCL INFO NCCL_PROTO set by environment to LL\n"
      "        1024           256     float    none      -1    10.50    0.10    0.05    N/A    10.40    0.10    0.05   "
      " N/A\n"
      "0:     2048           512     float    none      -1    11.50    0.18    0.09    N/A    11.40    0.18    0.09    "
      "N/A\n"
      "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 0.07 \n";
  auto t = ParseNcclTestsLog(log, "two.log");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->items_size(), 4);
  const trace::CollectiveParams& c = t->items(2).collective();
  EXPECT_EQ(c.nranks(), 2);
  EXPECT_EQ(std::vector<int>(c.gpus().begin(), c.gpus().end()), (std::vector<int>{2, 5}));
  EXPECT_EQ(c.nccl_proto(), "LL");
  EXPECT_TRUE(c.cuda_graph());
  EXPECT_EQ(c.ops_per_graph(), 100);  // iters x agg iters
  EXPECT_EQ(c.dtype(), trace::DTYPE_FP32);
  EXPECT_EQ(t->items(2).stats().iterations(), 50);
  EXPECT_EQ(t->environment().nccl_env().at("NCCL_PROTO"), "LL");
}

// Logs this cannot read say which file, line and what.
TEST(NcclTestsLog, RefusesWhatItCannotRead) {
  const std::string head = "# nccl-tests version 2.19.6 nccl-headers=22803 nccl-library=22803\n";
  const std::string rank = "#  Rank  0 Group  0 Pid 1 on h device  0 [0000:00:06] NVIDIA H200\n";
  const std::string row =
      "        1024           512  bfloat16     sum      -1     7.00    0.15    0.00       0     0.50    2.05    0.00  "
      "     0\n";
  auto message = [](const StatusOr<trace::Trace>& t) { return t.ok() ? std::string("ok") : t.status().message(); };
  EXPECT_NE(message(ParseNcclTestsLog(head + rank + row, "a.log")).find("a.log: an nccl-tests log without"),
            std::string::npos);
  EXPECT_NE(message(ParseNcclTestsLog(head + "# Collective test starting: broadcast_perf\n" + rank + row, "b.log"))
                .find("broadcast_perf: specsim reads all_reduce_perf"),
            std::string::npos);
  const std::string start = head + "# Collective test starting: all_reduce_perf\n";
  EXPECT_NE(message(ParseNcclTestsLog(start + row, "c.log")).find("no '#  Rank N"), std::string::npos);
  std::string rank5 = rank;
  rank5.replace(rank5.find("Rank  0"), 7, "Rank  5");
  EXPECT_NE(
      message(ParseNcclTestsLog(start + rank5 + row, "h.log")).find("h.log: rank 5 of 1 listed: the ranks are 0..0"),
      std::string::npos);
  EXPECT_NE(message(ParseNcclTestsLog(start + rank, "d.log")).find("d.log: no data row"), std::string::npos);
  std::string bad_time = row;
  bad_time.replace(bad_time.find("7.00"), 4, "nan!");
  EXPECT_NE(message(ParseNcclTestsLog(start + rank + bad_time, "e.log")).find("e.log:4: a data row whose time"),
            std::string::npos);
  std::string bad_type = row;
  bad_type.replace(bad_type.find("bfloat16"), 8, "  f8e4m3");
  EXPECT_NE(message(ParseNcclTestsLog(start + rank + bad_type, "f.log")).find("f.log:4: type f8e4m3"),
            std::string::npos);
  EXPECT_FALSE(LooksLikeNcclTestsLog("specsim trace"));
  // A line blank by any whitespace (a vertical tab: regressions/nccl_tests_log_fuzz/
  // vertical-tab-line.log) has no tokens and is skipped like an empty one.
  const std::string with_vtab = "\v\n" + start + "\v\f\n" + rank + row;
  EXPECT_TRUE(LooksLikeNcclTestsLog(with_vtab));
  auto vtab = ParseNcclTestsLog(with_vtab, "g.log");
  ASSERT_TRUE(vtab.ok()) << vtab.status().ToString();
  EXPECT_EQ(vtab->items_size(), 2);
}

// compare and calibrate read a log through the trace loader; the box comes from --hardware. Fitted
// on the all_reduce_perf log alone, NCCL's host cost per one-rank call is what its in-place calls
// (no copy, no kernel: ncclLaunchOneRank) measure, 0.3-2 us; the reduce_scatter_perf log's
// device-bound copies (16 MiB and up: 2 x size through HBM) come out within 10%.
TEST(NcclTestsLog, CompareAndCalibrateReadLogsWithTheBoxGiven) {
  auto without = LoadCalibInputs(kLogs + "reduce_scatter_perf-h200-1gpu.log", "", "");
  ASSERT_FALSE(without.ok());
  EXPECT_NE(without.status().message().find("give the box with --hardware"), std::string::npos);
  const std::string box = "configs/hardware/h200-1x.textproto";
  auto fit_on = LoadCalibInputs(kLogs + "all_reduce_perf-h200-1gpu.log", box, "");
  ASSERT_TRUE(fit_on.ok()) << fit_on.status().ToString();
  FitOptions options;
  options.fix_undetermined = true;
  auto fit = Fit(fit_on->trace, {}, *fit_on->topology, fit_on->params, options);
  ASSERT_TRUE(fit.ok()) << fit.status().ToString();
  const double overhead_us = fit->params.nccl.local_call_overhead_ns * 1e-3;
  EXPECT_GT(overhead_us, 0.3);
  EXPECT_LT(overhead_us, 2.0);
  auto in = LoadCalibInputs(kLogs + "reduce_scatter_perf-h200-1gpu.log", box, "");
  ASSERT_TRUE(in.ok()) << in.status().ToString();
  auto result = Compare(in->trace, *in->topology, fit->params, {});
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  int large = 0;
  for (const ItemResult& r : result->items) {
    ASSERT_TRUE(r.simulated) << r.name << ": " << r.reason;
    if (r.name.find("/in-place/") != std::string::npos) {
      EXPECT_DOUBLE_EQ(r.predicted_us, overhead_us) << r.name;
    }
    if (r.name.find("/out-of-place/") != std::string::npos && r.name.find("MiB") != std::string::npos &&
        std::stoi(r.name.substr(r.name.rfind('/') + 1)) >= 16) {
      EXPECT_LT(std::abs(r.error), 0.10) << r.name;
      ++large;
    }
  }
  EXPECT_EQ(result->items.size(), 48u);
  EXPECT_EQ(large, 4);  // 16, 32, 64, 128 MiB
}

}  // namespace
}  // namespace specsim::calib
