// ParseTextProto: syntax and schema errors become Status values with FILE:LINE:COL and hints.
#include "sim/io/textproto.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "sim/io/test_matchers.h"
#include "specsim/calibration.pb.h"
#include "specsim/hardware.pb.h"

namespace specsim::io {
namespace {

using config::Hardware;
using testing::Contains;

TEST(TextProtoTest, ParsesValidText) {
  StatusOr<Hardware> hw =
      ParseTextProto<Hardware>("name: \"x\"\n# a comment\nnodes { name: \"gpu0\" kind: GPU }\n", "box.textproto");
  ASSERT_TRUE(hw.ok()) << hw.status().ToString();
  EXPECT_EQ(hw->name(), "x");
  ASSERT_EQ(hw->nodes_size(), 1);
  EXPECT_EQ(hw->nodes(0).kind(), config::Node::GPU);
}

// A calibration with latency_ns: nan (as a fit of 0-byte items could write) is refused:
// CheckFiniteNumbers names the first non-finite number, nested and repeated fields included.
TEST(TextProtoTest, NonFiniteNumbersAreNamed) {
  auto c = ParseTextProto<config::Calibration>("fabric { h2d_pinned { latency_ns: nan bandwidth_gbps: 50 } }\n",
                                               "cal.textproto");
  ASSERT_TRUE(c.ok()) << c.status().ToString();  // the text format takes nan
  Status s = CheckFiniteNumbers(*c, "cal.textproto");
  EXPECT_TRUE(Contains(s.message(), "cal.textproto: fabric.h2d_pinned.latency_ns = nan: must be a finite number"))
      << s.message();
  auto ok = ParseTextProto<config::Calibration>("fabric { h2d_pinned { latency_ns: 5000 } }\n", "cal.textproto");
  ASSERT_TRUE(ok.ok());
  EXPECT_TRUE(CheckFiniteNumbers(*ok, "cal.textproto").ok());
  auto hw = ParseTextProto<Hardware>(
      "nodes { name: \"g\" kind: GPU } links { a: \"g\" b: \"g\" bandwidth_gbps: inf }\n", "box.textproto");
  ASSERT_TRUE(hw.ok());
  EXPECT_TRUE(Contains(CheckFiniteNumbers(*hw, "box.textproto").message(), "links[0].bandwidth_gbps = inf"));
}

// Issue 15, item 9: a config.json given as a scenario said only "1:1: Expected identifier".
TEST(TextProtoTest, JsonWhereATextprotoBelongsIsNamed) {
  auto hw = ParseTextProto<Hardware>("{\"architectures\": [\"LlamaForCausalLM\"]}\n", "config.json");
  ASSERT_FALSE(hw.ok());
  EXPECT_TRUE(Contains(hw.status().message(), "config.json looks like JSON")) << hw.status().message();
  EXPECT_TRUE(Contains(hw.status().message(), "give it as --model")) << hw.status().message();
}

TEST(TextProtoTest, UnknownFieldListsTheMessagesFields) {
  StatusOr<Hardware> hw = ParseTextProto<Hardware>(
      "nodes { name: \"a\" }\n"
      "links { a: \"a\" b: \"b\" bandwdith_gbps: 5 }\n",
      "box.textproto");
  ASSERT_FALSE(hw.ok());
  const std::string& m = hw.status().message();
  EXPECT_EQ(hw.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(m, "box.textproto:2:"));
  EXPECT_TRUE(Contains(m, "bandwdith_gbps"));
  EXPECT_TRUE(Contains(m, "Did you mean \"bandwidth_gbps\"?"));
  EXPECT_TRUE(Contains(m,
                       "Fields of specsim.config.Link: a, b, kind, bandwidth_gbps, latency_ns, "
                       "payload_efficiency, pcie_gen, pcie_lanes, nvlinks."));
}

TEST(TextProtoTest, UnknownTopLevelField) {
  StatusOr<Hardware> hw = ParseTextProto<Hardware>("nmae: \"x\"\n", "box.textproto");
  ASSERT_FALSE(hw.ok());
  EXPECT_TRUE(Contains(hw.status().message(), "box.textproto:1:"));
  EXPECT_TRUE(Contains(hw.status().message(), "Did you mean \"name\"?"));
  EXPECT_TRUE(Contains(hw.status().message(),
                       "Fields of specsim.config.Hardware: name, description, "
                       "cpu_vendor, gpu_models, nodes, links, driver_p2p_mode."));
}

TEST(TextProtoTest, EnumTypoInNodeListsNodeKinds) {
  StatusOr<Hardware> hw = ParseTextProto<Hardware>(
      "nodes { name: \"cpu0\" kind: CPU_ROOT_COMPLEX }\n"
      "nodes {\n  name: \"gpu0\"\n  kind: GPUU\n}\n",
      "box.textproto");
  ASSERT_FALSE(hw.ok());
  const std::string& m = hw.status().message();
  EXPECT_TRUE(Contains(m, "box.textproto:4:"));
  EXPECT_TRUE(Contains(m, "GPUU"));
  EXPECT_TRUE(Contains(m, "Did you mean \"GPU\"?"));
  EXPECT_TRUE(Contains(m,
                       "Allowed values of specsim.config.Node.Kind: KIND_UNSPECIFIED, GPU, "
                       "PCIE_SWITCH, CPU_ROOT_COMPLEX, HOST_MEMORY, NVSWITCH."));
}

// Node and Link both have a field "kind": the hint must follow the message being parsed.
TEST(TextProtoTest, EnumTypoInLinkListsLinkKinds) {
  StatusOr<Hardware> hw = ParseTextProto<Hardware>(
      "nodes { name: \"gpu0\" kind: GPU }\n"
      "links { a: \"gpu0\" b: \"cpu0\" kind: PCIEE }\n",
      "box.textproto");
  ASSERT_FALSE(hw.ok());
  const std::string& m = hw.status().message();
  EXPECT_TRUE(Contains(m, "Did you mean \"PCIE\"?"));
  EXPECT_TRUE(Contains(m,
                       "Allowed values of specsim.config.Link.Kind: KIND_UNSPECIFIED, PCIE, "
                       "CPU_INTERCONNECT, NVLINK, MEMORY."));
  EXPECT_FALSE(Contains(m, "Node.Kind"));
}

TEST(TextProtoTest, EnumTypoFoundInListAndAngleBracketSyntax) {
  StatusOr<Hardware> list =
      ParseTextProto<Hardware>("nodes: [{ name: \"a\" kind: GPU }, { name: \"b\" kind: NVSWICH }]\n", "box.textproto");
  ASSERT_FALSE(list.ok());
  EXPECT_TRUE(Contains(list.status().message(), "Allowed values of specsim.config.Node.Kind"));
  EXPECT_TRUE(Contains(list.status().message(), "Did you mean \"NVSWITCH\"?"));

  StatusOr<Hardware> angle = ParseTextProto<Hardware>("links < a: \"x\" kind: NVLNK >\n", "box.textproto");
  ASSERT_FALSE(angle.ok());
  EXPECT_TRUE(Contains(angle.status().message(), "Allowed values of specsim.config.Link.Kind"));
}

TEST(TextProtoTest, TopLevelEnumTypo) {
  StatusOr<Hardware> hw = ParseTextProto<Hardware>("cpu_vendor: AMDD\n", "box.textproto");
  ASSERT_FALSE(hw.ok());
  EXPECT_TRUE(Contains(hw.status().message(),
                       "Allowed values of specsim.config.Hardware.CpuVendor: CPU_VENDOR_UNSPECIFIED, "
                       "AMD, INTEL, ARM."));
}

TEST(TextProtoTest, SyntaxErrorHasLineAndColumn) {
  StatusOr<Hardware> hw = ParseTextProto<Hardware>("name: \"x\"\nnodes { name: \"a\"\n", "box.textproto");
  ASSERT_FALSE(hw.ok());
  EXPECT_TRUE(Contains(hw.status().message(), "box.textproto:3:"));
}

TEST(TextProtoTest, WrongValueTypeIsAnError) {
  StatusOr<Hardware> hw = ParseTextProto<Hardware>("links { bandwidth_gbps: \"fast\" }\n", "box.textproto");
  ASSERT_FALSE(hw.ok());
  EXPECT_TRUE(Contains(hw.status().message(), "box.textproto:1:"));
}

TEST(TextProtoTest, LoadMissingFileIsNotFoundNamingThePath) {
  StatusOr<Hardware> hw = LoadTextProtoFile<Hardware>("/nonexistent/dir/box.textproto");
  ASSERT_FALSE(hw.ok());
  EXPECT_EQ(hw.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Contains(hw.status().message(), "/nonexistent/dir/box.textproto"));
}

TEST(TextProtoTest, LoadDirectoryIsAnError) {
  StatusOr<Hardware> hw = LoadTextProtoFile<Hardware>(SPECSIM_SOURCE_DIR);
  ASSERT_FALSE(hw.ok());
  EXPECT_TRUE(Contains(hw.status().message(), "not a regular file"));
}

// Never crash on bad input: random bytes and random mutations of valid text.
TEST(TextProtoTest, GarbageNeverCrashes) {
  const std::string valid =
      "name: \"x\" nodes: [{ name: \"a\" kind: GPU }, { name: \"b\" kind: PCIE_SWITCH }]\n"
      "links < a: \"a\" b: \"b\" kind: PCIE bandwidth_gbps: 1e3 >\n";
  const std::string alphabet = "{}<>[]:;,\"'#\n \\-.0123456789eE_abzKINDGPUkind";
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 3000; ++trial) {
    std::string text = valid;
    const int edits = 1 + static_cast<int>(rng() % 6);
    for (int e = 0; e < edits; ++e) {
      const size_t at = rng() % (text.size() + 1);
      switch (rng() % 3) {
        case 0: text.insert(at, 1, alphabet[rng() % alphabet.size()]); break;
        case 1:
          if (at < text.size()) text.erase(at, 1);
          break;
        default:
          if (at < text.size()) text[at] = static_cast<char>(rng() % 256);
          break;
      }
    }
    StatusOr<Hardware> hw = ParseTextProto<Hardware>(text, "fuzz.textproto");
    if (!hw.ok()) EXPECT_TRUE(Contains(hw.status().message(), "fuzz.textproto"));
  }
}

}  // namespace
}  // namespace specsim::io
