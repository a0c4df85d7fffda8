// Framework profiles: every bundled one loads, from disk and from the embedded copy, and its
// values are the file's; every bad input names the file, the line:col, the field, the value and
// what is allowed; overrides merge field by field.
#include "sim/io/framework_loader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "sim/io/test_matchers.h"
#include "sim/io/textproto.h"

namespace specsim::io {
namespace {

namespace fs = std::filesystem;
using testing::Contains;

std::string SourcePath(const std::string& relative) { return std::string(SPECSIM_SOURCE_DIR) + "/" + relative; }

std::string ReadDisk(const std::string& relative) {
  std::ifstream in(SourcePath(relative));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

constexpr const char* kProfiles[] = {
    "configs/frameworks/sglang.textproto",    "configs/frameworks/sglang-v1.textproto",
    "configs/frameworks/vllm.textproto",      "configs/frameworks/vllm-sync.textproto",
    "configs/frameworks/cpp-graph.textproto", "configs/frameworks/pytorch.textproto",
};

llm::CaptureMode Mode(config::CaptureMode m) {
  return m == config::FULL        ? llm::CaptureMode::kFull
         : m == config::PIECEWISE ? llm::CaptureMode::kPiecewise
                                  : llm::CaptureMode::kEager;
}

class BundledFrameworkTest : public ::testing::TestWithParam<const char*> {};

// The loaded struct holds exactly what the file says (read independently as a raw proto).
TEST_P(BundledFrameworkTest, LoadsWithTheFilesValues) {
  StatusOr<llm::FrameworkProfile> f = LoadFrameworkFile(SourcePath(GetParam()));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  StatusOr<config::FrameworkProfile> raw = ParseTextProto<config::FrameworkProfile>(ReadDisk(GetParam()), GetParam());
  ASSERT_TRUE(raw.ok()) << raw.status().ToString();
  EXPECT_EQ(f->name, raw->name());
  EXPECT_EQ(f->source, raw->source());
  EXPECT_FALSE(f->source.empty());
  EXPECT_EQ(f->capture.decode, Mode(raw->capture().decode()));
  EXPECT_EQ(f->capture.draft, Mode(raw->capture().draft()));
  EXPECT_EQ(f->capture.verify, Mode(raw->capture().verify()));
  EXPECT_EQ(f->capture.draft_extend, Mode(raw->capture().draft_extend()));
  EXPECT_EQ(f->eager_op_host_us, raw->eager_op_host_us());
  EXPECT_EQ(f->graph_replay_host_us, raw->graph_replay_host_us());
  EXPECT_EQ(f->decode_step_host_us, raw->decode_step_host_us());
  EXPECT_EQ(f->spec_cycle_host_us, raw->spec_cycle_host_us());
  EXPECT_EQ(f->tensor_op_host_us, raw->tensor_op_host_us());
  EXPECT_EQ(f->sync_each_step, raw->sync_each_step());
  EXPECT_EQ(f->sync_each_cycle, raw->sync_each_cycle());
  EXPECT_EQ(f->jitter.mean_us, raw->jitter().mean_us());
  EXPECT_EQ(f->jitter.sigma, raw->jitter().sigma());
  EXPECT_EQ(f->jitter.quantiles_us.size(), static_cast<size_t>(raw->jitter().quantiles_us_size()));
  // Every field is written out in the file (nothing left to a default).
  EXPECT_TRUE(raw->has_eager_op_host_us() && raw->has_graph_replay_host_us() && raw->has_decode_step_host_us() &&
              raw->has_spec_cycle_host_us() && raw->has_tensor_op_host_us() && raw->has_sync_each_step() &&
              raw->has_sync_each_cycle() && raw->has_jitter());
  // The file's stem is the profile's name.
  EXPECT_EQ(fs::path(GetParam()).stem().string(), f->name);
}

TEST_P(BundledFrameworkTest, LoadsFromTheEmbeddedCopyAnywhere) {
  const fs::path previous = fs::current_path();
  const fs::path dir = fs::temp_directory_path() / ("specsim_framework_test_" + std::to_string(getpid()));
  fs::create_directories(dir);
  fs::current_path(dir);
  StatusOr<llm::FrameworkProfile> f = LoadFrameworkFile(GetParam());
  fs::current_path(previous);
  fs::remove_all(dir);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(fs::path(GetParam()).stem().string(), f->name);
}

// Issue 38: every host cost states where it comes from, machine-checked (the loader), and the
// SGLang / vLLM profiles carry no [PLACEHOLDER] host cost: each is FITTED (with its host) or
// UNMEASURED with a cited range.
TEST_P(BundledFrameworkTest, HasProtoHeaderAndHostCostProvenance) {
  const std::string text = ReadDisk(GetParam());
  EXPECT_TRUE(Contains(text, "# proto-file: proto/specsim/framework.proto\n"));
  EXPECT_TRUE(Contains(text, "# proto-message: specsim.config.FrameworkProfile\n"));
  StatusOr<llm::FrameworkProfile> f = LoadFrameworkFile(SourcePath(GetParam()));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_FALSE(f->jitter_source.empty());
  for (llm::HostCost c : llm::kHostCosts) {
    const llm::HostCostSource& s = f->SourceOf(c);
    EXPECT_NE(s.kind, llm::HostCostSource::Kind::kUnstated) << llm::HostCostName(c);
    EXPECT_NE(s.kind, llm::HostCostSource::Kind::kScenarioOverride) << llm::HostCostName(c);
    if (f->name.rfind("sglang", 0) == 0 || f->name.rfind("vllm", 0) == 0)
      EXPECT_TRUE(s.kind == llm::HostCostSource::Kind::kFitted || s.kind == llm::HostCostSource::Kind::kUnmeasured)
          << llm::HostCostName(c);
    if (s.has_range) {
      EXPECT_LE(s.low_us, f->HostCostUs(c)) << llm::HostCostName(c);
      EXPECT_LE(f->HostCostUs(c), s.high_us) << llm::HostCostName(c);
    }
  }
  // Every fact is read from the source and cited, or marked UNKNOWN with what would settle it: no
  // placeholder and no unverified mark is left.
  EXPECT_FALSE(Contains(text, "[PLACEHOLDER]"));
  EXPECT_FALSE(Contains(text, "UNVERIFIED"));
  EXPECT_FALSE(f->version.empty());
}

// The PyTorch per-op cost both PyTorch frameworks share is the probe's fit (scripts/fit-torch-host-costs.py).
TEST(BundledFrameworksTest, PytorchEagerOpCostIsTheProbesFit) {
  for (const char* path : {"configs/frameworks/sglang.textproto", "configs/frameworks/vllm.textproto"}) {
    StatusOr<llm::FrameworkProfile> f = LoadFrameworkFile(path);
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    const llm::HostCostSource& s = f->SourceOf(llm::HostCost::kEagerOp);
    EXPECT_EQ(s.kind, llm::HostCostSource::Kind::kFitted) << path;
    EXPECT_EQ(s.host, "Intel(R) Xeon(R) Processor") << path;
    // The median of runs n, o, p, q: 36.20, 52.10, 29.57, 36.52 (scripts/fit-torch-host-costs.py).
    EXPECT_DOUBLE_EQ(f->eager_op_host_us, 36.36) << path;
    EXPECT_DOUBLE_EQ(s.low_us, 29.57);
    EXPECT_DOUBLE_EQ(s.high_us, 52.10);
    EXPECT_TRUE(Contains(s.fitted_from, "h200-1x-2026-12-03n.json")) << path;
  }
}

INSTANTIATE_TEST_SUITE_P(AllBundled, BundledFrameworkTest, ::testing::ValuesIn(kProfiles));

// Each profile version names the host waits its source has, where the host meets them: SGLang's
// spec-v2 worker one wait on verify's event after issuing the draft extend, its n-gram worker four
// stream syncs after its verify (the drafting workers do not meet them); its serial worker four
// stream syncs after verify and one after the draft extend; vLLM with async scheduling one wait on
// verify's event after the draft; without it two stream syncs after the draft and one per plain
// step.
TEST(BundledFrameworksTest, EachVersionNamesItsHostWaits) {
  struct Expected {
    const char* path;
    bool sync_each_step;
    // name part, after, waits for, met by the drafting workers, by the n-gram worker
    std::vector<std::tuple<std::string, llm::LoopPass, llm::LoopPass, bool, bool>> cycle;
    size_t step_waits;
  };
  using llm::LoopPass;
  const Expected expected[] = {
      {"configs/frameworks/sglang.textproto",
       false,
       {{"verify_done", LoopPass::kDraftExtend, LoopPass::kVerify, true, false},
        {"accepted_indices.tolist()", LoopPass::kVerify, LoopPass::kVerify, false, true},
        {"accepted_indices != -1", LoopPass::kVerify, LoopPass::kVerify, false, true},
        {"accept_length.cpu()", LoopPass::kVerify, LoopPass::kVerify, false, true},
        {"evict_mask", LoopPass::kVerify, LoopPass::kVerify, false, true}},
       0},
      {"configs/frameworks/sglang-v1.textproto",
       false,
       {{"accept_index.tolist()", LoopPass::kVerify, LoopPass::kVerify, true, true},
        {"accept_index != -1", LoopPass::kVerify, LoopPass::kVerify, true, true},
        {"evict_mask", LoopPass::kVerify, LoopPass::kVerify, true, true},
        {"accept_length.tolist()", LoopPass::kVerify, LoopPass::kVerify, true, true},
        {"seq_lens).item()", LoopPass::kDraftExtend, LoopPass::kDraftExtend, true, true}},
       0},
      {"configs/frameworks/vllm.textproto",
       false,
       {{"valid_sampled_token_count_event", LoopPass::kDraft, LoopPass::kVerify, true, true}},
       0},
      {"configs/frameworks/vllm-sync.textproto",
       true,
       {{"parse_output", LoopPass::kDraft, LoopPass::kDraft, true, true},
        {"take_draft_token_ids", LoopPass::kDraft, LoopPass::kDraft, true, true}},
       1},
  };
  for (const Expected& e : expected) {
    StatusOr<llm::FrameworkProfile> f = LoadFrameworkFile(e.path);
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    EXPECT_EQ(f->sync_each_step, e.sync_each_step) << e.path;
    EXPECT_TRUE(f->sync_each_cycle) << e.path;
    EXPECT_EQ(f->step_host_waits.size(), e.step_waits) << e.path;
    ASSERT_EQ(f->cycle_host_waits.size(), e.cycle.size()) << e.path;
    for (size_t i = 0; i < e.cycle.size(); ++i) {
      const llm::HostWait& w = f->cycle_host_waits[i];
      EXPECT_TRUE(Contains(w.name, std::get<0>(e.cycle[i]))) << e.path << ": " << w.name;
      EXPECT_EQ(w.after, std::get<1>(e.cycle[i])) << e.path << ": " << w.name;
      EXPECT_EQ(w.waits_for, std::get<2>(e.cycle[i])) << e.path << ": " << w.name;
      EXPECT_EQ(w.drafting, std::get<3>(e.cycle[i])) << e.path << ": " << w.name;
      EXPECT_EQ(w.ngram, std::get<4>(e.cycle[i])) << e.path << ": " << w.name;
      EXPECT_TRUE(Contains(w.source, " @")) << e.path << ": " << w.name << " cites no commit";
    }
  }
}

// The layer's small kernels as each source launches them: SGLang a fused add + RMSNorm, one rotary
// kernel for q and k, the KV store apart (one JIT kernel now, two index_puts in the serial
// worker's era) and the query made contiguous; vLLM's Inductor kernels rotary per tensor, one
// reshape_and_cache_flash; plain PyTorch everything apart.
TEST(BundledFrameworksTest, LayerKernelsAsTheSourcesLaunchThem) {
  auto inv = [](const char* path) {
    StatusOr<llm::FrameworkProfile> f = LoadFrameworkFile(path);
    EXPECT_TRUE(f.ok()) << f.status().ToString();
    EXPECT_FALSE(f->kernel_inventory_source.empty()) << path;
    return f->kernel_inventory;
  };
  const llm::KernelInventory sglang = inv("configs/frameworks/sglang.textproto");
  EXPECT_TRUE(sglang.add_norm && sglang.activation && sglang.query_copy);
  EXPECT_FALSE(sglang.rope_kv_store || sglang.rotary_per_tensor);
  EXPECT_EQ(sglang.kv_store_kernels, 1);
  EXPECT_EQ(inv("configs/frameworks/sglang-v1.textproto").kv_store_kernels, 2);
  for (const char* path : {"configs/frameworks/vllm.textproto", "configs/frameworks/vllm-sync.textproto"}) {
    const llm::KernelInventory vllm = inv(path);
    EXPECT_TRUE(vllm.add_norm && vllm.activation && vllm.rotary_per_tensor) << path;
    EXPECT_FALSE(vllm.rope_kv_store || vllm.query_copy) << path;
    EXPECT_EQ(vllm.kv_store_kernels, 1) << path;
  }
  const llm::KernelInventory torch = inv("configs/frameworks/pytorch.textproto");
  EXPECT_FALSE(torch.add_norm || torch.rope_kv_store || torch.activation);
  EXPECT_TRUE(torch.mask_bias_above_q1);
  EXPECT_FALSE(torch.merge_heads_copy);  // cuDNN's output reads as a view (pytorch.textproto)
  EXPECT_TRUE(LoadFrameworkFile("configs/frameworks/cpp-graph.textproto")->kernel_inventory.Fused());
}

// The speculative shapes SGLang takes by default (speculative_hook.py @004c82e): Llama (5, 4, 8),
// every other family (3, 1, 4), 48 running requests.
TEST(BundledFrameworksTest, SglangsDefaultShapesFollowTheArchitecture) {
  for (const char* path : {"configs/frameworks/sglang.textproto", "configs/frameworks/sglang-v1.textproto"}) {
    StatusOr<llm::FrameworkProfile> f = LoadFrameworkFile(path);
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    const auto& d = f->speculative_defaults;
    ASSERT_TRUE(d.stated);
    const auto& llama = d.For(llm::ModelFamily::kLlama);
    EXPECT_EQ(std::tie(llama.num_steps, llama.topk, llama.num_draft_tokens), std::make_tuple(5, 4, 8)) << path;
    for (llm::ModelFamily other :
         {llm::ModelFamily::kDeepseekV3, llm::ModelFamily::kQwen3, llm::ModelFamily::kGptOss}) {
      const auto& s = d.For(other);
      EXPECT_EQ(std::tie(s.num_steps, s.topk, s.num_draft_tokens), std::make_tuple(3, 1, 4)) << path;
    }
    EXPECT_EQ(d.max_running_requests, 48);
  }
}

TEST(BundledFrameworksTest, TableCoversTheDirectory) {
  for (const auto& entry : fs::directory_iterator(SourcePath("configs/frameworks"))) {
    if (entry.path().extension() != ".textproto") continue;
    const std::string relative = "configs/frameworks/" + entry.path().filename().string();
    EXPECT_TRUE(std::any_of(std::begin(kProfiles), std::end(kProfiles), [&](const char* s) { return relative == s; }))
        << relative << " is not in kProfiles";
  }
}

TEST(BundledFrameworksTest, TheDefaultIsSglang) {
  StatusOr<llm::FrameworkProfile> f = LoadFrameworkFile(kDefaultFrameworkPath);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->name, "sglang");
}

// The defining values of the C++ floor: no framework at all.
TEST(BundledFrameworksTest, CppGraphHasNoFrameworkCosts) {
  StatusOr<llm::FrameworkProfile> f = LoadFrameworkFile("configs/frameworks/cpp-graph.textproto");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->capture.decode, llm::CaptureMode::kFull);
  EXPECT_EQ(f->capture.draft, llm::CaptureMode::kFull);
  EXPECT_EQ(f->capture.verify, llm::CaptureMode::kFull);
  EXPECT_EQ(f->capture.draft_extend, llm::CaptureMode::kFull);
  EXPECT_EQ(f->eager_op_host_us, 0);
  EXPECT_EQ(f->graph_replay_host_us, 0);
  EXPECT_EQ(f->decode_step_host_us, 0);
  EXPECT_EQ(f->spec_cycle_host_us, 0);
  EXPECT_EQ(f->tensor_op_host_us, 0);
  EXPECT_EQ(f->jitter.kind, llm::Jitter::Kind::kNone);
}

// A complete profile; tests edit one line of it. Line numbers matter: errors carry the line:col of
// the field's name (of the enclosing block's name for a field left unset inside it).
constexpr const char* kGood =
    R"txt(name: "test" host_cost_sources { eager_op_host_us { kind: FITTED fitted_from: "t.json" host: "cpu" } graph_replay_host_us { kind: DEFINITION definition: "d" } decode_step_host_us { kind: UNMEASURED low_us: 20 high_us: 100 citation: "c" } spec_cycle_host_us { kind: UNMEASURED low_us: 40 high_us: 160 citation: "c" } tensor_op_host_us { kind: DEFINITION definition: "t" } jitter: "j" } version: "v1"
source: "a test"
capture { decode: FULL draft: FULL verify: PIECEWISE draft_extend: EAGER }
eager_op_host_us: 10
graph_replay_host_us: 2
decode_step_host_us: 50
spec_cycle_host_us: 80 tensor_op_host_us: 20
sync_each_step: true
sync_each_cycle: true
jitter { distribution: LOGNORMAL mean_us: 3 sigma: 0.5 }
)txt";

std::string Edit(const std::string& from, const std::string& to) { return testing::ReplaceFirst(kGood, from, to); }

std::string ErrorOf(const std::string& text) {
  StatusOr<llm::FrameworkProfile> f = ParseFramework(text, "f.textproto");
  EXPECT_FALSE(f.ok());
  if (f.ok()) return "";
  EXPECT_EQ(f.status().code(), StatusCode::kInvalidArgument);
  return f.status().message();
}

TEST(FrameworkParseTest, GoodProfileConverts) {
  StatusOr<llm::FrameworkProfile> f = ParseFramework(kGood, "f.textproto");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->name, "test");
  EXPECT_EQ(f->source, "a test");
  EXPECT_EQ(f->capture.decode, llm::CaptureMode::kFull);
  EXPECT_EQ(f->capture.verify, llm::CaptureMode::kPiecewise);
  EXPECT_EQ(f->capture.draft_extend, llm::CaptureMode::kEager);
  EXPECT_EQ(f->eager_op_host_us, 10);
  EXPECT_EQ(f->graph_replay_host_us, 2);
  EXPECT_EQ(f->decode_step_host_us, 50);
  EXPECT_EQ(f->spec_cycle_host_us, 80);
  EXPECT_EQ(f->tensor_op_host_us, 20);
  EXPECT_EQ(f->SourceOf(llm::HostCost::kTensorOp).kind, llm::HostCostSource::Kind::kDefinition);
  EXPECT_TRUE(f->sync_each_step);
  EXPECT_EQ(f->jitter.kind, llm::Jitter::Kind::kLognormal);
  EXPECT_EQ(f->jitter.mean_us, 3);
  EXPECT_EQ(f->jitter.sigma, 0.5);
  // No jitter block: none.
  StatusOr<llm::FrameworkProfile> plain =
      ParseFramework(Edit("jitter { distribution: LOGNORMAL mean_us: 3 sigma: 0.5 }", ""), "f.textproto");
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(plain->jitter.kind, llm::Jitter::Kind::kNone);
  // sync_each_step false is a value, not "unset".
  StatusOr<llm::FrameworkProfile> ahead =
      ParseFramework(Edit("sync_each_step: true", "sync_each_step: false"), "f.textproto");
  ASSERT_TRUE(ahead.ok()) << ahead.status().ToString();
  EXPECT_FALSE(ahead->sync_each_step);
}

TEST(FrameworkParseTest, NegativeOrNonFiniteCostNamesFileLineFieldAndValue) {
  EXPECT_TRUE(Contains(ErrorOf(Edit("eager_op_host_us: 10", "eager_op_host_us: -1")),
                       "f.textproto:4:1: eager_op_host_us = -1: must be in [0, 1e+06] us (at most a second)"));
  EXPECT_TRUE(Contains(ErrorOf(Edit("graph_replay_host_us: 2", "graph_replay_host_us: nan")),
                       "f.textproto:5:1: graph_replay_host_us = nan: must be in [0, 1e+06] us"));
  EXPECT_TRUE(Contains(ErrorOf(Edit("spec_cycle_host_us: 80", "spec_cycle_host_us: inf")),
                       "f.textproto:7:1: spec_cycle_host_us = inf: must be in [0, 1e+06] us"));
}

TEST(FrameworkParseTest, UnsetFieldsAreErrors) {
  EXPECT_TRUE(Contains(ErrorOf(Edit("decode_step_host_us: 50", "")),
                       "f.textproto: decode_step_host_us = (unset): required: microseconds, finite and >= 0 "
                       "(write 0 for none"));
  EXPECT_TRUE(
      Contains(ErrorOf(Edit("sync_each_step: true", "")), "f.textproto: sync_each_step = (unset): required: true"));
  EXPECT_TRUE(Contains(ErrorOf(Edit("name: \"test\"", "")), "f.textproto: name = (unset): required"));
  EXPECT_TRUE(Contains(ErrorOf(Edit("name: \"test\"", "name: \"\"")), "f.textproto:1:1: name = \"\": required"));
}

TEST(FrameworkParseTest, UnspecifiedCaptureModeNamesTheAllowedValues) {
  // Unset: located at the capture block.
  EXPECT_TRUE(Contains(ErrorOf(Edit(" verify: PIECEWISE", "")),
                       "f.textproto:3:1: capture.verify = CAPTURE_MODE_UNSPECIFIED: must be set, one of "
                       "FULL, PIECEWISE, EAGER"));
  EXPECT_TRUE(Contains(ErrorOf(Edit("draft: FULL", "draft: CAPTURE_MODE_UNSPECIFIED")),
                       "capture.draft = CAPTURE_MODE_UNSPECIFIED: must be set, one of FULL, PIECEWISE, EAGER"));
  // No capture block at all: all four, in one message.
  const std::string e = ErrorOf(Edit("capture { decode: FULL draft: FULL verify: PIECEWISE draft_extend: EAGER }", ""));
  for (const char* phase : {"decode", "draft", "verify", "draft_extend"}) {
    EXPECT_TRUE(Contains(e, std::string("f.textproto: capture.") + phase + " = CAPTURE_MODE_UNSPECIFIED"));
  }
  // A typo is a parse error with the enum's values as a hint (textproto.h).
  EXPECT_TRUE(Contains(ErrorOf(Edit("decode: FULL", "decode: GRAPH")), "f.textproto:3:19:"));
  // An out-of-range number from code (not text).
  config::FrameworkProfile p;
  ASSERT_TRUE(ParseTextProtoInto(kGood, "f.textproto", &p).ok());
  p.mutable_capture()->set_decode(static_cast<config::CaptureMode>(7));
  StatusOr<llm::FrameworkProfile> f = FrameworkFromProto(p, "mem");
  ASSERT_FALSE(f.ok());
  EXPECT_TRUE(Contains(f.status().message(), "mem: capture.decode = 7: must be set, one of FULL, PIECEWISE, EAGER"));
}

TEST(FrameworkParseTest, BadJitterNamesTheField) {
  const std::string lognormal = "jitter { distribution: LOGNORMAL mean_us: 3 sigma: 0.5 }";
  EXPECT_TRUE(Contains(ErrorOf(Edit(lognormal, "jitter { distribution: LOGNORMAL mean_us: 3 sigma: 7 }")),
                       "f.textproto:10:45: jitter.sigma = 7: must be in [0, 5] (sigma of ln x)"));
  EXPECT_TRUE(Contains(ErrorOf(Edit(lognormal, "jitter { distribution: EXPONENTIAL mean_us: -2 }")),
                       "f.textproto:10:36: jitter.mean_us = -2: must be in [0, 1e+06] us"));
  EXPECT_TRUE(Contains(ErrorOf(Edit(lognormal, "jitter { mean_us: 2 }")),
                       "jitter.distribution = DISTRIBUTION_UNSPECIFIED: must be set when a jitter block is "
                       "present, one of NONE, EXPONENTIAL, LOGNORMAL, EMPIRICAL"));
  // The empirical list's shape: llm::ValidateJitter's rules.
  EXPECT_TRUE(Contains(ErrorOf(Edit(lognormal, "jitter { distribution: EMPIRICAL quantiles_us: [3] }")),
                       "f.textproto:10:34: jitter.quantiles_us = [3]: jitter.quantiles_us needs at least 2 values"));
  EXPECT_TRUE(Contains(ErrorOf(Edit(lognormal, "jitter { distribution: EMPIRICAL quantiles_us: [1, 4, 2] }")),
                       "jitter.quantiles_us = [1, 4, 2]: jitter.quantiles_us must not decrease (index 2)"));
  EXPECT_TRUE(Contains(ErrorOf(Edit(lognormal, "jitter { distribution: EMPIRICAL quantiles_us: [1, -4] }")),
                       "jitter.quantiles_us[1] = -4: must be in [0, 1e+06] us"));
  StatusOr<llm::FrameworkProfile> empirical =
      ParseFramework(Edit(lognormal, "jitter { distribution: EMPIRICAL quantiles_us: [0, 1, 5] }"), "f.textproto");
  ASSERT_TRUE(empirical.ok()) << empirical.status().ToString();
  EXPECT_EQ(empirical->jitter.kind, llm::Jitter::Kind::kEmpirical);
  EXPECT_EQ(empirical->jitter.quantiles_us, (std::vector<double>{0, 1, 5}));
}

// The custom-allreduce gate: converted as written; a bad world size, a missing list or a negative
// limit is an error naming the field, its line and the rule.
TEST(FrameworkParseTest, CustomAllreduceRule) {
  const std::string rule =
      "custom_allreduce { world_sizes: [2, 4] max_world_size_without_full_nvlink: 2 max_bytes: 1024 "
      "source: \"x.py\" one_shot_only_world_sizes: [2] }\n";
  StatusOr<llm::FrameworkProfile> f = ParseFramework(std::string(kGood) + rule, "f.textproto");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_TRUE(f->custom_allreduce.stated);
  EXPECT_EQ(f->custom_allreduce.world_sizes, (std::vector<int>{2, 4}));
  EXPECT_EQ(f->custom_allreduce.max_world_size_without_full_nvlink, 2);
  EXPECT_EQ(f->custom_allreduce.max_bytes, 1024);
  EXPECT_EQ(f->custom_allreduce.source, "x.py");
  EXPECT_EQ(f->custom_allreduce.one_shot_only_world_sizes, (std::vector<int>{2}));
  EXPECT_FALSE(ParseFramework(kGood, "f.textproto")->custom_allreduce.stated);
  EXPECT_TRUE(Contains(ErrorOf(std::string(kGood) + "custom_allreduce { world_sizes: [1, 4] }\n"),
                       "f.textproto:11:20: custom_allreduce.world_sizes[0] = 1: must be in [2, 1024] GPUs"));
  EXPECT_TRUE(Contains(ErrorOf(std::string(kGood) + "custom_allreduce { max_bytes: 8 }\n"),
                       "custom_allreduce.world_sizes = (empty): required when custom_allreduce is given"));
  EXPECT_TRUE(Contains(ErrorOf(std::string(kGood) + "custom_allreduce { world_sizes: [2] max_bytes: -8 }\n"),
                       "custom_allreduce.max_bytes = -8: must be in [0, 1e+15] bytes"));
  EXPECT_TRUE(Contains(
      ErrorOf(std::string(kGood) + "custom_allreduce { world_sizes: [2] max_world_size_without_full_nvlink: -1 }\n"),
      "custom_allreduce.max_world_size_without_full_nvlink = -1: must be in [0, 1024] GPUs"));
}

// Issue 41: SGLang's profiles state STANDALONE and NGRAM (padded verify), vLLM's draft_model
// (chains only) and ngram (unpadded, its ragged verify PIECEWISE); a block needs its source,
// ngram_launch needs the padding fact and an unpadded one the ragged verify's capture; overrides
// may not set it.
TEST(FrameworkParseTest, SpeculationMethodsAreStatedAndChecked) {
  for (const char* path : {"configs/frameworks/sglang.textproto", "configs/frameworks/sglang-v1.textproto"}) {
    auto f = LoadFrameworkFile(SourcePath(path));
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    EXPECT_TRUE(f->speculation_methods.stated) << path;
    EXPECT_TRUE(Contains(f->speculation_methods.draft_model_launch, "STANDALONE")) << path;
    EXPECT_TRUE(Contains(f->speculation_methods.ngram_launch, "NGRAM")) << path;
    EXPECT_TRUE(f->speculation_methods.ngram_verify_padded) << path;
    EXPECT_FALSE(f->speculation_methods.draft_model_chain_only) << path;
  }
  for (const char* path : {"configs/frameworks/vllm.textproto", "configs/frameworks/vllm-sync.textproto"}) {
    auto f = LoadFrameworkFile(SourcePath(path));
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    EXPECT_TRUE(Contains(f->speculation_methods.draft_model_launch, "draft_model")) << path;
    EXPECT_FALSE(f->speculation_methods.ngram_verify_padded) << path;
    EXPECT_EQ(f->speculation_methods.ngram_ragged_verify_capture, llm::CaptureMode::kPiecewise) << path;
    EXPECT_TRUE(f->speculation_methods.draft_model_chain_only) << path;
  }
  const std::string k = kGood;
  EXPECT_TRUE(Contains(ErrorOf(k + "speculation_methods { ngram_launch: \"x\" ngram_verify_padded: true }"),
                       "speculation_methods.source"));
  EXPECT_TRUE(Contains(ErrorOf(k + "speculation_methods { ngram_launch: \"x\" source: \"s\" }"),
                       "speculation_methods.ngram_verify_padded = (unset)"));
  // Unpadded, the ragged verify's capture is required and named with its allowed values.
  EXPECT_TRUE(
      Contains(ErrorOf(k + "speculation_methods { ngram_launch: \"x\" ngram_verify_padded: false source: \"s\" }"),
               "speculation_methods.ngram_ragged_verify_capture = CAPTURE_MODE_UNSPECIFIED: required with "
               "ngram_verify_padded false"));
  EXPECT_TRUE(Contains(ErrorOf(k + "speculation_methods { ngram_launch: \"x\" ngram_verify_padded: false "
                                   "ngram_ragged_verify_capture: 7 source: \"s\" }"),
                       "speculation_methods.ngram_ragged_verify_capture = 7: must be one of"));
  config::FrameworkProfile overrides;
  overrides.mutable_speculation_methods()->set_source("s");
  const std::vector<std::string> problems = FrameworkOverrideProblems(overrides, "framework_overrides.");
  EXPECT_TRUE(std::any_of(problems.begin(), problems.end(),
                          [](const std::string& p) { return Contains(p, "speculation_methods"); }));
}

// The cycle's own launches: named, cited, before a pass of the cycle, at least one kernel; SGLang's
// spec-v2 profile lists them (28 launches a greedy cycle makes outside its passes), the others
// keep them in their spec_cycle_host_us.
TEST(FrameworkParseTest, CycleOpsAreCheckedAndSglangListsItsCycles) {
  const std::string k = kGood;
  const std::string good = "cycle_ops { name: \"n\" before: VERIFY workers: DRAFTING kernels: 2 source: \"r p @c f\" }";
  StatusOr<llm::FrameworkProfile> parsed = ParseFramework(k + good, "f.textproto");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_EQ(parsed->cycle_ops.size(), 1u);
  EXPECT_EQ(parsed->cycle_ops[0].before, llm::LoopPass::kVerify);
  EXPECT_EQ(parsed->cycle_ops[0].kernels, 2);
  EXPECT_TRUE(Contains(ErrorOf(k + "cycle_ops { name: \"n\" before: DECODE workers: NGRAM kernels: 2 source: \"s\" }"),
                       "cycle_ops[0].before = DECODE: must be one of VERIFY, DRAFT_EXTEND, DRAFT"));
  EXPECT_TRUE(Contains(ErrorOf(k + "cycle_ops { name: \"n\" before: VERIFY workers: NGRAM kernels: 0 source: \"s\" }"),
                       "cycle_ops[0].kernels = 0: kernels + kernels_per_sequence must be at least 1"));
  EXPECT_TRUE(Contains(ErrorOf(k + "cycle_ops { before: VERIFY workers: NGRAM kernels: 1 source: \"s\" }"),
                       "cycle_ops[0].name = \"\": must name the work"));
  EXPECT_TRUE(Contains(ErrorOf(k + "cycle_ops { name: \"n\" before: VERIFY workers: NGRAM kernels: 1 }"),
                       "cycle_ops[0].source = \"\": must cite"));
  EXPECT_TRUE(Contains(ErrorOf(k + "cycle_ops { name: \"n\" before: VERIFY kernels: 1 source: \"s\" }"),
                       "cycle_ops[0].workers = WORKERS_UNSPECIFIED: must be set"));
  EXPECT_TRUE(Contains(
      ErrorOf(
          k +
          "cycle_ops { name: \"n\" before: VERIFY workers: DRAFTING kernels: 1 source: \"s\" every_draft_step: true }"),
      "cycle_ops[0].every_draft_step = true: only with before: DRAFT"));
  EXPECT_TRUE(
      Contains(ErrorOf(k + "cycle_ops { name: \"n\" before: DRAFT workers: DRAFTING_AND_NGRAM kernels: 1 source: \"s\" "
                           "every_draft_step: true }"),
               "cycle_ops[0].workers = DRAFTING_AND_NGRAM: must be DRAFTING with every_draft_step or draft_vocab_map"));
  EXPECT_TRUE(Contains(
      ErrorOf(k +
              "cycle_ops { name: \"n\" before: VERIFY workers: NGRAM kernels: 1 source: \"s\" draft_vocab_map: true }"),
      "cycle_ops[0].workers = NGRAM: must be DRAFTING with every_draft_step or draft_vocab_map"));
  int kernels = 0, ngram = 0, ngram_per_sequence = 0;
  StatusOr<llm::FrameworkProfile> sglang = LoadFrameworkFile("configs/frameworks/sglang.textproto");
  ASSERT_TRUE(sglang.ok()) << sglang.status().ToString();
  for (const llm::CycleOps& c : sglang->cycle_ops) {
    kernels += c.drafting ? c.Launches(1) : 0;
    ngram += c.ngram ? c.kernels : 0;
    ngram_per_sequence += c.ngram ? c.kernels_per_sequence : 0;
    EXPECT_TRUE(Contains(c.source, " @")) << c.name << " cites no commit";
  }
  EXPECT_EQ(kernels, 28);
  // The n-gram worker builds its tree inputs with 4 launches and its full mask with 4 per request,
  // and its verify (NgramVerifyInput) launches 2 before it, 3 right after it and 14 after its waits.
  EXPECT_EQ(ngram, 23);
  EXPECT_EQ(ngram_per_sequence, 4);
  // The other versions' cycles, for the Llama-3.1 EAGLE-3 head (a reduced draft vocabulary) at 3
  // steps, batch 1: the serial SGLang worker 32 (no group per step or per vocabulary); vLLM 41 +
  // 16 x 2 steps + 4 x 3 draft LM heads + 9 async input-id launches = 94, without async
  // scheduling 85; with a full-vocabulary head (MTP) 12 fewer.
  for (const auto& [file, mapped, expected] : {std::tuple{"configs/frameworks/sglang-v1.textproto", true, 32},
                                               std::tuple{"configs/frameworks/vllm.textproto", true, 94},
                                               std::tuple{"configs/frameworks/vllm-sync.textproto", true, 85},
                                               std::tuple{"configs/frameworks/vllm.textproto", false, 82}}) {
    StatusOr<llm::FrameworkProfile> f = LoadFrameworkFile(file);
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    int per_cycle = 0;
    for (const llm::CycleOps& c : f->cycle_ops) {
      EXPECT_TRUE(Contains(c.source, " @")) << c.name << " cites no commit";
      if (c.RunBy(/*ngram_worker=*/false, mapped)) per_cycle += c.LaunchesPerCycle(/*batch=*/1, /*num_steps=*/3);
    }
    EXPECT_EQ(per_cycle, expected) << file;
  }
  config::FrameworkProfile overrides;
  overrides.add_cycle_ops()->set_name("n");
  const std::vector<std::string> problems = FrameworkOverrideProblems(overrides, "framework_overrides.");
  EXPECT_TRUE(
      std::any_of(problems.begin(), problems.end(), [](const std::string& p) { return Contains(p, "cycle_ops"); }));
}

TEST(FrameworkParseTest, HostWaitsBackendsBoundsAndDefaultsAreChecked) {
  const std::string k = kGood;
  EXPECT_TRUE(Contains(ErrorOf(Edit(" version: \"v1\"", "")), "f.textproto: version = (unset): required"));
  EXPECT_TRUE(Contains(ErrorOf(k + "cycle_host_waits { name: \"x\" after: DECODE waits_for: VERIFY }"),
                       "cycle_host_waits[0].after = DECODE: must be one of VERIFY, DRAFT_EXTEND, DRAFT"));
  EXPECT_TRUE(Contains(ErrorOf(k + "cycle_host_waits { name: \"x\" after: DRAFT waits_for: VERIFY workers: NGRAM }"),
                       "cycle_host_waits[0].after = DRAFT: an n-gram worker's wait is after VERIFY"));
  EXPECT_TRUE(Contains(ErrorOf(k + "step_host_waits { name: \"x\" after: DECODE waits_for: DECODE workers: DRAFTING }"),
                       "step_host_waits[0].workers = DRAFTING: only a cycle's wait names its workers"));
  // An n-gram wait after verify may follow a drafting wait after the draft extend: each worker's
  // waits are in the order it meets them.
  EXPECT_TRUE(
      ParseFramework(k + "cycle_host_waits { name: \"d\" after: DRAFT_EXTEND waits_for: VERIFY workers: DRAFTING } "
                         "cycle_host_waits { name: \"n\" after: VERIFY waits_for: VERIFY workers: NGRAM }",
                     "f.textproto")
          .ok());
  EXPECT_TRUE(Contains(ErrorOf(k + "cycle_host_waits { name: \"x\" after: VERIFY waits_for: DRAFT }"),
                       "cycle_host_waits[0].waits_for = DRAFT: must be `after` (VERIFY) or a pass issued before it"));
  EXPECT_TRUE(Contains(ErrorOf(k + "cycle_host_waits { name: \"a\" after: DRAFT waits_for: DRAFT } "
                                   "cycle_host_waits { name: \"b\" after: VERIFY waits_for: VERIFY }"),
                       "cycle_host_waits[1].after = VERIFY: waits are listed in the order the host meets them"));
  EXPECT_TRUE(Contains(ErrorOf(k + "cycle_host_waits { name: \"a\" after: DRAFT waits_for: VERIFY } "
                                   "cycle_host_waits { name: \"b\" after: DRAFT waits_for: DRAFT_EXTEND }"),
                       "cycle_host_waits[1].waits_for = DRAFT_EXTEND: the cycle records one event"));
  EXPECT_TRUE(Contains(ErrorOf(k + "cycle_host_waits { after: VERIFY waits_for: VERIFY }"),
                       "cycle_host_waits[0].name = \"\": must name what waits"));
  EXPECT_TRUE(Contains(ErrorOf(k + "step_host_waits { name: \"x\" after: VERIFY waits_for: VERIFY }"),
                       "step_host_waits[0].after = VERIFY: must be one of DECODE"));
  EXPECT_TRUE(Contains(ErrorOf(k + "attention_backends { cache: GQA topk: ANY_TOPK backend: \"b\" "
                                   "decode_kernel: \"d\" verify_kernel: \"v\" source: \"s\" }"),
                       "attention_backends[0].gpu_archs = (empty): required"));
  EXPECT_TRUE(Contains(ErrorOf(k + "attention_backends { gpu_archs: \"sm90\" cache: GQA backend: \"b\" "
                                   "decode_kernel: \"d\" verify_kernel: \"v\" source: \"s\" }"),
                       "attention_backends[0].topk = TOPK_CONDITION_UNSPECIFIED: must be set"));
  EXPECT_TRUE(Contains(ErrorOf(k + "attention_backends { gpu_archs: \"sm90\" cache: MLA topk: TOPK_ONE "
                                   "decode_kernel: \"d\" verify_kernel: \"v\" source: \"s\" }"),
                       "attention_backends[0].backend = \"\": required, non-empty"));
  EXPECT_TRUE(Contains(ErrorOf(k + "attention_backends { gpu_archs: \"sm120\" cache: MLA topk: ANY_TOPK backend: \"b\" "
                                   "decode_kernel: \"d\" verify_kernel: \"v\" source: \"s\" "
                                   "gqa_draft_decode_kernel: \"g\" }"),
                       "attention_backends[0].gqa_draft_decode_kernel = g: set both gqa_draft_decode_kernel and "
                       "gqa_draft_verify_kernel"));
  EXPECT_TRUE(Contains(ErrorOf(k + "attention_backends { gpu_archs: \"sm120\" cache: GQA topk: ANY_TOPK backend: \"b\" "
                                   "decode_kernel: \"d\" verify_kernel: \"v\" source: \"s\" "
                                   "gqa_draft_decode_kernel: \"g\" gqa_draft_verify_kernel: \"h\" }"),
                       "attention_backends[0].gqa_draft_decode_kernel = g: only with cache: MLA"));
  EXPECT_TRUE(Contains(ErrorOf(k + "capture_bound { unit: TOKENS default_max: 512 }"),
                       "capture_bound = (default_max or default_max_from_tp4 unset): both required"));
  EXPECT_TRUE(
      Contains(ErrorOf(k + "capture_bound { unit: BATCH default_max: 8 default_max_from_tp4: 8 flag: \"--x\" }"),
               "capture_bound.flag = \"--x\": must hold {n}"));
  EXPECT_TRUE(Contains(ErrorOf(k + "speculative_defaults { shapes { families: [LLAMA] num_steps: 5 topk: 4 "
                                   "num_draft_tokens: 8 } }"),
                       "speculative_defaults.shapes = (0 without families): exactly one shape, the last"));
  EXPECT_TRUE(Contains(ErrorOf(k + "speculative_defaults { shapes { num_steps: 3 topk: 1 num_draft_tokens: 4 } "
                                   "shapes { families: [LLAMA] num_steps: 5 topk: 4 num_draft_tokens: 8 } }"),
                       "speculative_defaults.shapes[0].families = (empty): only the last shape may be the fallback"));
  EXPECT_TRUE(
      Contains(ErrorOf(k + "nccl_environment { passes_user_environment: true sets_if_unset { name: \"A B\" } }"),
               "nccl_environment.sets_if_unset[0].name = \"A B\": must be a variable name"));
}

TEST(FrameworkParseTest, EveryProblemReportedTogether) {
  std::string text = Edit("eager_op_host_us: 10", "eager_op_host_us: -1");
  text = testing::ReplaceFirst(text, "sigma: 0.5", "sigma: 9");
  const std::string e = ErrorOf(text);
  EXPECT_TRUE(Contains(e, "eager_op_host_us = -1"));
  EXPECT_TRUE(Contains(e, "\nf.textproto:10:45: jitter.sigma = 9"));
}

// Issue 38: a host cost without provenance, an UNMEASURED one without its range or citation, or a
// value outside its range is an error naming the file, the field and what is allowed.
TEST(FrameworkParseTest, HostCostProvenanceIsChecked) {
  EXPECT_TRUE(Contains(ErrorOf(Edit("graph_replay_host_us { kind: DEFINITION definition: \"d\" } ", "")),
                       "f.textproto:1:14: host_cost_sources.graph_replay_host_us.kind = KIND_UNSPECIFIED: required: "
                       "where graph_replay_host_us comes from, one of FITTED, UNMEASURED, DEFINITION"));
  EXPECT_TRUE(Contains(ErrorOf(Edit("low_us: 20 high_us: 100 citation: \"c\"", "low_us: 20")),
                       "host_cost_sources.decode_step_host_us.high_us = (unset): required for UNMEASURED"));
  EXPECT_TRUE(Contains(ErrorOf(Edit("low_us: 20 high_us: 100 citation: \"c\"", "low_us: 20 high_us: 100")),
                       "host_cost_sources.decode_step_host_us.citation = (unset): required for UNMEASURED: the public "
                       "figure"));
  EXPECT_TRUE(Contains(ErrorOf(Edit("decode_step_host_us: 50", "decode_step_host_us: 150")),
                       "f.textproto:6:1: decode_step_host_us = 150: must lie in its range [20, 100] us "
                       "(host_cost_sources.decode_step_host_us.low_us, high_us)"));
  EXPECT_TRUE(Contains(ErrorOf(Edit(" host: \"cpu\"", "")),
                       "host_cost_sources.eager_op_host_us.host = (unset): required for FITTED: the host's CPU model"));
  EXPECT_TRUE(Contains(ErrorOf(Edit("jitter: \"j\" ", "")), "host_cost_sources.jitter = (unset): required"));
  EXPECT_TRUE(Contains(ErrorOf(Edit("kind: DEFINITION", "kind: SCENARIO_OVERRIDE")),
                       "host_cost_sources.graph_replay_host_us.kind = SCENARIO_OVERRIDE: SCENARIO_OVERRIDE is written "
                       "by a scenario's framework_overrides, not in a profile"));
  // No host_cost_sources at all: all four and the jitter's.
  const std::string none = ErrorOf(std::string(kGood).substr(std::string(kGood).find('\n') + 1) + "name: \"test\"\n");
  for (llm::HostCost c : llm::kHostCosts)
    EXPECT_TRUE(Contains(none, std::string("host_cost_sources.") + llm::HostCostName(c) + ".kind = KIND_UNSPECIFIED"));
  // Overrides may not restate provenance; an overridden cost becomes the user's value.
  config::FrameworkProfile o;
  o.mutable_host_cost_sources()->set_jitter("x");
  const std::vector<std::string> p = FrameworkOverrideProblems(o, "framework_overrides.");
  ASSERT_EQ(p.size(), 1u);
  EXPECT_TRUE(Contains(p[0], "framework_overrides.host_cost_sources = (set): not allowed in overrides"));
}

TEST(FrameworkParseTest, UnknownFieldGetsTextprotoHint) {
  EXPECT_TRUE(
      Contains(ErrorOf(Edit("eager_op_host_us: 10", "eager_op_hostus: 10")), "Did you mean \"eager_op_host_us\"?"));
}

TEST(FrameworkFileTest, MissingFileIsNotFoundNamingThePath) {
  StatusOr<llm::FrameworkProfile> f = LoadFrameworkFile("configs/frameworks/none.textproto");
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Contains(f.status().message(), "configs/frameworks/none.textproto"));
}

TEST(FrameworkOverridesTest, ProblemsNameOnlyTheFieldsSet) {
  config::FrameworkProfile o;
  EXPECT_TRUE(FrameworkOverrideProblems(o, "framework_overrides.").empty());  // nothing set: fine
  o.set_decode_step_host_us(-3);
  o.mutable_jitter()->set_sigma(std::numeric_limits<double>::infinity());
  o.mutable_capture()->set_verify(static_cast<config::CaptureMode>(9));
  // The numbers' ranges are the scenario's check (ValidateScenario walks framework_overrides with
  // the rest of the scenario: ScenarioFrameworkTest.BadOverridesNameTheScenarioAndTheField).
  const std::vector<std::string> p = FrameworkOverrideProblems(o, "framework_overrides.");
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0], "framework_overrides.capture.verify = 9: must be one of FULL, PIECEWISE, EAGER");
}

TEST(FrameworkOverridesTest, MergeReplacesOnlyTheFieldsSet) {
  StatusOr<config::FrameworkProfile> base =
      ParseFrameworkProto(Edit("jitter { distribution: LOGNORMAL mean_us: 3 sigma: 0.5 }",
                               "jitter { distribution: EMPIRICAL quantiles_us: [1, 2, 3] }"),
                          "f.textproto");
  ASSERT_TRUE(base.ok()) << base.status().ToString();
  config::FrameworkProfile o;
  o.set_eager_op_host_us(0);  // a zero is a value
  o.set_sync_each_step(false);
  o.mutable_capture()->set_decode(config::EAGER);
  o.mutable_jitter()->add_quantiles_us(5);
  o.mutable_jitter()->add_quantiles_us(6);
  EXPECT_EQ(OverriddenFrameworkFields(o), "capture.decode, eager_op_host_us, sync_each_step, jitter.quantiles_us");
  config::FrameworkProfile merged = *base;
  MergeFrameworkOverrides(o, &merged);
  StatusOr<llm::FrameworkProfile> f = FrameworkFromProto(merged, "merged");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->eager_op_host_us, 0);
  EXPECT_EQ(f->graph_replay_host_us, 2);  // kept
  EXPECT_FALSE(f->sync_each_step);
  EXPECT_EQ(f->capture.decode, llm::CaptureMode::kEager);
  EXPECT_EQ(f->capture.verify, llm::CaptureMode::kPiecewise);      // kept
  EXPECT_EQ(f->jitter.kind, llm::Jitter::Kind::kEmpirical);        // kept
  EXPECT_EQ(f->jitter.quantiles_us, (std::vector<double>{5, 6}));  // replaced, not appended
  // The overridden cost is the user's value (no range, no band); the others keep their provenance.
  EXPECT_EQ(f->SourceOf(llm::HostCost::kEagerOp).kind, llm::HostCostSource::Kind::kScenarioOverride);
  EXPECT_FALSE(f->SourceOf(llm::HostCost::kEagerOp).has_range);
  EXPECT_EQ(f->SourceOf(llm::HostCost::kDecodeStep).kind, llm::HostCostSource::Kind::kUnmeasured);
  EXPECT_EQ(OverriddenFrameworkFields(config::FrameworkProfile()), "");
}

// Issue 12 item 1: the NCCL environment, capture flags and EP rule load from the bundled profiles,
// and their bad values name the field with what is allowed.
TEST(FrameworkParseTest, NcclEnvironmentGraphFlagsAndExpertParallel) {
  StatusOr<llm::FrameworkProfile> sglang = LoadFrameworkFile("configs/frameworks/sglang.textproto");
  ASSERT_TRUE(sglang.ok()) << sglang.status().ToString();
  EXPECT_TRUE(sglang->nccl_environment.stated);
  EXPECT_TRUE(sglang->nccl_environment.passes_user_environment);
  // Current SGLang sets NCCL_CUMEM_ENABLE only where the user has not (engine.py @001067f); its
  // older releases replaced the user's value.
  EXPECT_EQ(sglang->nccl_environment.SetsItself("NCCL_CUMEM_ENABLE"), nullptr);
  EXPECT_EQ(sglang->nccl_environment.sets_if_unset,
            (std::vector<std::pair<std::string, std::string>>{{"NCCL_CUMEM_ENABLE", "0"}, {"NCCL_NVLS_ENABLE", "0"}}));
  StatusOr<llm::FrameworkProfile> sglang_v1 = LoadFrameworkFile("configs/frameworks/sglang-v1.textproto");
  ASSERT_TRUE(sglang_v1.ok()) << sglang_v1.status().ToString();
  ASSERT_NE(sglang_v1->nccl_environment.SetsItself("NCCL_CUMEM_ENABLE"), nullptr);
  EXPECT_EQ(*sglang_v1->nccl_environment.SetsItself("NCCL_CUMEM_ENABLE"), "0");
  EXPECT_EQ(sglang->nccl_environment.SetsItself("NCCL_ALGO"), nullptr);
  EXPECT_EQ(sglang->graph_flags.disable_all, "--disable-cuda-graph");
  EXPECT_EQ(llm::WithNumber(sglang->graph_flags.max_batch_size, 8), "--cuda-graph-max-bs-decode 8");
  EXPECT_EQ(sglang->graph_flags.FlagFor("verify", llm::CaptureMode::kPiecewise), "");
  EXPECT_EQ(sglang->expert_parallel.default_communication, llm::FrameworkProfile::EpCommunication::kAllReduce);
  ASSERT_EQ(sglang->expert_parallel.all_to_all_backends.size(), 1u);
  EXPECT_TRUE(sglang->expert_parallel.all_to_all_backends[0].needs_full_nvlink);
  StatusOr<llm::FrameworkProfile> vllm = LoadFrameworkFile("configs/frameworks/vllm.textproto");
  ASSERT_TRUE(vllm.ok()) << vllm.status().ToString();
  EXPECT_EQ(vllm->graph_flags.disable_all, "--enforce-eager");
  EXPECT_NE(vllm->graph_flags.FlagFor("verify", llm::CaptureMode::kPiecewise), "");
  EXPECT_EQ(vllm->expert_parallel.default_communication,
            llm::FrameworkProfile::EpCommunication::kAllGatherReduceScatter);

  EXPECT_TRUE(Contains(ErrorOf(std::string(kGood) + "nccl_environment { sets { name: \"NCCL ALGO\" } }"),
                       "nccl_environment.passes_user_environment = (unset): required"));
  EXPECT_TRUE(Contains(ErrorOf(std::string(kGood) + "nccl_environment { sets { name: \"NCCL ALGO\" } }"),
                       "nccl_environment.sets[0].name = \"NCCL ALGO\": must be a variable name"));
  EXPECT_TRUE(Contains(ErrorOf(std::string(kGood) + "graph_flags { max_batch_size: \"--bs\" }"),
                       "graph_flags.max_batch_size = \"--bs\": must hold {n}"));
  EXPECT_TRUE(Contains(ErrorOf(std::string(kGood) + "graph_flags { phase_flags { phase: \"prefill\" flag: \"x\" } }"),
                       "graph_flags.phase_flags[0].phase = \"prefill\": must be one of decode, draft, verify, "
                       "draft_extend"));
  EXPECT_TRUE(Contains(ErrorOf(std::string(kGood) + "graph_flags { phase_flags { phase: \"verify\" flag: \"x\" } }"),
                       "graph_flags.phase_flags[0].mode = CAPTURE_MODE_UNSPECIFIED: must be set, one of FULL, "
                       "PIECEWISE, EAGER"));
  EXPECT_TRUE(Contains(ErrorOf(std::string(kGood) + "expert_parallel { enable_flag: \"--ep\" }"),
                       "expert_parallel.default_communication = EP_COMMUNICATION_UNSPECIFIED: must be set, one of "
                       "EP_ALLREDUCE, EP_ALLGATHER_REDUCESCATTER, EP_ALL_TO_ALL"));
  EXPECT_TRUE(Contains(
      ErrorOf(std::string(kGood) + "expert_parallel { enable_flag: \"--ep\" default_communication: EP_ALLREDUCE "
                                   "all_to_all_backends { name: \"x\" flag: \"--a\" env: \"A=1\" } }"),
      "expert_parallel.all_to_all_backends[0] = flag \"--a\", env \"A=1\": exactly one of flag"));
}

}  // namespace
}  // namespace specsim::io
