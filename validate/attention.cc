// Host side of the attention implementations: names, the production dispatch, the split policy.
#include <algorithm>

#include "validate/kernels.h"

namespace specsim::validate {

const char* AttentionImplName(AttentionImpl impl) {
  switch (impl) {
    case AttentionImpl::kFlashMma: return "flash_mma";
    case AttentionImpl::kSimtReference: return "simt_reference";
    case AttentionImpl::kFlashMla: return "flash_mla";
  }
  return "unknown";
}

AttentionImpl ProductionAttentionImpl(int head_dim, int v_head_dim, bool kv_shared) {
  if (head_dim == 128 && v_head_dim == 128 && !kv_shared) return AttentionImpl::kFlashMma;
  if (head_dim == 576 && v_head_dim == 512 && kv_shared) return AttentionImpl::kFlashMla;
  return AttentionImpl::kSimtReference;
}

bool ReferenceAttentionSupports(int head_dim) { return head_dim == 64 || head_dim == 128 || head_dim == 576; }

int AttentionBlocks(AttentionImpl impl, const AttentionArgs& a) {
  if (impl == AttentionImpl::kFlashMma) return FlashMmaBlocks(a);
  if (impl == AttentionImpl::kFlashMla) return FlashMlaBlocks(a);
  const int per_block = a.head_dim == 576 ? 2 : 8;  // virtual heads per block (attention_kernels.cu)
  const int groups = (a.q_heads / std::max(1, a.kv_heads) * a.q_per_seq + per_block - 1) / per_block;
  return a.seqs * a.kv_heads * groups;
}

int AttentionSplits(AttentionImpl impl, const AttentionArgs& a, int sm_count) {
  const int64_t min_split_tokens = impl == AttentionImpl::kSimtReference ? 256 : 128;
  const int64_t blocks = std::max(1, AttentionBlocks(impl, a));
  // Enough blocks for two per SM: rounded up, except flash_mla (two resident blocks per SM) rounds
  // down, so that its one round of blocks is a full one and no SM takes a second round alone.
  const int64_t sms2 = 2 * int64_t(std::max(1, sm_count));
  const int64_t want =
      impl == AttentionImpl::kFlashMla ? std::max<int64_t>(1, sms2 / blocks) : (sms2 + blocks - 1) / blocks;
  return static_cast<int>(std::clamp<int64_t>(want, 1, std::max<int64_t>(1, a.context / min_split_tokens)));
}

cudaError_t LaunchAttention(AttentionImpl impl, const AttentionArgs& a, cudaStream_t stream) {
  switch (impl) {
    case AttentionImpl::kFlashMma: return LaunchFlashMmaAttention(a, stream);
    case AttentionImpl::kFlashMla: return LaunchFlashMlaAttention(a, stream);
    case AttentionImpl::kSimtReference: break;
  }
  return LaunchReferenceAttention(a, stream);
}

}  // namespace specsim::validate
