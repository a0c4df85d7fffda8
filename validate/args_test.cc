#include "validate/args.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace specsim::validate {
namespace {

TEST(ParseArgs, DefaultsRunEverySuiteButTheUncheckedOne) {
  auto o = ParseArgs({});
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  std::vector<std::string> all_but_host_staged = AllSuites();
  all_but_host_staged.pop_back();
  EXPECT_EQ(AllSuites().back(), "host_staged");
  EXPECT_EQ(o->suites, all_but_host_staged);
  auto named = ParseArgs({"--suites", "host_staged"});
  ASSERT_TRUE(named.ok()) << named.status().ToString();
  EXPECT_EQ(named->suites, std::vector<std::string>{"host_staged"});
  EXPECT_FALSE(o->quick);
  EXPECT_EQ(o->out, "specsim-trace.pb");
  EXPECT_EQ(o->max_bytes, 256LL << 20);
}

TEST(ParseArgs, ValuesInBothSpellings) {
  auto o = ParseArgs({"--suites", "pcie,decode", "--out=t.pb", "--quick", "--tp", "2", "--gpus=0,3", "--max-bytes",
                      "64MiB", "--accept=0.5", "--batch", "1,4", "--model", "llama-3.1-70b,models/qwen3-32b.textproto",
                      "--timeout", "2.5", "--draft-model", "models/eagle3-llama-3.1-8b.textproto"});
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->suites, (std::vector<std::string>{"pcie", "decode"}));
  EXPECT_EQ(o->out, "t.pb");
  EXPECT_TRUE(o->quick);
  EXPECT_EQ(o->tp, 2);
  EXPECT_EQ(o->gpus, (std::vector<int>{0, 3}));
  EXPECT_EQ(o->max_bytes, 64LL << 20);
  EXPECT_DOUBLE_EQ(o->acceptance_p, 0.5);
  EXPECT_EQ(o->decode_batches, (std::vector<int>{1, 4}));
  EXPECT_EQ(o->models, (std::vector<std::string>{"llama-3.1-70b", "models/qwen3-32b.textproto"}));
  EXPECT_EQ(o->draft_models, (std::vector<std::string>{"models/eagle3-llama-3.1-8b.textproto"}));
  EXPECT_DOUBLE_EQ(o->collective_timeout_s, 2.5);
}

TEST(ParseArgs, ErrorsNameTheFlag) {
  auto bad = [](std::vector<std::string> a) {
    auto o = ParseArgs(a);
    EXPECT_FALSE(o.ok());
    return o.status().message();
  };
  EXPECT_NE(bad({"--bogus"}).find("--bogus"), std::string::npos);
  EXPECT_NE(bad({"--tp"}).find("needs a value"), std::string::npos);
  EXPECT_NE(bad({"--tp", "9"}).find("outside"), std::string::npos);
  EXPECT_NE(bad({"--tp", "x"}).find("not an integer"), std::string::npos);
  EXPECT_NE(bad({"--suites", "pcie,gpu"}).find("unknown suite 'gpu'"), std::string::npos);
  EXPECT_NE(bad({"--gpus", "0,0"}).find("twice"), std::string::npos);
  EXPECT_NE(bad({"--accept", "1.5"}).find("--accept"), std::string::npos);
  EXPECT_NE(bad({"--quick=1"}).find("takes no value"), std::string::npos);
  EXPECT_NE(bad({"--max-bytes", "12XB"}).find("unknown unit"), std::string::npos);
}

TEST(ParseArgs, RankThreadsFreeByDefaultOrPinned) {
  auto d = ParseArgs({});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->rank_threads, "free");
  auto p = ParseArgs({"--rank-threads=pinned"});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->rank_threads, "pinned");
  auto bad = ParseArgs({"--rank-threads", "numa"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'numa' is not free or pinned"), std::string::npos);
  EXPECT_NE(Usage().find("--rank-threads"), std::string::npos);
}

TEST(ParseArgs, PacingRoundsFourByDefaultWithinOneToSixtyFour) {
  auto d = ParseArgs({});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->pacing_rounds, 4);
  auto one = ParseArgs({"--pacing-rounds", "1"});
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->pacing_rounds, 1);
  for (const char* v : {"0", "65", "two"}) {
    auto bad = ParseArgs({"--pacing-rounds", v});
    ASSERT_FALSE(bad.ok()) << v;
    EXPECT_NE(bad.status().message().find("--pacing-rounds"), std::string::npos) << bad.status().message();
  }
  EXPECT_NE(Usage().find("--pacing-rounds"), std::string::npos);
}

TEST(ParseArgs, PacingSuiteAndNcclLogs) {
  auto o = ParseArgs({"--suites", "collectives,pacing", "--nccl-log", "out/a-nccl.123.log,out/a-nccl.124.log"});
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->suites, (std::vector<std::string>{"collectives", "pacing"}));
  EXPECT_EQ(o->nccl_logs, (std::vector<std::string>{"out/a-nccl.123.log", "out/a-nccl.124.log"}));
  auto d = ParseArgs({});
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->nccl_logs.empty());
  EXPECT_NE(std::find(d->suites.begin(), d->suites.end(), "pacing"), d->suites.end());
  auto eq = ParseArgs({"--nccl-log=x.log"});
  ASSERT_TRUE(eq.ok());
  EXPECT_EQ(eq->nccl_logs, (std::vector<std::string>{"x.log"}));
  EXPECT_FALSE(ParseArgs({"--nccl-log"}).ok());
  EXPECT_NE(ParseArgs({"--nccl-log", ","}).status().message().find("--nccl-log"), std::string::npos);
  EXPECT_NE(Usage().find("--nccl-log"), std::string::npos);
  EXPECT_NE(Usage().find("pacing"), std::string::npos);
}

TEST(ParseArgs, VerifyWidthSweeps) {
  auto d = ParseArgs({});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->verify_widths, (std::vector<int>{1, 2, 4, 8, 16, 32, 64, 128}));
  EXPECT_EQ(d->verify_batches, (std::vector<int>{1, 8}));
  auto o = ParseArgs({"--verify-widths", "1,3,256", "--verify-batch=2"});
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->verify_widths, (std::vector<int>{1, 3, 256}));
  EXPECT_EQ(o->verify_batches, (std::vector<int>{2}));
  const std::string wide = ParseArgs({"--verify-widths", "512"}).status().message();
  EXPECT_NE(wide.find("--verify-widths"), std::string::npos) << wide;
  EXPECT_NE(wide.find("[1, 256]"), std::string::npos) << wide;
  EXPECT_NE(ParseArgs({"--verify-batch", "0"}).status().message().find("--verify-batch"), std::string::npos);
  EXPECT_NE(Usage().find("--verify-widths"), std::string::npos);
}

TEST(ParseSize, Units) {
  EXPECT_EQ(*ParseSize("4"), 4);
  EXPECT_EQ(*ParseSize("4B"), 4);
  EXPECT_EQ(*ParseSize("1K"), 1000);
  EXPECT_EQ(*ParseSize("1KiB"), 1024);
  EXPECT_EQ(*ParseSize("256MiB"), 256LL << 20);
  EXPECT_EQ(*ParseSize("2GB"), 2000000000LL);
  EXPECT_EQ(*ParseSize("1gib"), 1LL << 30);
  EXPECT_FALSE(ParseSize("").ok());
  EXPECT_FALSE(ParseSize("-4").ok());
  EXPECT_FALSE(ParseSize("99999999999999999GiB").ok());
}

TEST(ParseArgs, CustomSizesAndVariants) {
  auto d = ParseArgs({});
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->custom_sizes.empty());
  EXPECT_TRUE(d->custom_variants.empty());
  auto o = ParseArgs({"--custom-sizes", "16KiB,14336,4KiB,14336", "--custom-variants=vllmflags,fence"});
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_EQ(o->custom_sizes, (std::vector<int64_t>{4096, 14336, 16384}));  // sorted, once each
  EXPECT_EQ(o->custom_variants, (std::vector<std::string>{"vllmflags", "fence"}));
  const std::string odd = ParseArgs({"--custom-sizes", "1000"}).status().message();
  EXPECT_NE(odd.find("multiple of 16"), std::string::npos) << odd;
  EXPECT_FALSE(ParseArgs({"--custom-sizes", "8MiB"}).ok());
  const std::string unknown = ParseArgs({"--custom-variants", "vllm"}).status().message();
  EXPECT_NE(unknown.find("vllmflags"), std::string::npos) << unknown;  // lists the allowed names
}

TEST(ParseArgs, HelpFlag) {
  auto o = ParseArgs({"-h"});
  ASSERT_TRUE(o.ok());
  EXPECT_TRUE(o->help);
  EXPECT_NE(Usage().find("--suites"), std::string::npos);
}

}  // namespace
}  // namespace specsim::validate
