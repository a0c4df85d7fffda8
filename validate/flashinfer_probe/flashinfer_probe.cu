// FlashInfer's FA2 paged-attention kernel, planned and launched as SGLang's FlashInfer backend
// launches it, behind a C ABI that validate/flashinfer_attention_probe.py calls through ctypes.
//
// SGLang runs decode (q = 1, tensor cores: GQA group >= 4) and EAGLE target verify (q = draft
// tokens) on FlashInfer's BatchPrefillWithPagedKVCacheKernel, planned by PrefillPlan
// (docs/reference/flashinfer-attention-geometry.md, sections 1 and 3). FlashInfer cannot be
// installed on the GPU machine (no PyPI), but its attention templates are header-only: this file
// is compiled against a checkout's include/ directory (validate/flashinfer_probe/build.sh), which
// stays out of this repository. Only this glue is ours: the Params struct mirrors the one
// FlashInfer's JIT generates for the fa2 backend (csrc/batch_prefill_customize_config.jinja with
// flashinfer/jit/attention/modules.py gen_batch_prefill_module's fa2 parameter list), and
// fi_run sets it as csrc/batch_prefill.cu BatchPrefillWithPagedKVCacheRun does.
//
// Fixed: bf16 Q / KV / output, head_dim 128, int32 indices, NHD layout, no RoPE, no sliding
// window, no logit cap (Llama-3.1-8B under SGLang). Mask: none (decode) or custom (verify, the
// EAGLE tree mask; SGLang always passes one for target verify).
//
// fi_cap_shared_memory emulates another GPU's shared memory on this one: FlashInfer reads the
// per-SM and per-block limits (cudaDevAttrMaxSharedMemoryPerMultiprocessor / ...PerBlockOptin) to
// choose CTA_TILE_Q = 16's feasibility and NUM_MMA_KV (the KV tile), so capping them to SM120's
// 102400 / 101376 bytes launches the tiles an RTX PRO 6000 gets, on this GPU's SMs.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <string>

namespace {

int g_smem_per_sm_cap = 0;     // 0: the device's own
int g_smem_per_block_cap = 0;  // 0: the device's own

cudaError_t ProbeDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  cudaError_t e = cudaDeviceGetAttribute(value, attr, device);
  if (e != cudaSuccess) return e;
  if (attr == cudaDevAttrMaxSharedMemoryPerMultiprocessor && g_smem_per_sm_cap > 0 && *value > g_smem_per_sm_cap)
    *value = g_smem_per_sm_cap;
  if (attr == cudaDevAttrMaxSharedMemoryPerBlockOptin && g_smem_per_block_cap > 0 && *value > g_smem_per_block_cap)
    *value = g_smem_per_block_cap;
  return cudaSuccess;
}

}  // namespace

// FlashInfer's calls of cudaDeviceGetAttribute go through the cap above.
#define cudaDeviceGetAttribute ProbeDeviceGetAttribute

#include <flashinfer/attention/mask.cuh>
#include <flashinfer/attention/prefill.cuh>
#include <flashinfer/attention/scheduler.cuh>
#include <flashinfer/attention/variants.cuh>
#include <flashinfer/fastdiv.cuh>
#include <flashinfer/layout.cuh>
#include <flashinfer/page.cuh>
#include <flashinfer/pos_enc.cuh>

#undef cudaDeviceGetAttribute

using namespace flashinfer;

// Named (not anonymous): a kernel's template argument needs external linkage for nvcc's stubs.
namespace specsim_probe {

using DTypeQ = __nv_bfloat16;
using DTypeKV = __nv_bfloat16;
using DTypeO = __nv_bfloat16;
using IdType = int32_t;
constexpr uint32_t kHeadDim = 128;

// The fa2 backend's PagedParams (the JIT template's fields, in its order).
struct PagedParams {
  using DTypeQ = specsim_probe::DTypeQ;
  using DTypeKV = specsim_probe::DTypeKV;
  using DTypeO = specsim_probe::DTypeO;
  using IdType = specsim_probe::IdType;

  DTypeQ* q;
  paged_kv_t<DTypeKV, IdType> paged_kv;
  IdType* q_indptr;
  DTypeO* o;
  float* lse;
  uint_fastdiv group_size;

  uint8_t* maybe_custom_mask;
  int32_t* maybe_mask_indptr;
  float* maybe_alibi_slopes;
  uint32_t* maybe_prefix_len_ptr;
  uint16_t* maybe_token_pos_in_items_ptr;
  uint16_t* maybe_max_item_len_ptr;
  uint8_t* maybe_k_cache_sf;
  uint8_t* maybe_v_cache_sf;
  double logits_soft_cap;
  double sm_scale;
  double rope_rcp_scale;
  double rope_rcp_theta;
  int64_t token_pos_in_items_len;

  uint32_t num_qo_heads;
  IdType q_stride_n;
  IdType q_stride_h;
  uint32_t k_sf_stride_page;
  uint32_t k_sf_stride_n;
  uint32_t k_sf_stride_h;
  uint32_t v_sf_stride_page;
  uint32_t v_sf_stride_n;
  uint32_t v_sf_stride_h;
  int32_t window_left;

  IdType* request_indices;
  IdType* qo_tile_indices;
  IdType* kv_tile_indices;
  IdType* merge_indptr;
  IdType* o_indptr;
  bool* block_valid_mask;
  IdType* kv_chunk_size_ptr;
  uint32_t max_total_num_rows;
  uint32_t* total_num_rows;
  uint32_t padded_batch_size;
  bool partition_kv;

  __host__ __device__ __forceinline__ uint32_t get_qo_len(uint32_t batch_idx) const {
    return q_indptr[batch_idx + 1] - q_indptr[batch_idx];
  }
  __host__ __device__ __forceinline__ uint32_t get_kv_len(uint32_t batch_idx) const {
    return paged_kv.get_length(batch_idx);
  }
};

}  // namespace specsim_probe

namespace {

using specsim_probe::DTypeKV;
using specsim_probe::DTypeO;
using specsim_probe::DTypeQ;
using specsim_probe::IdType;
using specsim_probe::kHeadDim;
using specsim_probe::PagedParams;

std::string g_error;

template <typename T>
T* At(void* base, int64_t offset) {
  return reinterpret_cast<T*>(static_cast<char*>(base) + offset);
}

}  // namespace

extern "C" {

// The last error's message ("" when none).
const char* fi_last_error() { return g_error.c_str(); }

// Shared memory limits FlashInfer sees from now on (bytes; 0 restores the device's).
void fi_cap_shared_memory(int per_sm_bytes, int per_block_optin_bytes) {
  g_smem_per_sm_cap = per_sm_bytes;
  g_smem_per_block_cap = per_block_optin_bytes;
}

// PrefillPlan as the wrapper's plan() calls it. qo_indptr / kv_indptr: host arrays of batch + 1
// (kv in pages = tokens at page size 1). plan_out: the 15 values of PrefillPlanInfo::ToVector.
// Returns 0, or -1 with fi_last_error set.
int fi_plan(const int32_t* qo_indptr_h, const int32_t* kv_indptr_h, int batch, int total_num_rows, int num_qo_heads,
            int num_kv_heads, int page_size, int enable_cuda_graph, int uniform_q_len, void* float_ws,
            int64_t float_ws_bytes, void* int_ws, void* int_ws_host, int64_t int_ws_bytes, int64_t* plan_out,
            void* stream) {
  try {
    PrefillPlanInfo info;
    cudaError_t e = PrefillPlan<IdType>(
        float_ws, size_t(float_ws_bytes), int_ws, int_ws_host, size_t(int_ws_bytes), info,
        const_cast<IdType*>(qo_indptr_h), const_cast<IdType*>(kv_indptr_h), uint32_t(total_num_rows), uint32_t(batch),
        uint32_t(num_qo_heads), uint32_t(num_kv_heads), kHeadDim, kHeadDim, uint32_t(page_size), enable_cuda_graph != 0,
        /*sizeof_dtype_o=*/2, /*window_left=*/-1, /*fixed_split_size=*/-1,
        /*disable_split_kv=*/false, /*num_colocated_ctas=*/0, int64_t(uniform_q_len), static_cast<cudaStream_t>(stream),
        /*kv_dtype_bytes=*/2);
    if (e != cudaSuccess) {
      g_error = std::string("PrefillPlan: ") + cudaGetErrorString(e);
      return -1;
    }
    const std::vector<int64_t> v = info.ToVector();
    std::memcpy(plan_out, v.data(), v.size() * sizeof(int64_t));
    return 0;
  } catch (const std::exception& ex) {
    g_error = std::string("PrefillPlan: ") + ex.what();
    return -1;
  }
}

// One call of the paged kernel (and the merge kernel when the plan splits), as
// BatchPrefillWithPagedKVCacheRun sets it up. k_cache / v_cache: [pages, page_size, kv_heads,
// 128] (NHD) bf16; q / o: [rows, q_heads, 128]. custom_mask: packed bits (verify) or null (decode).
int fi_run(const int64_t* plan, void* q, void* k_cache, void* v_cache, int32_t* qo_indptr_d, int32_t* kv_indptr_d,
           int32_t* kv_indices_d, int32_t* last_page_len_d, void* o, int batch, int num_qo_heads, int num_kv_heads,
           int page_size, uint8_t* custom_mask, int32_t* mask_indptr, void* float_ws, void* int_ws, void* stream) {
  try {
    PrefillPlanInfo info;
    info.FromVector(std::vector<int64_t>(plan, plan + 15));
    PagedParams p;
    std::memset(&p, 0, sizeof(p));
    p.q = static_cast<DTypeQ*>(q);
    p.paged_kv = paged_kv_t<DTypeKV, IdType>(
        uint32_t(num_kv_heads), uint32_t(page_size), kHeadDim, uint32_t(batch), QKVLayout::kNHD,
        static_cast<DTypeKV*>(k_cache), static_cast<DTypeKV*>(v_cache), kv_indices_d, kv_indptr_d, last_page_len_d);
    p.q_indptr = qo_indptr_d;
    p.o = static_cast<DTypeO*>(o);
    p.lse = nullptr;
    p.group_size = uint_fastdiv(uint32_t(num_qo_heads / num_kv_heads));
    p.maybe_custom_mask = custom_mask;
    p.maybe_mask_indptr = mask_indptr;
    p.logits_soft_cap = 0.0;
    p.sm_scale = 1.0 / std::sqrt(double(kHeadDim));
    p.rope_rcp_scale = 1.0;
    p.rope_rcp_theta = 1.0 / 1e4;
    p.num_qo_heads = uint32_t(num_qo_heads);
    p.q_stride_n = IdType(num_qo_heads * kHeadDim);
    p.q_stride_h = IdType(kHeadDim);
    p.window_left = -1;
    p.request_indices = At<IdType>(int_ws, info.request_indices_offset);
    p.qo_tile_indices = At<IdType>(int_ws, info.qo_tile_indices_offset);
    p.kv_tile_indices = At<IdType>(int_ws, info.kv_tile_indices_offset);
    p.o_indptr = At<IdType>(int_ws, info.o_indptr_offset);
    p.kv_chunk_size_ptr = At<IdType>(int_ws, info.kv_chunk_size_ptr_offset);
    DTypeO* tmp_v = nullptr;
    float* tmp_s = nullptr;
    if (info.split_kv) {
      p.merge_indptr = At<IdType>(int_ws, info.merge_indptr_offset);
      tmp_v = At<DTypeO>(float_ws, info.v_offset);
      tmp_s = At<float>(float_ws, info.s_offset);
      if (info.enable_cuda_graph) p.block_valid_mask = At<bool>(int_ws, info.block_valid_mask_offset);
    }
    p.padded_batch_size = uint32_t(info.padded_batch_size);
    p.max_total_num_rows = uint32_t(info.total_num_rows);
    if (info.enable_cuda_graph) p.total_num_rows = At<uint32_t>(int_ws, info.total_num_rows_offset);
    const auto s = static_cast<cudaStream_t>(stream);
    cudaError_t status = cudaSuccess;
    auto launch = [&](auto mask) {
      constexpr MaskMode kMask = decltype(mask)::value;
      using Variant = DefaultAttention<kMask == MaskMode::kCustom, false, false, false>;
      DISPATCH_CTA_TILE_Q(info.cta_tile_q, CTA_TILE_Q, {
        status = BatchPrefillWithPagedKVCacheDispatched<CTA_TILE_Q, kHeadDim, kHeadDim, PosEncodingMode::kNone,
                                                        /*USE_FP16_QK_REDUCTION=*/false, kMask, Variant, PagedParams>(
            p, tmp_v, tmp_s, /*enable_pdl=*/false, s);
      });
    };
    if (custom_mask != nullptr)
      launch(std::integral_constant<MaskMode, MaskMode::kCustom>{});
    else
      launch(std::integral_constant<MaskMode, MaskMode::kNone>{});
    if (status != cudaSuccess) {
      g_error = std::string("BatchPrefillWithPagedKVCacheDispatched: ") + cudaGetErrorString(status);
      return -1;
    }
    return 0;
  } catch (const std::exception& ex) {
    g_error = std::string("fi_run: ") + ex.what();
    return -1;
  }
}

}  // extern "C"
