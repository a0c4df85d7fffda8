// GPU tests: kernels against CPU references, NCCL and the custom allreduce against exact values,
// timing and environment collection. Every test skips when no CUDA GPU is present.
#include <cuda_bf16.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "validate/cuda_util.h"
#include "validate/environment.h"
#include "validate/gemm.h"
#include "validate/gpu_test_util.h"
#include "validate/kernels.h"
#include "validate/pacing.h"
#include "validate/timing.h"

namespace specsim::validate {
namespace {

#define REQUIRE_GPU()                                   \
  do {                                                  \
    if (GpuCount() == 0) GTEST_SKIP() << "no CUDA GPU"; \
  } while (0)

#define ASSERT_OK(expr)                    \
  do {                                     \
    auto _s = (expr);                      \
    ASSERT_TRUE(_s.ok()) << _s.ToString(); \
  } while (0)

float Bf(uint16_t b) {
  uint32_t u = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint16_t ToBf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7fff + ((u >> 16) & 1);
  return static_cast<uint16_t>(u >> 16);
}

std::vector<uint16_t> RandomBf(size_t n, uint32_t seed, float scale) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-scale, scale);
  std::vector<uint16_t> v(n);
  for (auto& x : v) x = ToBf(d(rng));
  return v;
}

DeviceBuffer Upload(const std::vector<uint16_t>& v) {
  auto b = DeviceBuffer::Create(0, v.size() * 2);
  EXPECT_TRUE(b.ok());
  EXPECT_EQ(cudaMemcpy(b->data(), v.data(), v.size() * 2, cudaMemcpyHostToDevice), cudaSuccess);
  return std::move(b).value();
}

std::vector<uint16_t> Download(const DeviceBuffer& b, size_t n) {
  std::vector<uint16_t> v(n);
  EXPECT_EQ(cudaMemcpy(v.data(), b.data(), n * 2, cudaMemcpyDeviceToHost), cudaSuccess);
  return v;
}

// Against a double-precision CPU reference, causal among the qps query tokens of a sequence (token j
// sees cache positions t <= ctx - qps + j).
void CheckAttention(AttentionImpl impl, int seqs, int qps, int q_heads, int kv_heads, int hd, int vd, bool shared,
                    int64_t ctx, int splits) {
  const int rows = seqs * qps;
  auto q = RandomBf(size_t(rows) * q_heads * hd, 1, 1.0f);
  auto k = RandomBf(size_t(seqs) * kv_heads * ctx * hd, 2, 1.0f);
  auto v = shared ? k : RandomBf(size_t(seqs) * kv_heads * ctx * vd, 3, 1.0f);
  DeviceBuffer dq = Upload(q), dk = Upload(k), dv = Upload(v);
  auto out = DeviceBuffer::Create(0, int64_t(rows) * q_heads * vd * 2);
  auto ws = DeviceBuffer::Create(0, AttentionWorkspaceBytes(rows, q_heads, vd, splits));
  ASSERT_TRUE(out.ok() && ws.ok());
  AttentionArgs a;
  a.q = dq.data();
  a.k = dk.data();
  a.v = shared ? dk.data() : dv.data();
  a.out = out->data();
  a.workspace = ws->data();
  a.seqs = seqs;
  a.q_per_seq = qps;
  a.q_heads = q_heads;
  a.kv_heads = kv_heads;
  a.head_dim = hd;
  a.v_head_dim = vd;
  a.context = ctx;
  a.splits = splits;
  ASSERT_EQ(LaunchAttention(impl, a, 0), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  auto got = Download(*out, size_t(rows) * q_heads * vd);
  const int64_t vstride = shared ? hd : vd;
  double max_err = 0;
  for (int r = 0; r < rows; ++r) {
    const int s = r / qps;
    const int64_t visible = ctx - qps + r % qps + 1;
    for (int h = 0; h < q_heads; ++h) {
      const int kvh = h / (q_heads / kv_heads);
      std::vector<double> sc(visible);
      double mx = -1e300;
      for (int64_t t = 0; t < visible; ++t) {
        double dot = 0;
        for (int d = 0; d < hd; ++d)
          dot += Bf(q[(size_t(r) * q_heads + h) * hd + d]) * Bf(k[((size_t(s) * kv_heads + kvh) * ctx + t) * hd + d]);
        sc[t] = dot / std::sqrt(double(hd));
        mx = std::max(mx, sc[t]);
      }
      double sum = 0;
      for (auto& x : sc) sum += (x = std::exp(x - mx));
      for (int d = 0; d < vd; ++d) {
        double acc = 0;
        for (int64_t t = 0; t < visible; ++t)
          acc += sc[t] * Bf(v[((size_t(s) * kv_heads + kvh) * ctx + t) * vstride + d]);
        double ref = acc / sum;
        max_err = std::max(max_err, std::abs(ref - Bf(got[(size_t(r) * q_heads + h) * vd + d])));
      }
    }
  }
  EXPECT_LT(max_err, 0.02) << AttentionImplName(impl) << " seqs " << seqs << " q " << qps << " hd " << hd << " ctx "
                           << ctx << " splits " << splits;
}

TEST(GpuKernels, ReferenceAttentionMatchesCpuReference) {
  REQUIRE_GPU();
  const AttentionImpl r = AttentionImpl::kSimtReference;
  CheckAttention(r, 2, 1, 8, 2, 128, 128, false, 300, 1);
  CheckAttention(r, 2, 2, 8, 2, 128, 128, false, 300, 3);
  CheckAttention(r, 1, 1, 32, 8, 128, 128, false, 1000, 4);
  CheckAttention(r, 1, 4, 32, 8, 128, 128, false, 500, 2);  // verify: 4 query tokens, 2 head groups
  CheckAttention(r, 1, 2, 4, 1, 576, 512, true, 200, 2);    // MLA latent cache
  CheckAttention(r, 1, 2, 64, 8, 64, 64, false, 300, 2);    // gpt-oss: head_dim 64
}

TEST(GpuKernels, FlashMmaAttentionMatchesCpuReference) {
  REQUIRE_GPU();
  const AttentionImpl f = AttentionImpl::kFlashMma;
  CheckAttention(f, 2, 1, 8, 2, 128, 128, false, 300, 1);  // 4 rows: one 16-row tile, 4 warps split tokens
  CheckAttention(f, 2, 2, 8, 2, 128, 128, false, 300, 3);  // 8 rows, 3 splits
  CheckAttention(f, 1, 1, 32, 8, 128, 128, false, 1000, 4);
  CheckAttention(f, 1, 8, 32, 8, 128, 128, false, 500, 2);   // 32 rows: 2 tiles per block
  CheckAttention(f, 2, 16, 32, 8, 128, 128, false, 700, 1);  // 64 rows: 4 tiles per block
  CheckAttention(f, 1, 20, 8, 2, 128, 128, false, 333, 8);   // 80 rows: 2 row blocks, empty splits
  CheckAttention(f, 3, 5, 16, 16, 128, 128, false, 129, 2);  // MHA (G = 1), context just past 2 tiles
  CheckAttention(f, 1, 64, 8, 2, 128, 128, false, 64, 1);    // q = context: the first token sees itself only
}

// The launch geometry the simulator's flash_mma model takes (sim/compute/attention_cost.cc:
// 3 / 2 / 2 resident blocks per SM for 1 / 2 / 4 row tiles per block on sm_90), measured.
TEST(GpuKernels, FlashMmaResidentBlocksAsTheModelAssumes) {
  REQUIRE_GPU();
  cudaDeviceProp prop{};
  ASSERT_EQ(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
  for (int rtb : {1, 2, 4}) {
    const FlashMmaOccupancy o = FlashMmaOccupancyOf(rtb);
    ASSERT_TRUE(o.ok) << rtb;
    std::printf("flash_mma %d row tile(s) per block: %d registers per thread, %d resident blocks per SM (sm_%d%d)\n",
                rtb, o.registers_per_thread, o.resident_blocks_per_sm, prop.major, prop.minor);
    if (prop.major == 9) EXPECT_EQ(o.resident_blocks_per_sm, rtb == 1 ? 3 : 2) << rtb;
  }
}

TEST(GpuKernels, FlashMmaRejectsWhatItCannotRun) {
  REQUIRE_GPU();
  AttentionArgs a;
  a.head_dim = 576;
  a.v_head_dim = 512;
  EXPECT_EQ(LaunchFlashMmaAttention(a, 0), cudaErrorInvalidValue);  // MLA goes to flash_mla
  EXPECT_EQ(ProductionAttentionImpl(576, 512, true), AttentionImpl::kFlashMla);
  EXPECT_EQ(ProductionAttentionImpl(128, 128, false), AttentionImpl::kFlashMma);
  EXPECT_EQ(ProductionAttentionImpl(192, 128, false), AttentionImpl::kSimtReference);
  // flash_mla takes the 576 / 512 latent cache only, shared, one KV head.
  AttentionArgs g;  // GQA 128
  EXPECT_EQ(LaunchFlashMlaAttention(g, 0), cudaErrorInvalidValue);
}

// MLA's latent cache (576 values per token, V its first 512) on tensor cores: one 16-row tile per
// block (TP8 DeepSeek: 16 heads), several tiles (TP1: 128 heads), verify widths, splits, padding.
TEST(GpuKernels, FlashMlaAttentionMatchesCpuReference) {
  REQUIRE_GPU();
  const AttentionImpl f = AttentionImpl::kFlashMla;
  CheckAttention(f, 2, 1, 16, 1, 576, 512, true, 300, 1);   // 16 rows: one tile
  CheckAttention(f, 1, 1, 16, 1, 576, 512, true, 1000, 4);  // 4 splits, the last short
  CheckAttention(f, 2, 2, 16, 1, 576, 512, true, 200, 3);   // verify q = 2: 32 rows, 2 tiles
  CheckAttention(f, 1, 3, 8, 1, 576, 512, true, 130, 2);    // 24 rows: a padded second tile
  CheckAttention(f, 1, 1, 128, 1, 576, 512, true, 257, 1);  // 128 heads (TP1): 8 tiles
  CheckAttention(f, 1, 8, 16, 1, 576, 512, true, 8, 1);     // q = context: the first token sees itself only
  CheckAttention(f, 1, 1, 16, 1, 576, 512, true, 64, 8);    // splits past the context: empty splits
  CheckAttention(f, 1, 2, 8, 1, 576, 512, true, 3000, 70);  // 70 splits: the merge's 8-split batches, twice
  CheckAttention(f, 2, 1, 8, 1, 576, 512, true, 1100, 33);  // 33 splits of 35 tiles: one or two tiles each
  // More split counts for the merge (bf16 partials, 4 blocks per (row, head), kBatch 1..16).
  CheckAttention(f, 3, 1, 8, 1, 576, 512, true, 2048, 8);    // 8 splits of 8 tiles
  CheckAttention(f, 2, 1, 16, 1, 576, 512, true, 1100, 32);  // 32 splits of 35 tiles
  CheckAttention(f, 2, 2, 16, 1, 576, 512, true, 2000, 16);  // verify q = 2: 2 row tiles x 16 splits
  CheckAttention(f, 1, 3, 8, 1, 576, 512, true, 700, 12);    // a padded second row tile, 12 splits
  CheckAttention(f, 1, 4, 16, 1, 576, 512, true, 300, 6);    // 4 row tiles, 6 splits
  CheckAttention(f, 1, 1, 16, 1, 576, 512, true, 100, 16);   // 4 tiles over 16 splits: 12 empty
  // The last, partial round shared out: 22 rounds of 7 x 32 tokens, then 72 tokens as shares of 11,
  // with verify rows whose causal limits fall inside the shares.
  CheckAttention(f, 2, 2, 8, 1, 576, 512, true, 5000, 7);
}

// flash_mla's residency (the simulator's geometry: two blocks per SM; 255 registers per thread).
TEST(GpuKernels, FlashMlaResidentBlocksAsTheModelAssumes) {
  REQUIRE_GPU();
  cudaDeviceProp prop{};
  ASSERT_EQ(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
  const FlashMmaOccupancy o = FlashMlaOccupancyOf();
  ASSERT_TRUE(o.ok);
  std::printf("flash_mla: %d registers per thread, %d resident blocks per SM (sm_%d%d)\n", o.registers_per_thread,
              o.resident_blocks_per_sm, prop.major, prop.minor);
  if (prop.major == 9) EXPECT_EQ(o.resident_blocks_per_sm, 2);
}

TEST(GpuKernels, RmsNormMatchesCpuReference) {
  REQUIRE_GPU();
  const int T = 3, H = 4096;
  auto x = RandomBf(T * H, 4, 2.0f), res = RandomBf(T * H, 5, 1.0f), w = RandomBf(H, 6, 1.0f);
  DeviceBuffer dx = Upload(x), dr = Upload(res), dw = Upload(w);
  auto out = DeviceBuffer::Create(0, T * H * 2);
  ASSERT_TRUE(out.ok());
  ASSERT_EQ(LaunchRmsNorm(dx.data(), dr.data(), dw.data(), out->data(), T, H, 1e-5f, 0), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  auto got = Download(*out, T * H);
  auto got_res = Download(dr, T * H);
  double max_err = 0;
  for (int t = 0; t < T; ++t) {
    double ss = 0;
    std::vector<float> sum(H);
    for (int i = 0; i < H; ++i) {
      sum[i] = Bf(ToBf(Bf(x[t * H + i]) + Bf(res[t * H + i])));
      ss += double(sum[i]) * sum[i];
      EXPECT_EQ(got_res[t * H + i], ToBf(sum[i]));
    }
    double inv = 1.0 / std::sqrt(ss / H + 1e-5);
    for (int i = 0; i < H; ++i) max_err = std::max(max_err, std::abs(sum[i] * inv * Bf(w[i]) - Bf(got[t * H + i])));
  }
  EXPECT_LT(max_err, 0.05);
}

TEST(GpuKernels, GemmMatchesCpuReference) {
  REQUIRE_GPU();
  const int M = 3, N = 64, K = 128;
  auto in = RandomBf(M * K, 7, 1.0f), w = RandomBf(N * K, 8, 1.0f);
  DeviceBuffer din = Upload(in), dw = Upload(w);
  auto out = DeviceBuffer::Create(0, M * N * 2);
  auto stream = Stream::Create(0);
  ASSERT_TRUE(out.ok() && stream.ok());
  auto blas = CublasHandle::Create(0, stream->get());
  ASSERT_TRUE(blas.ok()) << blas.status().ToString();
  ASSERT_OK(GemmBf16(blas->get(), din.data(), dw.data(), out->data(), M, N, K));
  ASSERT_EQ(cudaStreamSynchronize(stream->get()), cudaSuccess);
  auto got = Download(*out, M * N);
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      double ref = 0;
      for (int k = 0; k < K; ++k) ref += Bf(in[m * K + k]) * Bf(w[n * K + k]);
      EXPECT_NEAR(Bf(got[m * N + n]), ref, 0.05 + 0.01 * std::abs(ref));
    }
}

TEST(GpuKernels, StridedBatchedGemmAsMlaAbsorption) {
  // Per head h: out[t][h][0:N] = in[t][h][0:K] * W[h]^T with rows interleaved by head (ld = H * width).
  REQUIRE_GPU();
  const int T = 3, H = 4, K = 32, N = 48, IW = 40, OW = 56;  // in/out head widths wider than K/N
  auto in = RandomBf(T * H * IW, 11, 1.0f), w = RandomBf(H * N * K, 12, 1.0f);
  DeviceBuffer din = Upload(in), dw = Upload(w);
  auto out = DeviceBuffer::Create(0, T * H * OW * 2);
  auto stream = Stream::Create(0);
  ASSERT_TRUE(out.ok() && stream.ok());
  ASSERT_EQ(cudaMemset(out->data(), 0, T * H * OW * 2), cudaSuccess);
  auto blas = CublasHandle::Create(0, stream->get());
  ASSERT_TRUE(blas.ok());
  ASSERT_OK(GemmBf16StridedBatched(blas->get(), din.data(), H * IW, IW, dw.data(), N * K, out->data(), H * OW, OW, T, N,
                                   K, H));
  ASSERT_EQ(cudaStreamSynchronize(stream->get()), cudaSuccess);
  auto got = Download(*out, T * H * OW);
  for (int t = 0; t < T; ++t)
    for (int h = 0; h < H; ++h) {
      for (int n = 0; n < N; ++n) {
        double ref = 0;
        for (int k = 0; k < K; ++k) ref += Bf(in[(t * H + h) * IW + k]) * Bf(w[(h * N + n) * K + k]);
        EXPECT_NEAR(Bf(got[(t * H + h) * OW + n]), ref, 0.05 + 0.01 * std::abs(ref));
      }
      for (int n = N; n < OW; ++n) EXPECT_EQ(got[(t * H + h) * OW + n], 0);  // untouched
    }
}

TEST(GpuKernels, RmsNormRowsInPlaceOnASlice) {
  REQUIRE_GPU();
  const int T = 2, W = 96, OFF = 16, H = 64;
  auto x = RandomBf(T * W, 13, 2.0f), w = RandomBf(H, 14, 1.0f);
  DeviceBuffer dx = Upload(x), dw = Upload(w);
  char* slice = dx.as<char>() + OFF * 2;
  ASSERT_EQ(LaunchRmsNormRows(slice, W, dw.data(), slice, W, T, H, 1e-6f, 0), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  auto got = Download(dx, T * W);
  for (int t = 0; t < T; ++t) {
    double ss = 0;
    for (int i = 0; i < H; ++i) ss += double(Bf(x[t * W + OFF + i])) * Bf(x[t * W + OFF + i]);
    const double inv = 1.0 / std::sqrt(ss / H + 1e-6);
    for (int i = 0; i < W; ++i) {
      if (i < OFF || i >= OFF + H)
        EXPECT_EQ(got[t * W + i], x[t * W + i]);
      else
        EXPECT_NEAR(Bf(got[t * W + i]), Bf(x[t * W + i]) * inv * Bf(w[i - OFF]), 0.05);
    }
  }
}

TEST(GpuKernels, MoeTopKGatherCombine) {
  REQUIRE_GPU();
  const int T = 5, E = 384, K = 8, H = 64;
  auto logits = RandomBf(T * E, 15, 3.0f);
  DeviceBuffer dl = Upload(logits);
  auto ids = DeviceBuffer::Create(0, T * K * sizeof(int));
  auto wts = DeviceBuffer::Create(0, T * K * sizeof(float));
  ASSERT_TRUE(ids.ok() && wts.ok());
  ASSERT_EQ(LaunchTopK(dl.data(), T, E, K, ids->as<int>(), wts->as<float>(), 0), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<int> gid(T * K);
  std::vector<float> gw(T * K);
  ASSERT_EQ(cudaMemcpy(gid.data(), ids->data(), T * K * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(gw.data(), wts->data(), T * K * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  for (int t = 0; t < T; ++t) {
    std::vector<int> order(E);
    for (int e = 0; e < E; ++e) order[e] = e;
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return Bf(logits[t * E + a]) > Bf(logits[t * E + b]); });
    double sum = 0, z = 0;
    for (int j = 0; j < K; ++j) z += std::exp(Bf(logits[t * E + order[j]]) - Bf(logits[t * E + order[0]]));
    for (int j = 0; j < K; ++j) {
      EXPECT_EQ(gid[t * K + j], order[j]) << "token " << t << " pick " << j;
      EXPECT_NEAR(gw[t * K + j], std::exp(Bf(logits[t * E + order[j]]) - Bf(logits[t * E + order[0]])) / z, 1e-5);
      sum += gw[t * K + j];
    }
    EXPECT_NEAR(sum, 1.0, 1e-5);
  }
  // Gather T*K pairs into 3 experts x 14 rows (2 padding slots), combine with the weights above.
  const int slots = 42;
  auto in = RandomBf(T * H, 16, 1.0f), shared = RandomBf(T * H, 17, 1.0f);
  DeviceBuffer din = Upload(in), dsh = Upload(shared);
  auto gathered = DeviceBuffer::Create(0, slots * H * 2), out = DeviceBuffer::Create(0, T * H * 2);
  ASSERT_TRUE(gathered.ok() && out.ok());
  ASSERT_EQ(LaunchMoeGather(din.data(), gathered->data(), T, K, slots, H, 0), cudaSuccess);
  ASSERT_EQ(LaunchMoeCombine(gathered->data(), wts->as<float>(), dsh.data(), out->data(), T, K, H, 0), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  auto g = Download(*gathered, slots * H);
  auto o = Download(*out, T * H);
  for (int s = 0; s < slots; ++s) {
    const int t = s < T * K ? s / K : s % T;
    for (int i = 0; i < H; ++i) EXPECT_EQ(g[s * H + i], in[t * H + i]);
  }
  // Every pair carries the token itself, and the weights sum to 1: out = shared + in.
  for (int i = 0; i < T * H; ++i) EXPECT_NEAR(Bf(o[i]), Bf(shared[i]) + Bf(in[i]), 0.03);
}

TEST(GpuCollectives, NcclAllreduceExact) {
  REQUIRE_GPU();
  std::vector<int> devs;
  for (int d = 0; d < std::min(GpuCount(), 8); ++d) devs.push_back(d);
  const int n = static_cast<int>(devs.size());
  auto comms = NcclComms::Create(devs);
  ASSERT_TRUE(comms.ok()) << comms.status().ToString();
  const int64_t count = 1 << 16;
  std::vector<unsigned long long> bad(n, 1);
  ASSERT_OK(ParallelFor(n, [&](int r) -> Status {
    ASSIGN_OR_RETURN(Stream s, Stream::Create(devs[r]));
    ASSIGN_OR_RETURN(DeviceBuffer in, DeviceBuffer::Create(devs[r], count * 2));
    ASSIGN_OR_RETURN(DeviceBuffer out, DeviceBuffer::Create(devs[r], count * 2));
    ASSIGN_OR_RETURN(DeviceBuffer c, DeviceBuffer::Create(devs[r], 8));
    CUDA_RETURN_IF_ERROR(cudaMemset(c.data(), 0, 8));
    CUDA_RETURN_IF_ERROR(LaunchFillPattern(in.data(), count, 0, r, s.get()));
    NCCL_RETURN_IF_ERROR(ncclAllReduce(in.data(), out.data(), count, ncclBfloat16, ncclSum, comms->get(r), s.get()));
    CUDA_RETURN_IF_ERROR(LaunchCheckCollective(out.data(), count, 1, n, r, c.as<unsigned long long>(), s.get()));
    RETURN_IF_ERROR(SyncStream(devs[r], s.get(), 60, "allreduce"));
    CUDA_RETURN_IF_ERROR(cudaMemcpy(&bad[r], c.data(), 8, cudaMemcpyDeviceToHost));
    return Status::Ok();
  }));
  for (auto b : bad) EXPECT_EQ(b, 0u);
}

// One-shot and two-shot over host-mapped memory (works with any GPU count), checked exactly.
TEST(GpuCollectives, CustomAllreduceOverHostMemoryExact) {
  REQUIRE_GPU();
  std::vector<int> devs;
  for (int d = 0; d < std::min(GpuCount(), 8); ++d) devs.push_back(d);
  const int n = static_cast<int>(devs.size());
  const int64_t count = 8 * 1000 * n;
  std::vector<HostBuffer> ex, sig;
  for (int r = 0; r < n; ++r) {
    auto e = HostBuffer::Create(2 * count * 2, HostKind::kMapped);
    auto s = HostBuffer::Create(kMaxRanks * kMaxArBlocks * 4, HostKind::kMapped);
    ASSERT_TRUE(e.ok() && s.ok());
    std::memset(s->data(), 0, s->bytes());
    ex.push_back(std::move(e).value());
    sig.push_back(std::move(s).value());
  }
  for (bool two : {false, true}) {
    std::vector<unsigned long long> bad(n, 1);
    ASSERT_OK(ParallelFor(n, [&](int r) -> Status {
      ASSIGN_OR_RETURN(Stream s, Stream::Create(devs[r]));
      ASSIGN_OR_RETURN(DeviceBuffer in, DeviceBuffer::Create(devs[r], count * 2));
      ASSIGN_OR_RETURN(DeviceBuffer out, DeviceBuffer::Create(devs[r], count * 2));
      ASSIGN_OR_RETURN(DeviceBuffer ep, DeviceBuffer::Create(devs[r], kMaxArBlocks * 4));
      ASSIGN_OR_RETURN(DeviceBuffer err, DeviceBuffer::Create(devs[r], 4));
      ASSIGN_OR_RETURN(DeviceBuffer c, DeviceBuffer::Create(devs[r], 8));
      CUDA_RETURN_IF_ERROR(cudaMemset(ep.data(), 0, kMaxArBlocks * 4));
      CUDA_RETURN_IF_ERROR(cudaMemset(err.data(), 0, 4));
      CUDA_RETURN_IF_ERROR(cudaMemset(c.data(), 0, 8));
      CUDA_RETURN_IF_ERROR(LaunchFillPattern(in.data(), count, 0, r, s.get()));
      CustomAllreduceArgs a;
      a.rank = r;
      a.nranks = n;
      a.count = count;
      a.input = in.data();
      a.output = out.data();
      for (int p = 0; p < n; ++p) {
        a.exchange[p] = ex[p].device_ptr();
        a.signals[p] = static_cast<uint32_t*>(sig[p].device_ptr());
      }
      a.epochs = ep.as<uint32_t>();
      a.error = err.as<int>();
      a.timeout_ns = 10000000000ULL;
      a.blocks = 8;
      a.threads = 256;
      // Twice, so the second call runs on advanced epochs.
      for (int i = 0; i < 2; ++i)
        CUDA_RETURN_IF_ERROR(two ? LaunchTwoShotAllreduce(a, s.get()) : LaunchOneShotAllreduce(a, s.get()));
      CUDA_RETURN_IF_ERROR(LaunchCheckCollective(out.data(), count, 1, n, r, c.as<unsigned long long>(), s.get()));
      RETURN_IF_ERROR(SyncStream(devs[r], s.get(), 60, "custom allreduce"));
      CUDA_RETURN_IF_ERROR(cudaMemcpy(&bad[r], c.data(), 8, cudaMemcpyDeviceToHost));
      int e = 0;
      CUDA_RETURN_IF_ERROR(cudaMemcpy(&e, err.data(), 4, cudaMemcpyDeviceToHost));
      if (e) return Internal("barrier timed out");
      return Status::Ok();
    }));
    for (auto b : bad) EXPECT_EQ(b, 0u) << (two ? "two-shot" : "one-shot");
    for (auto& s : sig) std::memset(s.data(), 0, s.bytes());
  }
}

TEST(GpuTiming, EventsAndEnvironment) {
  REQUIRE_GPU();
  auto s = Stream::Create(0);
  ASSERT_TRUE(s.ok());
  TimingConfig cfg{2, 5, 30};
  auto t = TimeOp(
      0, s->get(), cfg,
      [&]() -> Status {
        CUDA_RETURN_IF_ERROR(LaunchEmptyKernel(1, 32, s->get()));
        return Status::Ok();
      },
      "empty kernel");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->size(), 5u);
  for (double us : *t) EXPECT_GT(us, 0.0);
  auto env = CollectEnvironment({0});
  ASSERT_TRUE(env.ok()) << env.status().ToString();
  EXPECT_EQ(env->gpus_size(), 1);
  EXPECT_GT(env->gpus(0).sm_count(), 0);
  EXPECT_FALSE(env->nccl_version().empty());
}

// Gated timing measures GPU time, not the host's launch rate: an op that busy-waits 60 us on the host
// and then launches a 10 us spin kernel times at >= 60 us ungated (each start event is recorded as
// soon as the host gets to it, the kernel 60 us later) and at ~10 us gated (every iteration is
// already queued when the gate opens). The 30 us bound leaves room for launch gaps on a busy GPU.
TEST(GpuTiming, GatedTimingIsGpuTimeNotHostRate) {
  REQUIRE_GPU();
  auto s = Stream::Create(0);
  ASSERT_TRUE(s.ok());
  auto op = [&]() -> Status {
    SpinForUs(60.0);
    CUDA_RETURN_IF_ERROR(LaunchSpinKernel(10000, s->get()));
    return Status::Ok();
  };
  TimingConfig plain{1, 10, 30};
  auto t0 = TimeOp(0, s->get(), plain, op, "host-bound op");
  ASSERT_TRUE(t0.ok()) << t0.status().ToString();
  std::vector<double> ungated = *t0;
  std::sort(ungated.begin(), ungated.end());
  EXPECT_GE(ungated[5], 55.0);
  TimingConfig gated = plain;
  gated.gate_us = GateUsFor(gated.iters);
  auto t1 = TimeOp(0, s->get(), gated, op, "host-bound op, gated");
  ASSERT_TRUE(t1.ok()) << t1.status().ToString();
  std::vector<double> g = *t1;
  std::sort(g.begin(), g.end());
  EXPECT_GE(g[5], 9.5);
  EXPECT_LT(g[5], 30.0);
}

// The skew stamps: a graph [stamp 0, 50 us spin, stamp 1] replayed 6 times with room for 4 replays
// fills slots 0..7 in order, each pair at least 50 us apart, and counts every replay.
TEST(GpuPacing, StampKernelsInAGraphFillConsecutiveSlots) {
  REQUIRE_GPU();
  auto s = Stream::Create(0);
  auto stamps = DeviceBuffer::Create(0, 8 * sizeof(uint64_t));
  auto counter = DeviceBuffer::Create(0, sizeof(unsigned));
  ASSERT_TRUE(s.ok() && stamps.ok() && counter.ok());
  ASSERT_EQ(cudaMemset(stamps->data(), 0, 8 * sizeof(uint64_t)), cudaSuccess);
  ASSERT_EQ(cudaMemset(counter->data(), 0, sizeof(unsigned)), cudaSuccess);
  auto g = GraphExec::Capture(0, s->get(), [&]() -> Status {
    CUDA_RETURN_IF_ERROR(LaunchStampKernel(stamps->as<uint64_t>(), counter->as<unsigned>(), 0, 4, s->get()));
    CUDA_RETURN_IF_ERROR(LaunchSpinKernel(50000, s->get()));
    CUDA_RETURN_IF_ERROR(LaunchStampKernel(stamps->as<uint64_t>(), counter->as<unsigned>(), 1, 4, s->get()));
    return Status::Ok();
  });
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  for (int i = 0; i < 6; ++i) ASSERT_OK(g->Launch(s->get()));
  ASSERT_OK(SyncStream(0, s->get(), 30, "stamps"));
  std::vector<uint64_t> t(8);
  unsigned replays = 0;
  ASSERT_EQ(cudaMemcpy(t.data(), stamps->data(), 8 * sizeof(uint64_t), cudaMemcpyDeviceToHost), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(&replays, counter->data(), sizeof(unsigned), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(replays, 6u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_GT(t[2 * i], 0u);
    EXPECT_GE(t[2 * i + 1], t[2 * i] + 50000) << "replay " << i;
    if (i > 0) EXPECT_GE(t[2 * i], t[2 * i - 1]);
  }
}

// Piecewise capture: two graphs captured with an eager op between them (as a piecewise decode step
// replays them); the stream is usable after each EndCapture and the replay gives the eager result.
TEST(GpuPacing, SegmentedCaptureReplaysInOrder) {
  REQUIRE_GPU();
  auto s = Stream::Create(0);
  auto buf = DeviceBuffer::Create(0, 1024 * 2);
  auto c = DeviceBuffer::Create(0, 8);
  ASSERT_TRUE(s.ok() && buf.ok() && c.ok());
  ASSERT_OK(GraphExec::BeginCapture(0, s->get()));
  ASSERT_EQ(cudaMemsetAsync(buf->data(), 0xff, 1024 * 2, s->get()), cudaSuccess);
  auto g0 = GraphExec::EndCapture(0, s->get());
  ASSERT_TRUE(g0.ok()) << g0.status().ToString();
  ASSERT_OK(GraphExec::BeginCapture(0, s->get()));
  ASSERT_EQ(cudaMemsetAsync(c->data(), 0, 8, s->get()), cudaSuccess);
  ASSERT_EQ(LaunchCheckCollective(buf->data(), 1024, 1, 1, 0, c->as<unsigned long long>(), s->get()), cudaSuccess);
  auto g1 = GraphExec::EndCapture(0, s->get());
  ASSERT_TRUE(g1.ok()) << g1.status().ToString();
  // Replay: graph 0 (garbage), eager pattern fill, graph 1 (check): no mismatches.
  ASSERT_OK(g0->Launch(s->get()));
  ASSERT_EQ(LaunchFillPattern(buf->data(), 1024, 0, 0, s->get()), cudaSuccess);
  ASSERT_OK(g1->Launch(s->get()));
  ASSERT_OK(SyncStream(0, s->get(), 30, "segments"));
  unsigned long long bad = 1;
  ASSERT_EQ(cudaMemcpy(&bad, c->data(), 8, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(bad, 0u);
}

// Ranks meeting at a barrier: a failing rank releases the others at once and its error is reported.
TEST(GpuPacing, ParallelForWithBarrierReportsTheCause) {
  TimedBarrier b(3);
  const auto a = std::chrono::steady_clock::now();
  Status st = ParallelForWithBarrier(3, &b, [&](int r) -> Status {
    if (r == 2) return Unavailable("rank 2 broke");
    for (int i = 0; i < 5; ++i) RETURN_IF_ERROR(b.ArriveAndWait(30));
    return Status::Ok();
  });
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count(), 10.0);
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_NE(st.message().find("rank 2 broke"), std::string::npos);
}

TEST(GpuErrors, OutOfMemoryIsAStatus) {
  REQUIRE_GPU();
  auto b = DeviceBuffer::Create(0, int64_t{1} << 50);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), StatusCode::kOutOfMemory);
  // The device is still usable.
  auto ok = DeviceBuffer::Create(0, 1024);
  EXPECT_TRUE(ok.ok());
}

}  // namespace
}  // namespace specsim::validate
