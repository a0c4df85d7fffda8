// Scenarios: every bundled one loads and names files that load; validation errors name the file,
// the field and what is allowed; paths resolve next to the scenario, then in the repository,
// then from the embedded copies; --set overrides through reflection; the framework profile a
// scenario names (default SGLang), its overrides and the serving.cuda_graphs rule.
#include "sim/io/scenario_loader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "sim/io/framework_loader.h"
#include "sim/io/hardware_loader.h"
#include "sim/io/model_loader.h"
#include "sim/io/test_matchers.h"

namespace specsim::io {
namespace {

namespace fs = std::filesystem;
using testing::Contains;

std::string SourcePath(const std::string& relative) { return std::string(SPECSIM_SOURCE_DIR) + "/" + relative; }

constexpr const char* kScenarios[] = {
    "configs/scenarios/kimi-k2-eagle3-rtxpro6000-8x.textproto",
    "configs/scenarios/kimi-k2-mtp-rtxpro6000-8x.textproto",
    "configs/scenarios/llama-3.1-8b-eagle3-h200-2x.textproto",
    "configs/scenarios/llama-3.1-8b-eagle3-rtxpro6000-4x.textproto",
    "configs/scenarios/llama-3.1-8b-ngram-rtxpro6000-4x.textproto",
};

// tau = 1 + sum_k prod_{i<=k} p_i (docs/reference/speculative-decoding.md).
double ChainTau(const config::Speculation& s) {
  double tau = 1, prod = 1;
  for (double p : s.acceptance_probabilities()) tau += (prod *= p);
  return tau;
}

class BundledScenarioTest : public ::testing::TestWithParam<const char*> {};

TEST_P(BundledScenarioTest, LoadsAndEveryFileItNamesLoads) {
  StatusOr<config::Scenario> sc = LoadScenarioFile(SourcePath(GetParam()));
  ASSERT_TRUE(sc.ok()) << sc.status().ToString();
  EXPECT_FALSE(sc->name().empty());
  // Resolved against the repository on disk (rule 2): absolute paths into the source tree.
  EXPECT_EQ(sc->hardware().rfind(SPECSIM_SOURCE_DIR, 0), 0u) << sc->hardware();
  StatusOr<net::Topology> hw = LoadHardwareFile(sc->hardware());
  ASSERT_TRUE(hw.ok()) << hw.status().ToString();
  EXPECT_GE(hw->num_gpus(), sc->parallelism().tensor_parallel());
  StatusOr<llm::ModelSpec> model = LoadModelFile(sc->model());
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  if (sc->speculation().method() == config::Speculation::EAGLE3) {
    StatusOr<llm::ModelSpec> draft = LoadModelFile(sc->speculation().draft_model());
    ASSERT_TRUE(draft.ok()) << draft.status().ToString();
    EXPECT_TRUE(draft->is_eagle3());
    EXPECT_EQ(draft->hidden_size, model->hidden_size);
    EXPECT_EQ(draft->vocab_size, model->vocab_size);
  }
  if (sc->speculation().method() == config::Speculation::MTP) {
    EXPECT_GE(model->num_nextn_predict_layers, 1) << "MTP needs a model with NEXTN layers";
  }
  // The per-head attention and KV heads split evenly over the TP degree.
  EXPECT_EQ(model->num_attention_heads % sc->parallelism().tensor_parallel(), 0);
  // Every bundled scenario names its framework: SGLang (docs/reference/case.md), graphs on.
  EXPECT_EQ(sc->framework(), SourcePath("configs/frameworks/sglang.textproto"));
  StatusOr<LoadedScenarioFile> loaded = LoadScenarioWithFramework(SourcePath(GetParam()));
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->framework.name, "sglang");
  EXPECT_EQ(loaded->framework.capture.verify, llm::CaptureMode::kFull);
  EXPECT_EQ(loaded->scenario.framework(), sc->framework());
}

TEST_P(BundledScenarioTest, LoadsFromTheEmbeddedCopyAnywhere) {
  const fs::path previous = fs::current_path();
  const fs::path dir = fs::temp_directory_path() / ("specsim_scenario_test_" + std::to_string(getpid()));
  fs::create_directories(dir);
  fs::current_path(dir);
  StatusOr<config::Scenario> sc = LoadScenarioFile(GetParam());
  fs::current_path(previous);
  fs::remove_all(dir);
  ASSERT_TRUE(sc.ok()) << sc.status().ToString();
  EXPECT_EQ(sc->hardware().rfind("configs/hardware/", 0), 0u) << sc->hardware();  // kept (rule 3)
  EXPECT_EQ(sc->model().rfind("models/", 0), 0u) << sc->model();
  EXPECT_EQ(sc->framework(), "configs/frameworks/sglang.textproto");  // kept (rule 3)
}

TEST_P(BundledScenarioTest, HasProtoHeader) {
  std::ifstream in(SourcePath(GetParam()));
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_TRUE(Contains(text.str(), "# proto-file: proto/specsim/scenario.proto\n"));
  EXPECT_TRUE(Contains(text.str(), "# proto-message: specsim.config.Scenario\n"));
}

INSTANTIATE_TEST_SUITE_P(AllBundled, BundledScenarioTest, ::testing::ValuesIn(kScenarios));

TEST(BundledScenariosTest, TableCoversTheDirectory) {
  for (const auto& entry : fs::directory_iterator(SourcePath("configs/scenarios"))) {
    if (entry.path().extension() != ".textproto") continue;
    const std::string relative = "configs/scenarios/" + entry.path().filename().string();
    EXPECT_TRUE(std::any_of(std::begin(kScenarios), std::end(kScenarios), [&](const char* s) { return relative == s; }))
        << relative << " is not in kScenarios";
  }
}

// The Kimi-K2 EAGLE-3 scenario's acceptance lands in the published tau 2.6-3.2 (docs/reference/speculative-decoding.md).
TEST(BundledScenariosTest, KimiEagle3TauIsInThePublishedRange) {
  StatusOr<config::Scenario> sc =
      LoadScenarioFile(SourcePath("configs/scenarios/kimi-k2-eagle3-rtxpro6000-8x.textproto"));
  ASSERT_TRUE(sc.ok()) << sc.status().ToString();
  const double tau = ChainTau(sc->speculation());
  EXPECT_NEAR(tau, 2.901875, 1e-9);  // the arithmetic in the file's comment
  EXPECT_GE(tau, 2.6);
  EXPECT_LE(tau, 3.2);
  EXPECT_EQ(sc->serving().weight_dtype(), config::INT4);
}

constexpr const char* kGood = R"txt(
  hardware: "configs/hardware/h200-1x.textproto"
  model: "models/llama-3.1-8b.textproto"
  parallelism { tensor_parallel: 1 }
  serving { batch_size: 1 context_length: 0 weight_dtype: BF16 activation_dtype: BF16 kv_cache_dtype: FP8 }
  speculation {
    method: EAGLE3 draft_model: "models/eagle3-llama-3.1-8b.textproto"
    num_steps: 3 topk: 1 num_draft_tokens: 4 acceptance_probabilities: [0.8, 0.6, 0.4]
  }
  communication { allreduce_algorithm: "ring" }
)txt";

// kGood with the first occurrence of `from` replaced by `to`.
std::string Edit(const std::string& from, const std::string& to) { return testing::ReplaceFirst(kGood, from, to); }

std::string ErrorOf(const std::string& text) {
  StatusOr<config::Scenario> sc = ParseScenario(text, "s.textproto");
  EXPECT_FALSE(sc.ok());
  if (sc.ok()) return "";
  EXPECT_EQ(sc.status().code(), StatusCode::kInvalidArgument);
  return sc.status().message();
}

TEST(ScenarioValidationTest, GoodScenarioParses) {
  StatusOr<config::Scenario> sc = ParseScenario(kGood, "s.textproto");
  ASSERT_TRUE(sc.ok()) << sc.status().ToString();
  EXPECT_EQ(sc->hardware(), "configs/hardware/h200-1x.textproto");  // not resolved by Parse
}

TEST(ScenarioValidationTest, TopkOneForcesDraftTokensNamingBothFields) {
  const std::string e = ErrorOf(Edit("num_draft_tokens: 4", "num_draft_tokens: 6"));
  EXPECT_TRUE(Contains(e,
                       "s.textproto: speculation.num_draft_tokens = 6: must equal "
                       "speculation.num_steps + 1 = 4 when speculation.topk = 1"));
}

TEST(ScenarioValidationTest, TreeDraftTokensBound) {
  EXPECT_TRUE(ParseScenario(Edit("topk: 1 num_draft_tokens: 4", "topk: 4 num_draft_tokens: 8"), "s.textproto").ok());
  EXPECT_TRUE(Contains(ErrorOf(Edit("topk: 1 num_draft_tokens: 4", "topk: 2 num_draft_tokens: 20")),
                       "must be <= 1 + topk + (num_steps - 1) * topk^2 = 11"));
}

// Fuzz finding (regressions/scenario_config_fuzz/topk-int-max-tree-bound-overflow.textproto): with
// topk = 2^31 - 1 the tree bound 1 + topk + (num_steps - 1) * topk^2 overflowed 64 bits. The range
// check names topk; the bound itself is computed without overflow and does not refuse 8 tokens.
TEST(ScenarioValidationTest, TreeBoundWithAHugeTopkDoesNotOverflow) {
  const std::string e = ErrorOf(Edit("topk: 1 num_draft_tokens: 4", "topk: 2147483647 num_draft_tokens: 8"));
  EXPECT_TRUE(Contains(e, "speculation.topk = 2147483647: must be in [0, 64]")) << e;
  EXPECT_FALSE(Contains(e, "1 + topk + (num_steps - 1) * topk^2")) << e;
}

// Fuzz finding (regressions/scenario_config_fuzz/histogram-steps-int-max.textproto): num_steps + 1
// overflowed at 2^31 - 1 in the histogram's length check; now the range names the field and the
// length check says the count it needs.
TEST(ScenarioValidationTest, HistogramLengthWithAHugeStepCountDoesNotOverflow) {
  const std::string e = ErrorOf(Edit("acceptance_probabilities: [0.8, 0.6, 0.4]",
                                     "accept_length_histogram: [1, 2, 3, 0] histogram_num_steps: 2147483647"));
  EXPECT_TRUE(Contains(e, "must have speculation.histogram_num_steps + 1 = 2147483648 values")) << e;
}

TEST(ScenarioValidationTest, HistogramOfWrongLength) {
  const std::string e =
      ErrorOf(Edit("acceptance_probabilities: [0.8, 0.6, 0.4]", "accept_length_histogram: [1, 2, 3]"));
  EXPECT_TRUE(Contains(e,
                       "s.textproto: speculation.accept_length_histogram = (3 values): must "
                       "have speculation.num_steps + 1 = 4 values"));
  EXPECT_TRUE(ParseScenario(Edit("acceptance_probabilities: [0.8, 0.6, 0.4]", "accept_length_histogram: [1, 2, 3, 0]"),
                            "s.textproto")
                  .ok());
  EXPECT_TRUE(
      Contains(ErrorOf(Edit("acceptance_probabilities: [0.8, 0.6, 0.4]", "accept_length_histogram: [0, 0, -1, 0]")),
               "speculation.accept_length_histogram[2] = -1: must be in [0, 1e+15] cycles"));
  // Issue 15, item 8: 1e308 counts overflowed the sum and gave tau 1.00.
  EXPECT_TRUE(Contains(
      ErrorOf(Edit("acceptance_probabilities: [0.8, 0.6, 0.4]", "accept_length_histogram: [1e308, 1e308, 1, 1]")),
      "speculation.accept_length_histogram[0] = 1e+308: must be in [0, 1e+15] cycles"));
  EXPECT_TRUE(
      Contains(ErrorOf(Edit("acceptance_probabilities: [0.8, 0.6, 0.4]", "accept_length_histogram: [0, 0, 0, 0]")),
               "the sum must be > 0"));
}

// Acceptance: per-position probabilities and/or a histogram (sim/llm/acceptance.h
// AcceptanceForShape); neither is an error; probabilities need not match num_steps (deeper
// positions take the last value); a histogram has one count per accepted length of the shape it
// was measured with.
TEST(ScenarioValidationTest, AcceptanceRules) {
  EXPECT_TRUE(Contains(ErrorOf(Edit("acceptance_probabilities: [0.8, 0.6, 0.4]", "")),
                       "s.textproto: speculation: method EAGLE3 needs acceptance"));
  auto both = ParseScenario(Edit("acceptance_probabilities: [0.8, 0.6, 0.4]",
                                 "acceptance_probabilities: [0.8, 0.6, 0.4] accept_length_histogram: [1, 1, 1, 1]"),
                            "s.textproto");
  EXPECT_TRUE(both.ok()) << both.status().ToString();
  EXPECT_TRUE(ParseScenario(Edit("[0.8, 0.6, 0.4]", "[0.8]"), "s.textproto").ok());
  EXPECT_TRUE(Contains(ErrorOf(Edit("[0.8, 0.6, 0.4]", "[0.8, 1.5]")),
                       "speculation.acceptance_probabilities[1] = 1.5: must be in [0, 1]"));
  EXPECT_TRUE(Contains(ErrorOf(Edit("acceptance_probabilities: [0.8, 0.6, 0.4]", "accept_length_histogram: [1, 1]")),
                       "speculation.accept_length_histogram = (2 values): must have speculation.num_steps + 1 = 4"));
  // A histogram measured with another shape counts that shape's lengths.
  EXPECT_TRUE(ParseScenario(Edit("acceptance_probabilities: [0.8, 0.6, 0.4]",
                                 "accept_length_histogram: [1, 1] histogram_num_steps: 1 histogram_topk: 2"),
                            "s.textproto")
                  .ok());
  EXPECT_TRUE(Contains(ErrorOf(Edit("acceptance_probabilities: [0.8, 0.6, 0.4]",
                                    "accept_length_histogram: [1, 1, 1] histogram_num_steps: 1")),
                       "must have speculation.histogram_num_steps + 1 = 2 values"));
  EXPECT_TRUE(Contains(
      ErrorOf(Edit("acceptance_probabilities: [0.8, 0.6, 0.4]", "acceptance_probabilities: [0.8] histogram_topk: -1")),
      "speculation.histogram_topk = -1: must be in [0, 4096]"));
}

TEST(ScenarioValidationTest, OtherRules) {
  EXPECT_TRUE(Contains(ErrorOf(Edit("draft_model: \"models/eagle3-llama-3.1-8b.textproto\"", "")),
                       "speculation.draft_model = \"\": required for method EAGLE3"));
  EXPECT_TRUE(Contains(ErrorOf(Edit("method: EAGLE3", "method: MTP")),
                       "must be empty for method MTP (the draft is the target model's own NEXTN layers); to draft "
                       "with an EAGLE-3 head instead set method EAGLE3"));
  EXPECT_TRUE(Contains(ErrorOf(Edit("method: EAGLE3", "")),
                       "speculation.method = METHOD_UNSPECIFIED: must be set when a speculation "
                       "block is present, one of NONE, EAGLE3, MTP"));
  EXPECT_TRUE(Contains(ErrorOf(Edit("\"ring\"", "\"nccl\"")),
                       "s.textproto: communication.allreduce_algorithm = \"nccl\": allowed values: "
                       "\"\", \"auto\", \"ring\", \"tree\", \"oneshot\", \"twoshot\""));
  const std::string e = ErrorOf(Edit("tensor_parallel: 1", "tensor_parallel: 0"));
  EXPECT_TRUE(Contains(e, "s.textproto: parallelism.tensor_parallel = 0: must be in [1, 1024] GPUs"));
  EXPECT_TRUE(Contains(ErrorOf(Edit("batch_size: 1", "batch_size: 0")),
                       "serving.batch_size = 0: must be in [1, 1e+06] sequences"));
  // Bounds on work: a simulated cycle costs microseconds of CPU, so a million is the most.
  EXPECT_TRUE(Contains(ErrorOf(Edit("acceptance_probabilities: [0.8, 0.6, 0.4]",
                                    "acceptance_probabilities: [0.8, 0.6, 0.4] cycles: 2000000000")),
                       "speculation.cycles = 2000000000: must be in [0, 1e+06]"));
  EXPECT_TRUE(Contains(ErrorOf(Edit("allreduce_algorithm: \"ring\"", "allreduce_algorithm: \"ring\" channels: 100000")),
                       "communication.channels = 100000: must be in [0, 64]"));
  EXPECT_TRUE(Contains(ErrorOf(Edit("context_length: 0", "context_length: -1")),
                       "serving.context_length = -1: must be in [0, 1e+08] tokens"));
  EXPECT_TRUE(Contains(ErrorOf(Edit(" kv_cache_dtype: FP8", "")),
                       "serving.kv_cache_dtype = DTYPE_UNSPECIFIED: must be set, one of BF16, FP8, "
                       "FP4, INT4"));
  EXPECT_TRUE(
      Contains(ErrorOf(Edit("model: \"models/llama-3.1-8b.textproto\"", "")), "s.textproto: model = \"\": required"));
  EXPECT_TRUE(Contains(ErrorOf(Edit("tensor_parallel: 1", "tensor_parallel: 2 gpus: [0, 0]")),
                       "parallelism.gpus[1] = 0: appears twice"));
  // NONE ignores the rest of the block (the baseline of a speculative scenario).
  std::string none = Edit("method: EAGLE3", "method: NONE");
  none.replace(none.find("num_draft_tokens: 4"), 19, "num_draft_tokens: 9");
  StatusOr<config::Scenario> baseline = ParseScenario(none, "s.textproto");
  EXPECT_TRUE(baseline.ok()) << baseline.status().ToString();
}

TEST(ScenarioValidationTest, UnknownFieldInFileGetsTextprotoHint) {
  EXPECT_TRUE(Contains(ErrorOf(Edit("batch_size: 1", "batch_sise: 1")), "Did you mean \"batch_size\"?"));
}

TEST(ScenarioPathsTest, RelativeToTheScenarioDirectoryFirst) {
  const fs::path dir = fs::temp_directory_path() / ("specsim_paths_" + std::to_string(getpid()));
  fs::create_directories(dir / "models");
  {
    std::ifstream in(SourcePath("models/llama-3.1-8b.textproto"));
    std::ofstream out(dir / "models/llama-3.1-8b.textproto");
    out << in.rdbuf();
    std::ofstream scenario(dir / "s.textproto");
    scenario << kGood;
  }
  StatusOr<config::Scenario> sc = LoadScenarioFile((dir / "s.textproto").string());
  ASSERT_TRUE(sc.ok()) << sc.status().ToString();
  EXPECT_EQ(sc->model(), (dir / "models/llama-3.1-8b.textproto").string());  // rule 1
  // Not next to the scenario, not in a repository: kept for the working directory / embedded copy.
  EXPECT_EQ(sc->hardware(), "configs/hardware/h200-1x.textproto");
  {
    std::ofstream scenario(dir / "bad.textproto");
    scenario << Edit("models/llama-3.1-8b.textproto", "models/none.textproto");
  }
  StatusOr<config::Scenario> bad = LoadScenarioFile((dir / "bad.textproto").string());
  fs::remove_all(dir);
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(
      Contains(bad.status().message(), "bad.textproto: model = \"models/none.textproto\": no such file; looked for"));
  EXPECT_TRUE(Contains(bad.status().message(), "embedded copy models/none.textproto"));
}

TEST(ApplyOverrideTest, ChangesNestedScalarsEnumsAndRepeatedFields) {
  StatusOr<config::Scenario> parsed = ParseScenario(kGood, "s.textproto");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  config::Scenario sc = *parsed;
  ASSERT_TRUE(ApplyOverride(&sc, "speculation.num_steps=5").ok());
  ASSERT_TRUE(ApplyOverride(&sc, "speculation.topk=4").ok());
  ASSERT_TRUE(ApplyOverride(&sc, "speculation.num_draft_tokens = 8").ok());
  ASSERT_TRUE(ApplyOverride(&sc, "speculation.acceptance_probabilities=0.9, 0.8,0.7,0.6,0.5").ok());
  ASSERT_TRUE(ApplyOverride(&sc, "serving.weight_dtype=FP8").ok());
  ASSERT_TRUE(ApplyOverride(&sc, "serving.kv_cache_dtype=bf16").ok());  // case-insensitive
  ASSERT_TRUE(ApplyOverride(&sc, "serving.cuda_graphs=true").ok());
  ASSERT_TRUE(ApplyOverride(&sc, "parallelism.gpus=3").ok());
  ASSERT_TRUE(ApplyOverride(&sc, "communication.allreduce_algorithm=oneshot").ok());
  ASSERT_TRUE(ApplyOverride(&sc, "speculation.seed=18446744073709551615").ok());
  ASSERT_TRUE(ApplyOverride(&sc, "name=with=equals").ok());
  EXPECT_EQ(sc.speculation().num_steps(), 5);
  EXPECT_EQ(sc.speculation().topk(), 4);
  EXPECT_EQ(sc.speculation().num_draft_tokens(), 8);
  ASSERT_EQ(sc.speculation().acceptance_probabilities_size(), 5);
  EXPECT_DOUBLE_EQ(sc.speculation().acceptance_probabilities(1), 0.8);
  EXPECT_DOUBLE_EQ(sc.speculation().acceptance_probabilities(4), 0.5);
  EXPECT_EQ(sc.serving().weight_dtype(), config::FP8);
  EXPECT_EQ(sc.serving().kv_cache_dtype(), config::BF16);
  EXPECT_TRUE(sc.serving().cuda_graphs());
  EXPECT_EQ(sc.parallelism().gpus_size(), 1);
  EXPECT_EQ(sc.communication().allreduce_algorithm(), "oneshot");
  EXPECT_EQ(sc.speculation().seed(), 18446744073709551615ull);
  EXPECT_EQ(sc.name(), "with=equals");
  EXPECT_TRUE(ValidateScenario(sc, "s.textproto").ok());

  // Switch to a histogram: empty the probabilities, set the histogram.
  ASSERT_TRUE(ApplyOverride(&sc, "speculation.acceptance_probabilities=").ok());
  ASSERT_TRUE(ApplyOverride(&sc, "speculation.accept_length_histogram=1,2,3,4,5,6").ok());
  EXPECT_EQ(sc.speculation().acceptance_probabilities_size(), 0);
  EXPECT_EQ(sc.speculation().accept_length_histogram_size(), 6);
  EXPECT_TRUE(ValidateScenario(sc, "s.textproto").ok());
  // Setting a field of an absent sub-message creates it.
  config::Scenario empty;
  ASSERT_TRUE(ApplyOverride(&empty, "speculation.method=MTP").ok());
  EXPECT_TRUE(empty.has_speculation());
  EXPECT_EQ(empty.speculation().method(), config::Speculation::MTP);
}

TEST(ApplyOverrideTest, UnknownFieldListsTheFieldsAtThatLevel) {
  config::Scenario sc;
  Status s = ApplyOverride(&sc, "speculation.numsteps=3");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(),
                       "--set speculation.numsteps=3: unknown field \"numsteps\" in "
                       "speculation; fields allowed there: method, draft_model, "
                       "num_steps, topk"));
  s = ApplyOverride(&sc, "speculaton.num_steps=3");
  EXPECT_TRUE(Contains(s.message(),
                       "unknown field \"speculaton\" in specsim.config.Scenario; "
                       "fields allowed there: name, description, hardware, model"));
  EXPECT_FALSE(sc.has_speculation());  // unchanged on error
}

TEST(ApplyOverrideTest, EnumTypoListsAllowedValues) {
  config::Scenario sc;
  Status s = ApplyOverride(&sc, "speculation.method=EAGEL3");
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s.message(),
                       "--set speculation.method=EAGEL3: speculation.method: "
                       "\"EAGEL3\" is not a value of specsim.config.Speculation.Method; "
                       "allowed values: NONE, EAGLE3, MTP"));
  s = ApplyOverride(&sc, "serving.weight_dtype=fp16");
  EXPECT_TRUE(Contains(s.message(), "allowed values: BF16, FP8, FP4, INT4"));
}

TEST(ApplyOverrideTest, OtherErrors) {
  config::Scenario sc;
  EXPECT_TRUE(Contains(ApplyOverride(&sc, "speculation.num_steps").message(),
                       "--set speculation.num_steps: expected FIELD.PATH=VALUE"));
  EXPECT_TRUE(Contains(ApplyOverride(&sc, "speculation.num_steps=three").message(),
                       "speculation.num_steps: \"three\" is not a valid int32"));
  EXPECT_TRUE(Contains(ApplyOverride(&sc, "speculation.num_steps=3000000000").message(), "is not a valid int32"));
  EXPECT_TRUE(Contains(ApplyOverride(&sc, "serving.cuda_graphs=yes").message(), "(true, false, 1 or 0)"));
  EXPECT_TRUE(Contains(ApplyOverride(&sc, "speculation=EAGLE3").message(),
                       "speculation is a message: set one of its fields (speculation.FIELD=VALUE): "
                       "method, draft_model"));
  EXPECT_TRUE(Contains(ApplyOverride(&sc, "model.path=x").message(),
                       "model is a string field, not a message: it has no field \"path\""));
  EXPECT_TRUE(Contains(ApplyOverride(&sc, "speculation.acceptance_probabilities=0.5,x").message(),
                       "speculation.acceptance_probabilities[1]: \"x\" is not a valid double"));
  EXPECT_EQ(sc.speculation().acceptance_probabilities_size(), 0);  // unchanged on error
}

// --- framework profiles ---

config::Scenario Parsed(const std::string& text) {
  StatusOr<config::Scenario> sc = ParseScenario(text, "s.textproto");
  EXPECT_TRUE(sc.ok()) << sc.status().ToString();
  return sc.ok() ? *sc : config::Scenario();
}

bool AllCapture(const llm::FrameworkProfile& f, llm::CaptureMode m) {
  return f.capture.decode == m && f.capture.draft == m && f.capture.verify == m && f.capture.draft_extend == m;
}

TEST(ScenarioFrameworkTest, NoFrameworkMeansSglangAndCudaGraphsFalseMeansEager) {
  // kGood names no framework and leaves serving.cuda_graphs false.
  StatusOr<llm::FrameworkProfile> f = ScenarioFramework(Parsed(kGood), "s.textproto");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->name, "sglang");
  EXPECT_TRUE(AllCapture(*f, llm::CaptureMode::kEager));
  EXPECT_TRUE(Contains(f->source, "; capture eager everywhere (serving.cuda_graphs false)"));
  // Graphs on: the profile's own capture modes, its source unchanged.
  StatusOr<llm::FrameworkProfile> graphs =
      ScenarioFramework(Parsed(Edit("kv_cache_dtype: FP8", "kv_cache_dtype: FP8 cuda_graphs: true")), "s.textproto");
  ASSERT_TRUE(graphs.ok()) << graphs.status().ToString();
  StatusOr<llm::FrameworkProfile> sglang = LoadFrameworkFile(kDefaultFrameworkPath);
  ASSERT_TRUE(sglang.ok()) << sglang.status().ToString();
  EXPECT_EQ(graphs->capture.decode, sglang->capture.decode);
  EXPECT_EQ(graphs->capture.verify, sglang->capture.verify);
  EXPECT_EQ(graphs->eager_op_host_us, sglang->eager_op_host_us);
  EXPECT_EQ(graphs->source, sglang->source);
}

// `--set serving.cuda_graphs=false` keeps meaning "no CUDA graphs" on a scenario that names a
// profile (the advisor's "graphs off" candidates).
TEST(ScenarioFrameworkTest, CudaGraphsFalseMakesANamedProfileEagerToo) {
  config::Scenario sc = Parsed(Edit("kv_cache_dtype: FP8", "kv_cache_dtype: FP8 cuda_graphs: true"));
  ASSERT_TRUE(ApplyOverride(&sc, "framework=configs/frameworks/cpp-graph.textproto").ok());
  StatusOr<llm::FrameworkProfile> on = ScenarioFramework(sc, "s.textproto");
  ASSERT_TRUE(on.ok()) << on.status().ToString();
  EXPECT_TRUE(AllCapture(*on, llm::CaptureMode::kFull));
  ASSERT_TRUE(ApplyOverride(&sc, "serving.cuda_graphs=false").ok());
  StatusOr<llm::FrameworkProfile> off = ScenarioFramework(sc, "s.textproto");
  ASSERT_TRUE(off.ok()) << off.status().ToString();
  EXPECT_EQ(off->name, "cpp-graph");
  EXPECT_TRUE(AllCapture(*off, llm::CaptureMode::kEager));
  // framework_overrides.capture applies after the rule.
  ASSERT_TRUE(ApplyOverride(&sc, "framework_overrides.capture.verify=full").ok());
  StatusOr<llm::FrameworkProfile> mixed = ScenarioFramework(sc, "s.textproto");
  ASSERT_TRUE(mixed.ok()) << mixed.status().ToString();
  EXPECT_EQ(mixed->capture.verify, llm::CaptureMode::kFull);
  EXPECT_EQ(mixed->capture.draft, llm::CaptureMode::kEager);
}

TEST(ScenarioFrameworkTest, OverridesFromTheFileAndFromSet) {
  config::Scenario sc = Parsed(Edit("kv_cache_dtype: FP8",
                                    "kv_cache_dtype: FP8 cuda_graphs: true } framework: "
                                    "\"configs/frameworks/vllm.textproto\" framework_overrides { "
                                    "eager_op_host_us: 0 capture { verify: FULL }"));
  StatusOr<llm::FrameworkProfile> f = ScenarioFramework(sc, "s.textproto");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  StatusOr<llm::FrameworkProfile> vllm = LoadFrameworkFile("configs/frameworks/vllm.textproto");
  ASSERT_TRUE(vllm.ok()) << vllm.status().ToString();
  EXPECT_EQ(f->name, "vllm");
  EXPECT_EQ(f->eager_op_host_us, 0);                             // overridden to zero
  EXPECT_EQ(f->capture.verify, llm::CaptureMode::kFull);         // overridden
  EXPECT_EQ(f->capture.draft, vllm->capture.draft);              // kept
  EXPECT_EQ(f->decode_step_host_us, vllm->decode_step_host_us);  // kept
  EXPECT_TRUE(Contains(f->source, "; framework_overrides: capture.verify, eager_op_host_us"));

  ASSERT_TRUE(ApplyOverride(&sc, "framework_overrides.sync_each_step=false").ok());
  ASSERT_TRUE(ApplyOverride(&sc, "framework_overrides.jitter.distribution=exponential").ok());
  ASSERT_TRUE(ApplyOverride(&sc, "framework_overrides.jitter.mean_us=4").ok());
  ASSERT_TRUE(ValidateScenario(sc, "s.textproto").ok());
  f = ScenarioFramework(sc, "s.textproto");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_FALSE(f->sync_each_step);
  EXPECT_EQ(f->jitter.kind, llm::Jitter::Kind::kExponential);
  EXPECT_EQ(f->jitter.mean_us, 4);
}

TEST(ScenarioFrameworkTest, BadOverridesNameTheScenarioAndTheField) {
  EXPECT_TRUE(
      Contains(ErrorOf(Edit("communication {", "framework_overrides { spec_cycle_host_us: -5 } communication {")),
               "s.textproto: framework_overrides.spec_cycle_host_us = -5: must be in [0, 1e+06] us"));
  config::Scenario sc = Parsed(kGood);
  ASSERT_TRUE(ApplyOverride(&sc, "framework_overrides.jitter.sigma=6").ok());
  EXPECT_TRUE(Contains(ValidateScenario(sc, "s.textproto").message(),
                       "s.textproto: framework_overrides.jitter.sigma = 6: must be in [0, 5]"));
  StatusOr<llm::FrameworkProfile> f = ScenarioFramework(sc, "s.textproto");
  ASSERT_FALSE(f.ok());
  EXPECT_TRUE(Contains(f.status().message(), "jitter.sigma = 6: must be in [0, 5] (sigma of ln x)"));
  // Fine alone, wrong with the profile: an empirical jitter with no quantiles.
  sc = Parsed(kGood);
  ASSERT_TRUE(ApplyOverride(&sc, "framework_overrides.jitter.distribution=EMPIRICAL").ok());
  ASSERT_TRUE(ValidateScenario(sc, "s.textproto").ok());
  f = ScenarioFramework(sc, "s.textproto");
  ASSERT_FALSE(f.ok());
  EXPECT_TRUE(
      Contains(f.status().message(), "s.textproto: framework_overrides on configs/frameworks/sglang.textproto"));
  EXPECT_TRUE(Contains(f.status().message(), "jitter.quantiles_us = []: jitter.quantiles_us needs at least 2 values"));
}

TEST(ScenarioFrameworkTest, BadProfileFileNamesTheScenarioTheProfileAndTheField) {
  const fs::path dir = fs::temp_directory_path() / ("specsim_framework_" + std::to_string(getpid()));
  fs::create_directories(dir);
  {
    std::ofstream profile(dir / "slow.textproto");
    profile << "name: \"slow\"\ncapture { decode: FULL draft: FULL verify: FULL draft_extend: FULL }\n"
               "eager_op_host_us: -1\ngraph_replay_host_us: 0\ndecode_step_host_us: 0\n"
               "spec_cycle_host_us: 0\nsync_each_step: true\nsync_each_cycle: true\n";
    std::ofstream scenario(dir / "s.textproto");
    scenario << kGood << "framework: \"slow.textproto\"\n";
    std::ofstream missing(dir / "missing.textproto");
    missing << kGood << "framework: \"configs/frameworks/none.textproto\"\n";
  }
  StatusOr<config::Scenario> sc = LoadScenarioFile((dir / "s.textproto").string());
  StatusOr<config::Scenario> missing = LoadScenarioFile((dir / "missing.textproto").string());
  fs::remove_all(dir);
  ASSERT_FALSE(sc.ok());
  EXPECT_TRUE(
      Contains(sc.status().message(), "s.textproto: framework = \"" + (dir / "slow.textproto").string() + "\": "));
  EXPECT_TRUE(Contains(sc.status().message(), "slow.textproto:3:1: eager_op_host_us = -1: must be in [0, 1e+06] us"));
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(Contains(missing.status().message(),
                       "missing.textproto: framework = \"configs/frameworks/none.textproto\": no such file"));
}

}  // namespace
}  // namespace specsim::io
