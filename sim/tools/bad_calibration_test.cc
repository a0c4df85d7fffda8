// Every command that reads a calibration goes through one loader (sim/calib/calibration_loader.h):
// a calibration whose NCCL block has one bad entry is exit 2 naming the entry, never a run on
// defaults that drops the block.
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include "sim/tools/advise_command.h"
#include "sim/tools/collective_command.h"
#include "sim/tools/compare_command.h"
#include "sim/tools/import_profile_command.h"
#include "sim/tools/simulate_command.h"
#include "sim/tools/sweep_command.h"
#include "specsim/calibration.pb.h"

namespace specsim::tools {
namespace {

const std::string kSrc = SPECSIM_SOURCE_DIR;

// The bundled 2x H200 calibration with one more NCCL entry, of a protocol NCCL does not have.
std::string CalibrationWithABadNcclEntry() {
  std::ifstream in(kSrc + "/configs/calibration/h200-2x.textproto");
  std::stringstream text;
  text << in.rdbuf();
  config::Calibration c;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text.str(), &c));
  config::NcclProtocolCalibration* e = c.mutable_nccl()->add_protocols();
  e->set_transport("shm");
  e->set_protocol("ll256");
  e->set_base_latency_us(3);
  std::string bad;
  google::protobuf::TextFormat::PrintToString(c, &bad);
  const std::string path =
      (std::filesystem::temp_directory_path() / ("specsim_bad_nccl_" + std::to_string(::getpid()) + ".textproto"))
          .string();
  std::ofstream(path) << bad;
  return path;
}

void ExpectNamesTheEntry(const std::string& command, const std::function<int(std::ostream&, std::ostream&)>& run) {
  std::ostringstream out, err;
  EXPECT_EQ(run(out, err), 2) << command << ": " << err.str();
  EXPECT_NE(err.str().find("nccl.protocols["), std::string::npos) << command << ": " << err.str();
  EXPECT_NE(err.str().find("\"ll256\""), std::string::npos) << command << ": " << err.str();
  EXPECT_NE(err.str().find("specsim_bad_nccl_"), std::string::npos) << command << " does not name the file";
}

TEST(BadCalibration, EveryCommandThatReadsOneExitsTwoNamingTheEntry) {
  const std::string bad = CalibrationWithABadNcclEntry();
  {
    SimulateFlags f;
    f.calibration = bad;
    ExpectNamesTheEntry("simulate", [&](auto& o, auto& e) { return RunSimulate(f, o, e); });
  }
  {
    SweepFlags f;
    f.calibration = bad;
    f.progress = false;
    f.vary = {"serving.batch_size=1,2"};
    ExpectNamesTheEntry("sweep", [&](auto& o, auto& e) { return RunSweep(f, o, e); });
  }
  {
    AdviseFlags f;
    f.calibration = bad;
    f.progress = false;
    f.hardware = "configs/hardware/h200-2x-nvlink.textproto";
    f.model = "models/llama-3.1-8b.textproto";
    ExpectNamesTheEntry("advise", [&](auto& o, auto& e) { return RunAdvise(f, o, e); });
  }
  {
    CollectiveFlags f;
    f.calibration = bad;
    f.hardware = "configs/hardware/h200-2x-nvlink.textproto";
    f.sizes = "1K";
    ExpectNamesTheEntry("collective", [&](auto& o, auto& e) { return RunCollective(f, o, e); });
  }
  {
    CompareFlags f;
    f.calibration = bad;
    f.trace = kSrc + "/traces/h200-2x-ll-2026-11-30.pb";
    ExpectNamesTheEntry("compare", [&](auto& o, auto& e) { return RunCompare(f, o, e); });
  }
  {
    ImportProfileFlags f;
    f.calibration = bad;
    f.paths = {kSrc + "/traces/profiles/torch-tp2-h200-fused-2026-11-30/fused-b1"};
    f.scenario = "configs/scenarios/llama-3.1-8b-eagle3-h200-2x.textproto";
    ExpectNamesTheEntry("import-profile", [&](auto& o, auto& e) { return RunImportProfile(f, o, e); });
  }
  std::filesystem::remove(bad);
}

}  // namespace
}  // namespace specsim::tools
