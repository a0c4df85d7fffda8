#include "sim/llm/framework_profile.h"

#include <algorithm>

namespace specsim::llm {

const char* CaptureModeName(CaptureMode mode) {
  switch (mode) {
    case CaptureMode::kFull: return "full";
    case CaptureMode::kPiecewise: return "piecewise";
    case CaptureMode::kEager: return "eager";
  }
  return "?";
}

bool FrameworkProfile::CustomAllreduceRule::RunsOn(int world_size, bool full_nvlink) const {
  if (!stated || std::find(world_sizes.begin(), world_sizes.end(), world_size) == world_sizes.end()) return false;
  return full_nvlink || world_size <= max_world_size_without_full_nvlink;
}

}  // namespace specsim::llm
