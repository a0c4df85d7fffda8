#include "sim/tools/hardware_from_topo_command.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "sim/io/hardware_loader.h"

namespace specsim::tools {
namespace {

const std::string kSource = SPECSIM_SOURCE_DIR;

// The command on the GPU machine's own nvidia-smi output: a config that loads, written whole; bad
// input: exit 2 naming the file; a GPU outside the table: exit 2 listing the table.
TEST(HardwareFromTopoCommand, WritesAConfigThatLoadsAndNamesBadInput) {
  HardwareFromTopoFlags f;
  f.topo = kSource + "/traces/topo/h200-1x-2026-12-04/topo-m.txt";
  f.smi = kSource + "/traces/topo/h200-1x-2026-12-04/query-gpu.csv";
  f.output = ::testing::TempDir() + "/box.textproto";
  std::ostringstream out, err;
  ASSERT_EQ(RunHardwareFromTopo(f, out, err), 0) << err.str();
  auto box = io::LoadHardwareFile(f.output);
  ASSERT_TRUE(box.ok()) << box.status().ToString();
  EXPECT_EQ(box->name, "h200-1x-topo");
  EXPECT_EQ(box->num_gpus(), 1);
  HardwareFromTopoFlags bad = f;
  bad.topo = kSource + "/README.md";
  std::ostringstream o2, e2;
  EXPECT_EQ(RunHardwareFromTopo(bad, o2, e2), 2);
  EXPECT_NE(e2.str().find("README.md: no GPU matrix"), std::string::npos) << e2.str();
  HardwareFromTopoFlags unknown = f;
  unknown.smi.clear();
  unknown.gpu = "GeForce 256";
  std::ostringstream o3, e3;
  EXPECT_EQ(RunHardwareFromTopo(unknown, o3, e3), 2);
  EXPECT_NE(e3.str().find("not in the datasheet table"), std::string::npos) << e3.str();
  HardwareFromTopoFlags missing = f;
  missing.topo = kSource + "/no/such/topo.txt";
  std::ostringstream o4, e4;
  EXPECT_EQ(RunHardwareFromTopo(missing, o4, e4), 2);
}

}  // namespace
}  // namespace specsim::tools
