// `specsim sweep SCENARIO --vary field=v1,v2 --vary ...`: the cross product of the varied fields,
// simulated on all cores, written as CSV (one row per point; --json: JSON rows), optionally drawn as
// an SVG of tokens/s against one varied field. `--vary-together f=a,b g=c,d` varies several fields
// in lockstep (one axis: (f, g) = (a, c), (b, d)), e.g. speculation.num_steps with
// num_draft_tokens. A point whose combination the scenario checks refuse is a row with its reason
// (status column), never an abort; only a field path or value that cannot be set (a typo) stops the
// sweep before it starts.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "sim/core/status.h"

namespace CLI {
class App;  // <CLI/CLI.hpp>, included where the flags are registered
}  // namespace CLI

namespace specsim::tools {

struct SweepFlags {
  std::string scenario;           // empty: the embedded default
  std::vector<std::string> vary;  // "field.path=v1,v2,..."
  // Each group: "field.path=v1,v2,..." lists of equal length, varied in lockstep.
  std::vector<std::vector<std::string>> vary_together;
  std::vector<std::string> set;  // fixed overrides applied before the varied ones
  std::string calibration;
  std::string out;       // CSV path; empty: stdout
  std::string svg;       // SVG path; empty: none
  std::string x;         // field on the SVG's x axis; empty: the first --vary
  int threads = 0;       // 0: all cores
  bool progress = true;  // progress bar on stderr (the CLI turns it off when stderr is not a terminal)
  bool json = false;     // JSON rows instead of CSV
  bool yes = false;      // run more than kSweepPointsWithoutYes points
  // "I/N": run the I-th of N contiguous blocks of the points (0 <= I < N), for a scheduler's job
  // array; the CSV starts with a `# specsim sweep shard` line that --merge checks. Empty: all points.
  std::string shard;
  // Shard CSVs to check (same sweep, every block once, in any order) and join into the CSV the
  // unsharded sweep writes; the --vary flags are not needed then.
  std::vector<std::string> merge;
};

// Points a sweep runs without --yes (each point simulates the scenario once: milliseconds to a
// second); more is refused with the count, so that a typo in a --vary list does not start hours.
inline constexpr int64_t kSweepPointsWithoutYes = 10000;
// Points a sweep runs at most, --yes or not (each point's results are held until the table is
// written).
inline constexpr int64_t kSweepPointsMax = 1000000;

struct VaryAxis {
  std::string field;
  std::vector<std::string> values;
  int group = -1;  // axes of one group vary together (--vary-together); -1: its own
};

// A sweep's shard: block `index` of `count`.
struct SweepShard {
  int64_t index = 0, count = 1;
};
// "I/N" with 0 <= I < N, N >= 1; InvalidArgument naming --shard.
StatusOr<SweepShard> ParseShard(const std::string& text);

// The number of points of the cross product, and point `i` of CrossProduct's order (the first
// dimension slowest), without building the others.
int64_t CrossProductSize(const std::vector<VaryAxis>& axes);
std::vector<std::string> CrossProductPoint(const std::vector<VaryAxis>& axes, int64_t i);

// "a.b=1,2,4" -> {field "a.b", values {"1","2","4"}}. InvalidArgument names the flag.
StatusOr<VaryAxis> ParseVary(const std::string& text);
// The cross product, first axis slowest: each point is one value per axis, in axis order; axes of
// one group (equal value counts) take their i-th values together, as one dimension.
std::vector<std::vector<std::string>> CrossProduct(const std::vector<VaryAxis>& axes);

int RunSweep(const SweepFlags& flags, std::ostream& out, std::ostream& err);
void AddSweepCommand(CLI::App& app, int* exit_code);

}  // namespace specsim::tools
