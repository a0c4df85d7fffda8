#include "sim/llm/graph_pool.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "sim/llm/test_models.h"

namespace specsim::llm {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// The probe's model: Llama-3.1-8B's layers (4 or 8) and LM head at TP 1, decode.
ForwardPass ProbePass(int layers, int64_t tokens) {
  ModelSpec m = testing::Llama31_8B();
  m.num_layers = layers;
  PassShape shape;
  shape.batch = static_cast<int>(tokens);
  shape.context_length = 1024;
  auto pass = BuildForwardPass(m, {1, 1}, shape);
  EXPECT_TRUE(pass.ok()) << pass.status().ToString();
  return *pass;
}

// Issue 41 item 4: the pool of the probe's graphs as the H200 measured it
// (traces/torch-graph-pool/h200-1x-2026-12-04-*.json: validate/torch_graph_pool_probe.py, one
// graph at the largest size, or the list 1, 2, 4, 8, 16, ... up to it, logits [tokens, 128256]
// bf16 kept per graph), priced with nothing fitted on it: every item within 15%.
TEST(GraphPool, TheProbesPoolsAsMeasured) {
  int checked = 0;
  for (const char* file : {"h200-1x-2026-12-04-l4.json", "h200-1x-2026-12-04-l8.json"}) {
    std::ifstream in(std::string(SPECSIM_SOURCE_DIR) + "/traces/torch-graph-pool/" + file);
    ASSERT_TRUE(in) << file;
    const nlohmann::json trace = nlohmann::json::parse(in);
    const int layers = trace["model"]["layers"];
    for (const auto& item : trace["items"]) {
      const int64_t largest = item["largest"];
      GraphPoolSpec spec;
      spec.outputs = GraphPoolSpec::Outputs::kKeptPerSize;
      spec.output_bytes_per_token = 128256 * 2;
      spec.library_workspace_bytes = CublasWorkspaceBytes("sm90");
      spec.captured_tokens =
          item["kind"] == "single" ? std::vector<int64_t>{largest} : CaptureSizes({1, 2, 4}, 8, largest);
      ASSERT_EQ(spec.captured_tokens.size(), item["sizes"].size()) << file << " " << largest;
      const double measured = item["pool_reserved_bytes"];
      const double predicted = CudaGraphPool(ProbePass(layers, largest), testing::Llama31_8B(), spec).total();
      EXPECT_NEAR(predicted / measured, 1.0, 0.15)
          << file << " " << item["kind"] << " " << largest << ": " << predicted / kMiB << " vs " << measured / kMiB;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 18);
}

// The parts: 32 MiB of cuBLAS workspace on sm90 (8 MiB + 128 KiB elsewhere); outputs kept per size
// sum over the list, one shared buffer is the largest's, none for vLLM's graphs; 2 MiB of slack
// when every tensor is under 1 MiB.
TEST(GraphPool, WorkspaceOutputsAndSlack) {
  EXPECT_DOUBLE_EQ(CublasWorkspaceBytes("sm90"), 32 * kMiB);
  EXPECT_DOUBLE_EQ(CublasWorkspaceBytes("sm120"), 8 * kMiB + 128 * 1024);
  GraphPoolSpec spec;
  spec.output_bytes_per_token = 1000;
  spec.captured_tokens = {1, 2, 4, 8};
  const ForwardPass pass = ProbePass(4, 8);
  spec.outputs = GraphPoolSpec::Outputs::kKeptPerSize;
  EXPECT_DOUBLE_EQ(CudaGraphPool(pass, testing::Llama31_8B(), spec).outputs, 15000);
  spec.outputs = GraphPoolSpec::Outputs::kOneSharedBuffer;
  EXPECT_DOUBLE_EQ(CudaGraphPool(pass, testing::Llama31_8B(), spec).outputs, 8000);
  spec.outputs = GraphPoolSpec::Outputs::kNotKept;
  EXPECT_DOUBLE_EQ(CudaGraphPool(pass, testing::Llama31_8B(), spec).outputs, 0);
  const GraphPoolBytes one =
      CudaGraphPool(ProbePass(4, 1), testing::Llama31_8B(), {GraphPoolSpec::Outputs::kNotKept, 0, {1}, 0});
  EXPECT_DOUBLE_EQ(one.allocator_slack, 2 * kMiB);
  EXPECT_DOUBLE_EQ(
      CudaGraphPool(ProbePass(4, 64), testing::Llama31_8B(), {GraphPoolSpec::Outputs::kNotKept, 0, {64}, 0})
          .allocator_slack,
      20 * kMiB);  // the 64 x 28672 x 2 B gate_up output is 3.5 MiB
}

TEST(GraphPool, CaptureSizesFollowTheListFormula) {
  EXPECT_EQ(CaptureSizes({1, 2, 4}, 8, 32), (std::vector<int64_t>{1, 2, 4, 8, 16, 24, 32}));
  EXPECT_EQ(CaptureSizes({1, 2, 4}, 8, 1), (std::vector<int64_t>{1}));
  EXPECT_EQ(CaptureSizes({1, 2, 4, 8, 12}, 8, 30), (std::vector<int64_t>{1, 2, 4, 8, 12, 16, 24, 30}));
}

}  // namespace
}  // namespace specsim::llm
