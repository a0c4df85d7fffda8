#include "validate/timing.h"

#include <algorithm>
#include <mutex>
#include <thread>

#include "validate/cuda_util.h"
#include "validate/kernels.h"
#include "validate/pacing.h"
#include "validate/rank_threads.h"

namespace specsim::validate {

double GateUsFor(int iters) { return 200.0 + 100.0 * iters; }

namespace {

// One timed run; with gate_us > 0 the iterations go in batches of `batch`, each behind its own gate
// of gate_us. *gate_held is false when some gate ended before the host had enqueued its batch.
StatusOr<std::vector<double>> TimeOpOnce(int device, cudaStream_t stream, const TimingConfig& cfg, double gate_us,
                                         int batch, const std::function<Status()>& op, const std::string& what,
                                         bool* gate_held) {
  CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
  for (int i = 0; i < cfg.warmup; ++i) RETURN_IF_ERROR(op().Annotate(what + " (warm-up)"));
  RETURN_IF_ERROR(SyncStream(device, stream, cfg.timeout_s, what + " warm-up"));
  std::vector<Event> start, stop;
  start.reserve(cfg.iters);
  stop.reserve(cfg.iters);
  for (int i = 0; i < cfg.iters; ++i) {
    ASSIGN_OR_RETURN(Event a, Event::Create(device));
    ASSIGN_OR_RETURN(Event b, Event::Create(device));
    start.push_back(std::move(a));
    stop.push_back(std::move(b));
  }
  *gate_held = true;
  int gates = 0;
  for (int first = 0; first < cfg.iters; first += batch) {
    const int last = std::min(cfg.iters, first + batch);
    if (gate_us > 0) {
      CUDA_RETURN_IF_ERROR(LaunchSpinKernel(static_cast<uint64_t>(gate_us * 1000.0), stream));
      ++gates;
    }
    for (int i = first; i < last; ++i) {
      CUDA_RETURN_IF_ERROR(cudaEventRecord(start[i].get(), stream));
      RETURN_IF_ERROR(op().Annotate(what));
      CUDA_RETURN_IF_ERROR(cudaEventRecord(stop[i].get(), stream));
    }
    if (gate_us > 0) {
      const cudaError_t q = cudaEventQuery(start[first].get());
      if (q == cudaSuccess)
        *gate_held = false;
      else if (q != cudaErrorNotReady)
        CUDA_RETURN_IF_ERROR(q);
    }
  }
  const double gate_s = gate_us * 1e-6 * gates;
  if (cfg.iters > 0) RETURN_IF_ERROR(WaitEvent(stop.back().get(), cfg.timeout_s + gate_s + 0.001 * cfg.iters, what));
  std::vector<double> us(cfg.iters);
  for (int i = 0; i < cfg.iters; ++i) {
    float ms = 0;
    CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&ms, start[i].get(), stop[i].get()));
    us[i] = ms * 1000.0;
  }
  return us;
}

}  // namespace

StatusOr<std::vector<double>> TimeOp(int device, cudaStream_t stream, const TimingConfig& cfg,
                                     const std::function<Status()>& op, const std::string& what) {
  return TimeOpOnAll(
      {device}, {stream}, cfg, [&](int) { return op(); }, what, nullptr);
}

Status ParallelFor(int n, const std::vector<int>& cpus, const std::function<Status(int)>& fn) {
  if (!cpus.empty() && static_cast<int>(cpus.size()) < n)
    return Internal("ParallelFor: " + std::to_string(n) + " ranks, CPUs for " + std::to_string(cpus.size()));
  auto run = [&](int r) -> Status {
    ScopedCpuPin pin(cpus.empty() ? -1 : cpus[r]);
    RETURN_IF_ERROR(pin.status());
    return fn(r);
  };
  if (n == 1) return run(0).Annotate("rank 0");
  std::vector<Status> results(n);
  std::vector<std::thread> threads;
  threads.reserve(n);
  for (int r = 0; r < n; ++r) threads.emplace_back([&, r] { results[r] = run(r); });
  for (auto& t : threads) t.join();
  for (int r = 0; r < n; ++r)
    if (!results[r].ok()) return results[r].Annotate("rank " + std::to_string(r));
  return Status::Ok();
}

Status ParallelForWithBarrier(int n, TimedBarrier* barrier, const std::vector<int>& cpus,
                              const std::function<Status(int)>& fn) {
  std::mutex mu;
  Status first;
  Status st = ParallelFor(n, cpus, [&](int r) -> Status {
    Status s = fn(r);
    if (!s.ok()) {
      std::lock_guard<std::mutex> lock(mu);
      if (first.ok()) first = s.Annotate("rank " + std::to_string(r));
      barrier->Break();
    }
    return s;
  });
  if (st.ok()) return st;
  return first.ok() ? st : first;
}

StatusOr<std::vector<double>> TimeOpOnAll(const std::vector<int>& devices, const std::vector<cudaStream_t>& streams,
                                          const TimingConfig& cfg, const std::function<Status(int)>& op,
                                          const std::string& what, bool* gate_held, int* gate_batch) {
  const int n = static_cast<int>(devices.size());
  // Attempts: every iteration behind one gate; then batches of 16 and of 4 behind gates of their own
  // (the host may block in a launch once enough of them are queued: NCCL's kernels do on the 2x H200,
  // not ours); then, when the caller accepts it, ungated.
  const std::vector<int> batches = {std::max(cfg.iters, 1), 16, 4};
  if (gate_held != nullptr) *gate_held = cfg.gate_us > 0;
  for (size_t attempt = 0;; ++attempt) {
    const bool gate = cfg.gate_us > 0 && attempt < batches.size();
    const int batch = gate ? std::min(batches[attempt], std::max(cfg.iters, 1)) : std::max(cfg.iters, 1);
    const double gate_us = gate ? GateUsFor(batch) * std::max(1.0, cfg.gate_us / GateUsFor(cfg.iters)) : 0.0;
    std::vector<std::vector<double>> per(n);
    std::vector<char> held(n, 1);
    RETURN_IF_ERROR(ParallelFor(n, cfg.rank_cpus, [&](int r) -> Status {
      bool h = true;
      auto t = TimeOpOnce(
          devices[r], streams[r], cfg, gate_us, batch, [&] { return op(r); }, what, &h);
      if (!t.ok()) return t.status();
      per[r] = std::move(t).value();
      held[r] = h;
      return Status::Ok();
    }));
    const bool all_held = std::all_of(held.begin(), held.end(), [](char h) { return h != 0; });
    if (gate && !all_held) {
      if (attempt + 1 < batches.size()) continue;
      if (gate_held == nullptr)
        return Internal(what + ": the host could not enqueue even " + std::to_string(batch) +
                        " iterations within a gate of " + std::to_string(static_cast<int64_t>(gate_us)) +
                        " us; the GPU time cannot be separated from the launch rate");
      // The caller takes the ungated time and says so.
      *gate_held = false;
      continue;
    }
    if (gate_batch != nullptr) *gate_batch = gate ? batch : 0;
    std::vector<double> out(cfg.iters, 0.0);
    for (int r = 0; r < n; ++r)
      for (int i = 0; i < cfg.iters; ++i) out[i] = std::max(out[i], per[r][i]);
    return out;
  }
}

}  // namespace specsim::validate
