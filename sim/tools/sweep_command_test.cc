#include "sim/tools/sweep_command.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace specsim::tools {
namespace {

TEST(Sweep, ParseVaryAndCrossProduct) {
  auto a = ParseVary("serving.batch_size=1,4");
  auto b = ParseVary("speculation.num_draft_tokens=2,4,8");
  ASSERT_TRUE(a.ok() && b.ok());
  auto points = CrossProduct({*a, *b});
  ASSERT_EQ(points.size(), 6u);
  EXPECT_EQ(points[0], (std::vector<std::string>{"1", "2"}));
  EXPECT_EQ(points[5], (std::vector<std::string>{"4", "8"}));
  EXPECT_FALSE(ParseVary("serving.batch_size").ok());
  EXPECT_FALSE(ParseVary("serving.batch_size=1,,2").ok());
}

std::vector<std::string> Lines(const std::string& s) {
  std::vector<std::string> lines;
  std::stringstream ss(s);
  for (std::string l; std::getline(ss, l);) lines.push_back(l);
  return lines;
}

TEST(Sweep, WritesOneCsvRowPerPointAndAnSvg) {
  SweepFlags f;
  f.vary = {"serving.batch_size=1,2", "communication.allreduce_algorithm=auto,oneshot"};
  f.set = {"speculation.cycles=50"};
  f.svg = ::testing::TempDir() + "/sweep.svg";
  f.progress = false;
  f.threads = 2;
  std::ostringstream out, err;
  ASSERT_EQ(RunSweep(f, out, err), 0) << err.str();
  auto lines = Lines(out.str());
  ASSERT_EQ(lines.size(), 5u);  // header + 4 points
  EXPECT_EQ(lines[0].rfind("serving.batch_size,communication.allreduce_algorithm,baseline_tokens_per_s", 0), 0u);
  for (size_t i = 1; i < lines.size(); ++i) EXPECT_EQ(lines[i].substr(lines[i].size() - 3), ",ok") << lines[i];
  std::ifstream svg(f.svg);
  std::string text((std::istreambuf_iterator<char>(svg)), {});
  EXPECT_NE(text.find("<svg"), std::string::npos);
  EXPECT_NE(text.find("speculative (allreduce_algorithm=oneshot)"), std::string::npos);
  // Deterministic whatever the thread count.
  f.threads = 1;
  std::ostringstream out1;
  ASSERT_EQ(RunSweep(f, out1, err), 0);
  EXPECT_EQ(out.str(), out1.str());
}

// Issue 15, item 7: a write that fails is exit 1 naming the file, and nothing is left half
// written (the CSV goes to a temporary file renamed into place).
TEST(Sweep, AFailedWriteIsExitOneAndLeavesNoPartialFile) {
  SweepFlags f;
  f.vary = {"serving.batch_size=1,2"};
  f.set = {"speculation.cycles=20"};
  f.progress = false;
  f.threads = 1;
  f.out = ::testing::TempDir() + "/no-such-dir/sweep.csv";
  std::ostringstream out, err;
  EXPECT_EQ(RunSweep(f, out, err), 1);
  EXPECT_NE(err.str().find("--out " + f.out + ": cannot write"), std::string::npos) << err.str();
  EXPECT_FALSE(std::filesystem::exists(f.out));
  // Written whole where it can be.
  f.out = ::testing::TempDir() + "/sweep.csv";
  std::ostringstream out2, err2;
  ASSERT_EQ(RunSweep(f, out2, err2), 0) << err2.str();
  std::ifstream csv(f.out);
  std::string text((std::istreambuf_iterator<char>(csv)), {});
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3);                        // header + 2 points
  for (const auto& e : std::filesystem::directory_iterator(::testing::TempDir()))  // no temporary left
    EXPECT_EQ(e.path().filename().string().find("sweep.csv.tmp-specsim"), std::string::npos);
}

// Issue 15, item 8: a field varied twice mislabelled the CSV's rows; it is an error.
TEST(Sweep, AFieldVariedTwiceIsAnError) {
  SweepFlags f;
  f.vary = {"serving.batch_size=1,2", "serving.batch_size=4"};
  f.progress = false;
  std::ostringstream out, err;
  EXPECT_EQ(RunSweep(f, out, err), 2);
  EXPECT_NE(err.str().find("--vary serving.batch_size is given twice"), std::string::npos) << err.str();
}

// A --set of a varied field (the varied value would override it at every point) and one path for
// --out and --svg (one would overwrite the other) are refused before anything runs, naming the flags.
TEST(Sweep, ASetOfAVariedFieldAndOneFileForBothOutputsAreErrors) {
  SweepFlags f;
  f.vary = {"serving.batch_size=1,2"};
  f.set = {"serving.batch_size=8"};
  f.progress = false;
  std::ostringstream out, err;
  EXPECT_EQ(RunSweep(f, out, err), 2);
  EXPECT_NE(err.str().find("--set serving.batch_size=8: serving.batch_size is also varied"), std::string::npos)
      << err.str();
  EXPECT_TRUE(out.str().empty());

  SweepFlags g;
  g.vary = {"serving.batch_size=1,2"};
  const std::string dir = ::testing::TempDir();
  g.out = dir + "/both.csv";
  g.svg = dir + "/./both.csv";  // the same file, spelled otherwise
  g.progress = false;
  std::ostringstream out2, err2;
  EXPECT_EQ(RunSweep(g, out2, err2), 2);
  EXPECT_NE(err2.str().find("name the same file"), std::string::npos) << err2.str();
  EXPECT_FALSE(std::filesystem::exists(g.out));
}

// Issue 15, item 6: a million-point sweep started without a word; past 10,000 points it needs --yes.
TEST(Sweep, ManyPointsNeedYes) {
  SweepFlags f;
  std::string values = "serving.batch_size=1";
  for (int b = 2; b <= 200; ++b) values += "," + std::to_string(b);
  std::string contexts = "serving.context_length=1024";
  for (int c = 2; c <= 60; ++c) contexts += "," + std::to_string(1024 * c);
  f.vary = {values, contexts};  // 200 x 60 = 12,000 points
  f.progress = false;
  std::ostringstream out, err;
  EXPECT_EQ(RunSweep(f, out, err), 2);
  EXPECT_NE(err.str().find("12000 points"), std::string::npos) << err.str();
  EXPECT_NE(err.str().find("--yes"), std::string::npos) << err.str();

  // Past a million points, --yes or not, refused before anything runs (the points' rows are held
  // in memory). 200 x 60 x 100 = 1.2 million.
  std::string steps = "speculation.num_steps=1";
  for (int s = 2; s <= 100; ++s) steps += "," + std::to_string(s);
  f.vary.push_back(steps);
  f.yes = true;
  std::ostringstream out2, err2;
  EXPECT_EQ(RunSweep(f, out2, err2), 2);
  EXPECT_NE(err2.str().find("1200000 points (the product of the --vary lists) is more than 1000000"), std::string::npos)
      << err2.str();
  EXPECT_NE(err2.str().find("--shard I/N with N >= 2"), std::string::npos) << err2.str();
}

TEST(Sweep, BadValuesFailBeforeSimulating) {
  SweepFlags f;
  f.vary = {"serving.batch_size=1,x"};
  f.progress = false;
  std::ostringstream out, err;
  EXPECT_EQ(RunSweep(f, out, err), 2);
  EXPECT_NE(err.str().find("batch_size"), std::string::npos) << err.str();
  f.vary = {"serving.batch_size=1"};
  f.x = "serving.context_length";
  EXPECT_EQ(RunSweep(f, out, err), 2);
}

TEST(Sweep, PointsThatDoNotFitAreReportedNotDropped) {
  SweepFlags f;
  f.vary = {"serving.expert_weight_dtype=INT4,BF16"};
  f.set = {"speculation.cycles=20"};
  f.progress = false;
  std::ostringstream out, err;
  ASSERT_EQ(RunSweep(f, out, err), 0) << err.str();
  auto lines = Lines(out.str());
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_NE(lines[1].find(",ok"), std::string::npos);
  EXPECT_NE(lines[2].find("does-not-fit"), std::string::npos);
}

// --vary-together: linked fields are one axis (their i-th values together), crossed with the other
// axes; value counts must agree.
TEST(Sweep, LinkedAxesVaryInLockstep) {
  auto steps = ParseVary("speculation.num_steps=1,2,3");
  auto drafts = ParseVary("speculation.num_draft_tokens=2,3,4");
  auto batch = ParseVary("serving.batch_size=1,8");
  ASSERT_TRUE(steps.ok() && drafts.ok() && batch.ok());
  steps->group = drafts->group = 0;
  const auto points = CrossProduct({*steps, *batch, *drafts});
  ASSERT_EQ(points.size(), 6u);  // 3 linked x 2, not 3 x 2 x 3
  EXPECT_EQ(points[0], (std::vector<std::string>{"1", "1", "2"}));
  EXPECT_EQ(points[1], (std::vector<std::string>{"1", "8", "2"}));
  EXPECT_EQ(points[5], (std::vector<std::string>{"3", "8", "4"}));
  SweepFlags f;
  f.vary_together = {{"speculation.num_steps=1,2,3,4,5", "speculation.num_draft_tokens=2,3,4,5,6"}};
  f.set = {"speculation.cycles=50"};
  f.progress = false;
  std::ostringstream out, err;
  ASSERT_EQ(RunSweep(f, out, err), 0) << err.str();
  const auto lines = Lines(out.str());
  ASSERT_EQ(lines.size(), 6u);
  for (size_t i = 1; i < lines.size(); ++i) EXPECT_NE(lines[i].find(",ok"), std::string::npos) << lines[i];
  f.vary_together = {{"speculation.num_steps=1,2", "speculation.num_draft_tokens=2"}};
  EXPECT_EQ(RunSweep(f, out, err), 2);
  EXPECT_NE(err.str().find("lockstep"), std::string::npos) << err.str();
}

// Issue 42 item 4: a point by its index is CrossProduct's point (groups in lockstep), without the
// others built.
TEST(Sweep, PointsByIndexFollowTheCrossProductsOrder) {
  auto steps = ParseVary("speculation.num_steps=1,2,3");
  auto drafts = ParseVary("speculation.num_draft_tokens=2,3,4,5");  // the group's shortest list counts
  auto batch = ParseVary("serving.batch_size=1,8");
  ASSERT_TRUE(steps.ok() && drafts.ok() && batch.ok());
  steps->group = drafts->group = 0;
  const std::vector<VaryAxis> axes = {*steps, *batch, *drafts};
  const auto all = CrossProduct(axes);
  ASSERT_EQ(CrossProductSize(axes), static_cast<int64_t>(all.size()));
  for (size_t i = 0; i < all.size(); ++i) EXPECT_EQ(CrossProductPoint(axes, static_cast<int64_t>(i)), all[i]) << i;
  EXPECT_TRUE(ParseShard("0/1").ok());
  EXPECT_EQ(ParseShard("3/16")->index, 3);
  for (const char* bad : {"4/4", "-1/4", "1/0", "1", "a/b", "1/2x", "/2"}) EXPECT_FALSE(ParseShard(bad).ok()) << bad;
}

// Shards of a sweep, merged in any order, are the unsharded sweep's CSV byte for byte; a shard
// missing, given twice, cut short or from another sweep is refused naming it. Shards may be empty
// (more shards than points).
TEST(Sweep, ShardsMergeIntoTheUnshardedSweep) {
  SweepFlags f;
  f.vary = {"serving.batch_size=1,2,4", "speculation.num_draft_tokens=2,4,8"};
  f.set = {"speculation.cycles=50"};
  f.progress = false;
  std::ostringstream whole, err;
  ASSERT_EQ(RunSweep(f, whole, err), 0) << err.str();
  const std::string dir = ::testing::TempDir();
  std::vector<std::string> paths;
  for (int i = 0; i < 4; ++i) {
    SweepFlags s = f;
    s.shard = std::to_string(i) + "/4";
    s.out = dir + "/shard" + std::to_string(i) + ".csv";
    ASSERT_EQ(RunSweep(s, whole, err), 0) << err.str();
    paths.push_back(s.out);
  }
  auto merge = [&](std::vector<std::string> files, std::string* text) {
    SweepFlags m;
    m.merge = std::move(files);
    std::ostringstream o, e;
    const int rc = RunSweep(m, o, e);
    *text = rc == 0 ? o.str() : e.str();
    return rc;
  };
  std::string merged;
  ASSERT_EQ(merge({paths[2], paths[0], paths[3], paths[1]}, &merged), 0) << merged;
  std::ostringstream again;
  ASSERT_EQ(RunSweep(f, again, err), 0);
  EXPECT_EQ(merged, again.str());
  EXPECT_EQ(merge({paths[0], paths[1], paths[3]}, &merged), 2);
  EXPECT_NE(merged.find("shard(s) 2 of 4 missing"), std::string::npos) << merged;
  EXPECT_EQ(merge({paths[0], paths[1], paths[1], paths[2], paths[3]}, &merged), 2);
  EXPECT_NE(merged.find("given more than once"), std::string::npos) << merged;
  {  // cut short: its last row lost
    std::ifstream in(paths[3]);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    text.erase(text.rfind('\n', text.size() - 2) + 1);
    std::ofstream(dir + "/short.csv") << text;
  }
  EXPECT_EQ(merge({paths[0], paths[1], paths[2], dir + "/short.csv"}, &merged), 2);
  EXPECT_NE(merged.find("cut short"), std::string::npos) << merged;
  SweepFlags other = f;
  other.set = {"speculation.cycles=60"};
  other.shard = "3/4";
  other.out = dir + "/other.csv";
  ASSERT_EQ(RunSweep(other, whole, err), 0);
  EXPECT_EQ(merge({paths[0], paths[1], paths[2], other.out}, &merged), 2);
  EXPECT_NE(merged.find("from another sweep"), std::string::npos) << merged;
  EXPECT_EQ(merge({dir + "/missing.csv"}, &merged), 2);
  std::ofstream(dir + "/zero.csv") << "# specsim sweep shard 0/0: points 0..0 of 9, sweep 45340f28537c80e0\nh\n";
  EXPECT_EQ(merge({dir + "/zero.csv"}, &merged), 2);  // no division by a count of 0
  EXPECT_NE(merged.find("needs 0 <= I < N"), std::string::npos) << merged;
  // More shards than points: empty blocks merge too.
  SweepFlags tiny;
  tiny.vary = {"serving.batch_size=1,2"};
  tiny.set = {"speculation.cycles=50"};
  tiny.progress = false;
  std::vector<std::string> tiny_paths;
  for (int i = 0; i < 3; ++i) {
    SweepFlags s = tiny;
    s.shard = std::to_string(i) + "/3";
    s.out = dir + "/tiny" + std::to_string(i) + ".csv";
    ASSERT_EQ(RunSweep(s, whole, err), 0) << err.str();
    tiny_paths.push_back(s.out);
  }
  ASSERT_EQ(merge(tiny_paths, &merged), 0) << merged;
  std::ostringstream tiny_whole;
  ASSERT_EQ(RunSweep(tiny, tiny_whole, err), 0);
  EXPECT_EQ(merged, tiny_whole.str());
}

// The README's sweep: num_draft_tokens 2 and 8 break the default scenario's chain rule (num_steps 3:
// 4 draft tokens) at every batch size; those points are rows with the reason, the sweep goes on.
// A field that cannot be set at all still stops it (BadValuesFailBeforeSimulating).
TEST(Sweep, InvalidCombinationsAreRowsWithTheirReason) {
  SweepFlags f;
  f.vary = {"speculation.num_draft_tokens=2,4,8", "serving.batch_size=1,8"};
  f.set = {"speculation.cycles=50"};
  f.progress = false;
  f.json = true;
  std::ostringstream out, err;
  ASSERT_EQ(RunSweep(f, out, err), 0) << err.str();
  const nlohmann::json j = nlohmann::json::parse(out.str());
  ASSERT_EQ(j["rows"].size(), 6u);
  int ok = 0;
  for (const auto& r : j["rows"]) {
    const std::string status = r["status"];
    if (status == "ok") {
      ++ok;
      EXPECT_EQ(r["speculation.num_draft_tokens"], "4");
      EXPECT_GT(r["speculative_tokens_per_s"].get<double>(), 0);
    } else {
      EXPECT_NE(status.find("must equal speculation.num_steps + 1"), std::string::npos) << status;
      EXPECT_FALSE(r.contains("tau"));
    }
  }
  EXPECT_EQ(ok, 2);
}

}  // namespace
}  // namespace specsim::tools
