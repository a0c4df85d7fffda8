#include "validate/trace_io.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace specsim::validate {
namespace {

namespace fs = std::filesystem;

fs::path TempDir() {
  fs::path d = fs::temp_directory_path() / ("specsim_trace_io_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

trace::Trace Sample() {
  trace::Trace t;
  t.set_schema_version(1);
  t.set_tool("specsim-validate");
  t.mutable_environment()->set_nccl_version("2.28.3");
  (*t.mutable_environment()->mutable_nccl_env())["NCCL_NVLS_ENABLE"] = "0";
  auto* g = t.mutable_environment()->add_gpus();
  g->set_name("NVIDIA H200");
  g->set_pcie_generation_current(5);
  auto* item = t.add_items();
  item->set_suite(trace::SUITE_PCIE);
  item->set_kind(trace::KIND_H2D_COPY);
  item->set_name("pcie/h2d/pinned/gpu0/64KiB");
  item->mutable_transfer()->set_bytes(65536);
  item->mutable_transfer()->set_host_memory(trace::HOST_PINNED);
  item->mutable_stats()->set_median_us(3.5);
  item->set_gbps(18.7);
  return t;
}

TEST(TraceIo, JsonPath) {
  EXPECT_EQ(JsonPathFor("a/b.pb"), "a/b.json");
  EXPECT_EQ(JsonPathFor("a/b"), "a/b.json");
  EXPECT_EQ(JsonPathFor(".pb"), ".pb.json");
}

TEST(TraceIo, RoundTripAndJson) {
  fs::path dir = TempDir();
  std::string pb = (dir / "t.pb").string();
  ASSERT_TRUE(WriteTrace(Sample(), pb, true).ok());
  auto back = ReadTrace(pb);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->SerializeAsString(), Sample().SerializeAsString());
  std::ifstream j(dir / "t.json");
  std::string json((std::istreambuf_iterator<char>(j)), std::istreambuf_iterator<char>());
  EXPECT_NE(json.find("\"KIND_H2D_COPY\""), std::string::npos);
  EXPECT_NE(json.find("\"median_us\": 3.5"), std::string::npos);
  EXPECT_NE(json.find("\"NCCL_NVLS_ENABLE\": \"0\""), std::string::npos);
  // No temporary files are left behind.
  int files = 0;
  for (auto& e : fs::directory_iterator(dir)) {
    (void)e;
    ++files;
  }
  EXPECT_EQ(files, 2);
  fs::remove_all(dir);
}

TEST(TraceIo, OverwriteKeepsWholeFile) {
  fs::path dir = TempDir();
  std::string pb = (dir / "t.pb").string();
  ASSERT_TRUE(WriteFileAtomically(pb, "old contents").ok());
  ASSERT_TRUE(WriteTrace(Sample(), pb, false).ok());
  auto back = ReadTrace(pb);
  ASSERT_TRUE(back.ok());
  EXPECT_FALSE(fs::exists(dir / "t.json"));
  fs::remove_all(dir);
}

TEST(TraceIo, UnwritableDirectoryIsAnError) {
  auto st = WriteTrace(Sample(), "/nonexistent-dir-specsim/t.pb", true);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("/nonexistent-dir-specsim"), std::string::npos);
}

TEST(TraceIo, ReadErrors) { EXPECT_EQ(ReadTrace("/nonexistent-specsim.pb").status().code(), StatusCode::kNotFound); }

}  // namespace
}  // namespace specsim::validate
