// import-profile's eager pass predictions: the host span of each eager pass group (a PyTorch pass
// is host-bound when its ops are issued one by one) predicted from per-operator host costs, as
// compare prices the probe's loops (sim/calib/host_op_predictors.h PredictHostLoop: each op's host
// time drawn from its distribution, its kernels behind it, then the read-back), against the
// measured span of the pass's range. Held out by kind: the costs of a decode group's operators
// are those measured in the profile's other kinds of passes (verify, draft, ...), pooled per
// operator name, and the other way round; "in-sample" when the profile has passes of one kind
// only. The GPU side of each op (its kernels' time) is the pass's own (the compute prediction is
// import-profile's other table). The costs include the profiler's own cost per operator: this
// predicts profiled passes.
#pragma once

#include <string>
#include <vector>

#include "sim/profile/profile_import.h"

namespace specsim::scenario {

struct EagerPassPrediction {
  const profile::HostLoopGroup* loop = nullptr;
  bool ok = false;
  std::string why;         // when not ok
  std::string costs_from;  // "verify passes (held out)", "in-sample"
  double measured_us = 0;  // median host span of the group's passes
  double predicted_us = 0;
};

// Every eager pass group of `imported` with operators (profile::ProfileImport::host_loops).
std::vector<EagerPassPrediction> PredictEagerPasses(const profile::ProfileImport& imported);

}  // namespace specsim::scenario
