// C-style launchers of specsim-validate's CUDA kernels (the .cu files hold only kernels and these
// launchers; the host harness lives in .cc files). Every launcher enqueues on `stream`, returns the
// launch error (cudaGetLastError) and never synchronizes. bf16 data is passed as void*.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

namespace specsim::validate {

// ---- transfers (copy_kernels.cu) ----
// Reads `bytes` at `src` (device, peer or mapped host memory) with 16-byte loads, grid-stride over
// `blocks` x `threads`; folds the data into sink[blockIdx.x] so the loads cannot be elided.
cudaError_t LaunchReadKernel(const void* src, int64_t bytes, uint64_t* sink, int blocks, int threads,
                             cudaStream_t stream);
// Writes `bytes` at `dst` with 16-byte stores of `value`.
cudaError_t LaunchWriteKernel(void* dst, int64_t bytes, uint32_t value, int blocks, int threads, cudaStream_t stream);
// An empty kernel (launch overhead).
cudaError_t LaunchEmptyKernel(int blocks, int threads, cudaStream_t stream);

// ---- data (copy_kernels.cu) ----
// The collective test pattern: element i of rank r is the small integer ((i*13 + r*7) % 17) - 8, exact
// in bf16, so every sum over <= 8 ranks is exact and the check can demand equality.
cudaError_t LaunchFillPattern(void* bf16, int64_t count, int64_t offset, int rank, cudaStream_t stream);
// Uniform values in [-scale, scale] from a counter hash of (seed, i).
cudaError_t LaunchFillRandom(void* bf16, int64_t count, uint64_t seed, float scale, cudaStream_t stream);
// Counts elements of `out` that differ from the expected result of a collective over the pattern:
// op 1 allreduce (out[i] = sum_r f(i, r)), 2 all-gather (out[j] = f(j % count_per_rank, j / count_per_rank)),
// 3 reduce-scatter on `rank` (out[i] = sum_r f(rank*count + i, r)). Adds mismatches to *mismatches.
cudaError_t LaunchCheckCollective(const void* out, int64_t count, int op, int nranks, int rank,
                                  unsigned long long* mismatches, cudaStream_t stream);
// max |a - b| over count bf16 elements, folded into *max_err_bits (float bits, atomicMax; start at 0).
cudaError_t LaunchMaxAbsDiff(const void* a, const void* b, int64_t count, unsigned int* max_err_bits,
                             cudaStream_t stream);

// ---- pacing (pacing_kernels.cu) ----
// One thread reads the GPU's %globaltimer (ns) into stamps[2 * c + which] where c = *counter, when
// c < capacity; the `which == 1` stamp then sets *counter = c + 1. A CUDA graph holding
// [stamp 0, op, stamp 1] (fixed kernel arguments) thereby writes replay i's start and end into
// slots 2i and 2i+1: reset *counter to 0 before the replays to be kept. REQUIRES which in {0, 1}.
cudaError_t LaunchStampKernel(uint64_t* stamps, unsigned int* counter, int which, int capacity, cudaStream_t stream);
// One block of one thread that spins on %globaltimer until `ns` nanoseconds have passed since it
// started (a slower rank's extra GPU time).
cudaError_t LaunchSpinKernel(uint64_t ns, cudaStream_t stream);

// ---- host-staged (host_staged_kernels.cu) ----
// Flag round trips through mapped host memory. One thread of the initiator writes base + i + 1 to
// *ping (st.release.sys) and spins (ld.acquire.sys) until *pong holds the same value, for i in
// [0, rounds); the responder waits for each value on *ping and writes it to *pong. Before a launch
// both flags must hold `base` (the previous launch's base + rounds). kBoth runs the initiator in
// block 0 and the responder in block 1 of one kernel; kInitiator / kResponder run one side (the
// other side is another GPU's kernel or a host thread). round_cycles[i]: the initiator's clock64
// cycles of round i; span[0] the initiator's globaltimer ns over all rounds, span[1] its clock64
// cycles over the same (their ratio converts cycles to time). status[0] counts waits that saw a
// value other than the last round's or the expected one, status[1] waits that gave up after
// timeout_ns (the launch then ends early; both must be 0 for a valid measurement).
enum class HostFlagRole { kBoth, kInitiator, kResponder };
struct HostFlagArgs {
  uint32_t* ping = nullptr;  // mapped host memory, device address
  uint32_t* pong = nullptr;  // mapped host memory, device address (another 128-byte line)
  uint32_t base = 0;
  int rounds = 1;
  HostFlagRole role = HostFlagRole::kBoth;
  uint64_t* round_cycles = nullptr;  // device, rounds entries (not used by kResponder)
  uint64_t* span = nullptr;          // device, 2 entries (not used by kResponder)
  unsigned int* status = nullptr;    // device, 2 counters, zeroed by the caller
  uint64_t timeout_ns = 2000000000ULL;
};
cudaError_t LaunchHostFlagKernel(const HostFlagArgs& args, cudaStream_t stream);

// Small reads of mapped host memory. The buffer holds `chunks` (a power of two) chunks of 256 bytes
// to read, every 32-bit word of chunk c equal to HostChaseNext(c, chunks), then the writers'
// regions (write_chunks_per_block chunks per writing block). Blocks [0, reader_blocks) read: in each
// the first bytes_per_read / min(bytes_per_read, 16) threads load min(bytes_per_read, 16) bytes each
// (__ldcv: never served from a GPU cache) of the same chunk, and every thread follows
// reads_in_flight independent chains for `steps` steps (the next chunk is read from the data, so at
// most reads_in_flight loads per thread are outstanding); every loaded word is checked, mismatches
// counted in status[0]. Blocks [reader_blocks, blocks) write (__stwt) reads_in_flight chunks' first
// bytes_per_read bytes per step, chunk k of writer w holding HostWriterValue(w, k), until every
// reader has finished (readers_done, a zeroed device counter, reaches reader_blocks) or timeout_ns
// passed (status[1]). block_span[2b], [2b+1]: block b's globaltimer start and end; block_steps[b] its
// steps. REQUIRES bytes_per_read in {4, 16, 32, 64, 128, 256}, reads_in_flight in {1, 2, 4, 8},
// threads >= 16 (else cudaErrorInvalidValue).
struct HostSmallReadsArgs {
  void* buffer = nullptr;  // mapped host memory, device address
  int64_t chunks = 0;
  int64_t write_chunks_per_block = 0;
  int bytes_per_read = 16;
  int reads_in_flight = 1;
  int steps = 1;
  int blocks = 1;
  int reader_blocks = 1;
  int threads = 32;
  uint32_t seed = 0;                     // varies the chains' starting chunks between launches
  uint64_t* block_span = nullptr;        // device, 2 * blocks
  uint64_t* block_steps = nullptr;       // device, blocks
  unsigned int* status = nullptr;        // device, 2 counters, zeroed by the caller
  unsigned int* readers_done = nullptr;  // device, zeroed by the caller
  uint64_t timeout_ns = 2000000000ULL;
};
cudaError_t LaunchHostSmallReads(const HostSmallReadsArgs& args, cudaStream_t stream);
// The chase: a full-period linear congruential step over a power-of-two number of chunks (every
// chunk is visited once per `chunks` steps).
__host__ __device__ inline uint32_t HostChaseNext(uint32_t chunk, uint32_t chunks) {
  return (chunk * 5u + 0x9e3779b9u) & (chunks - 1u);
}
// What writer w stores into chunk k of its region (never 0, which the region is cleared to).
__host__ __device__ inline uint32_t HostWriterValue(uint32_t writer, uint32_t chunk) {
  return ((writer + 1u) << 16) ^ (chunk + 1u);
}

// ---- custom allreduce (allreduce_kernels.cu) ----
constexpr int kMaxRanks = 8;
constexpr int kMaxArBlocks = 64;
// How the kernels' barriers order memory (allreduce_kernels.cu says what each does).
enum class CustomBarrierKind {
  kSystemFence,  // every thread fences at system scope around each barrier; input staged first
  kFramework,    // vLLM's / SGLang's kernel: volatile flags, release/acquire only at two-shot's middle
};
struct CustomAllreduceArgs {
  int rank = 0;
  int nranks = 1;
  int64_t count = 0;            // bf16 elements, multiple of 8
  const void* input = nullptr;  // this rank's input (device)
  void* output = nullptr;       // this rank's output (device)
  // Exchange buffers of every rank, each 2*count elements ([staged input | reduced slice]), in
  // peer device memory (P2P) or mapped host memory; all readable and writable from this GPU.
  void* exchange[kMaxRanks] = {};
  // Signal areas of every rank: kMaxRanks * kMaxArBlocks uint32 flags each (times flag_stride),
  // zero-initialised.
  uint32_t* signals[kMaxRanks] = {};
  // Per-block barrier counters (device): kMaxArBlocks entries, kMaxRanks * kMaxArBlocks with rank
  // groups (group g, block b at g * kMaxArBlocks + b, like the signal slots: the grid may change).
  uint32_t* epochs = nullptr;
  int* error = nullptr;  // set to 1 when a barrier waits longer than timeout_ns
  uint64_t timeout_ns = 5000000000ULL;
  int blocks = 36;  // <= kMaxArBlocks, the same on every rank
  int threads = 512;
  CustomBarrierKind barrier = CustomBarrierKind::kSystemFence;
  // > 1: this launch runs ranks [rank, rank + rank_groups) as groups of `blocks` blocks on one GPU
  // (input and output then hold rank_groups consecutive arrays of count elements).
  int rank_groups = 1;
  // Elements from an exchange buffer's start to two-shot's reduced slices; 0: count. A fixed offset
  // (the largest count of a sweep) keeps the inputs' region written by the host alone.
  int64_t reduced_offset = 0;
  // The reduce loops read the inputs through the read-only path (ld.global.nc) instead of plain loads.
  bool load_nc = false;
  // Device, kCustomPhases entries per block of the launch (rank groups included), or null: each
  // block's thread 0 writes its globaltimer at kernel start, after the start barrier, after the
  // reduce (two-shot: after the middle barrier) and at the end (after the last barrier).
  uint64_t* phase_ns = nullptr;
  // uint32 words between two flag slots: 1 packs 32 blocks' flags into one 128-byte line (as
  // vLLM's Signal packs 4 blocks' 8 ranks); 32 gives every slot a line of its own. The signal
  // areas must then hold kMaxRanks * kMaxArBlocks * flag_stride words.
  int flag_stride = 1;
  // Block-major flags as vLLM's Signal lays them out (a block's kMaxRanks slots side by side; needs
  // flag_stride 1): 4 blocks x 8 ranks share a 128-byte line.
  bool flag_block_major = false;
};
constexpr int kMaxFlagStride = 32;
constexpr int kCustomPhases = 4;
// kSystemFence: one-shot: stage input, barrier, sum every rank's full staged input, barrier.
// kFramework: the inputs must already be in the exchange buffers' first halves; no staging.
cudaError_t LaunchOneShotAllreduce(const CustomAllreduceArgs& args, cudaStream_t stream);
// Two-shot: stage input, barrier, reduce slice `rank` from all ranks, barrier, gather every
// rank's reduced slice, barrier.
cudaError_t LaunchTwoShotAllreduce(const CustomAllreduceArgs& args, cudaStream_t stream);
// How many blocks of `threads` threads of the one-shot (two-shot) kernel fit on `device` at once;
// rank groups wait on each other, so a launch must not exceed it. 0 when CUDA cannot tell.
int CustomAllreduceMaxCoresidentBlocks(bool two_shot, int threads, int device);

// ---- attention (attention_kernels.cu, flash_attention_kernels.cu) ----
// Attention over a KV cache, bf16 in and out, fp32 softmax (flash-decoding split-K), for q_per_seq
// query tokens per sequence (1: decode; N: verify, causal among the N: token j of a sequence sees
// cache positions t <= context - q_per_seq + j).
// q: [rows][q_heads][head_dim] with rows = seqs * q_per_seq (row r belongs to sequence r / q_per_seq);
// k: [seqs][kv_heads][context][head_dim]; v: likewise with v_head_dim, or v == k when kv_shared
// (MLA latent cache: V is the first v_head_dim values of each cached row). out: [rows][q_heads][v_head_dim].
// workspace: at least AttentionWorkspaceBytes(...) bytes when splits > 1.
struct AttentionArgs {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* out = nullptr;
  void* workspace = nullptr;
  int seqs = 1, q_per_seq = 1, q_heads = 1, kv_heads = 1, head_dim = 128, v_head_dim = 128;
  int64_t context = 1;
  int splits = 1;
  int64_t q_row_stride = 0;  // elements between q rows; 0 = q_heads * head_dim (e.g. a fused qkv output row)
  // false: with splits > 1 only the main kernel runs (its partials stay in the workspace), to time
  // it apart from the split merge (kernels suite).
  bool combine = true;
};
int64_t AttentionWorkspaceBytes(int rows, int q_heads, int v_head_dim, int splits);

// The attention implementations; each trace item records the one it ran (AttentionParams.implementation).
enum class AttentionImpl {
  // Tensor-core flash attention (flash_attention_kernels.cu): GQA rows packed into 16-row mma tiles,
  // cp.async double-buffered 64-token K/V tiles. head_dim = v_head_dim = 128, separate K and V.
  kFlashMma,
  // CUDA-core reference (attention_kernels.cu): a warp per cached token, any head size the launcher
  // takes (128, 576), MLA's shared latent cache included.
  kSimtReference,
  // Tensor-core MLA attention (flash_mla_kernels.cu): one shared latent cache row of 576 values per
  // token (V = its first 512), the heads x query tokens of a sequence in 16-row mma tiles, one tile
  // per block of 4 warps with Q in registers, 32-token tiles double-buffered (74 KiB of shared
  // memory, 255 registers: 2 blocks per SM), splits interleaved over the tiles; its own split merge.
  kFlashMla,
};
// "flash_mma", "simt_reference", "flash_mla": the names the trace records.
const char* AttentionImplName(AttentionImpl impl);
// What validate's decode loop and kernels suite run: flash_mma where it applies (GQA, head_dim 128),
// flash_mla for MLA's latent cache of 576 / 512, else simt_reference.
AttentionImpl ProductionAttentionImpl(int head_dim, int v_head_dim, bool kv_shared);
// The head dims simt_reference has an instantiation for (64, 128, 576): the others launch nothing.
bool ReferenceAttentionSupports(int head_dim);
// Split-KV partitions the launch policy picks: enough blocks for two per SM, each split at least
// `min_split_tokens` of context (flash_mma: 128, two K/V tiles; simt_reference: 256).
int AttentionSplits(AttentionImpl impl, const AttentionArgs& a, int sm_count);  // flash_mla: rounded down
// Blocks of the main kernel before splitting (sequences x KV heads x row groups).
int AttentionBlocks(AttentionImpl impl, const AttentionArgs& a);
cudaError_t LaunchAttention(AttentionImpl impl, const AttentionArgs& a, cudaStream_t stream);
// The implementations' own launchers (LaunchAttention dispatches) and the split merge that
// flash_mma and simt_reference share (one block of 128 threads per (query row, head) and 128
// output values; flash_mla has its own).
cudaError_t LaunchFlashMmaAttention(const AttentionArgs& a, cudaStream_t stream);
cudaError_t LaunchReferenceAttention(const AttentionArgs& a, cudaStream_t stream);
cudaError_t LaunchAttentionCombine(const AttentionArgs& a, cudaStream_t stream);
// flash_mma: 16-row tiles per block (1, 2 or 4) and blocks before splitting.
int FlashMmaRowTilesPerBlock(int q_heads, int kv_heads, int q_per_seq);
// The instantiation for 1, 2 or 4 row tiles per block on the current device: registers per thread
// and resident blocks per SM (cudaOccupancyMaxActiveBlocksPerMultiprocessor, 128 threads, 64 KiB
// of shared memory), which sim/compute/attention_cost.cc SpecsimValidateKernel("flash_mma") assumes.
struct FlashMmaOccupancy {
  bool ok = false;
  int row_tiles_per_block = 0;
  int registers_per_thread = 0;
  int resident_blocks_per_sm = 0;
};
FlashMmaOccupancy FlashMmaOccupancyOf(int row_tiles_per_block);
int FlashMmaBlocks(const AttentionArgs& a);
// flash_mla: its one instantiation (one 16-row tile per block, 74 KiB of shared memory), and its
// blocks before splitting (sequences x row tiles). With splits > 1 its launcher also runs its own
// merge (one 256-thread block per (query row, head), a programmatic dependent launch), not
// LaunchAttentionCombine; the workspace size is AttentionWorkspaceBytes all the same. REQUIRES (launcher, else cudaErrorInvalidValue):
// head_dim 576, v_head_dim 512, v == k, kv_heads 1, q_row_stride a multiple of 8.
FlashMmaOccupancy FlashMlaOccupancyOf();
int FlashMlaBlocks(const AttentionArgs& a);
cudaError_t LaunchFlashMlaAttention(const AttentionArgs& a, cudaStream_t stream);

// ---- layer pieces (layer_kernels.cu) ----
// If residual != nullptr: residual += x (in place), then out = rmsnorm(residual) * weight;
// else out = rmsnorm(x) * weight. [tokens][hidden] bf16, hidden a multiple of 8.
cudaError_t LaunchRmsNorm(const void* x, void* residual, const void* weight, void* out, int64_t tokens, int hidden,
                          float eps, cudaStream_t stream);
// out[t][i] = silu(gu[t][i]) * gu[t][inter + i]; gu: [tokens][2*inter].
cudaError_t LaunchSiluMul(const void* gu, void* out, int64_t tokens, int inter, cudaStream_t stream);
// out[t] = table[ids[t] - vocab_start] when in [0, vocab_local), else zeros (vocab-parallel embedding).
cudaError_t LaunchEmbedding(const int* ids, const void* table, void* out, int64_t tokens, int hidden,
                            int64_t vocab_start, int64_t vocab_local, cudaStream_t stream);
// Copies this step's K and V (from qkv output rows [q | k | v]) into the cache at position `pos`.
cudaError_t LaunchKvAppend(const void* qkv, void* k_cache, void* v_cache, int seqs, int q_per_seq, int q_heads,
                           int kv_heads, int head_dim, int64_t context, int64_t pos, cudaStream_t stream);
// ids[r] = argmax_j logits[r][j]; logits: [rows][vocab] bf16.
cudaError_t LaunchArgmax(const void* logits, int* ids, int rows, int64_t vocab, cudaStream_t stream);
// out[t][0..hidden) = rmsnorm(x[t][0..hidden)) * weight over rows x_stride / out_stride elements apart
// (MLA: q_a / kv_a norms on slices of the fused projection; in place when out == x). Strides and
// hidden multiples of 8.
cudaError_t LaunchRmsNormRows(const void* x, int64_t x_stride, const void* weight, void* out, int64_t out_stride,
                              int64_t tokens, int hidden, float eps, cudaStream_t stream);
// MLA latent cache append: cache[seq][(pos + row % q_per_seq) % context][0..width) = src[row][0..width),
// rows src_stride elements apart, row r of sequence r / q_per_seq.
cudaError_t LaunchRowsToCache(const void* src, int64_t src_stride, int width, void* cache, int seqs, int q_per_seq,
                              int64_t context, int64_t pos, cudaStream_t stream);
// MoE router: per token the k largest of `experts` logits (ties: lower index), ids[t*k + j] in
// descending order, weights[t*k + j] = softmax over the k picked logits. k <= 64, experts <= 12288.
cudaError_t LaunchTopK(const void* logits, int64_t tokens, int experts, int k, int* ids, float* weights,
                       cudaStream_t stream);
// MoE dispatch of the synthetic decode loop: out[s] = in[s / k] for slot s < tokens * k (slot t*k + j
// holds token t's j-th pick), in[s % tokens] for padding slots; [slots][hidden].
cudaError_t LaunchMoeGather(const void* in, void* out, int64_t tokens, int k, int64_t slots, int hidden,
                            cudaStream_t stream);
// out[t] = shared[t] (when not null) + sum_j weights[t*k + j] * expert_out[t*k + j]; fp32 sums.
cudaError_t LaunchMoeCombine(const void* expert_out, const float* weights, const void* shared, void* out,
                             int64_t tokens, int k, int hidden, cudaStream_t stream);

}  // namespace specsim::validate
