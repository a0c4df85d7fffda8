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
  NcclTestsHalf out_of_place, in_place;
};

std::vector<LogRow> DataRows(const std::vector<std::string>& lines) {
  std::vector<LogRow> rows;
  for (const std::string& l : lines) {
    if (l.empty() || l[0] == '#') continue;
    LogRow r;
    r.line = l;
    std::istringstream s(l);
    int root = 0;
    std::string wrong;
    s >> r.size >> r.count >> r.type >> r.redop >> root >> r.out_of_place.time_us >> r.out_of_place.algbw_gbps >>
        r.out_of_place.busbw_gbps >> wrong >> r.in_place.time_us >> r.in_place.algbw_gbps >> r.in_place.busbw_gbps;
    if (s) rows.push_back(r);
  }
  return rows;
}

// Our three header lines are the log's, character for character (trailing blanks included); every
// row printed from a logged row's values reproduces the log's line in both halves, with #wrong "N/A"
// where the log (run with validation) printed "%6g" of its error count, as nccl-tests -c 0 prints
// it; the footer is the log's for its mean busbw (0 on one GPU).
TEST(NcclTestsFormat, HeaderRowsAndFooterLineUpWithARealLog) {
  for (const char* test : {"all_reduce", "all_gather", "reduce_scatter", "alltoall"}) {
    const std::vector<std::string> lines = LogLines(test);
    ASSERT_GT(lines.size(), 20u) << test;
    size_t names = 0;
    while (names < lines.size() && lines[names].rfind("#       size", 0) != 0) ++names;
    ASSERT_LT(names + 1, lines.size()) << test;
    EXPECT_EQ(NcclTestsHeader("", ""), lines[names - 1] + "\n" + lines[names] + "\n" + lines[names + 1] + "\n") << test;
    EXPECT_EQ(NcclTestsHeader("  x", "  y").substr(0, 2), "# ");
    const std::vector<LogRow> rows = DataRows(lines);
    ASSERT_EQ(rows.size(), 25u) << test;  // 8 B .. 128 MiB
    std::vector<NcclTestsHalf> halves;
    for (const LogRow& r : rows) {
      const std::string ours = NcclTestsRow(r.size, r.count, r.type, r.redop, r.out_of_place, r.in_place, "");
      const size_t end = 12 + 2 + 12 + 2 + 8 + 2 + 6 + 2 + 6 + 2 + 7 + 2 + 6 + 2 + 6;  // through busbw
      const size_t body = 2 + 7 + 2 + 6 + 2 + 6;                                       // time, algbw, busbw
      EXPECT_EQ(ours.substr(0, end), r.line.substr(0, end)) << test;
      EXPECT_EQ(ours.substr(end, 7), "    N/A");
      EXPECT_EQ(ours.substr(end + 7, body), r.line.substr(end + 8, body)) << test << ": " << r.line;
      EXPECT_EQ(ours.substr(end + 7 + body), "    N/A\n");
      halves.push_back(r.out_of_place);
      halves.push_back(r.in_place);
    }
    size_t footer = 0;
    while (footer < lines.size() && lines[footer].rfind("# Out of bounds", 0) != 0) ++footer;
    ASSERT_LT(footer + 2, lines.size()) << test;
    EXPECT_EQ(NcclTestsFooter(halves), lines[footer] + "\n" + lines[footer + 1] + "\n" + lines[footer + 2] + "\n");
  }
  // The average is the mean busbw over both halves of every row, printed %g.
  EXPECT_EQ(NcclTestsFooter({{1, 2, 10}, {1, 2, 20}, {1, 2, 40}}),
            "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 23.3333 \n#\n");
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
