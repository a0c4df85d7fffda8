// Transfer kernels (zero-copy / peer reads and writes), data fill and check kernels.
#include <cuda_bf16.h>

#include "validate/kernels.h"

namespace specsim::validate {
namespace {

__global__ void ReadKernel(const uint4* __restrict__ src, int64_t vecs, const unsigned char* tail, int tail_bytes,
                           uint64_t* sink) {
  uint64_t acc = 0;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  // Four independent loads in flight per thread.
  for (; i + 3 * stride < vecs; i += 4 * stride) {
    uint4 a = src[i], b = src[i + stride], c = src[i + 2 * stride], d = src[i + 3 * stride];
    acc ^= (uint64_t(a.x) << 32 | a.y) ^ (uint64_t(b.z) << 32 | b.w) ^ c.x ^ d.w;
  }
  for (; i < vecs; i += stride) {
    uint4 a = src[i];
    acc ^= (uint64_t(a.x) << 32 | a.y) ^ a.z ^ a.w;
  }
  if (blockIdx.x == 0 && threadIdx.x < tail_bytes) acc ^= tail[threadIdx.x];
  if (acc == 0x9e3779b97f4a7c15ULL) sink[blockIdx.x] = acc;  // practically never; keeps the loads
}

__global__ void WriteKernel(uint4* __restrict__ dst, int64_t vecs, unsigned char* tail, int tail_bytes,
                            uint32_t value) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  uint4 v = make_uint4(value, value, value, value);
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < vecs; i += stride) dst[i] = v;
  if (blockIdx.x == 0 && threadIdx.x < tail_bytes) tail[threadIdx.x] = static_cast<unsigned char>(value);
}

__global__ void EmptyKernel() {}

__device__ __forceinline__ float PatternValue(int64_t i, int rank) {
  return static_cast<float>(static_cast<int>((i * 13 + rank * 7) % 17) - 8);
}

__global__ void FillPatternKernel(__nv_bfloat16* p, int64_t count, int64_t offset, int rank) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x)
    p[i] = __float2bfloat16(PatternValue(offset + i, rank));
}

__device__ __forceinline__ uint64_t Mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

__global__ void FillRandomKernel(__nv_bfloat16* p, int64_t count, uint64_t seed, float scale) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x) {
    uint64_t h = Mix(seed * 0x9e3779b97f4a7c15ULL + static_cast<uint64_t>(i));
    float u = static_cast<float>(h >> 40) * (1.0f / 16777216.0f);  // [0, 1)
    p[i] = __float2bfloat16((2.0f * u - 1.0f) * scale);
  }
}

__global__ void CheckCollectiveKernel(const __nv_bfloat16* out, int64_t count, int op, int nranks, int rank,
                                      unsigned long long* mismatches) {
  unsigned long long bad = 0;
  for (int64_t j = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; j < count; j += int64_t(gridDim.x) * blockDim.x) {
    float expect = 0;
    if (op == 1) {
      for (int r = 0; r < nranks; ++r) expect += PatternValue(j, r);
    } else if (op == 2) {
      int64_t per = count / nranks;
      expect = PatternValue(j % per, static_cast<int>(j / per));
    } else {
      for (int r = 0; r < nranks; ++r) expect += PatternValue(static_cast<int64_t>(rank) * count + j, r);
    }
    if (__bfloat162float(out[j]) != expect) ++bad;
  }
  if (bad) atomicAdd(mismatches, bad);
}

__global__ void MaxAbsDiffKernel(const __nv_bfloat16* a, const __nv_bfloat16* b, int64_t count,
                                 unsigned int* max_bits) {
  float m = 0;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x) {
    float d = fabsf(__bfloat162float(a[i]) - __bfloat162float(b[i]));
    if (!(d <= 3.0e38f)) d = 3.0e38f;  // NaN/inf count as huge
    m = fmaxf(m, d);
  }
  if (m > 0) atomicMax(max_bits, __float_as_uint(m));  // non-negative floats order like their bits
}

int GridFor(int64_t count, int threads) {
  int64_t g = (count + threads - 1) / threads;
  if (g < 1) g = 1;
  if (g > 4096) g = 4096;
  return static_cast<int>(g);
}

}  // namespace

cudaError_t LaunchReadKernel(const void* src, int64_t bytes, uint64_t* sink, int blocks, int threads,
                             cudaStream_t stream) {
  int64_t vecs = bytes / 16;
  const unsigned char* tail = static_cast<const unsigned char*>(src) + vecs * 16;
  ReadKernel<<<blocks, threads, 0, stream>>>(static_cast<const uint4*>(src), vecs, tail, static_cast<int>(bytes % 16),
                                             sink);
  return cudaGetLastError();
}

cudaError_t LaunchWriteKernel(void* dst, int64_t bytes, uint32_t value, int blocks, int threads, cudaStream_t stream) {
  int64_t vecs = bytes / 16;
  unsigned char* tail = static_cast<unsigned char*>(dst) + vecs * 16;
  WriteKernel<<<blocks, threads, 0, stream>>>(static_cast<uint4*>(dst), vecs, tail, static_cast<int>(bytes % 16),
                                              value);
  return cudaGetLastError();
}

cudaError_t LaunchEmptyKernel(int blocks, int threads, cudaStream_t stream) {
  EmptyKernel<<<blocks, threads, 0, stream>>>();
  return cudaGetLastError();
}

cudaError_t LaunchFillPattern(void* p, int64_t count, int64_t offset, int rank, cudaStream_t stream) {
  FillPatternKernel<<<GridFor(count, 256), 256, 0, stream>>>(static_cast<__nv_bfloat16*>(p), count, offset, rank);
  return cudaGetLastError();
}

cudaError_t LaunchFillRandom(void* p, int64_t count, uint64_t seed, float scale, cudaStream_t stream) {
  FillRandomKernel<<<GridFor(count, 256), 256, 0, stream>>>(static_cast<__nv_bfloat16*>(p), count, seed, scale);
  return cudaGetLastError();
}

cudaError_t LaunchCheckCollective(const void* out, int64_t count, int op, int nranks, int rank,
                                  unsigned long long* mismatches, cudaStream_t stream) {
  CheckCollectiveKernel<<<GridFor(count, 256), 256, 0, stream>>>(static_cast<const __nv_bfloat16*>(out), count, op,
                                                                 nranks, rank, mismatches);
  return cudaGetLastError();
}

cudaError_t LaunchMaxAbsDiff(const void* a, const void* b, int64_t count, unsigned int* max_err_bits,
                             cudaStream_t stream) {
  MaxAbsDiffKernel<<<GridFor(count, 256), 256, 0, stream>>>(static_cast<const __nv_bfloat16*>(a),
                                                            static_cast<const __nv_bfloat16*>(b), count, max_err_bits);
  return cudaGetLastError();
}

}  // namespace specsim::validate
