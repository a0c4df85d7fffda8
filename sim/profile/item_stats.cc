#include "sim/profile/item_stats.h"

#include <algorithm>

#include "sim/core/median.h"

namespace specsim::profile {

// A trace item's stats from a profile's samples (us): count, median, min, max, p10, p90, mean.
// REQUIRES: !v.empty().
void FillStats(const std::vector<double>& v, trace::Stats* s) {
  s->set_iterations(static_cast<int>(v.size()));
  s->set_median_us(MedianOf(v));
  s->set_min_us(*std::min_element(v.begin(), v.end()));
  s->set_max_us(*std::max_element(v.begin(), v.end()));
  s->set_p10_us(PercentileOf(v, 0.1));
  s->set_p90_us(PercentileOf(v, 0.9));
  double mean = 0;
  for (double x : v) mean += x / static_cast<double>(v.size());
  s->set_mean_us(mean);
  s->set_timer("kineto");
}

trace::DType TraceDtype(const std::string& dtype) {
  if (dtype == "BFloat16" || dtype == "bf16" || dtype == "bfloat16") return trace::DTYPE_BF16;
  if (dtype == "Half" || dtype == "f16" || dtype == "half") return trace::DTYPE_FP16;
  if (dtype == "Float" || dtype == "f32" || dtype == "float") return trace::DTYPE_FP32;
  if (dtype == "Byte" || dtype == "u8" || dtype == "uint8") return trace::DTYPE_U8;
  return trace::DTYPE_UNSPECIFIED;
}

std::string TorchTypeName(const std::string& input_type) {
  // "c10::BFloat16" -> "BFloat16"; "float" -> "Float"
  std::string t = input_type.rfind("c10::", 0) == 0 ? input_type.substr(5) : input_type;
  if (t == "float") return "Float";
  if (t == "double") return "Double";
  if (t == "bool") return "Bool";
  if (t == "long int") return "Long";
  if (t == "int") return "Int";
  if (t == "unsigned char") return "Byte";
  return t;
}

}  // namespace specsim::profile
