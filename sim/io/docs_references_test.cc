// The facts the code relies on live in the repository (docs/reference/, docs/calibration-box.md):
// no file cites a document outside it (the shared notes the project started from), and every
// docs/... path a file cites exists. Scans the source tree as checked out (SPECSIM_SOURCE_DIR).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace specsim::io {
namespace {

namespace fs = std::filesystem;

// The text files people and the build read: code, configs, models, scripts and docs (generated
// traces and their JSON copies excepted).
std::vector<fs::path> TextFiles(const fs::path& root) {
  static const std::set<std::string> kExtensions = {".cc", ".h",  ".cu", ".cuh",   ".proto", ".textproto",
                                                    ".md", ".sh", ".py", ".cmake", ".txt",   ".json"};
  std::vector<fs::path> out;
  for (const char* dir :
       {"sim", "validate", "configs", "models", "scripts", "bench", "docs", "proto", "cmake", ".ci"}) {
    const fs::path d = root / dir;
    if (!fs::exists(d)) continue;
    for (const auto& e : fs::recursive_directory_iterator(d)) {
      if (!e.is_regular_file()) continue;
      const std::string ext = e.path().extension().string();
      if (kExtensions.count(ext) || e.path().filename() == "run") out.push_back(e.path());
    }
  }
  for (const char* f : {"README.md", "CMakeLists.txt", "traces/README.md"})
    if (fs::exists(root / f)) out.push_back(root / f);
  return out;
}

std::string Read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(DocsReferences, NothingCitesADocumentOutsideTheRepository) {
  const fs::path root = SPECSIM_SOURCE_DIR;
  const std::vector<fs::path> files = TextFiles(root);
  ASSERT_GT(files.size(), 100u);
  // The project's starting notes were ../shared/docs/{reference,calibration-box,rank-timelines,
  // house-style}.md: cited by name ("reference.md section 4") or by path.
  const std::regex outside(
      R"((\.\./)?shared/docs|(^|[^/\w-])reference\.md|(^|[^/\w-])(rank-timelines|house-style)\.md)");
  const std::string self = "docs_references_test.cc";
  int offenders = 0;
  for (const fs::path& f : files) {
    if (f.filename() == self) continue;
    std::istringstream lines(Read(f));
    std::string line;
    for (int n = 1; std::getline(lines, line); ++n) {
      if (std::regex_search(line, outside)) {
        ADD_FAILURE() << fs::relative(f, root).string() << ":" << n
                      << ": cites a document outside the repository: " << line;
        ++offenders;
      }
    }
  }
  EXPECT_EQ(offenders, 0);
}

TEST(DocsReferences, EveryCitedDocsFileExists) {
  const fs::path root = SPECSIM_SOURCE_DIR;
  const std::regex cited(R"(docs/[A-Za-z0-9_./-]+\.md)");
  std::set<std::string> seen;
  for (const fs::path& f : TextFiles(root)) {
    const std::string text = Read(f);
    for (std::sregex_iterator it(text.begin(), text.end(), cited), end; it != end; ++it) {
      std::string path = it->str();
      // Within docs/ itself a relative link ("reference/pcie.md") is not matched; a path that starts
      // inside a longer one ("validate/docs/...") would be, and none exists.
      if (!seen.insert(path).second) continue;
      EXPECT_TRUE(fs::exists(root / path))
          << fs::relative(f, root).string() << " cites " << path << ", which does not exist";
    }
  }
  EXPECT_GE(seen.size(), 5u);  // docs/reference/*.md and docs/calibration-box.md are cited
}

}  // namespace
}  // namespace specsim::io
