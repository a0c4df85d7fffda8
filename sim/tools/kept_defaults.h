// What `specsim calibrate` reports of the parameter groups a fit left at their defaults.
#pragma once

#include <string>
#include <vector>

#include "sim/calib/fit.h"

namespace specsim::tools {

// A parameter group the fit left at its default: `names` as FitResult::not_fitted gives them
// (before the ':'), the reason after it, and the kept value of every name that is a numeric field
// of the Calibration proto (e.g. "fabric.d2h_pinned.latency_ns"), as "name = value". A value of 0
// says so: the Calibration proto stores 0 as "unset", which readers replace by the built-in
// default. Entries the fit reports twice are listed once.
struct KeptDefault {
  std::string names;
  std::string reason;
  std::vector<std::string> values;  // "fabric.d2h_pinned.latency_ns = 3500"; empty when none resolves
};
std::vector<KeptDefault> KeptDefaults(const calib::FitResult& fit);

}  // namespace specsim::tools
