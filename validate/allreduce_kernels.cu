// One-shot and two-shot allreduce over peer or host-mapped memory (vLLM/SGLang "custom allreduce").
//
// Every rank runs the same grid; block b of every rank handles the same elements (grid-stride over
// 16-byte vectors of 8 bf16), so a barrier only has to join block b of every rank: block b of rank
// r writes its epoch into slot [r][b] of every rank's signal area and waits until slot [p][b] of its
// own area reaches the epoch for every p. Epochs count barriers per block in device memory, so a
// captured CUDA graph replays correctly. A barrier that waits longer than timeout_ns sets *error and
// gives up (the result is then wrong and the host reports a hang) instead of spinning forever.
#include <cuda_bf16.h>

#include "validate/global_timer.cuh"
#include "validate/kernels.h"

namespace specsim::validate {
namespace {

__device__ __forceinline__ void Barrier(const CustomAllreduceArgs& a, uint32_t epoch) {
  __threadfence_system();
  __syncthreads();
  const int t = threadIdx.x;
  if (t < a.nranks) {
    volatile uint32_t* remote = a.signals[t] + a.rank * kMaxArBlocks + blockIdx.x;
    *remote = epoch;
    volatile uint32_t* mine = a.signals[a.rank] + t * kMaxArBlocks + blockIdx.x;
    uint64_t start = GlobalTimerNs();
    while (static_cast<int32_t>(*mine - epoch) < 0) {
      if (GlobalTimerNs() - start > a.timeout_ns) {
        atomicExch(a.error, 1);
        break;
      }
    }
  }
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

// Stages this rank's input into its exchange buffer (same grid-stride mapping as the reads).
__device__ __forceinline__ void Stage(const CustomAllreduceArgs& a, int64_t vecs) {
  const uint4* in = static_cast<const uint4*>(a.input);
  uint4* ex = static_cast<uint4*>(a.exchange[a.rank]);
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < vecs; i += int64_t(gridDim.x) * blockDim.x)
    ex[i] = in[i];
}

__global__ void OneShotKernel(CustomAllreduceArgs a) {
  const int64_t vecs = a.count / 8;
  uint32_t epoch = a.epochs[blockIdx.x];
  Stage(a, vecs);
  Barrier(a, ++epoch);
  uint4* out = static_cast<uint4*>(a.output);
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < vecs; i += int64_t(gridDim.x) * blockDim.x) {
    uint4 v[kMaxRanks];
#pragma unroll
    for (int r = 0; r < kMaxRanks; ++r)
      if (r < a.nranks) v[r] = static_cast<const uint4*>(a.exchange[r])[i];  // all loads in flight
    float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
#pragma unroll
    for (int r = 0; r < kMaxRanks; ++r)
      if (r < a.nranks) AddVec(acc, v[r]);
    out[i] = PackVec(acc);
  }
  Barrier(a, ++epoch);
  if (threadIdx.x == 0) a.epochs[blockIdx.x] = epoch;
}

__global__ void TwoShotKernel(CustomAllreduceArgs a) {
  const int64_t vecs = a.count / 8;
  uint32_t epoch = a.epochs[blockIdx.x];
  Stage(a, vecs);
  Barrier(a, ++epoch);
  // Reduce-scatter: slice `rank` in vector units [lo, hi), summed from every rank's staged input,
  // written into the second half of this rank's exchange buffer.
  const int64_t lo = vecs * a.rank / a.nranks, hi = vecs * (a.rank + 1) / a.nranks;
  uint4* red = static_cast<uint4*>(a.exchange[a.rank]) + vecs;
  for (int64_t i = lo + blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < hi; i += int64_t(gridDim.x) * blockDim.x) {
    uint4 v[kMaxRanks];
#pragma unroll
    for (int r = 0; r < kMaxRanks; ++r)
      if (r < a.nranks) v[r] = static_cast<const uint4*>(a.exchange[r])[i];
    float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
#pragma unroll
    for (int r = 0; r < kMaxRanks; ++r)
      if (r < a.nranks) AddVec(acc, v[r]);
    red[i] = PackVec(acc);
  }
  Barrier(a, ++epoch);
  // All-gather: every rank's reduced slice, read with the same mapping that rank used to write it.
  uint4* out = static_cast<uint4*>(a.output);
  for (int p = 0; p < a.nranks; ++p) {
    const int64_t plo = vecs * p / a.nranks, phi = vecs * (p + 1) / a.nranks;
    const uint4* src = static_cast<const uint4*>(a.exchange[p]) + vecs;
    for (int64_t i = plo + blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < phi;
         i += int64_t(gridDim.x) * blockDim.x)
      out[i] = src[i];
  }
  Barrier(a, ++epoch);
  if (threadIdx.x == 0) a.epochs[blockIdx.x] = epoch;
}

cudaError_t CheckArgs(const CustomAllreduceArgs& a) {
  if (a.nranks < 1 || a.nranks > kMaxRanks || a.blocks < 1 || a.blocks > kMaxArBlocks || a.count % 8 != 0 ||
      a.threads < a.nranks || a.threads > 1024)
    return cudaErrorInvalidValue;
  return cudaSuccess;
}

}  // namespace

cudaError_t LaunchOneShotAllreduce(const CustomAllreduceArgs& a, cudaStream_t stream) {
  if (cudaError_t e = CheckArgs(a); e != cudaSuccess) return e;
  OneShotKernel<<<a.blocks, a.threads, 0, stream>>>(a);
  return cudaGetLastError();
}

cudaError_t LaunchTwoShotAllreduce(const CustomAllreduceArgs& a, cudaStream_t stream) {
  if (cudaError_t e = CheckArgs(a); e != cudaSuccess) return e;
  TwoShotKernel<<<a.blocks, a.threads, 0, stream>>>(a);
  return cudaGetLastError();
}

}  // namespace specsim::validate
