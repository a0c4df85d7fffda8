// The evaluation of a scenario, in one place: from a scenario file (proto/specsim/scenario.proto)
// and an optional calibration to everything the decode simulator needs (the hardware, the models,
// the framework's pacing, the decode setup), the memory plan, and the result. simulate, sweep,
// advise and the benchmark call it; errors name the scenario file and the field.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/status.h"
#include "sim/llm/decode_simulator.h"
#include "sim/llm/memory_plan.h"
#include "sim/net/topology.h"
#include "specsim/scenario.pb.h"

namespace specsim::scenario {

inline constexpr const char* kDefaultScenario = "configs/scenarios/kimi-k2-eagle3-rtxpro6000-8x.textproto";

// The target's weight formats as a scenario resolves serving.weight_source (scenario.proto):
// DTYPE (explicit, or unset with weight_dtype set) takes serving.weight_dtype /
// expert_weight_dtype with their conventional scales; CHECKPOINT (explicit, or unset without a
// weight_dtype) takes the model's own quantization per tensor class (bf16 when it states none).
struct WeightsUsed {
  bool from_checkpoint = false;
  std::string source;   // "serving.weight_dtype" or "checkpoint" with the quant_method
  std::string formats;  // per tensor class, llm::DescribeWeightFormats
};

struct LoadedScenario {
  std::string path;
  config::Scenario scenario;                // after --set overrides
  std::unique_ptr<net::Topology> topology;  // stable address for setup.topology
  llm::DecodeSetup setup;
  // Where the target's weight formats come from and what they are (serving.weight_source), one
  // line for reports: "scenario dtype: INT4 (serving.weight_dtype)" or "checkpoint: ...".
  WeightsUsed weights;
  // The calibration file applied (the flag's, else the scenario's), "" for none: the compute
  // model's documented defaults.
  std::string calibration;
  // One line each, no "\n": a calibration fitted on another GPU model or GPU count than this
  // scenario's box, or one without provenance (calib::CalibrationWarning). Commands print them on
  // stderr; they never stop a run.
  std::vector<std::string> warnings;
};

// Loads `path` (empty: the embedded default scenario), applies `overrides` ("field.path=value",
// in order), an optional calibration file (overrides the scenario's own), and builds the setup.
StatusOr<LoadedScenario> LoadScenario(const std::string& path, const std::vector<std::string>& overrides,
                                      const std::string& calibration_path);

// The same from a scenario already in memory (paths resolved); `name` stands for the file in
// messages.
StatusOr<LoadedScenario> BuildScenario(config::Scenario scenario, const std::string& name,
                                       const std::vector<std::string>& overrides, const std::string& calibration_path);

// What the scenario knows of its draft's acceptance (the histogram's shape defaulting to the
// scenario's own), for llm::AcceptanceForShape.
llm::AcceptanceData AcceptanceDataOf(const config::Speculation& speculation);

// The allreduce choice of a scenario's `communication` block.
StatusOr<coll::CollectiveRequest> AllreduceChoice(const config::Communication& communication);

// The per-GPU memory plan of a loaded scenario.
StatusOr<llm::MemoryPlan> PlanScenarioMemory(const LoadedScenario& loaded);

// A scenario evaluated: its memory plan and, when it fits, the decode loop's result.
struct Evaluation {
  llm::MemoryPlan memory;
  std::optional<llm::DecodeResult> result;  // empty when the scenario does not fit in GPU memory
  // The simulator that ran it (null with no result): timelines of the same run (simulate --trace)
  // reuse its passes and collectives instead of simulating the scenario again.
  std::unique_ptr<llm::DecodeSimulator> simulator;
};
StatusOr<Evaluation> Evaluate(const LoadedScenario& loaded);

// The decode loop of a setup (a loaded scenario's, or one derived from it: another allreduce,
// another pacing), without the memory check.
StatusOr<llm::DecodeResult> EvaluateSetup(const llm::DecodeSetup& setup);

// Bundled calibrations whose attention implementations price a framework's kernels on a box whose
// own calibration lacks them (in this order): the Triton kernels of SGLang's launch geometry,
// FlashInfer's FA2 kernels as SGLang plans them, and PyTorch's SDPA kernels, each fitted on the 1x H200.
inline constexpr const char* kKernelCostCalibrations[] = {"configs/calibration/h200-triton-attention.textproto",
                                                          "configs/calibration/h200-flashinfer.textproto",
                                                          "configs/calibration/h200-pytorch.textproto"};

// The attention implementation `name` from the first of kKernelCostCalibrations that fitted it,
// costs_source naming that calibration and its GPU; nullopt where none did.
std::optional<compute::AttentionImplementation> TransferredAttentionKernel(const std::string& name);

// Which fitted attention costs of `compute.attention_implementations` (from `calibration`, a path
// for messages; empty: none given) the scenario's attention takes (compute->attention_regimes):
// the scenario's explicit `attention_costs` (error naming the field and the implementations the
// calibration has when one is missing, or when no calibration is given), else those the framework
// profile names as its kernels, else none (roofline attention), with a warning when the calibration
// had attention costs that were not applied. A framework kernel the calibration lacks takes a
// bundled calibration's costs (TransferredAttentionKernel).
// `mla`: the target has MLA's latent cache (the framework's mla_* kernels and an explicit choice
// then fill the MLA regimes; its GQA names still fill the GQA ones, for a GQA draft head).
Status ChooseAttentionCosts(const config::AttentionCosts& choice, const llm::FrameworkProfile& framework, bool mla,
                            const std::string& calibration, compute::ComputeParams* compute,
                            std::vector<std::string>* warnings);

}  // namespace specsim::scenario
