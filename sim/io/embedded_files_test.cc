// The embedded copies equal the files on disk, and LoadHardwareFile falls back to them.
#include "sim/io/embedded_files.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "sim/io/file_io.h"
#include "sim/io/hardware_loader.h"
#include "sim/io/test_matchers.h"

namespace specsim::io {
namespace {

using testing::Contains;

std::string ReadDisk(const std::string& relative) {
  std::ifstream in(std::string(SPECSIM_SOURCE_DIR) + "/" + relative, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(EmbeddedFilesTest, EveryHardwareConfigIsEmbeddedAndEqualsTheDiskFile) {
  int count = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::filesystem::path(SPECSIM_SOURCE_DIR) / "configs/hardware")) {
    if (entry.path().extension() != ".textproto") continue;
    const std::string relative = "configs/hardware/" + entry.path().filename().string();
    const std::optional<std::string_view> embedded = EmbeddedFile(relative);
    ASSERT_TRUE(embedded.has_value()) << relative;
    EXPECT_EQ(*embedded, ReadDisk(relative)) << relative << ": rebuild to refresh the copy";
    ++count;
  }
  EXPECT_GE(count, 5);
}

TEST(EmbeddedFilesTest, NamesAreSortedAndExistOnDisk) {
  const std::vector<std::string_view> names = EmbeddedFileNames();
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  for (std::string_view name : names) {
    EXPECT_EQ(*EmbeddedFile(name), ReadDisk(std::string(name))) << name;
  }
  EXPECT_FALSE(EmbeddedFile("configs/hardware/none.textproto").has_value());
  EXPECT_FALSE(EmbeddedFile("").has_value());
}

// Runs the body with the working directory set to an empty temporary directory.
class EmptyWorkingDirectory : public ::testing::Test {
 protected:
  void SetUp() override {
    previous_ = std::filesystem::current_path();
    dir_ = std::filesystem::temp_directory_path() / ("specsim_io_test_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    std::filesystem::current_path(dir_);
  }
  void TearDown() override {
    std::filesystem::current_path(previous_);
    std::filesystem::remove_all(dir_);
  }
  std::filesystem::path previous_;
  std::filesystem::path dir_;
};

TEST_F(EmptyWorkingDirectory, LoadFallsBackToTheEmbeddedCopy) {
  StatusOr<ConfigText> config = ReadConfigFile("configs/hardware/h200-1x.textproto");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_TRUE(config->embedded);
  EXPECT_EQ(config->display_name, "configs/hardware/h200-1x.textproto (embedded copy)");

  StatusOr<net::Topology> t = LoadHardwareFile("./configs/hardware/h200-1x.textproto");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->num_gpus(), 1);
}

TEST_F(EmptyWorkingDirectory, DiskFileWinsOverTheEmbeddedCopy) {
  std::filesystem::create_directories("configs/hardware");
  std::ofstream("configs/hardware/h200-1x.textproto") << "nodes { name: \"x\" kind: CPU_ROOT_COMPLEX }\n";
  StatusOr<net::Topology> t = LoadHardwareFile("configs/hardware/h200-1x.textproto");
  ASSERT_FALSE(t.ok());
  EXPECT_TRUE(Contains(t.status().message(), "configs/hardware/h200-1x.textproto: zero GPUs"));
}

TEST_F(EmptyWorkingDirectory, UnknownPathListsEmbeddedFilesOfThatDirectory) {
  StatusOr<net::Topology> t = LoadHardwareFile("configs/hardware/h100-1x.textproto");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Contains(t.status().message(), "configs/hardware/h100-1x.textproto: no such file"));
  EXPECT_TRUE(Contains(t.status().message(), "configs/hardware/h200-1x.textproto"));
}

}  // namespace
}  // namespace specsim::io
