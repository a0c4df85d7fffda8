// The tensor-core building blocks validate's flash attention kernels share
// (flash_attention_kernels.cu, flash_mla_kernels.cu): cp.async copies into shared memory,
// ldmatrix loads, one mma.m16n8k16 bf16 step, bf16 packing, the online-softmax row update. sm_80
// and later.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

namespace specsim::validate::mma {

__device__ __forceinline__ void CpAsync16(void* smem, const void* gmem, bool valid) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  const int bytes = valid ? 16 : 0;  // 0: zero-fill (tokens past the split's end)
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(bytes));
}
__device__ __forceinline__ void CpAsyncCommit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void CpAsyncWait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

__device__ __forceinline__ void LdMatrixX4(const void* smem, uint32_t (&r)[4]) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(s));
}
__device__ __forceinline__ void LdMatrixX4Trans(const void* smem, uint32_t (&r)[4]) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(s));
}

// d += a * b for one m16n8k16 tile (a: 4 registers of bf16 pairs, b: 2, d: 4 fp32).
__device__ __forceinline__ void Mma(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ uint32_t PackBf16(float lo, float hi) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&v);
}

// Double buffering over the key tiles: with tile `it` in flight, issues tile it + 1's copies into
// the other buffer (load_tile(buffer, first_token)) and waits for tile it's, then syncs the block.
template <typename LoadTile>
__device__ __forceinline__ void PrefetchNextTileAndWait(int it, int ntiles, int64_t t0, int tile_tokens,
                                                        LoadTile load_tile) {
  if (it + 1 < ntiles) {
    load_tile((it + 1) & 1, t0 + int64_t(it + 1) * tile_tokens);
    CpAsyncWait<1>();
  } else {
    CpAsyncWait<0>();
  }
  __syncthreads();
}

// The online-softmax update of accumulator row h (0: row gid, 1: row gid + 8) for one key tile
// (FlashAttention-2, Dao 2023, Algorithm 1): with the row's running maximum m and sum l (log2
// scale) and the tile's row maximum tile_max, m' = max(m, tile_max); exp_sum(base) exponentiates
// this thread's scores of the row in place as exp2(x - base) and returns their sum; l' = l * corr +
// that sum and the row's output accumulators o[.][2h], o[.][2h + 1] are scaled by corr = exp2(m -
// base). base = m', except 0 while nothing in the row is visible (m' = -inf), which keeps the row at zero.
template <int kCols8, typename ExpSum>
__device__ __forceinline__ void OnlineSoftmaxRow(float (&o)[kCols8][4], int h, float& m, float& l, float tile_max,
                                                 ExpSum exp_sum) {
  const float mn = fmaxf(m, tile_max);
  const float base = mn == -INFINITY ? 0.f : mn;
  const float corr = exp2f(m - base);
  l = l * corr + exp_sum(base);
#pragma unroll
  for (int d = 0; d < kCols8; ++d) {
    o[d][2 * h] *= corr;
    o[d][2 * h + 1] *= corr;
  }
  m = mn;
}

}  // namespace specsim::validate::mma
