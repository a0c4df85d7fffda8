// One-shot and two-shot allreduce over peer or host-mapped memory (vLLM/SGLang "custom allreduce").
//
// Every rank runs the same grid; block b of every rank handles the same elements (grid-stride over
// 16-byte vectors of 8 bf16), so a barrier only has to join block b of every rank: block b of rank
// r writes its epoch into slot [r][b] of every rank's signal area and waits until slot [p][b] of its
// own area reaches the epoch for every p. Epochs count barriers per block in device memory, so a
// captured CUDA graph replays correctly. A barrier that waits longer than timeout_ns sets *error and
// gives up (the result is then wrong and the host reports a hang) instead of spinning forever.
//
// Two barrier disciplines (CustomBarrierKind):
//   kSystemFence  every thread runs __threadfence_system() before and after each barrier, and the
//                 kernel first stages its input into its exchange buffer (then barrier, reduce,
//                 barrier; two-shot: a third barrier after the gather). Our first kernel.
//   kFramework    the frameworks' kernel (vLLM csrc/custom_all_reduce.cuh as copied into
//                 flashinfer-ai/flashinfer include/flashinfer/comm/vllm_custom_all_reduce.cuh
//                 @7db7cdd, multi_gpu_barrier and cross_device_reduce_1stage / _2stage): the inputs
//                 already sit in the (registered) exchange buffers, no staging; the start barrier
//                 and one-shot's end barrier are volatile flag stores and polls by threads
//                 0..n-1 only; two-shot's middle barrier is st.release.sys / ld.acquire.sys by the
//                 same threads; two-shot has no end barrier (the next call's start barrier keeps a
//                 rank from overwriting what peers still read).
//
// Rank groups (rank_groups > 1, host-mapped buffers, one GPU): one launch runs ranks [rank, rank +
// rank_groups) as consecutive groups of `blocks` blocks, to measure the host-memory exchange of n
// ranks on a machine with one GPU (the groups share its link and SMs: no second link, no socket hop).
#include <cuda_bf16.h>

#include "validate/global_timer.cuh"
#include "validate/system_scope_flags.cuh"
#include "validate/kernels.h"

namespace specsim::validate {
namespace {

// Which rank and which of its blocks this block is (rank groups: consecutive groups of a.blocks).
struct Who {
  int rank;   // global rank
  int group;  // rank - a.rank: the group within this launch
  int block;  // block index within the rank's grid
};
__device__ __forceinline__ Who WhoAmI(const CustomAllreduceArgs& a) {
  const int g = static_cast<int>(blockIdx.x) / a.blocks;
  return {a.rank + g, g, static_cast<int>(blockIdx.x) % a.blocks};
}

// The word of a signal area that rank `writer`'s block `block` writes: rank-major (ours: a writer's
// blocks side by side, flag_stride words apart) or block-major (vLLM's Signal, peer_counter[..][block]
// [8]: a block's 8 rank slots side by side, 4 blocks per 128-byte line).
__device__ __forceinline__ int64_t FlagSlot(const CustomAllreduceArgs& a, int writer, int block) {
  return a.flag_block_major ? int64_t{block} * kMaxRanks + writer
                            : (int64_t{writer} * kMaxArBlocks + block) * a.flag_stride;
}

// Flag exchange of one barrier: thread t < nranks writes the epoch into rank t's slot [me][block]
// and waits for rank t's epoch in its own slot [t][block]; `ordered`: release / acquire at system
// scope, else volatile.
__device__ __forceinline__ void ExchangeFlags(const CustomAllreduceArgs& a, const Who& w, uint32_t epoch,
                                              bool ordered) {
  const int t = threadIdx.x;
  if (t >= a.nranks) return;
  uint32_t* remote = a.signals[t] + FlagSlot(a, w.rank, w.block);
  uint32_t* mine = a.signals[w.rank] + FlagSlot(a, t, w.block);
  if (ordered) {
    StoreRelease(remote, epoch);
  } else {
    *reinterpret_cast<volatile uint32_t*>(remote) = epoch;
  }
  const uint64_t start = GlobalTimerNs();
  while (static_cast<int32_t>((ordered ? LoadAcquire(mine) : *reinterpret_cast<volatile uint32_t*>(mine)) - epoch) <
         0) {
    if (GlobalTimerNs() - start > a.timeout_ns) {
      atomicExch(a.error, 1);
      break;
    }
  }
}

// kSystemFence's barrier.
__device__ __forceinline__ void FencedBarrier(const CustomAllreduceArgs& a, const Who& w, uint32_t epoch) {
  __threadfence_system();
  __syncthreads();
  ExchangeFlags(a, w, epoch, /*ordered=*/false);
  __syncthreads();
  __threadfence_system();
}

__device__ __forceinline__ void AddVec(float (&acc)[8], uint4 v) {
  const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&v);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    float2 f = __bfloat1622float2(h[i]);
    acc[2 * i] += f.x;
    acc[2 * i + 1] += f.y;
  }
}

__device__ __forceinline__ uint4 PackVec(const float (&acc)[8]) {
  uint4 out;
  __nv_bfloat162* h = reinterpret_cast<__nv_bfloat162*>(&out);
#pragma unroll
  for (int i = 0; i < 4; ++i) h[i] = __floats2bfloat162_rn(acc[2 * i], acc[2 * i + 1]);
  return out;
}

// Phase stamps (a.phase_ns): block blockIdx.x's globaltimer at stamp k, written by thread 0.
__device__ __forceinline__ void Stamp(const CustomAllreduceArgs& a, int k) {
  if (a.phase_ns != nullptr && threadIdx.x == 0) a.phase_ns[blockIdx.x * kCustomPhases + k] = GlobalTimerNs();
}

// Vector i of rank r's input in its exchange buffer: a plain load (as vLLM's kernel reads peer
// buffers), or through the non-coherent read-only path (ld.global.nc) with load_nc. Only inputs:
// they are not written while the kernel runs, which the read-only path requires.
__device__ __forceinline__ uint4 LoadInput(const CustomAllreduceArgs& a, int r, int64_t i) {
  const uint4* p = static_cast<const uint4*>(a.exchange[r]) + i;
  return a.load_nc ? __ldg(p) : *p;
}

// Stages this rank's input into its exchange buffer (same grid-stride mapping as the reads).
__device__ __forceinline__ void Stage(const CustomAllreduceArgs& a, const Who& w, int64_t vecs) {
  const uint4* in = static_cast<const uint4*>(a.input) + w.group * vecs;
  uint4* ex = static_cast<uint4*>(a.exchange[w.rank]);
  for (int64_t i = w.block * int64_t(blockDim.x) + threadIdx.x; i < vecs; i += int64_t(a.blocks) * blockDim.x)
    ex[i] = in[i];
}

__global__ void OneShotKernel(CustomAllreduceArgs a) {
  const Who w = WhoAmI(a);
  const int64_t vecs = a.count / 8;
  const bool framework = a.barrier == CustomBarrierKind::kFramework;
  uint32_t* epoch_slot = a.epochs + w.group * kMaxArBlocks + w.block;
  uint32_t epoch = *epoch_slot;
  Stamp(a, 0);
  if (framework) {
    ExchangeFlags(a, w, ++epoch, /*ordered=*/false);  // start: inputs were written before the launch
    __syncthreads();
  } else {
    Stage(a, w, vecs);
    FencedBarrier(a, w, ++epoch);
  }
  Stamp(a, 1);
  uint4* out = static_cast<uint4*>(a.output) + w.group * vecs;
  for (int64_t i = w.block * int64_t(blockDim.x) + threadIdx.x; i < vecs; i += int64_t(a.blocks) * blockDim.x) {
    uint4 v[kMaxRanks];
#pragma unroll
    for (int r = 0; r < kMaxRanks; ++r)
      if (r < a.nranks) v[r] = LoadInput(a, r, i);  // all loads in flight
    float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
#pragma unroll
    for (int r = 0; r < kMaxRanks; ++r)
      if (r < a.nranks) AddVec(acc, v[r]);
    out[i] = PackVec(acc);
  }
  Stamp(a, 2);
  if (framework) {
    __syncthreads();
    ExchangeFlags(a, w, ++epoch, /*ordered=*/false);  // end: no rank leaves while a peer still reads
  } else {
    FencedBarrier(a, w, ++epoch);
  }
  Stamp(a, 3);
  if (threadIdx.x == 0) *epoch_slot = epoch;
}

__global__ void TwoShotKernel(CustomAllreduceArgs a) {
  const Who w = WhoAmI(a);
  const int64_t vecs = a.count / 8;
  const bool framework = a.barrier == CustomBarrierKind::kFramework;
  uint32_t* epoch_slot = a.epochs + w.group * kMaxArBlocks + w.block;
  uint32_t epoch = *epoch_slot;
  Stamp(a, 0);
  if (framework) {
    ExchangeFlags(a, w, ++epoch, /*ordered=*/false);
    __syncthreads();
  } else {
    Stage(a, w, vecs);
    FencedBarrier(a, w, ++epoch);
  }
  Stamp(a, 1);
  // Reduce-scatter: slice `rank` in vector units [lo, hi), summed from every rank's staged input,
  // written into the second half of this rank's exchange buffer.
  const int64_t lo = vecs * w.rank / a.nranks, hi = vecs * (w.rank + 1) / a.nranks;
  const int64_t red_vecs = (a.reduced_offset > 0 ? a.reduced_offset : a.count) / 8;
  uint4* red = static_cast<uint4*>(a.exchange[w.rank]) + red_vecs;
  for (int64_t i = lo + w.block * int64_t(blockDim.x) + threadIdx.x; i < hi; i += int64_t(a.blocks) * blockDim.x) {
    uint4 v[kMaxRanks];
#pragma unroll
    for (int r = 0; r < kMaxRanks; ++r)
      if (r < a.nranks) v[r] = LoadInput(a, r, i);
    float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
#pragma unroll
    for (int r = 0; r < kMaxRanks; ++r)
      if (r < a.nranks) AddVec(acc, v[r]);
    red[i] = PackVec(acc);
  }
  if (framework) {
    __syncthreads();
    ExchangeFlags(a, w, ++epoch, /*ordered=*/true);  // the reduced slices written in this kernel
    __syncthreads();
  } else {
    FencedBarrier(a, w, ++epoch);
  }
  Stamp(a, 2);
  // All-gather: every rank's reduced slice, read with the same mapping that rank used to write it.
  uint4* out = static_cast<uint4*>(a.output) + w.group * vecs;
  for (int p = 0; p < a.nranks; ++p) {
    const int64_t plo = vecs * p / a.nranks, phi = vecs * (p + 1) / a.nranks;
    const uint4* src = static_cast<const uint4*>(a.exchange[p]) + red_vecs;
    for (int64_t i = plo + w.block * int64_t(blockDim.x) + threadIdx.x; i < phi; i += int64_t(a.blocks) * blockDim.x)
      out[i] = src[i];
  }
  if (!framework) FencedBarrier(a, w, ++epoch);
  Stamp(a, 3);
  if (threadIdx.x == 0) *epoch_slot = epoch;
}

cudaError_t CheckArgs(const CustomAllreduceArgs& a) {
  if (a.nranks < 1 || a.nranks > kMaxRanks || a.blocks < 1 || a.blocks > kMaxArBlocks || a.count % 8 != 0 ||
      a.threads < a.nranks || a.threads > 1024 || a.rank_groups < 1 || a.rank + a.rank_groups > a.nranks ||
      a.reduced_offset % 8 != 0 || (a.reduced_offset > 0 && a.reduced_offset < a.count) || a.flag_stride < 1 ||
      a.flag_stride > kMaxFlagStride || (a.flag_block_major && a.flag_stride != 1))
    return cudaErrorInvalidValue;
  return cudaSuccess;
}

}  // namespace

cudaError_t LaunchOneShotAllreduce(const CustomAllreduceArgs& a, cudaStream_t stream) {
  if (cudaError_t e = CheckArgs(a); e != cudaSuccess) return e;
  OneShotKernel<<<a.blocks * a.rank_groups, a.threads, 0, stream>>>(a);
  return cudaGetLastError();
}

cudaError_t LaunchTwoShotAllreduce(const CustomAllreduceArgs& a, cudaStream_t stream) {
  if (cudaError_t e = CheckArgs(a); e != cudaSuccess) return e;
  TwoShotKernel<<<a.blocks * a.rank_groups, a.threads, 0, stream>>>(a);
  return cudaGetLastError();
}

int CustomAllreduceMaxCoresidentBlocks(bool two_shot, int threads, int device) {
  int per_sm = 0, sms = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, two_shot ? TwoShotKernel : OneShotKernel, threads, 0) !=
          cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess)
    return 0;
  return per_sm * sms;
}

}  // namespace specsim::validate
