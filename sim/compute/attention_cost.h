// Cost model of one attention implementation over a KV cache (decode: q = 1 query token per
// sequence; verify: q > 1), from how the kernel is launched and what each part of it costs.
//
// A flash-decoding kernel packs the G = q_heads / kv_heads heads of a KV head times the q query
// tokens of a sequence into G * q "rows" that share one K/V stream, pads them to its row tile (16
// for mma.sync tensor cores), gives each block up to `max_rows_per_block` of them and one split of
// the context, and walks that split in tiles of `kv_tile_tokens` tokens; with more than one split
// a second kernel merges the partials. Geometry (AttentionGeometry):
//
//   rows_padded     = ceil(G q / row_tile) * row_tile
//   rows_per_block  = min(max_rows_per_block, smallest row_tile * 2^i >= rows_padded)
//   row_blocks      = ceil(rows_padded / rows_per_block)
//   splits          = the item's, else clamp(ceil(split_blocks_per_sm * SMs / (seqs kv_heads row_blocks)),
//                     1, context / min_split_tokens)
//   blocks          = seqs * kv_heads * row_blocks * splits
//   waves           = ceil(blocks / (blocks_per_sm * SMs))
//   kv_tiles        = ceil(ceil(context / splits) rounded up to kv_tile_tokens / kv_tile_tokens)
//
// Time (AttentionTimeNs):
//
//   t = ramp + max( KV_bytes / (bw * e_m),  waves * kv_tiles * (tile_ns + row_ns * rows_per_block) )
//            + [splits > 1] combine_ns * seqs * q * q_heads * splits
//
// The first term streams the cache (bandwidth-bound: long contexts, few rows); the second is the
// critical path of the busiest SM: every block walks its tiles one after another, each tile costing
// a fixed part (load latency, barriers, softmax) and a part per row of the block (the tensor-core
// work of S = Q K^T and O = P V for the block's rows, padding included: q = 2..4 at G = 4 costs what
// q = 1 does, then the cost grows in steps of a row tile); the combine pass reads and merges every
// split's partial of every (query row, head). The q = 1 -> q > 1 step of production stacks (a
// decode kernel for q = 1, a prefill kernel for verify) is two implementations, one per regime
// (AttentionRegimes), each with its own geometry and fitted costs.
//
// Simplified: waves are whole (a partial last wave costs a full one), every block of a wave takes
// as long as the busiest, the row blocks of a (sequence, KV head) re-read the cache from L2 (DRAM
// bytes are the cache once), and the combine pass does not overlap the main kernel.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/status.h"

namespace specsim::compute {

struct AttentionImplementation {
  std::string name;  // e.g. "flash_mma" (specsim-validate's tensor-core kernel)
  // Launch geometry: properties of the kernel's source and launch policy.
  int row_tile = 16;
  int max_rows_per_block = 64;
  int kv_tile_tokens = 64;
  int blocks_per_sm = 2;          // resident blocks per SM (registers / shared memory)
  int split_blocks_per_sm = 2;    // split-KV target: blocks before splitting x splits ~ this x SMs
  int min_split_tokens = 128;     // no split shorter than this
  int max_splits = 0;             // 0: no limit
  // Costs (ns), fitted by `specsim calibrate` per implementation.
  double ramp_ns = 10000;
  double memory_efficiency = 0.8;  // of the GPU's memory bandwidth, streaming the cache
  double tile_ns = 500;
  double row_ns = 30;
  double combine_ns = 1.5;
};

// Geometry fields >= 1 (max_splits >= 0), efficiency in (0, 1], costs >= 0; messages name the field.
Status ValidateAttentionImplementation(const AttentionImplementation& impl);

// One attention call per GPU.
struct AttentionCall {
  int64_t seqs = 1;
  int64_t query_tokens = 1;   // per sequence
  int64_t q_heads = 1;        // per GPU
  int64_t kv_heads = 1;       // per GPU
  int64_t context = 1;        // cached tokens attended per sequence
  double kv_bytes = 0;        // cache bytes read per call
  int splits = 0;             // 0: the implementation's split policy
};

struct AttentionGeometry {
  int64_t rows_padded = 0;     // per (sequence, KV head)
  int64_t rows_per_block = 0;
  int64_t row_blocks = 0;
  int64_t splits = 0;
  int64_t blocks = 0;
  int64_t waves = 0;
  int64_t kv_tiles = 0;        // per block
};

// REQUIRES: ValidateAttentionImplementation(impl) OK, call fields >= 1, sm_count >= 1 (CHECKed).
AttentionGeometry GeometryOf(const AttentionImplementation& impl, const AttentionCall& call, int sm_count);

// The terms of the time above, in ns.
struct AttentionTerms {
  double ramp_ns = 0;
  double memory_ns = 0;     // KV_bytes / (bw * e_m)
  double tiles_ns = 0;      // the busiest SM's tile path
  double combine_ns = 0;
  double total_ns() const;
};
AttentionTerms AttentionTime(const AttentionImplementation& impl, const AttentionCall& call, int sm_count,
                             double memory_bandwidth_gbps);

// The implementations a scenario's attention runs per regime: q = 1 (decode) and q > 1 (verify).
// Both empty: the roofline attention model of kernel_cost.h.
struct AttentionRegimes {
  std::vector<AttentionImplementation> decode;  // empty or one
  std::vector<AttentionImplementation> verify;  // empty or one
  const AttentionImplementation* For(int64_t query_tokens) const;
};

// specsim-validate's two kernels (validate/kernels.h AttentionImpl), geometry from their source
// (validate/flash_attention_kernels.cu, validate/attention_kernels.cu, validate/attention.cc) and
// costs as the defaults above until a calibration replaces them: "flash_mma", "simt_reference".
// NotFound listing the names for another name.
StatusOr<AttentionImplementation> ValidateKernelGeometry(const std::string& name);

}  // namespace specsim::compute
