#include "sim/tools/nccl_tests_format.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace specsim::tools {
namespace {

// Real nccl-tests 2.19.6 logs (NCCL 2.28.3, one H200; traces/nccl-tests/h200-1x-2026-12-01, made
// with `<op>_perf -b 8 -e 128M -f 2 -g 1 -d bfloat16`).
std::vector<std::string> LogLines(const std::string& test) {
  std::ifstream in(std::string(SPECSIM_SOURCE_DIR) + "/traces/nccl-tests/h200-1x-2026-12-01/" + test +
                   "_perf-h200-1gpu.log");
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

struct LogRow {
  std::string line;
  int64_t size = 0, count = 0;
  std::string type, redop;
  double time = 0, algbw = 0, busbw = 0;
};

std::vector<LogRow> DataRows(const std::vector<std::string>& lines) {
  std::vector<LogRow> rows;
  for (const std::string& l : lines) {
    if (l.empty() || l[0] == '#') continue;
    LogRow r;
    r.line = l;
    std::istringstream s(l);
    int root = 0;
    s >> r.size >> r.count >> r.type >> r.redop >> root >> r.time >> r.algbw >> r.busbw;
    if (s) rows.push_back(r);
  }
  return rows;
}

// Our header's columns are nccl-tests' up to #wrong, character for character; every row printed
// from a logged row's values reproduces the log's line up to its out-of-place busbw.
TEST(NcclTestsFormat, HeaderAndRowsLineUpWithARealLog) {
  for (const char* test : {"all_reduce", "all_gather", "reduce_scatter", "alltoall"}) {
    const std::vector<std::string> lines = LogLines(test);
    ASSERT_GT(lines.size(), 20u) << test;
    std::string names, units;
    for (const std::string& l : lines) {
      if (l.rfind("#       size", 0) == 0) names = l;
      if (l.rfind("#        (B)", 0) == 0) units = l;
    }
    ASSERT_FALSE(names.empty()) << test;
    const std::string header = NcclTestsHeader("", "");
    const std::string ours_names = header.substr(0, header.find('\n'));
    const size_t wrong = names.find("#wrong") + 6;
    EXPECT_EQ(ours_names, names.substr(0, wrong)) << test;
    const std::string ours_units = header.substr(header.find('\n') + 1);
    EXPECT_EQ(ours_units.substr(0, ours_units.size() - 1), units.substr(0, units.find("(GB/s)  (GB/s)") + 14));
    const std::vector<LogRow> rows = DataRows(lines);
    ASSERT_EQ(rows.size(), 25u) << test;  // 8 B .. 128 MiB
    for (const LogRow& r : rows) {
      const std::string ours = NcclTestsRow(r.size, r.count, r.type, r.redop, r.time, r.algbw, r.busbw, "");
      const size_t end = 12 + 2 + 12 + 2 + 8 + 2 + 6 + 2 + 6 + 2 + 7 + 2 + 6 + 2 + 6;
      EXPECT_EQ(ours.substr(0, end), r.line.substr(0, end)) << test;
      EXPECT_EQ(ours.substr(end), "    N/A\n");
    }
  }
}

// The size and count columns of every logged row from the size requested (-b 8 -f 2: 8 << i), one
// rank: all-gather, reduce-scatter and all-to-all round each rank's part down to 16 bytes (8 B of
// bf16 prints size 0); all-reduce does not.
TEST(NcclTestsFormat, SizeAndCountConventionOfEachTest) {
  const std::pair<const char*, coll::Collective> tests[] = {{"all_reduce", coll::Collective::kAllReduce},
                                                            {"all_gather", coll::Collective::kAllGather},
                                                            {"reduce_scatter", coll::Collective::kReduceScatter},
                                                            {"alltoall", coll::Collective::kAllToAll}};
  for (const auto& [test, collective] : tests) {
    const std::vector<LogRow> rows = DataRows(LogLines(test));
    ASSERT_EQ(rows.size(), 25u) << test;
    for (size_t i = 0; i < rows.size(); ++i) {
      const NcclTestsSize s = NcclTestsSizeOf(collective, int64_t{8} << i, 2, 1);
      EXPECT_EQ(s.size_bytes, rows[i].size) << test << " row " << i;
      EXPECT_EQ(s.count, rows[i].count) << test << " row " << i;
      EXPECT_EQ(NcclTestsRedop(collective, "sum").value(), rows[i].redop) << test;
    }
  }
  // Eight ranks: all-gather of 1 MiB of bf16 passes 65536 elements per rank; 1000 bytes are 500
  // elements, 62 per rank, rounded down to 16 bytes (8 elements): 56 per rank, 896 bytes printed.
  EXPECT_EQ(NcclTestsSizeOf(coll::Collective::kAllGather, 1 << 20, 2, 8).count, 65536);
  const NcclTestsSize odd = NcclTestsSizeOf(coll::Collective::kAllGather, 1000, 2, 8);
  EXPECT_EQ(odd.count, 56);
  EXPECT_EQ(odd.size_bytes, 56 * 8 * 2);
  EXPECT_EQ(NcclTestsSizeOf(coll::Collective::kAllReduce, 1000, 4, 8).count, 250);
}

TEST(NcclTestsFormat, NamesSizesAndSweeps) {
  EXPECT_EQ(ParseNcclTestsType("bfloat16").value().bytes, 2);
  EXPECT_EQ(ParseNcclTestsType("bf16").value().name, "bfloat16");
  EXPECT_EQ(ParseNcclTestsType("fp32").value().name, "float");
  EXPECT_EQ(ParseNcclTestsType("f8e5m2").value().bytes, 1);
  EXPECT_FALSE(ParseNcclTestsType("bf8").ok());
  EXPECT_EQ(NcclTestsRedop(coll::Collective::kAllGather, "max").value(), "none");
  EXPECT_FALSE(NcclTestsRedop(coll::Collective::kAllReduce, "mean").ok());
  EXPECT_EQ(ParseNcclTestsBytes("32M").value(), 32 << 20);
  EXPECT_EQ(ParseNcclTestsBytes("1.5K").value(), 1536);
  EXPECT_EQ(ParseNcclTestsBytes("8").value(), 8);
  EXPECT_FALSE(ParseNcclTestsBytes("8X").ok());
  EXPECT_FALSE(ParseNcclTestsBytes("-1").ok());
  EXPECT_EQ(NcclTestsSizeSweep(8, 128 << 20, 2, 0).value().size(), 25u);
  EXPECT_EQ(NcclTestsSizeSweep(1 << 20, 4 << 20, 0, 1 << 20).value(),
            (std::vector<int64_t>{1 << 20, 2 << 20, 3 << 20, 4 << 20}));
  EXPECT_FALSE(NcclTestsSizeSweep(16, 8, 2, 0).ok());
  EXPECT_FALSE(NcclTestsSizeSweep(8, 16, 0, 0).ok());
  // A factor too close to 1 (1024 x 1.0000001 rounds down to 1024) is refused, naming -f: the
  // sweep would stop after the first size. The last size may round to itself: nothing is lost.
  auto creep = NcclTestsSizeSweep(1024, 1 << 20, 1.0000001, 0);
  ASSERT_FALSE(creep.ok());
  EXPECT_NE(creep.status().message().find("-f 1.0000001"), std::string::npos) << creep.status().message();
  EXPECT_EQ(NcclTestsSizeSweep(1024, 1024, 1.0000001, 0).value(), std::vector<int64_t>{1024});
}

}  // namespace
}  // namespace specsim::tools
