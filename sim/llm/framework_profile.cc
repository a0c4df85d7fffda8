#include "sim/llm/framework_profile.h"

#include <algorithm>

#include "sim/core/check.h"

namespace specsim::llm {

const char* CaptureModeName(CaptureMode mode) {
  switch (mode) {
    case CaptureMode::kFull: return "full";
    case CaptureMode::kPiecewise: return "piecewise";
    case CaptureMode::kEager: return "eager";
  }
  return "?";
}

const char* LoopPassName(LoopPass pass) {
  switch (pass) {
    case LoopPass::kDecode: return "decode";
    case LoopPass::kVerify: return "verify";
    case LoopPass::kDraftExtend: return "draft_extend";
    case LoopPass::kDraft: return "draft";
  }
  return "?";
}

bool AttentionBackendRule::Matches(const std::string& gpu_arch, bool mla_cache, int topk_width) const {
  if (mla != mla_cache) return false;
  if (std::find(gpu_archs.begin(), gpu_archs.end(), gpu_arch) == gpu_archs.end()) return false;
  switch (topk) {
    case Topk::kAny: return true;
    case Topk::kOne: return topk_width <= 1;
    case Topk::kAboveOne: return topk_width > 1;
  }
  return false;
}

const AttentionBackendRule* FrameworkProfile::BackendFor(const std::string& gpu_arch, bool mla_cache,
                                                         int topk_width) const {
  for (const AttentionBackendRule& r : attention_backends)
    if (r.Matches(gpu_arch, mla_cache, topk_width)) return &r;
  return nullptr;
}

const FrameworkProfile::SpeculativeDefaults::Shape& FrameworkProfile::SpeculativeDefaults::For(
    ModelFamily family) const {
  SPECSIM_CHECK(stated && !shapes.empty());
  for (const Shape& s : shapes)
    if (s.families.empty() || std::find(s.families.begin(), s.families.end(), family) != s.families.end()) return s;
  return shapes.back();
}

const char* HostCostName(HostCost cost) {
  switch (cost) {
    case HostCost::kEagerOp: return "eager_op_host_us";
    case HostCost::kGraphReplay: return "graph_replay_host_us";
    case HostCost::kDecodeStep: return "decode_step_host_us";
    case HostCost::kSpecCycle: return "spec_cycle_host_us";
    case HostCost::kTensorOp: return "tensor_op_host_us";
  }
  return "?";
}

const char* HostCostKindName(HostCostSource::Kind kind) {
  switch (kind) {
    case HostCostSource::Kind::kUnstated: return "unstated";
    case HostCostSource::Kind::kFitted: return "fitted";
    case HostCostSource::Kind::kUnmeasured: return "unmeasured";
    case HostCostSource::Kind::kDefinition: return "definition";
    case HostCostSource::Kind::kScenarioOverride: return "scenario override";
  }
  return "?";
}

double& FrameworkProfile::HostCostUs(HostCost cost) {
  switch (cost) {
    case HostCost::kEagerOp: return eager_op_host_us;
    case HostCost::kGraphReplay: return graph_replay_host_us;
    case HostCost::kDecodeStep: return decode_step_host_us;
    case HostCost::kTensorOp: return tensor_op_host_us;
    case HostCost::kSpecCycle: break;
  }
  return spec_cycle_host_us;
}

double FrameworkProfile::HostCostUs(HostCost cost) const {
  return const_cast<FrameworkProfile*>(this)->HostCostUs(cost);
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
