// import-profile's pass predictions: each pass group of a PyTorch profile (profile::PassGroup: a
// phase's passes, graph replays or eager launches) simulated with the scenario the run is meant to
// be, as the profile ran it. The pass kind comes from the phase name (decode, verify, draft,
// draft_extend) or, for a graph replay with none, from its allreduces (two per dense TP layer: two
// or more pairs are a target forward, one pair the draft's; one token per sequence when the first
// allreduce holds batch x hidden elements). Tokens per sequence = the first allreduce's elements /
// hidden / batch when torch recorded it, else 1 for decode and draft steps and the scenario's
// num_draft_tokens for verify and draft extend. The target's layers are the pass's allreduces / 2
// (dense models); graph groups run as full graphs, eager ones eager; the GEMMs and attention take
// the costs calibrated on the profile's own kernels when the calibration has them
// (profile::kTorchGemmLibrary, the attention implementation its eager calls of the same width ran).
// A prediction is the pass's compute + communication (decode_simulator.h PassTiming, against the
// measured GPU busy time), its launch / sync time (against the GPU idle time) and the device time
// by the profile's kernel class.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sim/core/status.h"
#include "sim/profile/profile_import.h"
#include "sim/scenario/scenario.h"

namespace specsim::scenario {

// One pass group predicted from the scenario: its row, or why not.
struct PassPrediction {
  bool ok = false;
  std::string why;   // when not ok
  std::string kind;  // llm::PassKindName
  int tokens = 0, layers = 0;
  double busy_us = 0, launch_us = 0;
  std::map<std::string, double> class_us;  // predicted device time by the profile's kernel class
  bool target = false;                     // a target forward (decode, verify): written as an item
};

// `g` predicted from `loaded`; `attention`: the profile's eager attention calls (kernel_calls.h).
PassPrediction PredictPassGroup(const profile::PassGroup& g, const LoadedScenario& loaded,
                                const std::vector<profile::AttentionGroup>& attention);

// Every pass group of a profile against the scenario: those predicted, those not and why. The
// pointers are into the profile's passes.
struct ProfilePasses {
  std::vector<std::pair<const profile::PassGroup*, PassPrediction>> predicted;
  std::vector<std::pair<const profile::PassGroup*, std::string>> unpredicted;
};
ProfilePasses PredictProfilePasses(const profile::ProfileImport& imported, const LoadedScenario& loaded);

// The predicted graph-captured target forwards written into the profile's trace as decode-suite
// items that compare's decode predictor re-simulates (DecodeParams.gpu_busy_only), with the
// scenario's model (loaded from its model file) in the trace's models.
Status AddPassItems(const ProfilePasses& passes, const LoadedScenario& loaded, profile::ProfileImport* imported);

}  // namespace specsim::scenario
