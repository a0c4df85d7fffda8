#include "validate/timing.h"

#include <algorithm>
#include <mutex>
#include <thread>

#include "validate/cuda_util.h"
#include "validate/pacing.h"

namespace specsim::validate {

StatusOr<std::vector<double>> TimeOp(int device, cudaStream_t stream, const TimingConfig& cfg,
                                     const std::function<Status()>& op, const std::string& what) {
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
  for (int i = 0; i < cfg.iters; ++i) {
    CUDA_RETURN_IF_ERROR(cudaEventRecord(start[i].get(), stream));
    RETURN_IF_ERROR(op().Annotate(what));
    CUDA_RETURN_IF_ERROR(cudaEventRecord(stop[i].get(), stream));
  }
  if (cfg.iters > 0) RETURN_IF_ERROR(WaitEvent(stop.back().get(), cfg.timeout_s + 0.001 * cfg.iters, what));
  std::vector<double> us(cfg.iters);
  for (int i = 0; i < cfg.iters; ++i) {
    float ms = 0;
    CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&ms, start[i].get(), stop[i].get()));
    us[i] = ms * 1000.0;
  }
  return us;
}

Status ParallelFor(int n, const std::function<Status(int)>& fn) {
  if (n == 1) return fn(0).Annotate("rank 0");
  std::vector<Status> results(n);
  std::vector<std::thread> threads;
  threads.reserve(n);
  for (int r = 0; r < n; ++r) threads.emplace_back([&, r] { results[r] = fn(r); });
  for (auto& t : threads) t.join();
  for (int r = 0; r < n; ++r)
    if (!results[r].ok()) return results[r].Annotate("rank " + std::to_string(r));
  return Status::Ok();
}

Status ParallelForWithBarrier(int n, TimedBarrier* barrier, const std::function<Status(int)>& fn) {
  std::mutex mu;
  Status first;
  Status st = ParallelFor(n, [&](int r) -> Status {
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
                                          const std::string& what) {
  const int n = static_cast<int>(devices.size());
  std::vector<std::vector<double>> per(n);
  RETURN_IF_ERROR(ParallelFor(n, [&](int r) -> Status {
    auto t = TimeOp(devices[r], streams[r], cfg, [&] { return op(r); }, what);
    if (!t.ok()) return t.status();
    per[r] = std::move(t).value();
    return Status::Ok();
  }));
  std::vector<double> out(cfg.iters, 0.0);
  for (int r = 0; r < n; ++r)
    for (int i = 0; i < cfg.iters; ++i) out[i] = std::max(out[i], per[r][i]);
  return out;
}

}  // namespace specsim::validate
