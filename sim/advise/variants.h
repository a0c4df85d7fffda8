// The allreduce and pacing variants that `specsim simulate --compare-algos` and `specsim advise`
// try, each defined once. An allreduce variant is a communication block (NCCL's algorithm,
// protocol, channel count, P2P level, NCCL_P2P_DISABLE, the driver's PCIe P2P mode, or the
// framework's one-shot / two-shot custom allreduce); a pacing variant is how the ranks' hosts drive
// the GPUs (CUDA graphs on or off, the capture mode of every phase or of verify, the host's per-step
// and per-cycle syncs), applied to the scenario's framework profile.
//
// One table holds every variant with the label each command prints for it (or none: the command
// does not try it); AllreduceVariants / PacingVariants select one command's list, in the order it
// prints. compare-algos measures each variant on one scenario; advise crosses its list with the
// speculation settings and ranks what each takes on the framework (framework_rules.h).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/llm/decode_simulator.h"
#include "sim/llm/framework_profile.h"
#include "specsim/scenario.pb.h"

namespace specsim::advise {

// The command whose list of variants is asked for.
enum class VariantList { kCompareAlgos, kAdvise };

// One allreduce choice: the scenario's communication block it stands for.
struct AllreduceVariant {
  std::string name;    // "NCCL ring LL", ...: the label the command prints
  std::string family;  // advise: what a rejected family is called ("NCCL channel count", ...)
  // communication.* values; "" / 0: NCCL's own pick.
  std::string algorithm, protocol, p2p_level;
  int channels = 0;
  // The driver's PCIe P2P mode this choice assumes ("bar1"); "" = the box's own (hardware file).
  std::string driver_p2p_mode;
  bool p2p_disable = false;  // NCCL_P2P_DISABLE=1
  // One-shot or two-shot: the framework's own allreduce kernel, not NCCL.
  bool custom_allreduce() const { return algorithm == "oneshot" || algorithm == "twoshot"; }
  // The communication block (scenario.proto Communication) this variant sets. Its driver_p2p_mode
  // changes the box's topology: it takes effect where a scenario is built with it (advise), not
  // through scenario::AllreduceChoice alone.
  config::Communication Communication() const;
};

// The allreduce choices `list` tries, in the order it prints them.
std::vector<AllreduceVariant> AllreduceVariants(VariantList list);

// `v` with BAR1 PCIe P2P forced by the driver (net::Bar1ModuleParameter): what advise lists where
// the box's driver mode keeps peer reads off the GPU-to-GPU path.
AllreduceVariant WithBar1P2p(AllreduceVariant v);

// How the ranks' hosts drive the GPUs: changes to the scenario's framework profile (each variant
// changes what its label says and nothing else).
struct PacingVariant {
  std::string name;    // "verify piecewise", ...: the label the command prints
  std::string family;  // advise: what a rejected family is called
  // serving.cuda_graphs: false = no CUDA graphs (every phase eager, as the scenario loader makes it).
  bool cuda_graphs = true;
  std::optional<llm::CaptureMode> every_phase;  // all four phases' capture mode
  std::optional<llm::CaptureMode> verify;       // the verify pass's capture mode
  std::optional<bool> host_sync;                // the host's sync_each_step and sync_each_cycle
  // A behaviour the user may not be able to get from their framework (the host never waiting for
  // the GPU): advise lists it as a what-if, never as the winner.
  bool what_if = false;

  // The variant applied to a built setup (compare-algos): with no framework profile, the one
  // serving.cuda_graphs gives (every phase full graph or eager, no framework costs) first.
  void ApplyTo(llm::DecodeSetup* setup) const;
  // The variant as scenario fields (advise): serving.cuda_graphs, and the framework profile's
  // overrides framework_overrides.capture.<phase> and sync_each_step / sync_each_cycle.
  void ApplyTo(config::Scenario* scenario) const;
  // The phases whose capture mode the variant sets ("decode", "draft", "verify", "draft_extend"),
  // with the mode: every phase, or verify alone.
  std::vector<std::pair<std::string, llm::CaptureMode>> CaptureChanges() const;
};

// The pacing choices `list` tries, in the order it prints them; the first is the profile's own.
std::vector<PacingVariant> PacingVariants(VariantList list);

}  // namespace specsim::advise
