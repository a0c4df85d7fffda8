// Runs body(i) for i in [0, n) on a pool of threads that take the next index as they finish
// (dynamic scheduling: points of very different cost balance). `threads` <= 0 means one per
// hardware thread; never more threads than items. Results must be written per index by `body`
// (e.g. into a vector sized n), so the output does not depend on the thread count.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace specsim {

// The thread count ParallelFor uses for n items.
inline int ParallelThreads(size_t n, int threads) {
  const int wanted = threads > 0 ? threads : static_cast<int>(std::thread::hardware_concurrency());
  return static_cast<int>(std::max<size_t>(1, std::min<size_t>(static_cast<size_t>(std::max(wanted, 1)), n)));
}

template <typename Body>
void ParallelFor(size_t n, int threads, Body body) {
  if (n == 0) return;
  const int pool_size = ParallelThreads(n, threads);
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < n; i = next++) body(i);
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < pool_size; ++t) pool.emplace_back(worker);
  worker();  // the calling thread is one of them
  for (std::thread& t : pool) t.join();
}

}  // namespace specsim
