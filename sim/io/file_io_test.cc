#include "sim/io/file_io.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

namespace specsim::io {
namespace {

namespace fs = std::filesystem;

std::string Contents(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

fs::path FreshDir(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST(WriteFileAtomically, WholeFileAndNoTemporaryLeft) {
  const fs::path dir = FreshDir("file_io_whole");
  const std::string path = (dir / "out.csv").string();
  ASSERT_TRUE(WriteFileAtomically(path, "old").ok());
  ASSERT_TRUE(WriteFileAtomically(path, "a,b\n1,2\n").ok());
  EXPECT_EQ(Contents(path), "a,b\n1,2\n");
  for (const fs::directory_entry& e : fs::directory_iterator(dir))  // no temporary left, whatever its name
    EXPECT_EQ(e.path().filename().string(), "out.csv");
}

// Writers racing on one path each write a temporary of their own (a shared temporary name would let
// one rename the other's half-written file into place): the file ends whole, one writer's contents.
TEST(WriteFileAtomically, ConcurrentWritersOfOnePathLeaveOneWholeFile) {
  const fs::path dir = FreshDir("file_io_race");
  const std::string path = (dir / "out.txt").string();
  const std::string a(1 << 20, 'a'), b(1 << 20, 'b');
  std::vector<std::thread> writers;
  for (int i = 0; i < 8; ++i)
    writers.emplace_back([&, i] {
      for (int k = 0; k < 4; ++k) EXPECT_TRUE(WriteFileAtomically(path, i % 2 ? a : b).ok());
    });
  for (std::thread& t : writers) t.join();
  const std::string got = Contents(path);
  EXPECT_TRUE(got == a || got == b) << "a mixed or partial file of " << got.size() << " bytes";
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) EXPECT_EQ(e.path().filename().string(), "out.txt");
}

TEST(WriteFileAtomically, AMissingDirectoryIsAnErrorNamingThePath) {
  const std::string path = (FreshDir("file_io_missing") / "no-such-dir" / "x.svg").string();
  const Status s = WriteFileAtomically(path, "x");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find(path + ": cannot write"), std::string::npos) << s.message();
  EXPECT_FALSE(fs::exists(path));
}

// A device is written in place: renaming the temporary file over it replaced /dev/null itself
// with a regular file when specsim ran as root (--out /dev/null). /dev/full's failed write is an
// error, and the device stays.
TEST(WriteFileAtomically, DevicesAreWrittenInPlaceNeverReplaced) {
  if (!fs::is_character_file("/dev/null") || !fs::is_character_file("/dev/full"))
    GTEST_SKIP() << "no /dev/null, /dev/full";
  EXPECT_TRUE(WriteFileAtomically("/dev/null", "discarded").ok());
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
  const Status full = WriteFileAtomically("/dev/full", std::string(1 << 16, 'x'));
  ASSERT_FALSE(full.ok());
  EXPECT_NE(full.message().find("/dev/full: cannot write"), std::string::npos) << full.message();
  EXPECT_TRUE(fs::is_character_file("/dev/full"));
  EXPECT_FALSE(fs::exists("/dev/full.tmp-specsim"));
  EXPECT_FALSE(fs::exists("/dev/null.tmp-specsim"));
}

// Through a symbolic link the file it names is replaced; the link stays a link.
TEST(WriteFileAtomically, ASymbolicLinkKeepsPointingAtTheNewContents) {
  const fs::path dir = FreshDir("file_io_link");
  std::ofstream(dir / "real.json") << "old";
  fs::create_symlink(dir / "real.json", dir / "link.json");
  ASSERT_TRUE(WriteFileAtomically((dir / "link.json").string(), "new").ok());
  EXPECT_TRUE(fs::is_symlink(dir / "link.json"));
  EXPECT_EQ(Contents(dir / "real.json"), "new");
  EXPECT_FALSE(fs::exists(dir / "real.json.tmp-specsim"));
}

}  // namespace
}  // namespace specsim::io
