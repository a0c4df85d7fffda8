// Host-staged kernels: flag round trips through mapped host memory, and small dependent reads of it
// with a bounded number in flight (beside blocks writing it). Launchers and contracts in kernels.h.
#include "validate/global_timer.cuh"
#include "validate/kernels.h"
#include "validate/system_scope_flags.cuh"

namespace specsim::validate {
namespace {

// Waits until *flag == want. Values other than want - 1 (the last round's) and want are counted as
// mismatches; gives up after timeout_ns (counted in status[1]). Returns false on timeout.
__device__ __forceinline__ bool WaitFlag(const uint32_t* flag, uint32_t want, uint64_t timeout_ns,
                                         unsigned int* status) {
  const uint64_t start = GlobalTimerNs();
  bool reported = false;
  for (;;) {
    const uint32_t v = LoadAcquire(flag);
    if (v == want) return true;
    if (v != want - 1 && !reported) {
      atomicAdd(&status[0], 1u);
      reported = true;
    }
    if (GlobalTimerNs() - start > timeout_ns) {
      atomicAdd(&status[1], 1u);
      return false;
    }
  }
}

__device__ void Initiate(const HostFlagArgs& a) {
  const uint64_t g0 = GlobalTimerNs();
  const long long c0 = clock64();
  for (int i = 0; i < a.rounds; ++i) {
    const uint32_t v = a.base + static_cast<uint32_t>(i) + 1;
    const long long t0 = clock64();
    StoreRelease(a.ping, v);
    const bool ok = WaitFlag(a.pong, v, a.timeout_ns, a.status);
    a.round_cycles[i] = static_cast<uint64_t>(clock64() - t0);
    if (!ok) break;
  }
  const long long c1 = clock64();
  a.span[0] = GlobalTimerNs() - g0;
  a.span[1] = static_cast<uint64_t>(c1 - c0);
}

__device__ void Respond(const HostFlagArgs& a) {
  for (int i = 0; i < a.rounds; ++i) {
    const uint32_t v = a.base + static_cast<uint32_t>(i) + 1;
    if (!WaitFlag(a.ping, v, a.timeout_ns, a.status)) break;
    StoreRelease(a.pong, v);
  }
}

// One thread per block: block 0 initiates (kInitiator, kBoth) or responds (kResponder); block 1
// responds (kBoth).
__global__ void HostFlagKernel(HostFlagArgs a) {
  if (threadIdx.x != 0) return;
  if (a.role == HostFlagRole::kResponder || (a.role == HostFlagRole::kBoth && blockIdx.x == 1))
    Respond(a);
  else
    Initiate(a);
}

// ---- small reads ----

constexpr int kChunkBytes = 256;

__device__ __forceinline__ uint32_t ChunkHash(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

template <int W>
struct Vec;
template <>
struct Vec<4> {
  using T = unsigned int;
  static __device__ __forceinline__ T Load(const void* p) { return __ldcv(static_cast<const unsigned int*>(p)); }
  static __device__ __forceinline__ bool AllEqual(T v, uint32_t x) { return v == x; }
  static __device__ __forceinline__ uint32_t First(T v) { return v; }
  static __device__ __forceinline__ void Store(void* p, uint32_t x) { __stwt(static_cast<unsigned int*>(p), x); }
};
template <>
struct Vec<16> {
  using T = uint4;
  static __device__ __forceinline__ T Load(const void* p) { return __ldcv(static_cast<const uint4*>(p)); }
  static __device__ __forceinline__ bool AllEqual(T v, uint32_t x) {
    return v.x == x && v.y == x && v.z == x && v.w == x;
  }
  static __device__ __forceinline__ uint32_t First(T v) { return v.x; }
  static __device__ __forceinline__ void Store(void* p, uint32_t x) {
    __stwt(static_cast<uint4*>(p), make_uint4(x, x, x, x));
  }
};

// Reading blocks: lanes [0, bytes_per_read / W) each load W bytes of the chain's current chunk (the
// same chunk for every lane), K chains per thread; every 32-bit word of chunk c holds
// HostChaseNext(c), so the next chunk comes from the data (at most K loads per thread outstanding)
// and every word is checked. Writing blocks: the same lanes store K chunks per step of their own
// region with values HostWriterValue(writer, chunk) until every reader has finished.
template <int W, int K>
__global__ void HostSmallReadsKernel(HostSmallReadsArgs a) {
  using V = Vec<W>;
  const int lanes = a.bytes_per_read / W;
  const int lane = threadIdx.x;
  const bool active = lane < lanes;
  const bool reader = static_cast<int>(blockIdx.x) < a.reader_blocks;
  const uint32_t mask = static_cast<uint32_t>(a.chunks - 1);
  char* base = static_cast<char*>(a.buffer);
  __syncthreads();
  const uint64_t g0 = GlobalTimerNs();
  if (reader) {
    uint32_t c[K];
#pragma unroll
    for (int j = 0; j < K; ++j) c[j] = ChunkHash(blockIdx.x * 64u + static_cast<uint32_t>(j) + a.seed) & mask;
    unsigned int bad = 0;
    if (active) {
      for (int s = 0; s < a.steps; ++s) {
        typename V::T v[K];
#pragma unroll
        for (int j = 0; j < K; ++j) v[j] = V::Load(base + static_cast<int64_t>(c[j]) * kChunkBytes + lane * W);
#pragma unroll
        for (int j = 0; j < K; ++j) {
          const uint32_t want = HostChaseNext(c[j], static_cast<uint32_t>(a.chunks));
          bad += V::AllEqual(v[j], want) ? 0u : 1u;
          c[j] = V::First(v[j]) & mask;
        }
      }
    }
    if (bad) atomicAdd(&a.status[0], bad);
    __syncthreads();
    if (threadIdx.x == 0) {
      a.block_span[2 * blockIdx.x] = g0;
      a.block_span[2 * blockIdx.x + 1] = GlobalTimerNs();
      a.block_steps[blockIdx.x] = static_cast<uint64_t>(a.steps);
      __threadfence();
      atomicAdd(a.readers_done, 1u);
    }
    return;
  }
  // A writer.
  const int writer = static_cast<int>(blockIdx.x) - a.reader_blocks;
  char* region = base + (a.chunks + static_cast<int64_t>(writer) * a.write_chunks_per_block) * kChunkBytes;
  __shared__ int stop;
  if (threadIdx.x == 0) stop = 0;
  __syncthreads();
  uint64_t steps = 0;
  while (true) {
    if (active) {
#pragma unroll
      for (int j = 0; j < K; ++j) {
        const int chunk = static_cast<int>((steps * K + j) % static_cast<uint64_t>(a.write_chunks_per_block));
        V::Store(region + static_cast<int64_t>(chunk) * kChunkBytes + lane * W,
                 HostWriterValue(static_cast<uint32_t>(writer), static_cast<uint32_t>(chunk)));
      }
    }
    ++steps;
    if (threadIdx.x == 0) {
      const unsigned int done = *static_cast<volatile unsigned int*>(a.readers_done);
      if (done >= static_cast<unsigned int>(a.reader_blocks)) stop = 1;
      if (GlobalTimerNs() - g0 > a.timeout_ns) {
        atomicAdd(&a.status[1], 1u);
        stop = 1;
      }
    }
    __syncthreads();
    if (stop) break;
    __syncthreads();
  }
  __threadfence_system();
  if (threadIdx.x == 0) {
    a.block_span[2 * blockIdx.x] = g0;
    a.block_span[2 * blockIdx.x + 1] = GlobalTimerNs();
    a.block_steps[blockIdx.x] = steps;
  }
}

template <int W>
cudaError_t LaunchSmallReadsOfWidth(const HostSmallReadsArgs& a, cudaStream_t stream) {
  switch (a.reads_in_flight) {
    case 1: HostSmallReadsKernel<W, 1><<<a.blocks, a.threads, 0, stream>>>(a); break;
    case 2: HostSmallReadsKernel<W, 2><<<a.blocks, a.threads, 0, stream>>>(a); break;
    case 4: HostSmallReadsKernel<W, 4><<<a.blocks, a.threads, 0, stream>>>(a); break;
    case 8: HostSmallReadsKernel<W, 8><<<a.blocks, a.threads, 0, stream>>>(a); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchHostFlagKernel(const HostFlagArgs& a, cudaStream_t stream) {
  if (a.ping == nullptr || a.pong == nullptr || a.rounds < 1 || a.status == nullptr ||
      (a.role != HostFlagRole::kResponder && (a.round_cycles == nullptr || a.span == nullptr)))
    return cudaErrorInvalidValue;
  HostFlagKernel<<<a.role == HostFlagRole::kBoth ? 2 : 1, 32, 0, stream>>>(a);
  return cudaGetLastError();
}

cudaError_t LaunchHostSmallReads(const HostSmallReadsArgs& a, cudaStream_t stream) {
  const bool pow2 = a.chunks > 0 && (a.chunks & (a.chunks - 1)) == 0 && a.chunks <= (int64_t{1} << 31);
  const bool writers = a.blocks > a.reader_blocks;
  if (a.buffer == nullptr || !pow2 || a.blocks < 1 || a.reader_blocks < 1 || a.reader_blocks > a.blocks ||
      a.steps < 1 || a.threads < 16 || a.threads > 1024 || a.block_span == nullptr || a.block_steps == nullptr ||
      a.status == nullptr || a.readers_done == nullptr || (writers && a.write_chunks_per_block < 1))
    return cudaErrorInvalidValue;
  switch (a.bytes_per_read) {
    case 4: return LaunchSmallReadsOfWidth<4>(a, stream);
    case 16:
    case 32:
    case 64:
    case 128:
    case 256: return LaunchSmallReadsOfWidth<16>(a, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace specsim::validate
