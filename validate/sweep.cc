#include "validate/sweep.h"

#include <algorithm>

namespace specsim::validate {

std::vector<int64_t> GeometricSizes(int64_t lo, int64_t hi, int64_t factor) {
  std::vector<int64_t> out;
  if (lo <= 0 || hi < lo || factor < 2) return out;
  for (int64_t s = lo; s < hi; s *= factor) {
    out.push_back(s);
    if (s > hi / factor) break;
  }
  if (out.empty() || out.back() != hi) out.push_back(hi);
  return out;
}

std::vector<int64_t> CopySizes(int64_t max_bytes, bool quick) { return GeometricSizes(4, max_bytes, quick ? 16 : 4); }

std::vector<int64_t> CollectiveSizes(int64_t max_bytes, bool quick) {
  if (max_bytes < 1024) return {max_bytes};
  return GeometricSizes(1024, max_bytes, quick ? 16 : 4);
}

std::vector<int64_t> TokenCounts(bool quick) {
  if (quick) return {1, 16, 256};
  return GeometricSizes(1, 256, 2);
}

std::vector<int> BlockCounts(int sm_count, bool quick) {
  std::vector<int> out;
  if (sm_count < 1) sm_count = 1;
  for (int b = 1; b < sm_count; b *= quick ? 8 : 2) out.push_back(b);
  out.push_back(sm_count);
  out.push_back(2 * sm_count);
  return out;
}

int IterationsFor(int64_t bytes, int64_t budget_bytes, int min_iters, int max_iters) {
  if (bytes <= 0) return max_iters;
  int64_t it = budget_bytes / bytes;
  return static_cast<int>(std::clamp<int64_t>(it, min_iters, max_iters));
}

std::string SizeLabel(int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB"};
  int u = 0;
  int64_t v = bytes;
  while (u < 3 && v >= 1024 && v % 1024 == 0) {
    v /= 1024;
    ++u;
  }
  return std::to_string(v) + units[u];
}

}  // namespace specsim::validate
