#include "sim/compute/kernel_cost.h"

#include <gtest/gtest.h>

namespace specsim::compute {
namespace {

// The H200 of configs/hardware/h200-1x.textproto (docs/reference/hardware.md).
GpuSpec H200() {
  GpuSpec g;
  g.name = "h200";
  g.arch = "sm90";
  g.sm_count = 132;
  g.memory_gib = 140.4;
  g.memory_bandwidth_gbps = 4800;
  g.l2_cache_mib = 60;
  g.bf16_dense_tflops = 989;
  g.fp8_dense_tflops = 1979;
  g.fp4_dense_tflops = 0;
  return g;
}

// Parameters without the size ramps, so that the roofline formulas hold exactly.
ComputeParams NoRamps() {
  ComputeParams p;
  p.gemm_m_half = 0;
  p.memory_ramp_ns = 0;
  return p;
}

Kernel Make(KernelClass c, double flops, double bytes, DType math = DType::kBf16, double m = 0) {
  Kernel k;
  k.name = "k";
  k.kernel_class = c;
  k.flops = flops;
  k.bytes = bytes;
  k.math_dtype = math;
  k.m = m;
  return k;
}

TEST(KernelCostTest, MemoryBoundElementwiseIsBytesOverBandwidthTimesEfficiency) {
  ComputeParams p = NoRamps();
  KernelCostModel model(H200(), p);
  // 1 GB at 4800 GB/s * 0.85: t = 1e9 / (4800 * 0.85) ns = 245098.04 ns.
  Kernel k = Make(KernelClass::kElementwise, 1e9, 1e9);  // flops ignored for elementwise
  EXPECT_NEAR(NanosFromPicos(model.KernelTime(k)), 1e9 / (4800 * 0.85), 1e-3);
}

TEST(KernelCostTest, SkinnyGemmIsWeightBandwidthBound) {
  KernelCostModel model(H200(), ComputeParams{});
  // m=1, n=k=8192 bf16: weights 134 MB, 2*m*n*k = 134 MFLOP: memory-bound.
  const double n = 8192, kk = 8192;
  Kernel g = Make(KernelClass::kGemm, 2 * n * kk, n * kk * 2 + (n + kk) * 2, DType::kBf16, 1);
  // t = B / (bw * e_max) + ramp = B / (4800 * 0.75) + 1000 ns.
  const double expected = g.bytes / (4800 * 0.75) + 1000;
  EXPECT_NEAR(NanosFromPicos(model.KernelTime(g)), expected, 1e-2);
}

// A sampling kernel's row limit: rows of V logits at r = 5 Glogit/s take ramp + V / r whatever
// their number while that is slower than the bandwidth law, t = max(ramp + V / r, ramp + B / (bw
// e)). Greedy sampling over Llama-3's 128256 logits, bf16: 1000 + 128256 / 5 = 26651 ns for 1 and
// for 64 rows (64 * 128256 * 2 B = 16.4 MB stream in 4.0 us at 4800 * 0.85); 4096 rows (1.05 GB:
// 257 us) are bandwidth-bound. Without a rate, or for another class, the bandwidth law alone.
TEST(KernelCostTest, SamplingRowsTakeAtLeastTheirRowTime) {
  ComputeParams p;
  p.sampling_row_rate_glogits = 5;
  KernelCostModel model(H200(), p);
  auto sampling = [](double rows) {
    Kernel k = Make(KernelClass::kSampling, 0, rows * 128256 * 2, DType::kBf16, 1);
    k.m = rows;
    k.n = 128256;
    return k;
  };
  EXPECT_NEAR(NanosFromPicos(model.KernelTime(sampling(1))), 1000 + 128256 / 5.0, 1e-2);
  EXPECT_NEAR(NanosFromPicos(model.KernelTime(sampling(64))), 1000 + 128256 / 5.0, 1e-2);
  const Kernel many = sampling(4096);
  EXPECT_NEAR(NanosFromPicos(model.KernelTime(many)), 1000 + many.bytes / (4800 * 0.85), 1e-2);
  EXPECT_EQ(model.SamplingRowNs(many), 1000 + 128256 / 5.0);
  KernelCostModel plain(H200(), ComputeParams{});
  EXPECT_EQ(plain.SamplingRowNs(sampling(1)), 0);
  Kernel norm = sampling(1);
  norm.kernel_class = KernelClass::kNorm;
  EXPECT_EQ(model.SamplingRowNs(norm), 0);
  config::ComputeCalibration c;
  c.set_sampling_row_rate_glogits(3.5);
  EXPECT_EQ(ApplyCalibration(ComputeParams{}, c).sampling_row_rate_glogits, 3.5);
  p.sampling_row_rate_glogits = -1;
  EXPECT_FALSE(ValidateComputeParams(p).ok());
}

TEST(KernelCostTest, NarrowGemmIsColumnRateBound) {
  ComputeParams p;
  p.gemm_column_rate_gbps = 1.5;
  KernelCostModel model(H200(), p);
  // m=1, n=576, k=7168 (an MLA kv_a projection): B = 2*(n*k + k + n) bytes. The column limit
  // n * r = 576 * 1.5 = 864 GB/s is below bw * e_max = 4800 * 0.75 = 3600 GB/s, so
  //   t = ramp + B / (n * r) = 1000 + B / 864 ns.
  Kernel narrow = Make(KernelClass::kGemm, 2 * 576 * 7168, 2 * (576 * 7168 + 7168 + 576), DType::kBf16, 1);
  narrow.n = 576;
  narrow.k = 7168;
  EXPECT_TRUE(model.ColumnLimited(narrow));
  EXPECT_NEAR(NanosFromPicos(model.KernelTime(narrow)), 1000 + narrow.bytes / (576 * 1.5), 1e-2);
  // n = 8192: 8192 * 1.5 = 12288 GB/s > 3600 GB/s: the bandwidth law, t = ramp + B / 3600.
  Kernel wide = Make(KernelClass::kGemm, 2 * 8192 * 8192, 2 * (8192.0 * 8192 + 2 * 8192), DType::kBf16, 1);
  wide.n = 8192;
  wide.k = 8192;
  EXPECT_FALSE(model.ColumnLimited(wide));
  EXPECT_NEAR(NanosFromPicos(model.KernelTime(wide)), 1000 + wide.bytes / (4800 * 0.75), 1e-2);
  // The default (0) has no column limit: the narrow GEMM streams at bw * e_max.
  KernelCostModel plain(H200(), ComputeParams{});
  EXPECT_FALSE(plain.ColumnLimited(narrow));
  EXPECT_NEAR(NanosFromPicos(plain.KernelTime(narrow)), 1000 + narrow.bytes / (4800 * 0.75), 1e-2);
  // Non-GEMM classes never take the column limit, whatever n says.
  Kernel norm = narrow;
  norm.kernel_class = KernelClass::kNorm;
  EXPECT_FALSE(model.ColumnLimited(norm));
  // Calibration carries it; a negative rate is refused.
  config::ComputeCalibration c;
  c.set_gemm_column_rate_gbps(2.0);
  EXPECT_EQ(ApplyCalibration(ComputeParams{}, c).gemm_column_rate_gbps, 2.0);
  p.gemm_column_rate_gbps = -1;
  EXPECT_FALSE(ValidateComputeParams(p).ok());
}

TEST(KernelCostTest, ComputeBoundGemmIsFlopsOverPeakTimesEfficiency) {
  ComputeParams p = NoRamps();
  KernelCostModel model(H200(), p);
  // m=n=k=8192: 1.1 TFLOP, 0.4 GB: t = F / (989e3 flops/ns * 0.70).
  const double s = 8192;
  Kernel g = Make(KernelClass::kGemm, 2 * s * s * s, 3 * s * s * 2, DType::kBf16, s);
  EXPECT_NEAR(NanosFromPicos(model.KernelTime(g)), g.flops / (989e3 * 0.70), 1e-2);
}

TEST(KernelCostTest, GemmOverlapAddsAShareOfTheSmallerTerm) {
  // A GEMM whose memory and compute terms are close: m = 128, n = 28672, k = 4096 (Llama-3.1-8B's
  // gate_up at 128 tokens). M = B / (4800 * 0.75), C = F / (989e3 * 0.70); with overlap 0.2:
  // t = max(M, C) + 0.2 * min(M, C).
  ComputeParams p = NoRamps();
  Kernel g = Make(KernelClass::kGemm, 2.0 * 128 * 28672 * 4096, 2.0 * (28672.0 * 4096 + 128.0 * (28672 + 4096)),
                  DType::kBf16, 128);
  const double m = g.bytes / (4800 * 0.75), c = g.flops / (989e3 * 0.70);
  EXPECT_NEAR(NanosFromPicos(KernelCostModel(H200(), p).KernelTime(g)), std::max(m, c), 1e-2);
  p.gemm_overlap = 0.2;
  EXPECT_NEAR(NanosFromPicos(KernelCostModel(H200(), p).KernelTime(g)), std::max(m, c) + 0.2 * std::min(m, c), 1e-2);
  // Only dense GEMMs: an elementwise kernel with the same bytes is unchanged.
  Kernel e = Make(KernelClass::kElementwise, 0, g.bytes);
  EXPECT_NEAR(NanosFromPicos(KernelCostModel(H200(), p).KernelTime(e)), g.bytes / (4800 * 0.85), 1e-2);
  p.gemm_overlap = 1.5;
  EXPECT_NE(ValidateComputeParams(p).message().find("gemm_overlap"), std::string::npos);
}

TEST(KernelCostTest, GemmEfficiencyRampsWithM) {
  KernelCostModel model(H200(), ComputeParams{});
  // e_c(m) = 0.70 * m / (m + 32)
  EXPECT_NEAR(model.ComputeEfficiency(Make(KernelClass::kGemm, 1, 1, DType::kBf16, 32)), 0.35, 1e-12);
  EXPECT_NEAR(model.ComputeEfficiency(Make(KernelClass::kGemm, 1, 1, DType::kBf16, 96)), 0.525, 1e-12);
  double prev = 0;
  for (double m : {1.0, 8.0, 64.0, 512.0, 8192.0}) {
    double e = model.ComputeEfficiency(Make(KernelClass::kGemm, 1, 1, DType::kBf16, m));
    EXPECT_GT(e, prev);
    EXPECT_LT(e, 0.70);
    prev = e;
  }
}

TEST(KernelCostTest, Fp8MathUsesFp8Peak) {
  ComputeParams p = NoRamps();
  KernelCostModel model(H200(), p);
  const double s = 8192;
  Kernel bf16 = Make(KernelClass::kGemm, 2 * s * s * s, 1e6, DType::kBf16, s);
  Kernel fp8 = bf16;
  fp8.math_dtype = DType::kFp8;
  EXPECT_NEAR(NanosFromPicos(model.KernelTime(fp8)), fp8.flops / (1979e3 * 0.70), 1e-2);
  EXPECT_LT(model.KernelTime(fp8), model.KernelTime(bf16));
  // H200 has no FP4 tensor cores: fp4 math falls back to the fp8 rate.
  EXPECT_EQ(model.PeakTflops(DType::kFp4), 1979);
  EXPECT_EQ(model.PeakTflops(DType::kInt4), 989);
}

TEST(KernelCostTest, FloorApplies) {
  KernelCostModel model(H200(), ComputeParams{});
  Kernel tiny = Make(KernelClass::kNorm, 10, 64);
  EXPECT_EQ(model.KernelTime(tiny), PicosFromNanos(1500));
  Kernel empty = Make(KernelClass::kGemm, 0, 0);
  EXPECT_EQ(model.KernelTime(empty), PicosFromNanos(1500));
}

TEST(KernelCostTest, TimeRisesWithBytes) {
  KernelCostModel model(H200(), ComputeParams{});
  for (KernelClass c :
       {KernelClass::kGemm, KernelClass::kAttention, KernelClass::kElementwise, KernelClass::kGroupedGemm}) {
    SimTime prev = 0;
    for (double b = 1e7; b <= 1e10; b *= 3) {
      SimTime t = model.KernelTime(Make(c, 0, b, DType::kBf16, 1));
      EXPECT_GT(t, prev) << KernelClassName(c) << " " << b;
      prev = t;
    }
  }
}

TEST(KernelCostTest, GraphOverheadBelowEager) {
  KernelCostModel model(H200(), ComputeParams{});
  EXPECT_LT(model.LaunchOverhead(true), model.LaunchOverhead(false));
  EXPECT_GT(model.LaunchOverhead(true), 0);
  // 100 tiny kernels: eager is CPU-bound (100 * 5 us + last kernel), the graph is not.
  std::vector<Kernel> ks(100, Make(KernelClass::kNorm, 0, 1000));
  const SimTime eager = model.SequenceTime(ks, false);
  const SimTime graph = model.SequenceTime(ks, true);
  EXPECT_EQ(eager, 100 * PicosFromNanos(5000) + PicosFromNanos(1500));
  EXPECT_EQ(graph, PicosFromNanos(5000) + 100 * (PicosFromNanos(1500) + PicosFromNanos(500)));
  EXPECT_LT(graph, eager);
}

TEST(KernelCostTest, EagerHidesLaunchBehindLongKernels) {
  KernelCostModel model(H200(), NoRamps());
  // 1 GB elementwise kernels take ~245 us each: the CPU stays ahead, time = 5 us + sum of kernels
  // + 3 stream gaps of 0.9 us.
  std::vector<Kernel> ks(4, Make(KernelClass::kElementwise, 0, 1e9));
  EXPECT_EQ(model.SequenceTime(ks, false),
            PicosFromNanos(5000) + 4 * model.KernelTime(ks[0]) + 3 * PicosFromNanos(900));
  // GPU-bound sequences are never faster eager than as a graph (apart from the graph launch).
  EXPECT_GE(model.SequenceTime(ks, false) + PicosFromNanos(5000), model.SequenceTime(ks, true));
}

TEST(KernelCostTest, CalibrationOverridesNonZeroFields) {
  config::ComputeCalibration c;
  c.set_gemm_compute_efficiency(0.55);
  c.set_kernel_floor_ns(3000);
  c.set_launch_overhead_graph_ns(700);
  ComputeParams p = ApplyCalibration(ComputeParams{}, c);
  EXPECT_EQ(p.gemm_compute_efficiency, 0.55);
  EXPECT_EQ(p.kernel_floor_ns, 3000);
  EXPECT_EQ(p.launch_overhead_graph_ns, 700);
  // Unset fields keep the defaults.
  EXPECT_EQ(p.memory_efficiency, ComputeParams{}.memory_efficiency);
  EXPECT_EQ(p.graph_launch_ns, ComputeParams{}.graph_launch_ns);
  KernelCostModel model(H200(), p);
  EXPECT_EQ(model.KernelTime(Make(KernelClass::kNorm, 0, 64)), PicosFromNanos(3000));
}

TEST(KernelCostTest, InvalidInputsAreStatuses) {
  ComputeParams p;
  p.memory_efficiency = 1.5;
  auto m = KernelCostModel::Create(H200(), p);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("memory_efficiency"), std::string::npos);
  GpuSpec g = H200();
  g.memory_bandwidth_gbps = 0;
  auto m2 = KernelCostModel::Create(g, ComputeParams{});
  ASSERT_FALSE(m2.ok());
  EXPECT_NE(m2.status().message().find("memory_bandwidth_gbps"), std::string::npos);
}

TEST(KernelCostTest, NamesAndSizes) {
  EXPECT_EQ(DTypeBytes(DType::kBf16), 2);
  EXPECT_EQ(DTypeBytes(DType::kFp8), 1);
  EXPECT_EQ(DTypeBytes(DType::kFp4), 0.5);
  EXPECT_EQ(DTypeBytes(DType::kInt4), 0.5);
  EXPECT_STREQ(DTypeName(DType::kFp8), "fp8");
  EXPECT_STREQ(KernelClassName(KernelClass::kGroupedGemm), "grouped_gemm");
}

}  // namespace
}  // namespace specsim::compute

namespace specsim::compute {
namespace {

// Attention pays its fixed per-kernel cost (the attention ramp) in the compute term too:
//   T = max(ramp + F / (peak * e_c), memory term, floor),
// so a compute-bound attention (many queries, few bytes) costs ramp + per-query work, linear in
// the number of queries with the ramp as its intercept.
TEST(KernelCostTest, AttentionIsAFixedCostPlusPerQueryWork) {
  ComputeParams p;
  p.attention_memory_ramp_ns = 20000;     // 20 us fixed
  p.attention_compute_efficiency = 0.01;  // CUDA-core kernel: far from the tensor peak
  p.kernel_floor_ns = 0;
  KernelCostModel model(H200(), p);
  auto attention = [&](double queries) {
    Kernel k;
    k.kernel_class = KernelClass::kAttention;
    k.flops = queries * 1e9;  // 1 GFLOP per query
    k.bytes = 1e3;            // negligible KV bytes: compute-bound
    return NanosFromPicos(model.KernelTime(k));
  };
  // 1e9 / (peak TFLOP/s * 1e3 * 0.01) ns per query.
  const double per_query_ns = 1e9 / (model.PeakTflops(DType::kBf16) * 1e3 * 0.01);
  EXPECT_NEAR(attention(1), 20000 + per_query_ns, 1e-3 * per_query_ns + 1);
  EXPECT_NEAR(attention(8) - attention(4), 4 * per_query_ns, 1e-3 * per_query_ns + 2);
  // A GEMM with the same numbers pays no such fixed cost in its compute term.
  Kernel g;
  g.kernel_class = KernelClass::kGemm;
  g.flops = 1e9;
  g.m = 4096;
  EXPECT_LT(NanosFromPicos(model.KernelTime(g)), 20000);
}

}  // namespace
}  // namespace specsim::compute
