// What every suite gets: the options, the GPUs used, the trace being filled, and helpers to add
// items and notes. Suites run one after another on the main thread (they start their own per-GPU
// threads), so the trace needs no lock.
#pragma once

#include <cuda_runtime.h>

#include <memory>
#include <string>
#include <vector>

#include "specsim/trace.pb.h"
#include "validate/args.h"
#include "validate/cuda_util.h"
#include "validate/stats.h"
#include "validate/timing.h"

namespace specsim::validate {

struct Context {
  Options opt;
  std::vector<int> devices;           // CUDA ordinals; rank r drives devices[r]
  std::vector<cudaDeviceProp> props;  // per rank
  trace::Trace* trace = nullptr;
  // --rank-threads pinned: rank r's threads run on CPU rank_cpus[r] (rank_threads.h); empty: free.
  std::vector<int> rank_cpus;

  int n() const { return static_cast<int>(devices.size()); }
  int tp() const { return opt.tp > 0 ? opt.tp : n(); }
  trace::PathClass Path(int src_rank, int dst_rank) const;
  bool CanAccessPeer(int src_rank, int dst_rank) const;
  void Note(trace::Note::Severity sev, const std::string& suite, const std::string& msg) const;
  trace::Item* NewItem(trace::Suite suite, trace::Kind kind, const std::string& name) const;
  // The CPUs of the listed ranks, in their order (empty when the rank threads are free).
  std::vector<int> CpusOfRanks(const std::vector<int>& ranks) const;
  // Per-suite defaults, overridden by --iters / --warmup, shrunk by --quick.
  TimingConfig Timing(int warmup, int iters) const;
  // The NCCL variables in force ("" when unset).
  static std::string Env(const char* name);
};

void FillStats(const std::vector<double>& us, const TimingConfig& cfg, const char* timer, trace::Item* item);
// Records the NCCL variables in force (NCCL_ALGO, NCCL_PROTO, channel limits, P2P and SHM switches)
// on a collective's parameters.
void FillNcclEnv(trace::CollectiveParams* p);

Status RunPcieSuite(Context& ctx);
Status RunCollectivesSuite(Context& ctx);
Status RunKernelsSuite(Context& ctx);
Status RunDecodeSuite(Context& ctx);
Status RunPacingSuite(Context& ctx);
Status RunHostStagedSuite(Context& ctx);

}  // namespace specsim::validate
