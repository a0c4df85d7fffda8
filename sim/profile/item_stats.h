// What a profile's samples become in a measurement trace: the Stats of an item (median, spread)
// and the trace's dtype of a torch dtype name.
#pragma once

#include <string>
#include <vector>

#include "specsim/trace.pb.h"

namespace specsim::profile {

// A trace item's stats from a profile's samples (us): count, median, min, max, p10, p90, mean,
// timer "kineto". REQUIRES: !v.empty().
void FillStats(const std::vector<double>& v, trace::Stats* s);
// The trace's dtype of a torch / NCCL dtype name ("BFloat16", "bf16", ...); UNSPECIFIED when unknown.
trace::DType TraceDtype(const std::string& dtype);
// A Kineto "Input type" as torch names the dtype: "c10::BFloat16" -> "BFloat16", "float" -> "Float".
std::string TorchTypeName(const std::string& input_type);

}  // namespace specsim::profile
