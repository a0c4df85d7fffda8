// What `specsim compare` adds for a trace imported from a profiler (specsim import-profile): per
// pass, the GPU busy time by kernel class measured against the predicted device time; per NCCL
// call, how much of each rank's kernel time was waiting for the last rank (skew and host gaps)
// against the transfer itself; and the largest disagreements with the likely cause.
//
//   passes        items with DecodeParams.busy_us_by_class: predicted per class by
//                 calib::PredictPassDeviceTimeByClass, classes named as the profile's
//                 (profile::ProfileClassOfSimulatorClass); the class with the largest gap
//   collectives   items with per-rank timings (RankTiming: each rank's kernel median and its mean
//                 wait for the last rank): transfer = the item's median (the last rank's kernel),
//                 wait share = mean over ranks of wait / (wait + transfer)
//   disagreements the five simulated items with the largest |error|; cause: a pass's class with the
//                 largest gap, else what the item's prediction rests on (the NCCL call's algorithm,
//                 protocol and channels; a kernel's library or implementation and shape)
//
// compare prints it (sim/tools/profile_report.h).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "sim/calib/compare.h"
#include "sim/calib/params.h"
#include "sim/net/topology.h"
#include "specsim/trace.pb.h"

namespace specsim::calib {

struct PassClassRow {
  std::string item;
  std::map<std::string, double> measured_us, predicted_us;  // by the profile's class name
  std::string largest;                                      // the class with the largest |gap|
  double largest_gap_us = 0;                                // predicted - measured
};

struct CollectiveWaitRow {
  std::string item;
  double transfer_us = 0, predicted_us = 0;  // predicted: 0 when not simulated
  double wait_mean_us = 0;                   // mean over ranks
  double wait_share = 0;                     // of the ranks' kernel time
};

struct Disagreement {
  std::string item;
  double error = 0;  // signed fraction
  std::string cause;
};

struct ProfileReport {
  std::vector<PassClassRow> passes;
  std::vector<CollectiveWaitRow> collectives;
  std::vector<Disagreement> disagreements;
  std::vector<std::string> notes;  // passes whose classes could not be predicted, and why
  bool empty() const { return passes.empty() && collectives.empty(); }
};

// The report over `items` (compare's evaluated items) with the parameters the predictions used.
ProfileReport BuildProfileReport(const trace::Trace& trace, const net::Topology& topology, const CalibParams& params,
                                 const std::vector<ItemResult>& items);

}  // namespace specsim::calib
