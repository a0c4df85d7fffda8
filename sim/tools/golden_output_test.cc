// Golden outputs: what `specsim collective`, `simulate` and `advise` print on the bundled configs,
// byte for byte, against files committed under sim/tools/testdata/golden/. Speed work on the
// engine (event queue, fabric, max-min solver, executor, rank timelines) must change no output;
// this test is the proof. A deliberate model change regenerates the files:
//   SPECSIM_UPDATE_GOLDEN=1 ctest -R GoldenOutput     (then review the diff and commit it)
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include "sim/tools/advise_command.h"
#include "sim/tools/collective_command.h"
#include "sim/tools/simulate_command.h"

namespace specsim::tools {
namespace {

const std::string kSource = SPECSIM_SOURCE_DIR;

std::string GoldenPath(const std::string& name) { return kSource + "/sim/tools/testdata/golden/" + name + ".txt"; }

// Runs `command`, then compares its standard output with the golden file `name` (or rewrites the
// file when SPECSIM_UPDATE_GOLDEN is set), the checkout's path written <source>. Reports the first line that differs.
void ExpectGolden(const std::string& name, const std::function<int(std::ostream&, std::ostream&)>& command) {
  std::ostringstream out, err;
  const int code = command(out, err);
  ASSERT_EQ(code, 0) << name << ": " << err.str();
  // Paths of the checkout differ from machine to machine.
  std::string now = out.str();
  for (size_t at = now.find(kSource); at != std::string::npos; at = now.find(kSource, at))
    now.replace(at, kSource.size(), "<source>");
  const std::string path = GoldenPath(name);
  const char* update = std::getenv("SPECSIM_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path, std::ios::binary) << now;
    return;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in.good()) << "no golden file " << path << " (SPECSIM_UPDATE_GOLDEN=1 writes it)";
  std::stringstream golden;
  golden << in.rdbuf();
  if (golden.str() == now) return;
  std::istringstream a(golden.str()), b(now);
  std::string la, lb;
  for (int line = 1;; ++line) {
    const bool more_a = static_cast<bool>(std::getline(a, la));
    const bool more_b = static_cast<bool>(std::getline(b, lb));
    if (!more_a && !more_b) break;
    if (la != lb || more_a != more_b) {
      ADD_FAILURE() << name << ": output differs from " << path << " at line " << line << "\n  golden: " << la
                    << "\n  now:    " << lb;
      return;
    }
    la.clear();
    lb.clear();
  }
  ADD_FAILURE() << name << ": output differs from " << path;
}

void ExpectCollectiveGolden(const std::string& name, CollectiveFlags flags) {
  ExpectGolden(name, [&](std::ostream& out, std::ostream& err) { return RunCollective(flags, out, err); });
}

CollectiveFlags AllAlgorithms(const std::string& hardware) {
  CollectiveFlags f;
  f.hardware = kSource + "/configs/hardware/" + hardware + ".textproto";
  f.algo = "all";
  return f;
}

// Every bundled box: every allreduce algorithm over 1K..256M.
TEST(GoldenOutput, CollectiveAllreduceOnEveryBundledBox) {
  for (const char* hw : {"rtxpro6000-8x-dual-socket", "rtxpro6000-8x-pcie-switch", "rtxpro6000-4x-pcie-switch",
                         "h200-8x-nvlink", "h200-2x-nvlink"}) {
    ExpectCollectiveGolden(std::string("collective-allreduce-") + hw, AllAlgorithms(hw));
  }
}

// The other collectives, SHM transport and a GPU subset on the dual-socket box.
TEST(GoldenOutput, CollectiveOpsTransportsAndSubsets) {
  for (const char* op : {"allgather", "reducescatter", "alltoall"}) {
    CollectiveFlags f = AllAlgorithms("rtxpro6000-8x-dual-socket");
    f.op = op;
    ExpectCollectiveGolden(std::string("collective-") + op + "-dual-socket", f);
  }
  CollectiveFlags shm = AllAlgorithms("h200-2x-nvlink");
  shm.p2p_disable = true;
  ExpectCollectiveGolden("collective-allreduce-h200-2x-shm", shm);
  CollectiveFlags subset = AllAlgorithms("rtxpro6000-8x-dual-socket");
  subset.gpus = "0,1,4,5";
  subset.custom_launch_us = 4;
  ExpectCollectiveGolden("collective-allreduce-dual-socket-gpus-0-1-4-5", subset);
}

// Every bundled scenario, and the allreduce / capture-mode table of one.
TEST(GoldenOutput, SimulateEveryBundledScenario) {
  for (const char* s : {"kimi-k2-eagle3-rtxpro6000-8x", "kimi-k2-mtp-rtxpro6000-8x", "llama-3.1-8b-eagle3-h200-2x",
                        "llama-3.1-8b-eagle3-rtxpro6000-4x", "llama-3.1-8b-ngram-rtxpro6000-4x"}) {
    SimulateFlags f;
    f.scenario = kSource + "/configs/scenarios/" + s + ".textproto";
    ExpectGolden(std::string("simulate-") + s,
                 [&](std::ostream& out, std::ostream& err) { return RunSimulate(f, out, err); });
  }
  SimulateFlags f;
  f.scenario = kSource + "/configs/scenarios/llama-3.1-8b-eagle3-rtxpro6000-4x.textproto";
  f.compare_algos = true;
  ExpectGolden("simulate-llama-3.1-8b-eagle3-rtxpro6000-4x-compare-algos",
               [&](std::ostream& out, std::ostream& err) { return RunSimulate(f, out, err); });
}

TEST(GoldenOutput, AdviseOnTheFourGpuBox) {
  AdviseFlags f;
  f.scenario = kSource + "/configs/scenarios/llama-3.1-8b-eagle3-rtxpro6000-4x.textproto";
  f.acceptance = "0.8,0.7,0.6";
  f.progress = false;
  ExpectGolden("advise-llama-3.1-8b-eagle3-rtxpro6000-4x",
               [&](std::ostream& out, std::ostream& err) { return RunAdvise(f, out, err); });
}

}  // namespace
}  // namespace specsim::tools
