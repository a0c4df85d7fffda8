#include "sim/llm/framework_profile.h"

namespace specsim::llm {

const char* CaptureModeName(CaptureMode mode) {
  switch (mode) {
    case CaptureMode::kFull: return "full";
    case CaptureMode::kPiecewise: return "piecewise";
    case CaptureMode::kEager: return "eager";
  }
  return "?";
}

}  // namespace specsim::llm
