#include "sim/tools/chrome_trace.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "sim/tools/collective_command.h"
#include "sim/tools/simulate_command.h"

namespace specsim::tools {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Nested slices are fine; a slice that starts inside another and ends after it is found, on its
// own track only.
TEST(ChromeTrace, PartialOverlapsFindsOnlyPartlyOverlappingSlicesOfOneTrack) {
  TraceEventWriter w;
  w.Slice(1, 1, "outer", "c", 0, 10);
  w.Slice(1, 1, "inner", "c", 2, 3);
  w.Slice(1, 1, "after", "c", 10, 5);
  w.Slice(1, 2, "other track", "c", 1, 20);
  EXPECT_TRUE(PartialOverlaps(w.ToString()).empty());
  w.Slice(1, 1, "straddles", "c", 12, 10);  // inside "after" [10, 15), ends at 22
  const auto bad = PartialOverlaps(w.ToString());
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_NE(bad[0].find("straddles"), std::string::npos) << bad[0];
  EXPECT_NE(bad[0].find("after"), std::string::npos) << bad[0];
  EXPECT_EQ(PartialOverlaps("{").size(), 1u);
}

// Every trace the commands write draws in Perfetto: `collective --trace` for every algorithm on
// every bundled box (one-shot and two-shot ranks pull from all peers at once: those flows get a lane
// each), and `simulate --trace` of every bundled scenario.
TEST(ChromeTrace, EveryTraceTheCommandsWriteHasNoPartialOverlaps) {
  const std::string path = ::testing::TempDir() + "/specsim_trace_check.json";
  for (const char* hw : {"rtxpro6000-8x-dual-socket", "rtxpro6000-8x-pcie-switch", "rtxpro6000-4x-pcie-switch",
                         "h200-8x-nvlink", "h200-2x-nvlink"}) {
    CollectiveFlags f;
    f.hardware = std::string(SPECSIM_SOURCE_DIR) + "/configs/hardware/" + hw + ".textproto";
    f.algo = "all";
    f.sizes = "8K,1M";
    f.trace = path;
    std::ostringstream out, err;
    ASSERT_EQ(RunCollective(f, out, err), 0) << err.str();
    const auto bad = PartialOverlaps(ReadAll(path));
    EXPECT_TRUE(bad.empty()) << hw << ": " << bad.size() << " partial overlaps, first: " << bad.front();
  }
  for (const char* scenario : {"kimi-k2-eagle3-rtxpro6000-8x", "kimi-k2-mtp-rtxpro6000-8x",
                               "llama-3.1-8b-eagle3-h200-2x", "llama-3.1-8b-eagle3-rtxpro6000-4x"}) {
    SimulateFlags f;
    f.scenario = std::string(SPECSIM_SOURCE_DIR) + "/configs/scenarios/" + scenario + ".textproto";
    f.trace = path;
    std::ostringstream out, err;
    ASSERT_EQ(RunSimulate(f, out, err), 0) << err.str();
    const auto bad = PartialOverlaps(ReadAll(path));
    EXPECT_TRUE(bad.empty()) << scenario << ": " << bad.size() << " partial overlaps, first: " << bad.front();
  }
}

}  // namespace
}  // namespace specsim::tools
