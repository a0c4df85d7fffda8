#include "sim/llm/rank_timeline.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "sim/core/check.h"

namespace specsim::llm {
namespace {

bool FiniteNonNegative(double v) { return std::isfinite(v) && v >= 0; }

}  // namespace

Status ValidateJitter(const Jitter& j, const std::string& where) {
  switch (j.kind) {
    case Jitter::Kind::kNone: return OkStatus();
    case Jitter::Kind::kExponential:
      if (!FiniteNonNegative(j.mean_us)) return InvalidArgumentError(where + ".mean_us must be finite and >= 0");
      return OkStatus();
    case Jitter::Kind::kLognormal:
      if (!FiniteNonNegative(j.mean_us)) return InvalidArgumentError(where + ".mean_us must be finite and >= 0");
      if (!FiniteNonNegative(j.sigma) || j.sigma > 5)
        return InvalidArgumentError(where + ".sigma must be in [0, 5] (sigma of ln x)");
      return OkStatus();
    case Jitter::Kind::kEmpirical:
      if (j.quantiles_us.size() < 2)
        return InvalidArgumentError(where + ".quantiles_us needs at least 2 values (the minimum and the maximum)");
      for (size_t i = 0; i < j.quantiles_us.size(); ++i) {
        if (!FiniteNonNegative(j.quantiles_us[i]))
          return InvalidArgumentError(where + ".quantiles_us[" + std::to_string(i) + "] must be finite and >= 0");
        if (i > 0 && j.quantiles_us[i] < j.quantiles_us[i - 1])
          return InvalidArgumentError(where + ".quantiles_us must not decrease (index " + std::to_string(i) + ")");
      }
      return OkStatus();
  }
  return InvalidArgumentError(where + ": unknown jitter kind");
}

Status ValidateProgram(const TimelineProgram& program, int num_ranks) {
  bool launched = false, recorded = false;
  for (size_t i = 0; i < program.steps.size(); ++i) {
    const TimelineStep& s = program.steps[i];
    const std::string where = "step " + std::to_string(i) + (s.label.empty() ? "" : " (" + s.label + ")");
    if (s.rank < -1 || s.rank >= num_ranks)
      return InvalidArgumentError(where + ": rank " + std::to_string(s.rank) + " out of range");
    if (s.phase < 0 || s.phase >= static_cast<int>(std::max<size_t>(1, program.phases.size())))
      return InvalidArgumentError(where + ": phase " + std::to_string(s.phase) + " out of range");
    if (s.device_ps < 0 || s.fixed_gpu_ps < 0 || s.transfer_ps < 0 || s.host_ps < 0 || !(s.host_exp_mean_us >= 0))
      return InvalidArgumentError(where + ": negative time");
    if (s.kind == TimelineStep::Kind::kGraphLaunch) launched = true;
    if ((s.kind == TimelineStep::Kind::kKernel || s.kind == TimelineStep::Kind::kCollective) && s.graph && !launched)
      return InvalidArgumentError(where + ": a graph op before any graph launch");
    if (s.kind == TimelineStep::Kind::kCollective && s.rank != -1 && num_ranks > 1)
      return InvalidArgumentError(where + ": a collective must involve every rank");
    if (s.kind == TimelineStep::Kind::kEventRecord) {
      if (s.rank != -1) return InvalidArgumentError(where + ": an event is recorded on every rank");
      recorded = true;
    }
    if (s.kind == TimelineStep::Kind::kHostSync && s.on_event && !recorded)
      return InvalidArgumentError(where + ": a sync on an event with no event recorded before it");
  }
  return OkStatus();
}

RankTimelines::RankTimelines(int num_ranks, HostModel host, GpuVariation gpu, uint64_t seed)
    : host_model_(std::move(host)),
      gpu_(std::move(gpu)),
      pass_quantiles_(host_model_.call_correlation),
      pass_rng_(seed * 1000003ULL + 104729ULL) {
  SPECSIM_CHECK_GE(num_ranks, 1);
  SPECSIM_CHECK(ValidateJitter(host_model_.jitter, "jitter").ok());
  for (const std::vector<double>& q : host_model_.call_quantiles_us) {
    Jitter as_empirical;
    as_empirical.kind = Jitter::Kind::kEmpirical;
    as_empirical.quantiles_us = q;
    SPECSIM_CHECK(q.empty() || ValidateJitter(as_empirical, "call_quantiles_us").ok());
  }
  SPECSIM_CHECK(gpu_.rank_factor.empty() || static_cast<int>(gpu_.rank_factor.size()) == num_ranks);
  host_.assign(num_ranks, 0);
  gpu_.rank_factor.resize(num_ranks, 1.0);
  gpu_.rank_factor.shrink_to_fit();
  gpu_.kernel_sigma = std::max(0.0, gpu_.kernel_sigma);
  gpu_clock_init(num_ranks);
  uniform_gpu_ = gpu_.kernel_sigma == 0;
  for (double f : gpu_.rank_factor) uniform_gpu_ = uniform_gpu_ && f == gpu_.rank_factor[0];
  for (int r = 0; r < num_ranks; ++r) rng_.emplace_back(seed * 1000003ULL + static_cast<uint64_t>(r) * 7919ULL + 1);
}

void RankTimelines::gpu_clock_init(int num_ranks) {
  gpu_.rank_factor.resize(num_ranks, 1.0);
  gpu_clk_.assign(num_ranks, 0);
  launched_.assign(num_ranks, 0);
}

SimTime RankTimelines::Draw(int rank) {
  const Jitter& j = host_model_.jitter;
  std::mt19937_64& g = rng_[rank];
  double us = 0;
  switch (j.kind) {
    case Jitter::Kind::kNone: return 0;
    case Jitter::Kind::kExponential: {
      if (j.mean_us <= 0) return 0;
      std::exponential_distribution<double> e(1.0 / j.mean_us);
      us = e(g);
      break;
    }
    case Jitter::Kind::kLognormal: {
      if (j.mean_us <= 0) return 0;
      // mean = exp(mu + sigma^2 / 2)
      const double mu = std::log(j.mean_us) - 0.5 * j.sigma * j.sigma;
      std::lognormal_distribution<double> l(mu, j.sigma);
      us = l(g);
      break;
    }
    case Jitter::Kind::kEmpirical: return DrawQuantiles(j.quantiles_us, rank);
  }
  // A draw is one op's host time: at most the longest op a run simulates (time.h), which keeps a
  // long tail's rare draw from carrying the clocks past their range.
  return std::min(PicosFromMicros(us), kMaxOpDurationPs);
}

namespace {

// The value at quantile u in [0, 1) of equally spaced quantiles (linear between them), capped like
// RankTimelines::Draw.
SimTime QuantileAt(const std::vector<double>& quantiles_us, double u) {
  const double x = u * static_cast<double>(quantiles_us.size() - 1);
  const size_t i = std::min(static_cast<size_t>(x), quantiles_us.size() - 2);
  const double f = x - static_cast<double>(i);
  const double us = quantiles_us[i] + f * (quantiles_us[i + 1] - quantiles_us[i]);
  return std::min(PicosFromMicros(us), kMaxOpDurationPs);
}

}  // namespace

SimTime RankTimelines::DrawQuantiles(const std::vector<double>& quantiles_us, int rank) {
  return QuantileAt(quantiles_us, std::uniform_real_distribution<double>(0.0, 1.0)(rng_[rank]));
}

SimTime RankTimelines::DrawCall(const std::vector<double>& quantiles_us, int rank) {
  return QuantileAt(quantiles_us, pass_quantiles_.Next(rng_[rank]));
}

bool HostModel::Random() const {
  if (jitter.kind != Jitter::Kind::kNone) return true;
  for (const std::vector<double>& q : call_quantiles_us)
    if (!q.empty()) return true;
  return false;
}

double RankTimelines::KernelFactor(int rank) {
  double f = gpu_.rank_factor[rank];
  if (gpu_.kernel_sigma > 0) {
    std::lognormal_distribution<double> l(0.0, gpu_.kernel_sigma);
    f *= l(rng_[rank]);
  }
  return f;
}

bool RankTimelines::RanksAgree() const {
  for (int r = 1; r < num_ranks(); ++r)
    if (host_[r] != host_[0] || gpu_clk_[r] != gpu_clk_[0] || launched_[r] != launched_[0]) return false;
  return true;
}

void RankTimelines::SetClocks(SimTime host, SimTime gpu, SimTime launched) {
  std::fill(host_.begin(), host_.end(), host);
  std::fill(gpu_clk_.begin(), gpu_clk_.end(), gpu);
  std::fill(launched_.begin(), launched_.end(), launched);
}

void RankTimelines::AlignClocks() {
  SimTime t = 0;
  for (int r = 0; r < num_ranks(); ++r) t = std::max({t, host_[r], gpu_clk_[r]});
  for (int r = 0; r < num_ranks(); ++r) host_[r] = gpu_clk_[r] = launched_[r] = t;
}

// One Run of a program: the recurrences of each step kind (rank_timeline.h) over the ranks'
// clocks, with two shortcuts that leave the results unchanged.
//
// Lockstep: while every rank's GPU clock is the same value g (and no rank's launch clock is later
// than g), GPU time does not vary per rank (equal rank factors, no per-kernel draws) and no slices
// are recorded, a graph kernel or graph collective moves every rank alike: it is evaluated once on
// g, O(1) instead of O(ranks). gpu_clk_ is stale while lockstep holds and is written back (Unlock)
// before any step that treats ranks differently. The arithmetic is the per-rank recurrence's, so
// results are identical (RankTimeline tests and the golden outputs).
//
// Symmetry: without host jitter, lockstep ranks whose host clocks and launches are equal too stay
// equal through every step of every rank (no draw tells them apart): only rank 0 is evaluated
// (`live_` = 1) and the others take its clocks (Split) before a step of one rank or a per-rank
// random host cost.
//
// Speed (every simulated cycle runs this loop on every rank): the functions called for every step
// or every rank are forced inline into Run's loop and the clocks are read through raw pointers, so
// the run's state stays in registers across the host-jitter draws. On the jittered 8-rank setup of
// bench/decode_bench.cc, Run then executes 3% fewer instructions than the single function it was
// split from, and 16% more without the forced inlining (callgrind).
class RankTimelines::ProgramRun {
 public:
  ProgramRun(RankTimelines* timelines, std::vector<PhaseAccount>* accounts, std::vector<RankSlice>* slices)
      : tl_(*timelines),
        host_(timelines->host_.data()),
        gpu_clk_(timelines->gpu_clk_.data()),
        launched_(timelines->launched_.data()),
        ready_(timelines->ready_.data()),
        event_(timelines->event_.data()),
        hm_(timelines->host_model_),
        accounts_(accounts),
        slices_(slices),
        n_(timelines->num_ranks()),
        may_lock_(slices == nullptr && timelines->uniform_gpu_),
        may_mirror_(may_lock_ && !hm_.Random()),
        live_(n_) {
    out_.start_ps = timelines->host_;
    out_.wait_ps.assign(n_, 0.0);
    TryLock();
    TryMirror();
  }

  // One step on every rank it involves, charged to its phase.
  [[gnu::always_inline]] void Step(const TimelineStep& s) {
    if (live_ != n_ && (s.rank >= 0 || (s.kind == TimelineStep::Kind::kHostWork && s.host_exp_mean_us > 0))) Split();
    PhaseAccount* acc = accounts_ != nullptr ? &(*accounts_)[s.phase] : nullptr;
    const SimTime before0 = std::max(host_[0], Gpu(0));
    switch (s.kind) {
      case TimelineStep::Kind::kKernel: RunKernel(s, acc); break;
      case TimelineStep::Kind::kCollective: RunCollective(s, acc); break;
      case TimelineStep::Kind::kGraphLaunch: LaunchGraph(s); break;
      case TimelineStep::Kind::kHostSync: SyncHost(s); break;
      case TimelineStep::Kind::kHostWork: DoHostWork(s); break;
      case TimelineStep::Kind::kEventRecord: RecordEvent(); break;
    }
    if (acc != nullptr) acc->span_ps += static_cast<double>(std::max(host_[0], Gpu(0)) - before0);
  }

  // Writes every rank's clocks back and returns the run's result.
  RunResult Finish() {
    DropMirroredLock();
    Split();
    Unlock();
    for (int r = 0; r < n_; ++r) launched_[r] = std::max(launched_[r], gpu_clk_[r]);
    out_.end_ps.resize(n_);
    out_.gpu_end_ps = tl_.gpu_clk_;
    SimTime first = out_.start_ps.empty() ? 0 : out_.start_ps[0], last = 0;
    for (int r = 0; r < n_; ++r) {
      out_.end_ps[r] = std::max(host_[r], gpu_clk_[r]);
      first = std::min(first, out_.start_ps[r]);
      last = std::max(last, out_.end_ps[r]);
    }
    out_.span_ps = last - first;
    return std::move(out_);
  }

 private:
  void TryLock() {
    if (!may_lock_) return;
    for (int r = 0; r < n_; ++r)
      if (gpu_clk_[r] != gpu_clk_[0] || launched_[r] > gpu_clk_[0]) return;
    lock_ = true;
    g_ = gpu_clk_[0];
  }
  void Unlock() {
    if (!lock_) return;
    std::fill(gpu_clk_, gpu_clk_ + n_, g_);
    lock_ = false;
  }
  // Mirrored ranks leave lockstep: rank 0 stands for all; its GPU clock is g (Split copies it).
  void DropMirroredLock() {
    if (!lock_ || live_ == n_) return;
    gpu_clk_[0] = g_;
    lock_ = false;
  }
  void TryMirror() {
    if (!may_mirror_ || !lock_) return;
    for (int r = 1; r < n_; ++r)
      if (host_[r] != host_[0] || launched_[r] != launched_[0]) return;
    live_ = 1;
  }
  void Split() {
    if (live_ == n_) return;
    std::fill(host_ + 1, host_ + n_, host_[0]);
    std::fill(launched_ + 1, launched_ + n_, launched_[0]);
    if (!lock_) std::fill(gpu_clk_ + 1, gpu_clk_ + n_, gpu_clk_[0]);
    std::fill(event_ + 1, event_ + n_, event_[0]);  // events recorded while mirrored: rank 0's
    live_ = n_;
  }
  SimTime Gpu(int r) const { return lock_ ? g_ : gpu_clk_[r]; }

  // Slices are named only when asked for: building names per op and rank was most of the run.
  void AddSlice(int r, bool host, const std::string& label, const char* fallback, const char* suffix, const char* cat,
                SimTime a, SimTime b) {
    if (b <= a) return;
    slices_->push_back({r, host, (label.empty() ? std::string(fallback) : label) + suffix, cat, a, b});
  }
  // The ranks a step runs on, [first, last): every rank, or its one rank.
  std::pair<int, int> RankRange(const TimelineStep& s) const {
    return s.rank >= 0 ? std::pair{s.rank, s.rank + 1} : std::pair{0, live_};
  }
  // A framework's per-op cost is the whole call (Python, dispatcher and the launch, as the PyTorch
  // probe timed it): it replaces the driver's issue of a kernel or library call; a collective adds
  // NCCL's own host work to it. Without a framework's cost (none, or C++ launching) the issue alone.
  SimTime IssueCost(const TimelineStep& s) const {
    const SimTime framework = s.host_class == HostOpClass::kTensorOp ? hm_.tensor_op_ps : hm_.framework_op_ps;
    switch (s.host_class) {
      case HostOpClass::kKernel:
      case HostOpClass::kTensorOp: return s.host_ps + (framework > 0 ? framework : hm_.kernel_issue_ps);
      case HostOpClass::kLibrary: return s.host_ps + (framework > 0 ? framework : hm_.library_issue_ps);
      case HostOpClass::kCollective: return s.host_ps + framework + hm_.collective_issue_ps;
    }
    return s.host_ps + framework;
  }
  // The op's ready time on rank r: after its host issue (eager) or its segment's launch (graph).
  [[gnu::always_inline]] SimTime MakeReady(const TimelineStep& s, int r) {
    if (s.graph) return std::max(Gpu(r), launched_[r]) + hm_.graph_gap_ps;
    const SimTime h0 = host_[r];
    const HostOpClass draws = s.host_class == HostOpClass::kTensorOp ? HostOpClass::kKernel : s.host_class;
    const std::vector<double>& call = hm_.call_quantiles_us[static_cast<size_t>(draws)];
    host_[r] += (call.empty() ? IssueCost(s) : s.host_ps + tl_.DrawCall(call, r)) + tl_.Draw(r);
    if (slices_ != nullptr) AddSlice(r, true, s.label, "issue", "", "launch", h0, host_[r]);
    out_.min_gpu_lead_ps = std::min(out_.min_gpu_lead_ps, Gpu(r) - host_[r]);
    return std::max(Gpu(r) + hm_.eager_gap_ps, host_[r]);
  }
  static SimTime ScaledDeviceTime(const TimelineStep& s, double factor) {
    return factor == 1.0 ? s.device_ps : static_cast<SimTime>(std::llround(static_cast<double>(s.device_ps) * factor));
  }

  [[gnu::always_inline]] void RunKernel(const TimelineStep& s, PhaseAccount* acc) {
    if (lock_ && s.graph && s.rank == -1) {
      // Every rank: ready = max(g, L_r) + gap = g + gap (lockstep has g >= L_r).
      const SimTime d = ScaledDeviceTime(s, tl_.KernelFactor(0));
      g_ = g_ + hm_.graph_gap_ps + d + s.fixed_gpu_ps;
      if (acc != nullptr) acc->compute_ps += static_cast<double>(d);
      return;
    }
    DropMirroredLock();
    Unlock();
    for (auto [r, end] = RankRange(s); r < end; ++r) {
      const SimTime start = MakeReady(s, r);
      const SimTime d = ScaledDeviceTime(s, tl_.KernelFactor(r));
      gpu_clk_[r] = start + d + s.fixed_gpu_ps;
      if (slices_ != nullptr) AddSlice(r, false, s.label, "kernel", "", "compute", start, gpu_clk_[r]);
      if (r == 0 && acc != nullptr) acc->compute_ps += static_cast<double>(d);  // merged gaps are launch time
    }
  }

  [[gnu::always_inline]] void RunCollective(const TimelineStep& s, PhaseAccount* acc) {
    if (lock_ && s.graph) {
      // Every rank ready at g + gap: no wait, the transfer at once.
      g_ = g_ + hm_.graph_gap_ps + s.transfer_ps;
      if (acc != nullptr) {
        acc->transfer_ps += static_cast<double>(s.transfer_ps);
        ++acc->collectives;
      }
      return;
    }
    const SimTime last = ArriveAtRendezvous(s);
    const SimTime end = last + s.transfer_ps;
    WaitForLastRankThenTransfer(s, last, end, acc);
    LeaveRendezvousTogether(end);
  }
  // Every live rank's arrival (ready_); returns the last one's, when the transfer starts.
  SimTime ArriveAtRendezvous(const TimelineStep& s) {
    SimTime last = 0;
    for (int r = 0; r < live_; ++r) {
      ready_[r] = MakeReady(s, r);
      last = std::max(last, ready_[r]);
    }
    return last;
  }
  // Each rank's wait from its arrival to `last`, then the transfer to `end`: waits, slices, account.
  void WaitForLastRankThenTransfer(const TimelineStep& s, SimTime last, SimTime end, PhaseAccount* acc) {
    double wait_max = 0;
    for (int r = 0; r < live_; ++r) {
      const double wait = static_cast<double>(last - ready_[r]);
      out_.wait_ps[r] += wait;
      wait_max = std::max(wait_max, wait);
      if (slices_ != nullptr) {
        AddSlice(r, false, s.label, "collective", " (wait)", "comm-wait", ready_[r], last);
        AddSlice(r, false, s.label, "collective", "", "comm-transfer", last, end);
      }
    }
    if (acc != nullptr) {
      acc->transfer_ps += static_cast<double>(s.transfer_ps);
      acc->wait_ps += static_cast<double>(last - ready_[0]);
      acc->wait_max_ps += wait_max;
      ++acc->collectives;
    }
  }
  // Every rank leaves at `end`, later than its launch (end >= ready_r >= L_r): lockstep.
  void LeaveRendezvousTogether(SimTime end) {
    lock_ = false;
    std::fill(gpu_clk_, gpu_clk_ + live_, end);
    if (live_ == n_) {
      TryLock();
      TryMirror();
    } else {
      lock_ = may_lock_;  // mirrored ranks stay so
      g_ = end;
    }
  }

  void LaunchGraph(const TimelineStep& s) {
    for (auto [r, end] = RankRange(s); r < end; ++r) {
      const SimTime h0 = host_[r];
      host_[r] += hm_.graph_launch_ps + s.host_ps + tl_.Draw(r);
      launched_[r] = host_[r];
      if (slices_ != nullptr) AddSlice(r, true, s.label, "graph launch", "", "launch", h0, host_[r]);
      out_.min_gpu_lead_ps = std::min(out_.min_gpu_lead_ps, Gpu(r) - host_[r]);
      if (lock_ && launched_[r] > g_) Unlock();  // this rank's next graph op waits for its launch
    }
  }

  void SyncHost(const TimelineStep& s) {
    out_.host_synced = true;
    for (auto [r, end] = RankRange(s); r < end; ++r) {
      const SimTime h0 = host_[r];
      host_[r] = std::max(host_[r], s.on_event ? event_[r] : Gpu(r)) + hm_.sync_wake_ps + s.host_ps;
      if (slices_ != nullptr) AddSlice(r, true, s.label, "sync", "", "sync", h0, host_[r]);
    }
  }

  void RecordEvent() {
    for (int r = 0; r < live_; ++r) event_[r] = Gpu(r);
  }

  [[gnu::always_inline]] void DoHostWork(const TimelineStep& s) {
    for (auto [r, end] = RankRange(s); r < end; ++r) {
      const SimTime h0 = host_[r];
      host_[r] += s.host_ps + tl_.Draw(r);
      if (s.host_exp_mean_us > 0) {
        std::exponential_distribution<double> e(1.0 / s.host_exp_mean_us);
        host_[r] += std::min(PicosFromMicros(e(tl_.rng_[r])), kMaxOpDurationPs);
      }
      if (slices_ != nullptr) AddSlice(r, true, s.label, "host work", "", "host", h0, host_[r]);
      out_.min_gpu_lead_ps = std::min(out_.min_gpu_lead_ps, Gpu(r) - host_[r]);
    }
  }

  RankTimelines& tl_;
  // The ranks' clocks and arrivals (RankTimelines' arrays, not resized during a run).
  SimTime* const host_;
  SimTime* const gpu_clk_;
  SimTime* const launched_;
  SimTime* const ready_;
  SimTime* const event_;
  const HostModel& hm_;
  std::vector<PhaseAccount>* const accounts_;  // null: no accounting
  std::vector<RankSlice>* const slices_;       // null: no slices
  const int n_;
  const bool may_lock_;    // no slices and uniform GPUs: lockstep allowed
  const bool may_mirror_;  // and no host jitter: symmetry allowed
  bool lock_ = false;      // lockstep holds: every rank's GPU clock is g_
  SimTime g_ = 0;
  int live_;  // ranks evaluated: n_, or 1 while mirrored
  RunResult out_;
};

RunResult RankTimelines::Run(const TimelineProgram& program, std::vector<PhaseAccount>* accounts,
                             std::vector<RankSlice>* slices) {
  if (accounts != nullptr) accounts->resize(std::max<size_t>(1, program.phases.size()));
  ready_.resize(num_ranks());
  event_.assign(num_ranks(), 0);
  pass_quantiles_.NewPass(pass_rng_);
  ProgramRun run(this, accounts, slices);
  for (const TimelineStep& s : program.steps) run.Step(s);
  return run.Finish();
}

TimelineProgram MergeGraphKernels(const TimelineProgram& program, SimTime graph_gap_ps) {
  // Consecutive graph kernels of every rank: the second starts at the first's end plus the gap
  // whatever the first waited for, so one step of their summed device time (scaled alike by the
  // rank's factor) plus the gaps between them (not scaled) gives the same clocks.
  TimelineProgram out;
  out.phases = program.phases;
  out.steps.reserve(program.steps.size());
  for (const TimelineStep& s : program.steps) {
    const bool mergeable = s.kind == TimelineStep::Kind::kKernel && s.graph && s.rank == -1;
    if (mergeable && !out.steps.empty()) {
      TimelineStep& prev = out.steps.back();
      if (prev.kind == TimelineStep::Kind::kKernel && prev.graph && prev.rank == -1 && prev.phase == s.phase) {
        prev.device_ps += s.device_ps;
        prev.fixed_gpu_ps += s.fixed_gpu_ps + graph_gap_ps;
        if (!prev.label.empty()) prev.label = "graph kernels";
        continue;
      }
    }
    out.steps.push_back(s);
  }
  return out;
}

}  // namespace specsim::llm
