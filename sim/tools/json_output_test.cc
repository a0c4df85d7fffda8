// --json is honoured by every command, with the flags that also write files or add sections: the
// whole standard output is one JSON document (nothing else printed on it).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "sim/tools/advise_command.h"
#include "sim/tools/calibrate_command.h"
#include "sim/tools/collective_command.h"
#include "sim/tools/compare_command.h"
#include "sim/tools/hardware_from_trace_command.h"
#include "sim/tools/import_profile_command.h"
#include "sim/tools/simulate_command.h"
#include "sim/tools/sweep_command.h"

namespace specsim::tools {
namespace {

const std::string kSrc = SPECSIM_SOURCE_DIR;

std::string Temp(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("specsim_json_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

// Runs `run`, expects exit 0 and standard output that parses as one JSON value.
void ExpectJson(const std::string& what, const std::function<int(std::ostream&, std::ostream&)>& run) {
  std::ostringstream out, err;
  ASSERT_EQ(run(out, err), 0) << what << ": " << err.str();
  const nlohmann::json j = nlohmann::json::parse(out.str(), nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(j.is_discarded()) << what << " printed non-JSON: " << out.str().substr(0, 300);
}

TEST(JsonOutput, EveryCommandPrintsOneJsonDocument) {
  {
    SimulateFlags f;
    f.json = true;
    ExpectJson("simulate", [&](auto& o, auto& e) { return RunSimulate(f, o, e); });
    f.compare_algos = true;
    f.trace = Temp("cycle.json");
    ExpectJson("simulate --compare-algos --trace", [&](auto& o, auto& e) { return RunSimulate(f, o, e); });
    SimulateFlags m;
    m.json = m.memory = true;
    ExpectJson("simulate --memory", [&](auto& o, auto& e) { return RunSimulate(m, o, e); });
  }
  {
    CollectiveFlags f;
    f.json = true;
    f.algo = "all";
    f.sizes = "1K,1M";
    f.trace = Temp("collective.json");
    ExpectJson("collective --algo all --trace", [&](auto& o, auto& e) { return RunCollective(f, o, e); });
  }
  {
    SweepFlags f;
    f.json = true;
    f.progress = false;
    f.vary = {"serving.batch_size=1,2"};
    f.svg = Temp("sweep.svg");
    ExpectJson("sweep --svg", [&](auto& o, auto& e) { return RunSweep(f, o, e); });
  }
  {
    AdviseFlags f;
    f.json = true;
    f.progress = false;
    f.scenario = kSrc + "/configs/scenarios/llama-3.1-8b-eagle3-rtxpro6000-4x.textproto";
    ExpectJson("advise", [&](auto& o, auto& e) { return RunAdvise(f, o, e); });
  }
  const std::string trace = kSrc + "/traces/h200-2x-ll-2026-11-30.pb";
  {
    CalibrateFlags f;
    f.json = true;
    f.traces = {trace};
    f.output = Temp("calibration.textproto");
    ExpectJson("calibrate -o", [&](auto& o, auto& e) { return RunCalibrate(f, o, e); });
  }
  {
    CompareFlags f;
    f.json = true;
    f.trace = trace;
    f.svg = Temp("compare.svg");
    ExpectJson("compare --svg", [&](auto& o, auto& e) { return RunCompare(f, o, e); });
    f.svg.clear();
    f.holdout = 0.3;
    f.seeds = 2;
    ExpectJson("compare --holdout --seeds", [&](auto& o, auto& e) { return RunCompare(f, o, e); });
  }
  {
    HardwareFromTraceFlags f;
    f.json = true;
    f.trace = trace;
    ExpectJson("hardware-from-trace", [&](auto& o, auto& e) { return RunHardwareFromTrace(f, o, e); });
    f.output = Temp("box.textproto");
    ExpectJson("hardware-from-trace -o", [&](auto& o, auto& e) { return RunHardwareFromTrace(f, o, e); });
  }
  {
    ImportProfileFlags f;
    f.json = true;
    f.paths = {kSrc + "/traces/profiles/torch-tp2-h200-fused-2026-11-30/fused-b1"};
    f.output = Temp("profile.pb");
    ExpectJson("import-profile -o", [&](auto& o, auto& e) { return RunImportProfile(f, o, e); });
  }
}

}  // namespace
}  // namespace specsim::tools
