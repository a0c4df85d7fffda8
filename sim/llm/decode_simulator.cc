#include "sim/llm/decode_simulator.h"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <random>

#include "sim/coll/executor.h"
#include "sim/core/check.h"

namespace specsim::llm {

const char* PassKindName(PassKind kind) {
  switch (kind) {
    case PassKind::kTargetDecode: return "decode";
    case PassKind::kVerify: return "verify";
    case PassKind::kDraftExtend: return "draft-extend";
    case PassKind::kDraftStep: return "draft-step";
  }
  return "?";
}

DecodeSimulator::DecodeSimulator(DecodeSetup setup) : setup_(std::move(setup)) {}

StatusOr<std::unique_ptr<DecodeSimulator>> DecodeSimulator::Create(DecodeSetup setup) {
  if (setup.topology == nullptr) return InvalidArgumentError("decode: no hardware");
  const int tp = setup.parallel.tp;
  if (tp < 1) return InvalidArgumentError("parallelism.tensor_parallel = " + std::to_string(tp) + ": must be >= 1");
  if (setup.gpus.empty()) {
    setup.gpus.resize(tp);
    std::iota(setup.gpus.begin(), setup.gpus.end(), 0);
  }
  if (static_cast<int>(setup.gpus.size()) != tp)
    return InvalidArgumentError("parallelism.gpus lists " + std::to_string(setup.gpus.size()) +
                                " GPUs but tensor_parallel is " + std::to_string(tp));
  for (int g : setup.gpus) {
    if (g < 0 || g >= setup.topology->num_gpus())
      return InvalidArgumentError("parallelism: GPU " + std::to_string(g) + " does not exist on '" +
                                  setup.topology->name + "' (GPUs 0-" + std::to_string(setup.topology->num_gpus() - 1) + ")");
  }
  if (setup.batch < 1) return InvalidArgumentError("serving.batch_size must be >= 1");
  if (setup.context_length < 0) return InvalidArgumentError("serving.context_length must be >= 0");
  const SpeculationSettings& spec = setup.speculation;
  if (spec.method != SpeculationMethod::kNone) {
    if (spec.num_steps < 1) return InvalidArgumentError("speculation.num_steps must be >= 1");
    if (spec.topk < 1) return InvalidArgumentError("speculation.topk must be >= 1");
    if (spec.num_draft_tokens < 2) return InvalidArgumentError("speculation.num_draft_tokens must be >= 2");
    if (!spec.acceptance) return InvalidArgumentError("speculation: no acceptance model");
    if (spec.acceptance->max_accepted() > std::min(spec.num_steps, spec.num_draft_tokens - 1))
      return InvalidArgumentError("speculation: the acceptance model allows " + std::to_string(spec.acceptance->max_accepted()) +
                                  " accepted tokens, more than min(num_steps, num_draft_tokens - 1) = " +
                                  std::to_string(std::min(spec.num_steps, spec.num_draft_tokens - 1)));
    if (spec.cycles < 1) return InvalidArgumentError("speculation.cycles must be >= 1");
    if (spec.method == SpeculationMethod::kEagle3 && !setup.draft)
      return InvalidArgumentError("speculation.method EAGLE3 needs speculation.draft_model");
    if (spec.method == SpeculationMethod::kMtp && setup.target.num_nextn_predict_layers < 1)
      return InvalidArgumentError("speculation.method MTP: model '" + setup.target.name +
                                  "' has no MTP/NEXTN layer (num_nextn_predict_layers = 0)");
  }
  auto sim = std::unique_ptr<DecodeSimulator>(new DecodeSimulator(std::move(setup)));
  sim->router_ = std::make_unique<net::Router>(*sim->setup_.topology);
  const net::GpuSpec& gpu = sim->setup_.topology->gpu_spec(sim->setup_.gpus[0]);
  sim->cost_ = std::make_unique<compute::KernelCostModel>(gpu, sim->setup_.compute);
  return sim;
}

StatusOr<ForwardPass> DecodeSimulator::BuildPass(PassKind kind, int tokens_per_sequence) const {
  PassShape shape;
  shape.batch = setup_.batch;
  shape.tokens_per_sequence = tokens_per_sequence;
  shape.context_length = setup_.context_length;
  shape.weight_dtype = setup_.weight_dtype;
  shape.activation_dtype = setup_.activation_dtype;
  shape.kv_dtype = setup_.kv_dtype;
  shape.expert_weight_dtype = setup_.expert_weight_dtype;
  switch (kind) {
    case PassKind::kTargetDecode:
    case PassKind::kVerify:
      return BuildForwardPass(setup_.target, setup_.parallel, shape);
    case PassKind::kDraftExtend:
    case PassKind::kDraftStep:
      if (setup_.speculation.method == SpeculationMethod::kMtp)
        return BuildMtpDraftPass(setup_.target, setup_.parallel, shape);
      SPECSIM_CHECK(setup_.draft.has_value());
      // EAGLE-3 heads ship in bf16 whatever the target's quantisation.
      shape.weight_dtype = compute::DType::kBf16;
      shape.expert_weight_dtype.reset();
      // The FC fusing the target's hidden states runs when the input comes from the target (the
      // extend after verify), not on later draft steps that feed the draft's own hidden state.
      return BuildEagle3DraftPass(*setup_.draft, setup_.target, setup_.parallel, shape,
                                  /*apply_fc=*/kind == PassKind::kDraftExtend);
  }
  return InternalError("unknown pass kind");
}

StatusOr<SimTime> DecodeSimulator::CollectiveTime(CommKind kind, int64_t bytes) {
  const auto key = std::make_pair(static_cast<int>(kind), bytes);
  auto it = collective_ps_.find(key);
  if (it != collective_ps_.end()) return it->second;
  coll::CollectiveRequest request = setup_.allreduce;
  request.gpus = setup_.gpus;
  request.bytes = bytes;
  switch (kind) {
    case CommKind::kAllReduce:
      request.collective = coll::Collective::kAllReduce;
      break;
    case CommKind::kAllGather:
      // The logits gather is NCCL's: the custom allreduce kernels do not implement it.
      request.collective = coll::Collective::kAllGather;
      if (request.algorithm != coll::Algorithm::kRing) request.algorithm = coll::Algorithm::kAuto;
      break;
    case CommKind::kAllToAll:
      request.collective = coll::Collective::kAllToAll;
      request.algorithm = coll::Algorithm::kDirect;
      request.protocol.reset();
      break;
  }
  ASSIGN_OR_RETURN(coll::PlannedCollective plan, coll::PlanCollective(*setup_.topology, *router_, request));
  coll::CollectiveTiming timing = coll::TimeCollective(plan.schedule, *setup_.topology, plan.rank_gpus);
  collective_ps_[key] = timing.duration_ps;
  CollectiveInfo info;
  info.kind = kind;
  info.bytes = bytes;
  info.algorithm = plan.algorithm;
  info.protocol = plan.protocol;
  info.channels = plan.channels;
  info.time_us = MicrosFromPicos(timing.duration_ps);
  info.busiest_link = timing.busiest_resource;
  info.busiest_utilisation = timing.busiest_utilisation;
  char text[256];
  std::snprintf(text, sizeof(text), "%s %lld B: %s%s%s/%dch %.1f us, busiest link %s (%.0f%%)",
                coll::CollectiveName(request.collective), static_cast<long long>(bytes), plan.algorithm.c_str(),
                plan.protocol.empty() ? "" : "/", plan.protocol.c_str(), plan.channels, info.time_us,
                timing.busiest_resource.c_str(), 100 * timing.busiest_utilisation);
  info.description = text;
  collective_infos_.push_back(std::move(info));
  return timing.duration_ps;
}

StatusOr<PassTiming> DecodeSimulator::SimulatePass(PassKind kind, int tokens_per_sequence,
                                                   std::vector<TimelineSlice>* slices) {
  ASSIGN_OR_RETURN(ForwardPass pass, BuildPass(kind, tokens_per_sequence));
  const int n = setup_.parallel.tp;
  const bool graphs = setup_.cuda_graphs;
  PassTiming timing;
  // The pass as a schedule: per rank a GPU chain (kernels, collectives) and, when eager, a CPU
  // chain that issues each kernel; a collective is a barrier over every rank's previous GPU op.
  coll::Schedule schedule;
  schedule.num_ranks = n;
  schedule.algorithm = PassKindName(kind);
  std::vector<int> gpu_last(n, -1), cpu_last(n, -1);
  std::vector<std::string> labels;
  std::vector<std::string> categories;
  // Labels are kept only when a timeline is asked for.
  const bool record = slices != nullptr;
  auto add_delay = [&](int rank, SimTime duration, std::vector<int32_t> deps, const std::string& label,
                       const char* cat) {
    coll::ScheduleOp op;
    op.kind = coll::OpKind::kDelay;
    op.dst_rank = rank;
    op.duration_ps = duration;
    std::erase(deps, -1);
    op.deps = std::move(deps);
    if (record) {
      labels.push_back(label);
      categories.push_back(cat);
    }
    return schedule.Add(std::move(op));
  };
  // Graphs: a fixed gap on the GPU before each kernel. Eager: the CPU issues the kernel (its own
  // chain) and the GPU has its eager gap; the kernel starts when both are done. Returns the op the
  // kernel depends on besides the GPU chain.
  auto launch = [&](int rank, const std::string& name) -> int {
    if (graphs) {
      gpu_last[rank] = add_delay(rank, cost_->LaunchOverhead(true), {gpu_last[rank]}, record ? name + " (graph gap)" : "", "launch");
      return -1;
    }
    gpu_last[rank] = add_delay(rank, cost_->EagerDeviceGap(), {gpu_last[rank]}, record ? name + " (launch gap)" : "", "launch");
    cpu_last[rank] = add_delay(rank, cost_->LaunchOverhead(false), {cpu_last[rank]}, record ? name + " (issue)" : "", "cpu");
    return cpu_last[rank];
  };
  if (graphs) {
    for (int r = 0; r < n; ++r) gpu_last[r] = add_delay(r, cost_->GraphLaunchOverhead(), {}, "graph launch", "launch");
  }
  for (const PassStep& step : pass.steps) {
    if (step.kind == PassStep::kKernel) {
      const SimTime device = cost_->KernelTime(step.kernel);
      timing.compute_ps += device;
      ++timing.kernels;
      for (int r = 0; r < n; ++r) {
        int issued = launch(r, step.kernel.name);
        gpu_last[r] = add_delay(r, device, {issued, gpu_last[r]}, step.kernel.name, "compute");
      }
    } else {
      if (n == 1) continue;  // no communication on one GPU
      ASSIGN_OR_RETURN(SimTime t, CollectiveTime(step.comm.kind, step.comm.bytes));
      timing.comm_ps += t;
      ++timing.collectives;
      std::vector<int32_t> barrier;
      for (int r = 0; r < n; ++r) barrier.push_back(launch(r, step.comm.name));
      for (int r = 0; r < n; ++r) barrier.push_back(gpu_last[r]);
      for (int r = 0; r < n; ++r) gpu_last[r] = add_delay(r, t, barrier, step.comm.name, "comm");
    }
  }
  std::vector<std::pair<SimTime, SimTime>> op_times;
  coll::CollectiveTiming run = coll::TimeCollective(schedule, *setup_.topology, setup_.gpus, nullptr,
                                                    slices != nullptr ? &op_times : nullptr);
  timing.total_ps = run.duration_ps;
  SPECSIM_CHECK_GE(timing.total_ps, timing.compute_ps + timing.comm_ps) << "kernels and collectives are serial";
  timing.launch_ps = timing.total_ps - timing.compute_ps - timing.comm_ps;
  if (slices != nullptr) {
    for (size_t i = 0; i < schedule.ops.size(); ++i) {
      if (schedule.ops[i].dst_rank != 0 || schedule.ops[i].duration_ps == 0) continue;
      slices->push_back({labels[i], categories[i], op_times[i].first, op_times[i].second});
    }
  }
  return timing;
}

StatusOr<PassTiming> DecodeSimulator::Pass(PassKind kind, int tokens_per_sequence) {
  // Verify of N tokens and a plain decode step are the same target pass.
  const int kind_key = kind == PassKind::kVerify ? static_cast<int>(PassKind::kTargetDecode) : static_cast<int>(kind);
  const auto key = std::make_pair(kind_key, tokens_per_sequence);
  auto it = passes_.find(key);
  if (it != passes_.end()) return it->second;
  ASSIGN_OR_RETURN(PassTiming t, SimulatePass(kind, tokens_per_sequence, nullptr));
  passes_[key] = t;
  return t;
}

StatusOr<std::vector<TimelineSlice>> DecodeSimulator::PassTimeline(PassKind kind, int tokens_per_sequence) {
  std::vector<TimelineSlice> slices;
  RETURN_IF_ERROR(SimulatePass(kind, tokens_per_sequence, &slices).status());
  return slices;
}

StatusOr<DecodeResult> DecodeSimulator::Run() {
  DecodeResult result;
  ASSIGN_OR_RETURN(result.baseline_step, Pass(PassKind::kTargetDecode, 1));
  result.baseline_step_ms = MillisFromPicos(result.baseline_step.total_ps);
  result.baseline_tokens_per_s = setup_.batch / SecondsFromPicos(result.baseline_step.total_ps);
  const SpeculationSettings& spec = setup_.speculation;
  if (spec.method != SpeculationMethod::kNone) {
    result.speculative = true;
    ASSIGN_OR_RETURN(result.verify, Pass(PassKind::kVerify, spec.num_draft_tokens));
    ASSIGN_OR_RETURN(result.draft_step, Pass(PassKind::kDraftStep, spec.topk));
    std::mt19937_64 rng(spec.seed);
    double total_ps = 0, tokens = 0;
    CycleBreakdown sum;
    for (int c = 0; c < spec.cycles; ++c) {
      const int accepted = spec.acceptance->Sample(rng);
      ASSIGN_OR_RETURN(PassTiming extend, Pass(PassKind::kDraftExtend, accepted + 1));
      const int steps = spec.num_steps - 1;
      const PassTiming& v = result.verify;
      const PassTiming& d = result.draft_step;
      total_ps += static_cast<double>(v.total_ps + extend.total_ps + steps * d.total_ps);
      tokens += accepted + 1;
      sum.verify_compute_ms += MillisFromPicos(v.compute_ps);
      sum.verify_comm_ms += MillisFromPicos(v.comm_ps);
      sum.draft_compute_ms += MillisFromPicos(extend.compute_ps + steps * d.compute_ps);
      sum.draft_comm_ms += MillisFromPicos(extend.comm_ps + steps * d.comm_ps);
      sum.launch_sync_ms += MillisFromPicos(v.launch_ps + extend.launch_ps + steps * d.launch_ps);
    }
    const double cycles = spec.cycles;
    result.cycles = spec.cycles;
    result.tau = tokens / cycles;
    result.tau_expected = spec.acceptance->tau();
    result.cycle_ms = total_ps / cycles * 1e-9;
    result.speculative_tokens_per_s = setup_.batch * result.tau / (result.cycle_ms * 1e-3);
    result.speedup = result.speculative_tokens_per_s / result.baseline_tokens_per_s;
    result.breakdown = {sum.draft_compute_ms / cycles, sum.draft_comm_ms / cycles, sum.verify_compute_ms / cycles,
                        sum.verify_comm_ms / cycles, sum.launch_sync_ms / cycles};
  }
  result.collectives = collective_infos_;
  return result;
}

}  // namespace specsim::llm
