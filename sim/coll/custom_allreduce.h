// vLLM / SGLang "custom allreduce" as schedules: pull based, every data transfer is a
// net::Mechanism::kKernelRead issued by the destination (src_rank = the rank being read,
// dst_rank = the reader).
//
// Barriers: each rank writes a flag into every peer (kKernelWrite, or kHostStaged when the flags
// live in host memory; blocks * flag_bytes_per_block bytes, effect kNone, at least
// flag_latency_ps: the write, its fence and the peer's poll seeing it) and a rank's reads of peer
// p's data wait for p's flag to have arrived at it.
//
// Two buffer layouts:
//  registered (stage_input = false; vLLM's CUDA-graph path): peers read the input (kIn) directly;
//   two-shot's gather reads each peer's reduced output block (kOut).
//     one-shot: launch, start barrier, each rank pulls all n-1 peers' full input S and reduces into
//       its output (n-1 concurrent unordered_reduce pulls: the kernel sums the peers in registers
//       and stores once), end barrier. Per rank ingress (n-1) * S; with k of n ranks on one side of
//       a cut, each direction carries k(n-k) * S.
//     two-shot: launch, start barrier, reduce-scatter: rank r pulls block r (S/n) of every peer's
//       input and reduces into its output block r; middle barrier (flags after all of r's pulls);
//       all-gather: rank r pulls block p of peer p's output (kCopy) once p's middle flag arrived;
//       an end barrier only with two_shot_end_barrier (validate's fence kernel; vLLM's has none). Ingress 2(n-1)/n * S per rank; a cut carries 2k(n-k) S/n.
//  staged (stage_input = true; validate's kernels, vLLM's eager path for unregistered inputs): each
//   rank first copies its input into its exchange buffer (kStage) and peers read that; two-shot
//   reduces block r into a second exchange buffer (kStageOut) that the gather reads. With
//   host_mapped the exchange buffers and the flags live in mapped host memory (no peer access
//   needed): staging is a kernel write GPU -> host (S), every read crosses the reader's host link,
//   its own buffer's included (one-shot: n reads of S; two-shot reduce-scatter n reads of S/n plus
//   the S/n result written back to host while the reads run, gather n reads of S/n). Without
//   host_mapped the copy and the rank's own reads are local (kLocal; own reads are not charged).
//  registered in host memory (host_mapped without stage_input: vLLM's registered path where the
//   buffers are mapped host memory; validate's framework-barrier kernels as rank groups): as staged
//   through host memory without the staging write.
//
// Segments: num_segments = n, segment r = block r (bytes split by EvenShareBytes).
// SMs: the kernel's `blocks` thread blocks are shared by the pulls that run at once, so each pull
// has read_sms = blocks / pulls (fractional) for the outstanding-read cap.
#pragma once

#include <cstdint>

#include "sim/coll/schedule.h"
#include "sim/core/status.h"
#include "sim/core/time.h"

namespace specsim::coll {

struct CustomAllReduceOptions {
  int blocks = 36;                   // thread blocks (SMs) of the kernel; vLLM: 36 x 512 threads
  int64_t flag_bytes_per_block = 4;  // each block writes a 4-byte flag into every peer
  SimTime launch_delay_ps = 0;       // kernel launch, a kDelay per rank before the start barrier
  bool stage_input = false;          // see the layouts above
  bool host_mapped = false;          // exchange buffers and flags in mapped host memory (inputs staged there,
                                     // or, without stage_input, registered there: read in place)
  SimTime flag_latency_ps = 0;       // floor of every barrier flag's trip
  double read_gbps_per_block = 0;    // the most one block reads (payload); a pull's cap is read_sms x this,
                                     // replacing the fabric's outstanding-request cap; 0 = none (the fabric's)
  // Two-shot ends with a third barrier after its gather (validate's system-fence kernel). vLLM's
  // cross_device_reduce_2stage has none: start barrier, reduce-scatter, middle barrier, gather,
  // return (vLLM v0.8.2 csrc/custom_all_reduce.cuh as copied in flashinfer-ai/flashinfer
  // include/flashinfer/comm/vllm_custom_all_reduce.cuh @7db7cdd8).
  bool two_shot_end_barrier = false;
  // Added to the floor of two-shot's middle barrier flags: vLLM's middle barrier
  // (multi_gpu_barrier<ngpus, false, need_fence = true>, same file) orders the reduced block's
  // stores before its flag with st.release.sys, which waits for those stores to complete where the
  // block lies. 0: free (the block is in the GPU's own
  // memory, or every barrier fences anyway, as in validate's fence kernel).
  SimTime middle_release_ps = 0;
};

// InvalidArgument for num_ranks < 1, bytes < 0, blocks < 1, flag bytes < 0, or negative times.
Status ValidateCustomAllReduceOptions(int num_ranks, int64_t bytes, const CustomAllReduceOptions& options);

// REQUIRES: ValidateCustomAllReduceOptions(...).ok().
Schedule BuildOneShotAllReduce(int num_ranks, int64_t bytes, const CustomAllReduceOptions& options);
Schedule BuildTwoShotAllReduce(int num_ranks, int64_t bytes, const CustomAllReduceOptions& options);

}  // namespace specsim::coll
