#include "sim/llm/decode_simulator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <optional>
#include <random>
#include <tuple>

#include "sim/coll/executor.h"
#include "sim/core/check.h"
#include "sim/llm/ngram.h"
#include "sim/llm/speculative_cycle.h"

namespace specsim::llm {

const char* SpeculationMethodName(SpeculationMethod method) {
  switch (method) {
    case SpeculationMethod::kNone: return "off";
    case SpeculationMethod::kEagle3: return "EAGLE-3";
    case SpeculationMethod::kMtp: return "MTP";
    case SpeculationMethod::kDraftModel: return "draft model";
    case SpeculationMethod::kNgram: return "n-gram";
  }
  return "?";
}

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
                                  setup.topology->name + "' (GPUs 0-" + std::to_string(setup.topology->num_gpus() - 1) +
                                  ")");
  }
  if (setup.batch < 1) return InvalidArgumentError("serving.batch_size must be >= 1");
  if (setup.context_length < 0) return InvalidArgumentError("serving.context_length must be >= 0");
  const SpeculationSettings& spec = setup.speculation;
  if (spec.method != SpeculationMethod::kNone) {
    if (spec.num_steps < 1) return InvalidArgumentError("speculation.num_steps must be >= 1");
    if (spec.topk < 1) return InvalidArgumentError("speculation.topk must be >= 1");
    if (spec.num_draft_tokens < 2) return InvalidArgumentError("speculation.num_draft_tokens must be >= 2");
    if (!spec.acceptance) return InvalidArgumentError("speculation: no acceptance model");
    if (spec.acceptance->max_accepted() > MaxAcceptedPerCycle(spec.num_steps, spec.num_draft_tokens))
      return InvalidArgumentError("speculation: the acceptance model allows " +
                                  std::to_string(spec.acceptance->max_accepted()) +
                                  " accepted tokens, more than min(num_steps, num_draft_tokens - 1) = " +
                                  std::to_string(MaxAcceptedPerCycle(spec.num_steps, spec.num_draft_tokens)));
    if (spec.cycles < 1) return InvalidArgumentError("speculation.cycles must be >= 1");
    if (spec.method == SpeculationMethod::kEagle3 && !setup.draft)
      return InvalidArgumentError("speculation.method EAGLE3 needs speculation.draft_model");
    if (spec.method == SpeculationMethod::kDraftModel && !setup.draft)
      return InvalidArgumentError("speculation.method DRAFT_MODEL needs speculation.draft_model");
    if (spec.method == SpeculationMethod::kNgram) {
      if (!(spec.ngram_match_probability >= 0 && spec.ngram_match_probability <= 1))
        return InvalidArgumentError("speculation.ngram.match_probability must be in [0, 1]");
      if (!(spec.ngram_host_match_us_per_sequence >= 0))
        return InvalidArgumentError("speculation.ngram.host_match_us_per_sequence must be >= 0");
      if (!spec.ngram_verify_padded && !spec.proposed_acceptance)
        return InvalidArgumentError("speculation NGRAM: no acceptance of proposed drafts");
    }
    if (spec.method == SpeculationMethod::kMtp && setup.target.num_nextn_predict_layers < 1)
      return InvalidArgumentError("speculation.method MTP: model '" + setup.target.name +
                                  "' has no MTP/NEXTN layer (num_nextn_predict_layers = 0)");
  }
  auto sim = std::unique_ptr<DecodeSimulator>(new DecodeSimulator(std::move(setup)));
  sim->router_ = std::make_unique<net::Router>(*sim->setup_.topology);
  sim->planner_ = std::make_unique<coll::CollectivePlanner>(*sim->router_);
  sim->timer_ = std::make_unique<coll::CollectiveTimer>(*sim->router_);
  const net::GpuSpec& gpu = sim->setup_.topology->gpu_spec(sim->setup_.gpus[0]);
  sim->cost_ = std::make_unique<compute::KernelCostModel>(gpu, sim->setup_.compute);
  return sim;
}

StatusOr<ForwardPass> DecodeSimulator::BuildPass(PassKind kind, int tokens_per_sequence, int narrow_sequences) const {
  PassShape shape;
  shape.batch = setup_.batch;
  shape.tokens_per_sequence = tokens_per_sequence;
  shape.narrow_sequences = narrow_sequences;
  shape.context_length = setup_.context_length;
  shape.weight_dtype = setup_.weight_dtype;
  shape.activation_dtype = setup_.activation_dtype;
  shape.kv_dtype = setup_.kv_dtype;
  shape.expert_weight_dtype = setup_.expert_weight_dtype;
  shape.weight_formats = setup_.weight_formats;
  if (setup_.framework) shape.inventory = setup_.framework->kernel_inventory;
  switch (kind) {
    case PassKind::kTargetDecode:
    case PassKind::kVerify: return BuildForwardPass(setup_.target, setup_.parallel, shape);
    case PassKind::kDraftExtend:
    case PassKind::kDraftStep:
      if (setup_.speculation.method == SpeculationMethod::kMtp)
        return BuildMtpDraftPass(setup_.target, setup_.parallel, shape);
      SPECSIM_CHECK(setup_.draft.has_value());
      SPECSIM_CHECK(setup_.speculation.method != SpeculationMethod::kNgram) << "NGRAM has no draft passes";
      if (setup_.speculation.method == SpeculationMethod::kDraftModel) {
        // A standalone draft: its own model, in bf16, over the target's TP group (no expert parallelism),
        // with its own embedding, LM head and collectives.
        shape.weight_dtype = compute::DType::kBf16;
        shape.expert_weight_dtype.reset();
        shape.weight_formats.reset();
        return BuildForwardPass(*setup_.draft, ParallelSpec{setup_.parallel.tp, 1}, shape);
      }
      // EAGLE-3 heads ship in bf16 whatever the target's quantisation.
      shape.weight_dtype = compute::DType::kBf16;
      shape.expert_weight_dtype.reset();
      shape.weight_formats.reset();
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
    case CommKind::kAllReduce: request.collective = coll::Collective::kAllReduce; break;
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
  ASSIGN_OR_RETURN(coll::PlannedCollective plan, planner_->Plan(request));
  coll::CollectiveTiming timing = timer_->Time(plan.schedule, plan.rank_gpus);
  if (timing.duration_ps >= kMaxOpDurationPs)
    return InvalidArgumentError(fmt::format(
        "{} of {} B takes {:.3g} s on this box, past the {:.3g} s specsim simulates per op: a link rate, latency or "
        "calibrated NCCL cost is out of any plausible range",
        CommKindName(kind), bytes, SecondsFromPicos(timing.duration_ps), SecondsFromPicos(kMaxOpDurationPs)));
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
  info.step_costs = plan.step_costs;
  info.range_low = plan.range_low;
  info.range_high = plan.range_high;
  char text[320];
  std::snprintf(text, sizeof(text), "%s %lld B: %s%s%s/%dch %.1f us, busiest link %s (%.0f%%)",
                coll::CollectiveName(request.collective), static_cast<long long>(bytes), plan.algorithm.c_str(),
                plan.protocol.empty() ? "" : "/", plan.protocol.c_str(), plan.channels, info.time_us,
                timing.busiest_resource.c_str(), 100 * timing.busiest_utilisation);
  info.description = text;
  if (plan.range_low != 1 || plan.range_high != 1) {
    std::snprintf(text, sizeof(text), "; uncalibrated %.1f-%.1f us", plan.range_low * info.time_us,
                  plan.range_high * info.time_us);
    info.description += text;
  }
  collective_infos_.push_back(std::move(info));
  return timing.duration_ps;
}

std::optional<NcclRangeTokens> NcclRangeOf(const DecodeResult& r) {
  if (r.collectives.empty()) return std::nullopt;
  const double lo = r.collectives.front().range_low, hi = r.collectives.front().range_high;
  for (const CollectiveInfo& c : r.collectives)
    if (c.range_low == 1 || c.range_high == 1 || c.range_low != lo || c.range_high != hi) return std::nullopt;
  const auto at = [&r](double factor) {
    if (!r.speculative) {
      const double comm_ms = MillisFromPicos(r.baseline_step.comm_ps);
      return 1000 / (r.baseline_step_ms + (factor - 1) * comm_ms);
    }
    const CycleBreakdown& b = r.breakdown;
    const double tokens_per_cycle = r.speculative_tokens_per_s * r.cycle_ms / 1000;
    return 1000 * tokens_per_cycle / (r.cycle_ms + (factor - 1) * (b.draft_comm_ms + b.verify_comm_ms));
  };
  if (r.baseline_step.wait_ps > 0 ||
      (r.speculative && (r.breakdown.draft_wait_ms > 0 || r.breakdown.verify_wait_ms > 0)))
    return std::nullopt;
  return NcclRangeTokens{at(hi), at(lo)};
}

namespace {

// A pass as a schedule on the event engine: per rank a GPU chain (kernels, collectives) and, when
// eager, a CPU chain that issues each kernel; a collective is a barrier over every rank's previous
// GPU op.
class PassScheduleBuilder {
 public:
  // `record`: keep every op's label and category (for slices).
  PassScheduleBuilder(int ranks, const char* name, bool graphs, const compute::KernelCostModel& cost, bool record)
      : n_(ranks), graphs_(graphs), record_(record), cost_(cost), gpu_last_(ranks, -1), cpu_last_(ranks, -1) {
    schedule_.num_ranks = ranks;
    schedule_.algorithm = name;
    if (graphs_) {
      for (int r = 0; r < n_; ++r)
        gpu_last_[r] = AddDelay(r, cost_.GraphLaunchOverhead(), {}, "graph launch", "launch");
    }
  }

  // The kernel on every rank, after its launch.
  void AddKernel(const std::string& name, SimTime device_ps) {
    for (int r = 0; r < n_; ++r) {
      int issued = Launch(r, name);
      gpu_last_[r] = AddDelay(r, device_ps, {issued, gpu_last_[r]}, name, "compute");
    }
  }

  // The collective's transfer on every rank once every rank has launched it and finished its
  // previous GPU op.
  void AddCollective(const std::string& name, SimTime transfer_ps) {
    std::vector<int32_t> barrier;
    for (int r = 0; r < n_; ++r) barrier.push_back(Launch(r, name));
    for (int r = 0; r < n_; ++r) barrier.push_back(gpu_last_[r]);
    for (int r = 0; r < n_; ++r) gpu_last_[r] = AddDelay(r, transfer_ps, barrier, name, "comm");
  }

  const coll::Schedule& schedule() const { return schedule_; }

  // Rank 0's ops that take time, as slices (REQUIRES: `record`; op_times per op of the schedule).
  void AppendRank0Slices(const std::vector<std::pair<SimTime, SimTime>>& op_times,
                         std::vector<TimelineSlice>* slices) const {
    for (size_t i = 0; i < schedule_.ops.size(); ++i) {
      if (schedule_.ops[i].dst_rank != 0 || schedule_.ops[i].duration_ps == 0) continue;
      slices->push_back({labels_[i], categories_[i], op_times[i].first, op_times[i].second});
    }
  }

 private:
  int AddDelay(int rank, SimTime duration, coll::DepList deps, const std::string& label, const char* cat) {
    coll::ScheduleOp op;
    op.kind = coll::OpKind::kDelay;
    op.dst_rank = rank;
    op.duration_ps = duration;
    deps.erase(std::remove(deps.begin(), deps.end(), -1), deps.end());
    op.deps = std::move(deps);
    if (record_) {
      labels_.push_back(label);
      categories_.push_back(cat);
    }
    return schedule_.Add(std::move(op));
  }

  // Graphs: a fixed gap on the GPU before each kernel. Eager: the CPU issues the kernel (its own
  // chain) and the GPU has its eager gap; the kernel starts when both are done. Returns the op the
  // kernel depends on besides the GPU chain.
  int Launch(int rank, const std::string& name) {
    if (graphs_) {
      gpu_last_[rank] =
          AddDelay(rank, cost_.LaunchOverhead(true), {gpu_last_[rank]}, record_ ? name + " (graph gap)" : "", "launch");
      return -1;
    }
    gpu_last_[rank] =
        AddDelay(rank, cost_.EagerDeviceGap(), {gpu_last_[rank]}, record_ ? name + " (launch gap)" : "", "launch");
    cpu_last_[rank] =
        AddDelay(rank, cost_.LaunchOverhead(false), {cpu_last_[rank]}, record_ ? name + " (issue)" : "", "cpu");
    return cpu_last_[rank];
  }

  const int n_;
  const bool graphs_;
  const bool record_;  // labels are kept only when a timeline is asked for
  const compute::KernelCostModel& cost_;
  coll::Schedule schedule_;
  std::vector<int> gpu_last_, cpu_last_;  // per rank: the last op of its GPU / CPU chain (-1: none)
  std::vector<std::string> labels_;
  std::vector<std::string> categories_;
};

}  // namespace

StatusOr<PassTiming> DecodeSimulator::SimulatePassOnEventEngine(PassKind kind, int tokens_per_sequence) {
  const CaptureMode mode = CaptureOf(kind);
  if (mode == CaptureMode::kPiecewise)
    return InvalidArgumentError("the event-engine reference implements full graphs and eager launches only");
  std::vector<TimelineSlice>* slices = nullptr;
  ASSIGN_OR_RETURN(ForwardPass pass, BuildPass(kind, tokens_per_sequence));
  const int n = setup_.parallel.tp;
  PassTiming timing;
  PassScheduleBuilder builder(n, PassKindName(kind), mode == CaptureMode::kFull, *cost_, slices != nullptr);
  for (const PassStep& step : pass.steps) {
    if (step.kind == PassStep::kKernel) {
      const SimTime device = cost_->KernelTime(step.kernel);
      timing.compute_ps += device;
      ++timing.kernels;
      builder.AddKernel(step.kernel.name, device);
    } else {
      if (n == 1) continue;  // no communication on one GPU
      ASSIGN_OR_RETURN(SimTime t, CollectiveTime(step.comm.kind, step.comm.bytes));
      timing.comm_ps += t;
      ++timing.collectives;
      builder.AddCollective(step.comm.name, t);
    }
  }
  std::vector<std::pair<SimTime, SimTime>> op_times;
  coll::CollectiveTiming run =
      timer_->Time(builder.schedule(), setup_.gpus, nullptr, slices != nullptr ? &op_times : nullptr);
  timing.total_ps = run.duration_ps;
  SPECSIM_CHECK_GE(timing.total_ps, timing.compute_ps + timing.comm_ps) << "kernels and collectives are serial";
  timing.launch_ps = timing.total_ps - timing.compute_ps - timing.comm_ps;
  if (slices != nullptr) builder.AppendRank0Slices(op_times, slices);
  return timing;
}

CaptureMode DecodeSimulator::CaptureOf(PassKind kind) const {
  if (!setup_.framework) return setup_.cuda_graphs ? CaptureMode::kFull : CaptureMode::kEager;
  const PhaseCapture& c = setup_.framework->capture;
  switch (kind) {
    case PassKind::kTargetDecode: return c.decode;
    case PassKind::kVerify: return c.verify;
    case PassKind::kDraftExtend: return c.draft_extend;
    case PassKind::kDraftStep: return c.draft;
  }
  return CaptureMode::kFull;
}

CaptureMode DecodeSimulator::RaggedVerifyCapture() const {
  const CaptureMode verify = CaptureOf(PassKind::kVerify);
  if (!setup_.framework || !setup_.framework->speculation_methods.ngram_ragged_verify_capture) return verify;
  // CaptureMode orders kFull < kPiecewise < kEager: the larger is the less captured.
  return std::max(verify, *setup_.framework->speculation_methods.ngram_ragged_verify_capture);
}

bool DecodeSimulator::NgramRagged() const {
  return setup_.speculation.method == SpeculationMethod::kNgram && !setup_.speculation.ngram_verify_padded;
}

HostModel DecodeSimulator::HostModelOf() const {
  HostModel h = llm::HostModelOf(setup_.driver, *cost_);
  if (setup_.framework) {
    h.framework_op_ps = PicosFromMicros(setup_.framework->eager_op_host_us);
    h.tensor_op_ps = PicosFromMicros(setup_.framework->tensor_op_host_us);
    if (setup_.framework->jitter.kind != Jitter::Kind::kNone) h.jitter = setup_.framework->jitter;
  }
  return h;
}

bool DecodeSimulator::Deterministic() const {
  if (HostModelOf().Random()) return false;
  if (setup_.gpu_variation.kernel_sigma > 0) return false;
  for (double f : setup_.gpu_variation.rank_factor)
    if (f != 1.0) return false;
  return true;
}

StatusOr<std::map<std::string, double>> DecodeSimulator::PassDeviceTimeByClass(PassKind kind, int tokens_per_sequence) {
  ASSIGN_OR_RETURN(ForwardPass pass, BuildPass(kind, tokens_per_sequence));
  std::map<std::string, double> by_class;
  for (const PassStep& step : pass.steps) {
    if (step.kind == PassStep::kKernel) {
      by_class[compute::KernelClassName(step.kernel.kernel_class)] += NanosFromPicos(cost_->KernelTime(step.kernel));
    } else if (setup_.parallel.tp > 1) {
      ASSIGN_OR_RETURN(SimTime transfer, CollectiveTime(step.comm.kind, step.comm.bytes));
      by_class["collective"] += NanosFromPicos(transfer);
    }
  }
  return by_class;
}

StatusOr<const DecodeSimulator::PassSegment*> DecodeSimulator::Segment(PassKind kind, int tokens_per_sequence,
                                                                       int narrow_sequences) {
  const auto key = std::make_tuple(static_cast<int>(kind), tokens_per_sequence, narrow_sequences);
  if (auto it = segments_.find(key); it != segments_.end()) return &it->second;
  ASSIGN_OR_RETURN(ForwardPass pass, BuildPass(kind, tokens_per_sequence, narrow_sequences));
  // A ragged verify is not the framework's uniform verify batch: its own capture (ngram.h).
  const CaptureMode mode = narrow_sequences > 0 ? RaggedVerifyCapture() : CaptureOf(kind);
  const int n = setup_.parallel.tp;
  // The framework's host time around a replay is the whole call (its low end is torch's bare
  // CUDAGraph.replay(), launch included): the step adds what it takes beyond the driver's graph
  // launch, so a replay costs max(graph_replay_host_us, graph_launch).
  const SimTime replay_ps = setup_.framework ? PicosFromMicros(setup_.framework->graph_replay_host_us) : 0;
  const SimTime beyond_launch_ps = replay_ps > 0 ? std::max<SimTime>(0, replay_ps - HostModelOf().graph_launch_ps) : 0;
  PassSegment seg;
  seg.steps.reserve(pass.steps.size() + 8);
  seg.labels.reserve(pass.steps.size() + 8);
  bool segment_open = false;
  auto open_segment = [&] {
    if (segment_open) return;
    TimelineStep g;
    g.kind = TimelineStep::Kind::kGraphLaunch;
    g.host_ps = beyond_launch_ps;
    seg.steps.push_back(std::move(g));
    seg.labels.push_back(std::string(PassKindName(kind)) + " graph launch");
    segment_open = true;
  };
  for (const PassStep& step : pass.steps) {
    TimelineStep t;
    if (step.kind == PassStep::kKernel) {
      const bool attention = step.kernel.kernel_class == compute::KernelClass::kAttention;
      t.kind = TimelineStep::Kind::kKernel;
      t.graph = mode == CaptureMode::kFull || (mode == CaptureMode::kPiecewise && !attention);
      if (t.graph)
        open_segment();
      else
        segment_open = false;  // an eager op ends the captured segment (piecewise)
      t.host_class = step.kernel.kernel_class == compute::KernelClass::kGemm ||
                             step.kernel.kernel_class == compute::KernelClass::kGroupedGemm
                         ? HostOpClass::kLibrary
                         : HostOpClass::kKernel;
      t.device_ps = cost_->KernelTime(step.kernel);
      if (t.device_ps >= kMaxOpDurationPs)
        return InvalidArgumentError(fmt::format(
            "kernel {} takes {:.3g} s on this GPU, past the {:.3g} s specsim simulates per op: a GPU rate or "
            "calibrated efficiency is out of any plausible range, or the shape is",
            step.kernel.name, SecondsFromPicos(t.device_ps), SecondsFromPicos(kMaxOpDurationPs)));
      seg.labels.push_back(step.kernel.name);
    } else {
      if (n == 1) continue;  // no communication on one GPU
      ASSIGN_OR_RETURN(SimTime transfer, CollectiveTime(step.comm.kind, step.comm.bytes));
      t.kind = TimelineStep::Kind::kCollective;
      t.graph = mode != CaptureMode::kEager;
      if (t.graph) open_segment();
      t.host_class = HostOpClass::kCollective;
      t.transfer_ps = transfer;
      seg.labels.push_back(step.comm.name);
    }
    seg.steps.push_back(std::move(t));
  }
  return &segments_.emplace(key, std::move(seg)).first->second;
}

Status DecodeSimulator::AppendPass(const LoopStage& stage, TimelineProgram* program, bool labels) {
  ASSIGN_OR_RETURN(const PassSegment* seg, Segment(stage.pass, stage.tokens_per_sequence, stage.narrow_sequences));
  program->steps.reserve(program->steps.size() + seg->steps.size());
  for (size_t i = 0; i < seg->steps.size(); ++i) {
    program->steps.push_back(seg->steps[i]);
    program->steps.back().phase = stage.phase;
    if (labels) program->steps.back().label = seg->labels[i];
  }
  return OkStatus();
}

namespace {
LoopStage StageOf(LoopStage::Kind kind, int phase, std::string label) {
  LoopStage s;
  s.kind = kind;
  s.phase = phase;
  s.label = std::move(label);
  return s;
}
}  // namespace

LoopStage LoopStage::Pass(PassKind kind, int tokens_per_sequence, int phase, int narrow_sequences) {
  LoopStage s = StageOf(Kind::kPass, phase, "");
  s.pass = kind;
  s.tokens_per_sequence = tokens_per_sequence;
  s.narrow_sequences = narrow_sequences;
  return s;
}

LoopStage LoopStage::Copy(SimTime device_ps, int phase, std::string label) {
  LoopStage s = StageOf(Kind::kCopy, phase, std::move(label));
  s.device_ps = device_ps;
  return s;
}

LoopStage LoopStage::TensorOp(SimTime device_ps, int phase, std::string label) {
  LoopStage s = StageOf(Kind::kTensorOp, phase, std::move(label));
  s.device_ps = device_ps;
  return s;
}

LoopStage LoopStage::HostSync(int phase, std::string label, bool on_event) {
  LoopStage s = StageOf(Kind::kHostSync, phase, std::move(label));
  s.on_event = on_event;
  return s;
}

LoopStage LoopStage::EventRecord(int phase) { return StageOf(Kind::kEventRecord, phase, "event"); }

LoopStage LoopStage::HostWork(double host_us, int phase, std::string label) {
  LoopStage s = StageOf(Kind::kHostWork, phase, std::move(label));
  s.host_us = host_us;
  return s;
}

void DecodeSimulator::AppendWaitsAfter(LoopPass pass, int pass_phase, int host_phase,
                                       const std::vector<HostWait>& waits, double* host_work_us,
                                       std::vector<LoopStage>* stages) {
  // A wait met later on an event of this pass: the event is recorded right after it.
  if (std::any_of(waits.begin(), waits.end(),
                  [&](const HostWait& w) { return w.waits_for == pass && w.after != pass; }))
    stages->push_back(LoopStage::EventRecord(pass_phase));
  for (const HostWait& w : waits) {
    if (w.after != pass) continue;
    stages->push_back(LoopStage::HostSync(host_phase, w.name + " (host sync)", w.waits_for != pass));
    if (*host_work_us > 0) {
      stages->push_back(LoopStage::HostWork(*host_work_us, host_phase, "host work (scheduling, acceptance)"));
      *host_work_us = 0;
    }
  }
}

namespace {
constexpr int kPhaseDraft = 0, kPhaseVerify = 1, kPhaseExtend = 2, kPhaseHost = 3;
const std::vector<std::string>& CyclePhases() {
  static const std::vector<std::string> p = {"draft", "verify", "draft_extend", "host"};
  return p;
}
constexpr int kPhaseDecode = 0, kPhaseStepHost = 1;

// The waits of a loop: the profile's named ones, one unnamed wait after `pass` when it names none,
// none when the loop never waits.
std::vector<HostWait> WaitsOf(bool sync, const std::vector<HostWait>& named, LoopPass pass) {
  if (!sync) return {};
  if (!named.empty()) return named;
  return {HostWait{"read tokens back", pass, pass, ""}};
}
}  // namespace

LoopSpec DecodeSimulator::StepLoop() const {
  const FrameworkProfile* f = setup_.framework ? &*setup_.framework : nullptr;
  LoopSpec loop;
  loop.phases = {"decode", "host"};
  loop.stages.push_back(LoopStage::Pass(PassKind::kTargetDecode, 1, kPhaseDecode));
  double host_us = f ? f->decode_step_host_us : 0.0;
  const std::vector<HostWait> waits =
      WaitsOf(!f || f->sync_each_step, f ? f->step_host_waits : std::vector<HostWait>{}, LoopPass::kDecode);
  AppendWaitsAfter(LoopPass::kDecode, kPhaseDecode, kPhaseStepHost, waits, &host_us, &loop.stages);
  if (host_us > 0)
    loop.stages.push_back(LoopStage::HostWork(host_us, kPhaseStepHost, "host work (scheduling, acceptance)"));
  return loop;
}

SimTime DecodeSimulator::MinimalKernelPs() const {
  compute::Kernel k;
  k.name = "cycle op";
  k.kernel_class = compute::KernelClass::kElementwise;
  k.bytes = 4096;
  return cost_->KernelTime(k);
}

std::vector<HostWait> CycleWaitsOf(const DecodeSetup& setup) {
  if (!setup.framework) return {};
  const bool ngram = setup.speculation.method == SpeculationMethod::kNgram;
  std::vector<HostWait> out;
  for (const HostWait& w : setup.framework->cycle_host_waits)
    if (w.RunBy(ngram)) out.push_back(w);
  return out;
}

std::vector<CycleOps> CycleOpsOf(const DecodeSetup& setup) {
  if (!setup.framework) return {};
  const bool ngram = setup.speculation.method == SpeculationMethod::kNgram;
  const bool vocab_mapped = setup.draft && setup.draft->eagle3.draft_vocab_size > 0 &&
                            setup.draft->eagle3.draft_vocab_size < setup.target.vocab_size;
  std::vector<CycleOps> out;
  for (const CycleOps& c : setup.framework->cycle_ops)
    if (c.RunBy(ngram, vocab_mapped)) out.push_back(c);
  return out;
}

void DecodeSimulator::AppendCycleOps(LoopPass before, int phase, std::vector<LoopStage>* stages,
                                     bool each_draft_step) const {
  const SimTime kernel_ps = MinimalKernelPs();
  for (const CycleOps& c : CycleOpsOf(setup_)) {
    if (c.before != before || c.every_draft_step != each_draft_step) continue;
    for (int i = 0; i < c.Launches(setup_.batch); ++i) stages->push_back(LoopStage::TensorOp(kernel_ps, phase, c.name));
  }
}

LoopSpec DecodeSimulator::CycleLoop(int key) const {
  const SpeculationSettings& spec = setup_.speculation;
  const FrameworkProfile* f = setup_.framework ? &*setup_.framework : nullptr;
  // NGRAM's cycle does not depend on the accepted count; a ragged one's key is its matched sequences.
  if (spec.method == SpeculationMethod::kNgram) return NgramCycleLoop(NgramRagged() ? key : setup_.batch);
  const int accepted = key;
  LoopSpec loop;
  loop.phases = CyclePhases();
  double host_us = f ? f->spec_cycle_host_us : 0.0;
  const std::vector<HostWait> waits = WaitsOf(!f || f->sync_each_cycle, CycleWaitsOf(setup_), LoopPass::kVerify);
  AppendCycleOps(LoopPass::kVerify, kPhaseHost, &loop.stages);
  loop.stages.push_back(LoopStage::Pass(PassKind::kVerify, spec.num_draft_tokens, kPhaseVerify));
  AppendWaitsAfter(LoopPass::kVerify, kPhaseVerify, kPhaseHost, waits, &host_us, &loop.stages);
  // No wait after verify: the host's work still follows verify's issue (it runs ahead of the GPU).
  if (waits.empty() && host_us > 0) {
    loop.stages.push_back(LoopStage::HostWork(host_us, kPhaseHost, "host work (scheduling, acceptance)"));
    host_us = 0;
  }
  AppendCycleOps(LoopPass::kDraftExtend, kPhaseHost, &loop.stages);
  loop.stages.push_back(LoopStage::Pass(PassKind::kDraftExtend, TokensPerCycle(accepted), kPhaseExtend));
  AppendWaitsAfter(LoopPass::kDraftExtend, kPhaseExtend, kPhaseHost, waits, &host_us, &loop.stages);
  AppendCycleOps(LoopPass::kDraft, kPhaseHost, &loop.stages);
  for (int i = 0; i < spec.num_steps - 1; ++i) {
    AppendCycleOps(LoopPass::kDraft, kPhaseHost, &loop.stages, /*each_draft_step=*/true);
    loop.stages.push_back(LoopStage::Pass(PassKind::kDraftStep, spec.topk, kPhaseDraft));
  }
  AppendWaitsAfter(LoopPass::kDraft, kPhaseDraft, kPhaseHost, waits, &host_us, &loop.stages);
  return loop;
}

LoopSpec DecodeSimulator::NgramCycleLoop(int matched) const {
  const SpeculationSettings& spec = setup_.speculation;
  const FrameworkProfile* f = setup_.framework ? &*setup_.framework : nullptr;
  LoopSpec loop;
  loop.phases = CyclePhases();
  // The host matches every sequence before it can issue the verify (the drafts are its input).
  const double match_us = spec.ngram_host_match_us_per_sequence * setup_.batch;
  if (match_us > 0) loop.stages.push_back(LoopStage::HostWork(match_us, kPhaseHost, "n-gram matching"));
  AppendCycleOps(LoopPass::kVerify, kPhaseHost, &loop.stages);
  // matched of the batch verify num_draft_tokens, the others one token; none matched: a batch of
  // one-token sequences, still not the uniform verify batch (narrow_sequences > 0: its capture).
  SPECSIM_CHECK(matched >= 0 && matched <= setup_.batch) << matched;
  const int width = matched > 0 ? spec.num_draft_tokens : 1;
  loop.stages.push_back(LoopStage::Pass(PassKind::kVerify, width, kPhaseVerify, setup_.batch - matched));
  // The n-gram worker's launches after its verify and before its first wait (those listed before
  // the draft extend: its cycle has none).
  AppendCycleOps(LoopPass::kDraftExtend, kPhaseHost, &loop.stages);
  // No draft passes: the waits it meets, whichever pass they name, follow the verify.
  std::vector<HostWait> waits = WaitsOf(!f || f->sync_each_cycle, CycleWaitsOf(setup_), LoopPass::kVerify);
  for (HostWait& w : waits) w.after = w.waits_for = LoopPass::kVerify;
  double host_us = f ? f->spec_cycle_host_us : 0.0;
  AppendWaitsAfter(LoopPass::kVerify, kPhaseVerify, kPhaseHost, waits, &host_us, &loop.stages);
  // Its launches after the waits (those listed before the draft: the acceptance's bookkeeping).
  AppendCycleOps(LoopPass::kDraft, kPhaseHost, &loop.stages);
  if (host_us > 0)
    loop.stages.push_back(LoopStage::HostWork(host_us, kPhaseHost, "host work (scheduling, acceptance)"));
  return loop;
}

StatusOr<TimelineProgram> DecodeSimulator::BuildLoopProgram(const LoopSpec& loop, bool labels) {
  TimelineProgram p;
  p.phases = loop.phases;
  for (const LoopStage& stage : loop.stages) {
    if (stage.phase < 0 || stage.phase >= static_cast<int>(loop.phases.size()))
      return InvalidArgumentError("loop stage phase " + std::to_string(stage.phase) + " out of range (" +
                                  std::to_string(loop.phases.size()) + " phases)");
    if (stage.kind == LoopStage::Kind::kPass) {
      RETURN_IF_ERROR(AppendPass(stage, &p, labels));
      continue;
    }
    TimelineStep t;
    switch (stage.kind) {
      case LoopStage::Kind::kCopy:
        // Issued by the host like a raw kernel (cudaMemcpyAsync), on the same stream.
        t.kind = TimelineStep::Kind::kKernel;
        t.host_class = HostOpClass::kKernel;
        t.device_ps = stage.device_ps;
        break;
      case LoopStage::Kind::kTensorOp:
        t.kind = TimelineStep::Kind::kKernel;
        t.host_class = HostOpClass::kTensorOp;
        t.device_ps = stage.device_ps;
        break;
      case LoopStage::Kind::kHostSync:
        t.kind = TimelineStep::Kind::kHostSync;
        t.on_event = stage.on_event;
        break;
      case LoopStage::Kind::kEventRecord: t.kind = TimelineStep::Kind::kEventRecord; break;
      case LoopStage::Kind::kHostWork:
        t.kind = TimelineStep::Kind::kHostWork;
        t.host_ps = PicosFromMicros(stage.host_us);
        break;
      case LoopStage::Kind::kPass: break;
    }
    t.phase = stage.phase;
    if (labels) t.label = stage.label;
    p.steps.push_back(std::move(t));
  }
  return p;
}

StatusOr<std::vector<SimTime>> DecodeSimulator::RunLoop(const LoopSpec& loop, int iterations) {
  if (iterations < 1) return InvalidArgumentError("loop iterations must be >= 1");
  ASSIGN_OR_RETURN(TimelineProgram p, BuildLoopProgram(loop, /*labels=*/false));
  RETURN_IF_ERROR(ValidateProgram(p, setup_.parallel.tp));
  const TimelineProgram merged = MergedForRuns(std::move(p));
  RankTimelines tl(setup_.parallel.tp, HostModelOf(), setup_.gpu_variation, setup_.pacing_seed);
  tl.Run(merged);  // warm-up: the loop's steady state
  const int runs = Deterministic() ? 1 : iterations;
  std::vector<SimTime> spans;
  spans.reserve(runs);
  for (int i = 0; i < runs; ++i) {
    const RunResult r = tl.Run(merged);
    SimTime slowest = 0;
    for (int rank = 0; rank < tl.num_ranks(); ++rank) slowest = std::max(slowest, r.end_ps[rank] - r.start_ps[rank]);
    spans.push_back(slowest);
  }
  return spans;
}

TimelineProgram DecodeSimulator::MergedForRuns(TimelineProgram p) const {
  // Merging a graph segment's kernels gives the same clocks only when each kernel's time is not
  // drawn on its own (rank_timeline.h).
  if (setup_.gpu_variation.kernel_sigma > 0) return p;
  return MergeGraphKernels(p, HostModelOf().graph_gap_ps);
}

StatusOr<const TimelineProgram*> DecodeSimulator::StepProgram() {
  if (step_program_) return &*step_program_;
  ASSIGN_OR_RETURN(TimelineProgram p, BuildStepProgram(/*labels=*/false));  // runs record no slices
  step_program_ = MergedForRuns(std::move(p));
  return &*step_program_;
}

StatusOr<const TimelineProgram*> DecodeSimulator::CycleProgram(int key) {
  auto it = cycle_programs_.find(key);
  if (it != cycle_programs_.end()) return &it->second;
  ASSIGN_OR_RETURN(TimelineProgram p, BuildCycleProgram(key, /*labels=*/false));  // runs record no slices
  auto [pos, inserted] = cycle_programs_.emplace(key, MergedForRuns(std::move(p)));
  return &pos->second;
}

namespace {

SimTime LatestEnd(const RunResult& r) { return *std::max_element(r.end_ps.begin(), r.end_ps.end()); }

// The mean pass of `runs` runs whose spans summed to `total_ps` and whose phase account is `a`:
// comm is what a profiler on rank 0 shows (wait + transfer), launch the rest.
PassTiming MeanPassTiming(double total_ps, const PhaseAccount& a, int runs) {
  PassTiming t;
  t.total_ps = static_cast<SimTime>(std::llround(total_ps / runs));
  t.compute_ps = static_cast<SimTime>(std::llround(a.compute_ps / runs));
  t.wait_ps = static_cast<SimTime>(std::llround(a.wait_ps / runs));
  t.comm_ps = static_cast<SimTime>(std::llround((a.transfer_ps + a.wait_ps) / runs));
  t.launch_ps = std::max<SimTime>(0, t.total_ps - t.compute_ps - t.comm_ps);
  return t;
}

}  // namespace

StatusOr<PassTiming> DecodeSimulator::SimulatePass(PassKind kind, int tokens_per_sequence,
                                                   std::vector<TimelineSlice>* slices) {
  // One pass followed by the loop's sync, from idle aligned ranks; averaged over runs when the
  // hosts or GPUs vary.
  LoopSpec loop;
  loop.phases = {PassKindName(kind), "host"};
  loop.stages.push_back(LoopStage::Pass(kind, tokens_per_sequence, 0));
  loop.stages.push_back(LoopStage::HostSync(1, "read tokens back (host sync)"));
  ASSIGN_OR_RETURN(TimelineProgram p, BuildLoopProgram(loop, /*labels=*/slices != nullptr));
  int kernels = 0, collectives = 0;
  for (const TimelineStep& s : p.steps) {
    kernels += s.kind == TimelineStep::Kind::kKernel;
    collectives += s.kind == TimelineStep::Kind::kCollective;
  }
  const int runs = Deterministic() ? 1 : 32;
  const TimelineProgram merged = MergedForRuns(p);
  RankTimelines tl(setup_.parallel.tp, HostModelOf(), setup_.gpu_variation, setup_.pacing_seed);
  std::vector<PhaseAccount> acc;
  double total = 0;
  std::vector<RankSlice> rank_slices;
  for (int i = 0; i < runs; ++i) {
    tl.AlignClocks();
    const bool trace = slices != nullptr && i == 0;
    const RunResult r = tl.Run(trace ? p : merged, &acc, trace ? &rank_slices : nullptr);
    total += static_cast<double>(r.span_ps);
  }
  PassTiming t = MeanPassTiming(total, acc[0], runs);
  t.kernels = kernels;
  t.collectives = collectives;
  if (slices != nullptr) {
    for (const RankSlice& rs : rank_slices) {
      if (rs.rank != 0 || rs.host) continue;
      const std::string cat = rs.category == "compute"            ? "compute"
                              : rs.category.rfind("comm", 0) == 0 ? "comm"
                                                                  : "launch";
      slices->push_back({rs.name, cat, rs.start_ps, rs.end_ps});
    }
  }
  return t;
}

StatusOr<PassTiming> DecodeSimulator::Pass(PassKind kind, int tokens_per_sequence) {
  // Verify of N tokens and a plain decode step are the same target pass, unless their capture
  // modes differ.
  const bool same = kind == PassKind::kVerify && CaptureOf(PassKind::kVerify) == CaptureOf(PassKind::kTargetDecode);
  const int kind_key = same ? static_cast<int>(PassKind::kTargetDecode) : static_cast<int>(kind);
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

StatusOr<std::vector<RankSlice>> DecodeSimulator::LoopTimeline(int steps, bool speculative, int accepted) {
  if (steps < 1) return InvalidArgumentError("timeline: steps must be >= 1");
  // Unmerged: the trace shows every kernel of a graph segment.
  TimelineProgram p;
  if (speculative) {
    const SpeculationSettings& spec = setup_.speculation;
    if (spec.method == SpeculationMethod::kNone) return InvalidArgumentError("timeline: no speculation configured");
    if (accepted < 0 || accepted > MaxAcceptedPerCycle(spec.num_steps, spec.num_draft_tokens))
      return InvalidArgumentError("timeline: accepted = " + std::to_string(accepted) + " out of range");
    // A ragged NGRAM cycle's program depends on its matched sequences, not on `accepted`: every
    // sequence matched (the uniform verify batch).
    ASSIGN_OR_RETURN(p, BuildCycleProgram(NgramRagged() ? setup_.batch : accepted, /*labels=*/true));
  } else {
    ASSIGN_OR_RETURN(p, BuildStepProgram(/*labels=*/true));
  }
  RankTimelines tl(setup_.parallel.tp, HostModelOf(), setup_.gpu_variation, setup_.pacing_seed);
  tl.Run(p);  // warm-up: the loop's steady state
  std::vector<RankSlice> slices;
  for (int i = 0; i < steps; ++i) tl.Run(p, nullptr, &slices);
  return slices;
}

namespace {

// Without jitter or GPU variation, while every rank agrees, a cycle is a function of its key (the
// accepted count, or a ragged NGRAM cycle's matched sequences) and of the clocks relative to the
// GPU clock: a cycle seen before is replayed from its memo (clocks shifted, the phase accounts'
// increments added) instead of run. A cycle in which the host never caught up with its GPU (and
// never synced) is also replayed from any state where the GPU leads by at least as much: the host
// then never holds the GPU back, so the GPU advances as before and the host by its own costs.
// Exact: clocks are integers and the accounts integer-valued doubles below 2^53 ps.
class CycleReplayMemo {
 public:
  // Rank 0's clocks before a cycle (every rank's, when they agree).
  struct Clocks {
    SimTime host = 0, gpu = 0, launched = 0;
  };
  static Clocks ClocksOf(const RankTimelines& tl) { return {tl.host_clock(0), tl.gpu_clock(0), tl.launch_clock(0)}; }

  // Replays a cycle of `accepted` from `before` when a memo applies: sets the clocks, adds the
  // increments to `accounts` and returns the cycle's end; nullopt when none applies.
  std::optional<SimTime> Replay(int accepted, const Clocks& before, RankTimelines* tl,
                                std::vector<PhaseAccount>* accounts) const {
    const Entry* m = nullptr;
    SimTime host_base = before.gpu;
    if (auto it = memo_.find(KeyOf(accepted, before)); it != memo_.end()) {
      m = &it->second;
    } else if (auto gb = gpu_bound_memo_.find(accepted);
               gb != gpu_bound_memo_.end() && before.gpu - before.host >= gb->second.lead) {
      m = &gb->second;
      host_base = before.host;
    }
    if (m == nullptr) return std::nullopt;
    tl->SetClocks(host_base + m->host, before.gpu + m->gpu, before.gpu + m->launched);
    accounts->resize(std::max(accounts->size(), m->increments.size()));
    for (size_t i = 0; i < m->increments.size(); ++i) (*accounts)[i] += m->increments[i];
    return before.gpu + m->end;
  }

  // Keeps the cycle of `accepted` just run from `before` (accounts `accounts_before`, now
  // `accounts_after`; `run` its result, ending at `end`) for later replays.
  void Record(int accepted, const Clocks& before, const RankTimelines& tl, const RunResult& run, SimTime end,
              const std::vector<PhaseAccount>& accounts_before, const std::vector<PhaseAccount>& accounts_after) {
    const SimTime g0 = before.gpu, h0 = before.host;
    Entry m{0, tl.host_clock(0) - g0, tl.gpu_clock(0) - g0, tl.launch_clock(0) - g0, end - g0, accounts_after};
    for (size_t i = 0; i < accounts_before.size(); ++i) m.increments[i] -= accounts_before[i];
    // GPU-bound: the launch clock ends at the GPU clock (nothing left for it to delay), the end
    // is the GPU's.
    if (!run.host_synced && g0 > h0 && run.min_gpu_lead_ps > 0 && m.launched == m.gpu && m.end == m.gpu) {
      auto gb = gpu_bound_memo_.find(accepted);
      if (gb == gpu_bound_memo_.end() || g0 - h0 < gb->second.lead) {
        Entry g = m;
        g.lead = g0 - h0;
        g.host = tl.host_clock(0) - h0;
        gpu_bound_memo_[accepted] = std::move(g);
      }
    }
    memo_.emplace(KeyOf(accepted, before), std::move(m));
  }

 private:
  struct Entry {
    SimTime lead = 0;                                  // GPU-bound entries: the GPU's lead over the host before
    SimTime host = 0, gpu = 0, launched = 0, end = 0;  // after: relative to the GPU clock before
                                                       // (GPU-bound entries: host relative to the host clock)
    std::vector<PhaseAccount> increments;
  };
  using Key = std::tuple<int, SimTime, SimTime>;
  static Key KeyOf(int accepted, const Clocks& c) { return {accepted, c.host - c.gpu, c.launched - c.gpu}; }

  std::map<Key, Entry> memo_;
  std::map<int, Entry> gpu_bound_memo_;
};

}  // namespace

namespace {

// The run's clocks after `steps` steps or cycles: below kMaxDurationPs (13 days of simulated
// time), else an error. Checked after every step and cycle: each adds at most its ops'
// durations, every op below kMaxOpDurationPs, so the clocks stay far below the int64 range.
Status CheckRunClock(SimTime end, int steps, const char* what) {
  if (end < kMaxDurationPs) return OkStatus();
  return InvalidArgumentError(
      fmt::format("the run's simulated time passed {:.3g} s after {} {}: its ops are too slow or too many for "
                  "specsim's clock (fewer speculation.cycles, or inputs in plausible ranges)",
                  SecondsFromPicos(kMaxDurationPs), steps, what));
}

}  // namespace

StatusOr<PassTiming> DecodeSimulator::BaselineStep() {
  // Plain decode steps: one warm-up (the loop's steady state), then the mean over steps.
  const int iterations = Deterministic() ? 1 : std::max(1, setup_.speculation.cycles);
  ASSIGN_OR_RETURN(const TimelineProgram* step, StepProgram());
  RankTimelines tl(setup_.parallel.tp, HostModelOf(), setup_.gpu_variation, setup_.pacing_seed);
  SimTime prev = LatestEnd(tl.Run(*step));
  std::vector<PhaseAccount> acc;
  double total = 0;
  RETURN_IF_ERROR(CheckRunClock(prev, 1, "steps"));
  for (int i = 0; i < iterations; ++i) {
    const SimTime end = LatestEnd(tl.Run(*step, &acc));
    RETURN_IF_ERROR(CheckRunClock(end, i + 2, "steps"));
    total += static_cast<double>(end - prev);
    prev = end;
  }
  PassTiming b = MeanPassTiming(total, acc[kPhaseDecode], iterations);
  for (const TimelineStep& s : step->steps) b.collectives += s.kind == TimelineStep::Kind::kCollective;
  ASSIGN_OR_RETURN(PassTiming single, Pass(PassKind::kTargetDecode, 1));
  b.kernels = single.kernels;
  return b;
}

StatusOr<DecodeSimulator::CycleTotals> DecodeSimulator::RunSpeculativeCycles() {
  const SpeculationSettings& spec = setup_.speculation;
  const bool fixed = Deterministic();
  std::mt19937_64 rng(spec.seed);
  RankTimelines tl(setup_.parallel.tp, HostModelOf(), setup_.gpu_variation, setup_.pacing_seed + 1);
  // A cycle's key: its accepted count, or a ragged NGRAM cycle's matched sequences (CycleLoop).
  const bool ngram_ragged = NgramRagged();
  {
    ASSIGN_OR_RETURN(const TimelineProgram* warm,
                     CycleProgram(ngram_ragged ? setup_.batch : spec.acceptance->max_accepted()));
    tl.Run(*warm);
  }
  SimTime prev = 0;
  for (int r = 0; r < tl.num_ranks(); ++r) prev = std::max({prev, tl.host_clock(r), tl.gpu_clock(r)});
  RETURN_IF_ERROR(CheckRunClock(prev, 1, "cycles (the warm-up)"));
  CycleTotals totals;
  CycleReplayMemo replay;
  // A step with a random host cost of its own draws from the ranks' streams even without jitter:
  // its cycles differ and are never replayed.
  std::map<int, bool> draws;
  auto draws_own_host_costs = [&](int key) -> bool {
    auto it = draws.find(key);
    if (it != draws.end()) return it->second;
    bool any = false;
    if (auto cycle = CycleProgram(key); cycle.ok()) {
      for (const TimelineStep& s : (*cycle)->steps) any = any || s.host_exp_mean_us > 0;
    }
    return draws[key] = any;
  };
  for (int c = 0; c < spec.cycles; ++c) {
    int key = 0;
    if (!ngram_ragged) {
      key = spec.acceptance->Sample(rng);
      totals.tokens += TokensPerCycle(key);
    } else {
      // NGRAM without padding (ngram.h): each sequence matches on its own; the verify is ragged.
      const NgramRaggedCycle r =
          SampleNgramRaggedCycle(*spec.proposed_acceptance, spec.ngram_match_probability, setup_.batch, rng);
      key = r.matched;
      totals.tokens += r.tokens_per_sequence;
    }
    const bool agree = fixed && replay_cycles_ && !draws_own_host_costs(key) && tl.RanksAgree();
    const CycleReplayMemo::Clocks before = CycleReplayMemo::ClocksOf(tl);
    std::optional<SimTime> end = agree ? replay.Replay(key, before, &tl, &totals.accounts) : std::nullopt;
    if (!end) {
      ASSIGN_OR_RETURN(const TimelineProgram* cycle, CycleProgram(key));
      const std::vector<PhaseAccount> accounts_before = totals.accounts;
      const RunResult run = tl.Run(*cycle, &totals.accounts);
      end = LatestEnd(run);
      if (agree && tl.RanksAgree()) replay.Record(key, before, tl, run, *end, accounts_before, totals.accounts);
    }
    RETURN_IF_ERROR(CheckRunClock(*end, c + 1, "cycles"));
    totals.total_ps += static_cast<double>(*end - prev);
    prev = *end;
  }
  return totals;
}

void DecodeSimulator::SummariseCycles(CycleTotals totals, DecodeResult* result) const {
  const SpeculationSettings& spec = setup_.speculation;
  const double cycles = spec.cycles;
  std::vector<PhaseAccount>& acc = totals.accounts;
  acc.resize(CyclePhases().size());
  auto ms = [cycles](double ps) { return ps / cycles * 1e-9; };
  result->cycles = spec.cycles;
  result->tau = totals.tokens / cycles;
  result->tau_expected = spec.acceptance->tau();
  result->cycle_ms = totals.total_ps / cycles * 1e-9;
  result->speculative_tokens_per_s = SpeculativeTokensPerSecond(setup_.batch, result->tau, result->cycle_ms);
  result->speedup = result->speculative_tokens_per_s / result->baseline_tokens_per_s;
  CycleBreakdown& b = result->breakdown;
  const PhaseAccount& d = acc[kPhaseDraft];
  const PhaseAccount& v = acc[kPhaseVerify];
  const PhaseAccount& e = acc[kPhaseExtend];
  b.draft_compute_ms = ms(d.compute_ps + e.compute_ps);
  b.draft_comm_ms = ms(d.transfer_ps + d.wait_ps + e.transfer_ps + e.wait_ps);
  b.draft_wait_ms = ms(d.wait_ps + e.wait_ps);
  b.verify_compute_ms = ms(v.compute_ps);
  b.verify_comm_ms = ms(v.transfer_ps + v.wait_ps);
  b.verify_wait_ms = ms(v.wait_ps);
  b.launch_sync_ms =
      std::max(0.0, result->cycle_ms - b.draft_compute_ms - b.draft_comm_ms - b.verify_compute_ms - b.verify_comm_ms);
  b.wait_max_ms = ms(d.wait_max_ps + v.wait_max_ps + e.wait_max_ps);
  b.host_bound_share = result->cycle_ms > 0 ? b.launch_sync_ms / result->cycle_ms : 0;
}

StatusOr<DecodeResult> DecodeSimulator::Run() {
  DecodeResult result;
  ASSIGN_OR_RETURN(result.baseline_step, BaselineStep());
  result.baseline_step_ms = MillisFromPicos(result.baseline_step.total_ps);
  result.baseline_tokens_per_s = setup_.batch / SecondsFromPicos(result.baseline_step.total_ps);
  const SpeculationSettings& spec = setup_.speculation;
  if (spec.method != SpeculationMethod::kNone) {
    result.speculative = true;
    ASSIGN_OR_RETURN(result.verify, Pass(PassKind::kVerify, spec.num_draft_tokens));
    if (spec.method != SpeculationMethod::kNgram) {
      ASSIGN_OR_RETURN(result.draft_step, Pass(PassKind::kDraftStep, spec.topk));
    }
    ASSIGN_OR_RETURN(CycleTotals totals, RunSpeculativeCycles());
    SummariseCycles(std::move(totals), &result);
  }
  result.collectives = collective_infos_;
  return result;
}

}  // namespace specsim::llm
