#include "sim/profile/kernel_class.h"

#include <gtest/gtest.h>

namespace specsim::profile {
namespace {

TEST(KernelClassTest, NamesFromProfilesOfTorchAndServingStacks) {
  struct Case {
    const char* name;
    KernelClass want;
  };
  const Case cases[] = {
      // traces/profiles/torch-tp2-h200-2026-11-30 (torch 2.11, cuBLASLt, cuDNN SDPA)
      {"nvjet_sm90_tst_64x8_64x16_4x1_v_bz_splitK_NNT", KernelClass::kGemm},
      {"void cublasLt::splitKreduce_kernel<32, 16, int, float, __nv_bfloat16, float, __nv_bfloat16>(...)",
       KernelClass::kGemm},
      {"cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x128_4x1x1_cga1x1x1",
       KernelClass::kAttention},
      {"void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(...)",
       KernelClass::kNorm},
      {"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", KernelClass::kNccl},
      {"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<c10::BFloat16, "
       "at::native::ArgMaxOps<c10::BFloat16>>>",
       KernelClass::kSampling},
      {"void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<c10::BFloat16>>",
       KernelClass::kOther},
      // serving stacks' kernels (names as their sources define them)
      {"void flashinfer::BatchDecodeWithPagedKVCacheKernel<...>", KernelClass::kAttention},
      {"void flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4>>", KernelClass::kAttention},
      {"void vllm::cross_device_reduce_1stage<__nv_bfloat16, 2>(...)", KernelClass::kCustomAllreduce},
      {"fused_moe_kernel", KernelClass::kMoe},
      {"void vllm::moe::topkGatingSoftmax<...>", KernelClass::kMoe},
      {"void flashinfer::norm::RMSNormKernel<8, __nv_bfloat16>", KernelClass::kNorm},
      // torch.compile (Inductor): a fused residual add + RMSNorm, and a fused SiLU x up.
      {"triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_0", KernelClass::kNorm},
      {"triton_poi_fused_mul_silu_0", KernelClass::kOther},
      {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", KernelClass::kGemm},
      {"void flashinfer::BatchQKApplyRotaryPosIdsCosSinCacheKernel<...>", KernelClass::kRotary},
      {"void flashinfer::sampling::TopKTopPSamplingFromProbKernel<...>", KernelClass::kSampling},
  };
  for (const Case& c : cases) EXPECT_EQ(ClassifyKernel(c.name), c.want) << c.name;
}

TEST(KernelClassTest, NcclKernelNamesOfBothNamingSchemes) {
  NcclKernel k = ParseNcclKernelName("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
  ASSERT_TRUE(k.ok);
  EXPECT_EQ(k.op, "AllReduce");
  EXPECT_EQ(k.reduction, "Sum");
  EXPECT_EQ(k.dtype, "bf16");
  EXPECT_EQ(k.algorithm, "RING");
  EXPECT_EQ(k.protocol, "LL");
  k = ParseNcclKernelName("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
  EXPECT_EQ(k.op, "AllGather");
  EXPECT_EQ(k.reduction, "");
  EXPECT_EQ(k.algorithm, "RING");
  k = ParseNcclKernelName("ncclKernel_AllReduce_RING_LL128_Sum_bfloat16(ncclWorkElem)");  // NCCL < 2.19
  EXPECT_EQ(k.protocol, "LL128");
  EXPECT_EQ(k.dtype, "bfloat16");
  EXPECT_EQ(ParseNcclKernelName("ncclDevKernel_ReduceScatter_Sum_f32_COLLNET_DIRECT_SIMPLE(x)").algorithm,
            "COLLNET_DIRECT");
  EXPECT_FALSE(ParseNcclKernelName("gemm_kernel").ok);
}

}  // namespace
}  // namespace specsim::profile
