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

const std::string* FrameworkProfile::NcclEnvironment::SetsItself(const std::string& name) const {
  for (const auto& [n, v] : sets)
    if (n == name) return &v;
  return nullptr;
}

std::string FrameworkProfile::GraphFlags::FlagFor(const std::string& phase, CaptureMode mode) const {
  for (const PhaseModeFlag& f : phase_flags)
    if (f.phase == phase && f.mode == mode) return f.flag;
  return "";
}

const char* EpCommunicationName(FrameworkProfile::EpCommunication c) {
  switch (c) {
    case FrameworkProfile::EpCommunication::kAllReduce: return "allreduce";
    case FrameworkProfile::EpCommunication::kAllGatherReduceScatter: return "all-gather + reduce-scatter";
    case FrameworkProfile::EpCommunication::kAllToAll: return "all-to-all";
    case FrameworkProfile::EpCommunication::kUnstated: break;
  }
  return "not stated";
}

std::string WithNumber(const std::string& pattern, int n) {
  std::string out = pattern;
  const std::string value = std::to_string(n);
  for (size_t p = out.find("{n}"); p != std::string::npos; p = out.find("{n}", p + value.size()))
    out.replace(p, 3, value);
  return out;
}

}  // namespace specsim::llm
