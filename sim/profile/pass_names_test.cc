#include "sim/profile/pass_names.h"

#include <gtest/gtest.h>

#include <string>

namespace specsim::profile {
namespace {

std::string KindOf(const PassNameMap& map, const std::string& name) {
  const PassNameRule* r = map.Match(name);
  return r == nullptr ? "(none)" : PassNameKindName(r->kind);
}

TEST(PassNamesTest, PytorchWordsWithDraftExtendBeforeDraftAndExtend) {
  auto map = BuiltinPassNameMap("pytorch");
  ASSERT_TRUE(map.ok()) << map.status().ToString();
  EXPECT_EQ(KindOf(*map, "decode_step"), "decode");
  EXPECT_EQ(KindOf(*map, "forward_decode_eager"), "decode");
  EXPECT_EQ(KindOf(*map, "Decode"), "decode");  // case-insensitive
  EXPECT_EQ(KindOf(*map, "verify_pass"), "verify");
  EXPECT_EQ(KindOf(*map, "draft_step"), "draft");
  // draft_extend is neither a draft step nor an extend (prefill).
  EXPECT_EQ(KindOf(*map, "draft_extend"), "draft_extend");
  EXPECT_EQ(KindOf(*map, "eagle.draft_extend.graph"), "draft_extend");
  EXPECT_EQ(KindOf(*map, "Draft Extend"), "draft_extend");
  EXPECT_EQ(KindOf(*map, "extend"), "other");
  EXPECT_EQ(KindOf(*map, "prefill_chunk"), "other");
  // Words only: a decoder layer is not a decode pass, a drafter not a draft.
  EXPECT_EQ(KindOf(*map, "decoder_layer_3"), "(none)");
  EXPECT_EQ(KindOf(*map, "drafter"), "(none)");
  EXPECT_EQ(KindOf(*map, "nccl:all_reduce"), "ignore");
  EXPECT_EQ(KindOf(*map, "ProfilerStep#3"), "ignore");
}

TEST(PassNamesTest, VllmScopes) {
  auto map = BuiltinPassNameMap("vllm");
  ASSERT_TRUE(map.ok());
  EXPECT_EQ(KindOf(*map, "gpu_model_runner: forward"), "target");
  EXPECT_EQ(KindOf(*map, "v2_gpu_model_runner: forward"), "target");
  EXPECT_EQ(KindOf(*map, "gpu_model_runner: draft"), "draft");
  EXPECT_EQ(KindOf(*map, "Forward"), "target");
  EXPECT_EQ(KindOf(*map, "gpu_model_runner: sample"), "ignore");
  EXPECT_EQ(KindOf(*map, "decode_step"), "(none)");  // pytorch's words are not vllm's
  auto autos = BuiltinPassNameMap("auto");
  ASSERT_TRUE(autos.ok());
  EXPECT_EQ(KindOf(*autos, "gpu_model_runner: draft"), "draft");
  EXPECT_EQ(KindOf(*autos, "decode_step"), "decode");
  // The old default phase names keep their kinds.
  for (const char* n : {"decode", "verify", "draft", "draft_extend"}) EXPECT_EQ(KindOf(*autos, n), n);
}

TEST(PassNamesTest, UnknownBuiltinNamesTheAllowedValues) {
  auto map = BuiltinPassNameMap("trtllm");
  ASSERT_FALSE(map.ok());
  EXPECT_NE(map.status().message().find("sglang, vllm, pytorch, auto, none"), std::string::npos);
}

TEST(PassNamesTest, ExactPhasesAreLiteralAndCaseSensitive) {
  const PassNameMap map = ExactPassNameMap({"decode", "spec.verify", "warm(up)"});
  EXPECT_EQ(KindOf(map, "decode"), "decode");
  EXPECT_EQ(KindOf(map, "decode_step"), "(none)");
  EXPECT_EQ(KindOf(map, "Decode"), "(none)");
  EXPECT_EQ(KindOf(map, "spec.verify"), "other");
  EXPECT_EQ(KindOf(map, "specXverify"), "(none)");  // the dot is literal
  EXPECT_EQ(KindOf(map, "warm(up)"), "other");
}

TEST(PassNamesTest, UserFileRulesComeFirstAndSayWhereTheyAreFrom) {
  auto user = ParsePassNameMap(R"pb(
                                 rules { pattern: "^draft_step$" kind: PASS_VERIFY why: "ours" }
                               )pb",
                               "names.textproto");
  ASSERT_TRUE(user.ok()) << user.status().ToString();
  const PassNameMap map = ConcatPassNameMaps(*user, *BuiltinPassNameMap("pytorch"));
  EXPECT_EQ(KindOf(map, "draft_step"), "verify");
  EXPECT_EQ(map.Match("draft_step")->Describe(), "names.textproto: rules[0] /^draft_step$/ -> verify");
  EXPECT_EQ(KindOf(map, "draft_2"), "draft");
}

// A rule's tokens_group reads the pass's width from its name; a group the pattern lacks is an
// error naming the rule and how many groups it has.
TEST(PassNamesTest, TokensGroupReadsTheWidthFromTheName) {
  auto map = ParsePassNameMap(R"pb(
                                rules { pattern: "^verify_pass/q([0-9]+)$" kind: PASS_VERIFY tokens_group: 1 }
                                rules { pattern: "^decode$" kind: PASS_DECODE }
                              )pb",
                              "names.textproto");
  ASSERT_TRUE(map.ok()) << map.status().ToString();
  EXPECT_EQ(map->Match("verify_pass/q16")->TokensIn("verify_pass/q16"), 16);
  EXPECT_EQ(map->Match("VERIFY_PASS/q4")->TokensIn("VERIFY_PASS/q4"), 4);  // case-insensitive, as matching
  EXPECT_EQ(map->Match("decode")->TokensIn("decode"), 0);
  auto bad = ParsePassNameMap("rules { pattern: \"^v/q([0-9]+)$\" kind: PASS_VERIFY tokens_group: 2 }", "m.textproto");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("m.textproto: rules[0].tokens_group = 2: the pattern has 1 capture groups"),
            std::string::npos)
      << bad.status().message();
}

TEST(PassNamesTest, UserFileErrorsNameTheFileRuleAndField) {
  auto bad_regex = ParsePassNameMap(
      "rules { pattern: \"^decode\" kind: PASS_DECODE }\n"
      "rules { pattern: \"(unclosed\" kind: PASS_VERIFY }",
      "m.textproto");
  ASSERT_FALSE(bad_regex.ok());
  EXPECT_NE(bad_regex.status().message().find("m.textproto: rules[1].pattern \"(unclosed\" is not a regular"),
            std::string::npos)
      << bad_regex.status().message();
  auto no_kind = ParsePassNameMap("rules { pattern: \"x\" }", "m.textproto");
  ASSERT_FALSE(no_kind.ok());
  EXPECT_NE(no_kind.status().message().find("m.textproto: rules[0].kind is not set: one of PASS_DECODE"),
            std::string::npos)
      << no_kind.status().message();
  auto empty = ParsePassNameMap("rules { kind: PASS_DECODE }", "m.textproto");
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("rules[0].pattern is empty"), std::string::npos);
  auto bad_kind = ParsePassNameMap("rules { pattern: \"x\" kind: PASS_PREFILL }", "m.textproto");
  ASSERT_FALSE(bad_kind.ok());
  EXPECT_NE(bad_kind.status().message().find("m.textproto:1:"), std::string::npos) << bad_kind.status().message();
  EXPECT_FALSE(ParsePassNameMap("", "m.textproto").ok());  // no rules
  EXPECT_EQ(LoadPassNameMapFile("/nonexistent/names.textproto").status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace specsim::profile
