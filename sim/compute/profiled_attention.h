// Attention kernels seen in a profiler trace (specsim import-profile): a name for the kernel that
// ran, and the launch geometry of attention_cost.h read from that name, so that `specsim calibrate`
// fits the costs of a framework's own attention (cuDNN's SDPA, PyTorch's FlashAttention-2 or
// memory-efficient kernels) per kernel, as it does for specsim-validate's kernels.
//
// Names. The importer names a call by its main kernel's family and tile (rows of queries x tokens
// of K/V per block step), "+split" when the call also ran a split-KV reduction kernel:
//   cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x128_4x1x1_...
//       -> "cudnn_sdpa_sm90/64x128"           (tile Br x Bc x head_dim)
//   cudnn_..._sdpa_sm80_flash_fprop_wmma_f16_knob_35_16x128x128_1x4x1_... with lean_reduction_kernel
//       -> "cudnn_sdpa_sm80/16x128+split"
//   pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, ...
//       -> "torch_flash_fwd/128x64"           (traits: head_dim, kBlockM, kBlockN, warps)
//   pytorch_flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4, ...
//       -> "torch_flash_fwd_splitkv/64x128+split"
//   fmha_cutlassF_bf16_aligned_64x128_rf_sm80 -> "torch_mem_efficient/64x128"
//
// Geometry of such a name (ProfiledAttentionKernel): a block takes `rows` query rows of one query
// head (FlashAttention-2 and cuDNN index K/V by head / G and do not pack a KV group's heads into
// one block: per_head_blocks) and walks the context in tiles of `tokens`. [ASSUMED, from the
// kernels' tile sizes: one resident block per SM (a 64 x 128 bf16 tile of Q with double-buffered K
// and V tiles of 128 x 128 takes ~80-160 KiB of shared memory; the 16-row decode kernel is given
// the same); a "+split" call divides the context into floor(2 SMs / blocks per split) splits (it ran
// a reduction kernel, so at least two where its heads alone fill the SMs once), each split at least
// one tile long.] FlashAttention-2's two kernels take their launch from its source instead
// (docs/reference/fa2-geometry.md): the query heads folded into the rows at q = 1, the split
// kernel's count by num_splits_heuristic (SplitPolicy::kFlashAttention2, checked on the H200's
// grids), its combine kernel 4 rows per block. Only the geometry comes from the name; every cost is fitted
// (fit_attention.cc), so a wrong resident count moves the fitted costs, not the shape in q and
// context that the geometry gives.
#pragma once

#include <string>

#include "sim/core/status.h"
#include "sim/compute/attention_cost.h"

namespace specsim::compute {

// The implementation name of a profiled attention call from its longest kernel's name (above);
// "" when the kernel's family or tile is not recognised.
std::string ProfiledAttentionName(const std::string& main_kernel, bool split_reduction);

// The geometry of a name ProfiledAttentionName gives, costs at the defaults; NotFound for another.
StatusOr<AttentionImplementation> ProfiledAttentionKernel(const std::string& name);

// The implementation whose fitted per-step costs price `name` where no fit of `name` itself exists:
// another launch of the same kernel source (vLLM's vllm_triton_decode_mla/RxT: SGLang's
// triton_decode_mla/RxT, fitted with its values read from the key tile where vLLM's copy loads them
// again, from L1/L2; vLLM's vllm_fa2_decode/RxT and vllm_fa2_verify/RxT: PyTorch's
// torch_flash_fwd_splitkv/RxT+split, the same FlashAttention-2 split kernel in vLLM's fork, which
// gathers K/V through a block table); empty for every other name.
std::string SameKernelBodyAs(const std::string& name);

// Where no fit of `name` or of its kernel body exists: the implementation of another kernel source
// of the same class whose fitted per-step costs price `name` until it is measured itself.
// FlashInfer's FA2 kernels (flashinfer_fa2[_graph]/smNN: their own fit, configs/calibration/
// h200-flashinfer.textproto, comes first; this is for a box without it) take FlashAttention-2's
// split kernel's (torch_flash_fwd_splitkv/64x128+split): both mma.sync m16n8k16 tiles in
// 128-thread blocks with an online softmax over a paged cache and a merge of the splits' partials;
// the tile costs per 128 KV tokens (31.7% fast against FlashInfer's measured calls).
// FlashAttention-3's (vllm_fa3[_graph]/sm90, sglang_fa3[_graph]/sm90) take the same: the
// FlashAttention algorithm with split-KV and a combine, its 64 x 128 tile vLLM's at q G <= 64
// (Hopper's wgmma and warp specialisation are not measured here). Empty for every other name.
std::string SameCostClassAs(const std::string& name);

// specsim-validate's kernels (SpecsimValidateKernel) and profiled ones: the geometry of any
// attention implementation name a trace item can carry; NotFound listing both kinds otherwise.
StatusOr<AttentionImplementation> AttentionKernelOfName(const std::string& name);

}  // namespace specsim::compute
