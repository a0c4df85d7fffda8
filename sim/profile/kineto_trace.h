// A PyTorch profiler (Kineto) trace of one rank, read for what specsim compares: the GPU kernels,
// the host's profiler ranges (torch.profiler.record_function / user annotations) and the host
// launch calls that tie a kernel to its range (by CUPTI correlation id).
//
// Kineto writes Chrome-trace JSON ({"traceEvents": [...], "distributedInfo": {...}, ...}), plain
// or gzip-compressed (torch.profiler's export_chrome_trace, SGLang's /start_profile, vLLM's
// VLLM_TORCH_PROFILER_DIR). The file is parsed as a stream (SAX): memory grows with the events
// kept, not with the file, so a trace of 1 GB is read without holding its text. Times are integer
// nanoseconds (Kineto writes microseconds with three decimals).
//
// Kept: "X" events of category kernel (with the NCCL arguments torch records on collective
// kernels: collective name, element counts, dtype, group size), user_annotation (host ranges),
// gpu_user_annotation (the same ranges' GPU spans), cuda_runtime / cuda_driver (launch calls), and
// the cpu_op events of the operators whose shapes the importer reads (IsShapeOp: GEMMs, attention,
// norms, argmax, with "Input Dims" and "Input type" when the profiler ran with
// record_shapes=True), and every cpu_op event as a host call (name, thread, start, duration: the
// eager passes' operators, host_ops.h). Every other event is counted by category in `ignored`, never dropped
// silently.
//
// Every field read is checked (the kMaxTrace* bounds below). An event kept by category whose field fails
// its check (a start or duration that is absent, not a finite number, negative or past its bound;
// an id or count that is not an integer in its range; no name; a kernel without "args", an NCCL
// kernel without its grid) is dropped and counted in `dropped` by category and reason, never read as a
// default. A file-level field that fails (distributedInfo's rank or world_size, a deviceProperties
// entry) makes the file unusable: InvalidArgument naming the file and the field.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/core/status.h"

namespace specsim::profile {

struct KinetoKernel {
  std::string name;
  int64_t start_ns = 0, duration_ns = 0;
  int device = -1;
  int64_t stream = -1;
  int64_t correlation = -1;
  int grid_x = -1;  // blocks in x (an NCCL kernel's channels)
  // NCCL collective kernels (torch's record_param_comms arguments), empty / -1 otherwise.
  std::string collective;  // e.g. "allreduce", "_allgather_base"
  int64_t in_elements = -1, out_elements = -1;
  std::string dtype;  // e.g. "BFloat16"
  int group_size = -1;
  // The operator that launched it (its cpu_op's "External id"; -1 when none was recorded). A
  // kernel replayed from a CUDA graph carries the graph launch's id, not its operator's.
  int64_t external_id = -1;
};

// The operators whose cpu_op events are kept (with their shapes): the GEMMs aten::mm / addmm, the
// attention forwards the SDPA backends launch their kernels from (aten::_cudnn_attention_forward,
// aten::_flash_attention_forward, aten::_efficient_attention_forward), RMSNorms (operators named
// rms_norm / rmsnorm, as vLLM's and SGLang's custom ops are, and torch.compile's Triton kernels
// of a norm: triton_* with rsqrt in the name), aten::argmax (greedy sampling) and aten's pointwise and
// copy operators (IsElementwiseOp).
bool IsShapeOp(const std::string& name);
// Its kinds: the GEMMs, the attention forwards, the RMSNorms (as above).
bool IsGemmOp(const std::string& name);
bool IsAttentionOp(const std::string& name);
bool IsNormOp(const std::string& name);
// aten::add / add_ / sub / mul / mul_ / div / neg / silu / gelu / sigmoid / exp / cat / copy_ / where /
// fill_ / masked_fill_: one elementwise or copy kernel per call.
bool IsElementwiseOp(const std::string& name);

// A kept operator call (cpu_op): its kernels carry its external id.
struct KinetoOp {
  std::string name;
  int64_t start_ns = 0, duration_ns = 0;
  int64_t tid = -1;
  int64_t external_id = -1;
  std::vector<std::vector<int64_t>> input_dims;  // "Input Dims": one shape per input ({} for scalars)
  std::vector<std::string> input_types;          // "Input type", e.g. "c10::BFloat16"
  // Per input: the summed elements of a TensorList input's tensors (aten::cat's), 0 for another input.
  std::vector<int64_t> input_list_elements;
};

// A host range (user_annotation) or its GPU span (gpu_user_annotation).
struct KinetoRange {
  std::string name;
  int64_t start_ns = 0, duration_ns = 0;
  int64_t tid = -1;
  int64_t external_id = -1;
};

// A host call that launched GPU work (cudaLaunchKernel, cuLaunchKernelEx, cudaGraphLaunch, ...).
struct KinetoLaunch {
  std::string name;
  int64_t start_ns = 0, duration_ns = 0;
  int64_t tid = -1;
  int64_t correlation = -1;
};

// Any operator call (cpu_op) on the host: where its host time went.
struct KinetoHostCall {
  std::string name;
  int64_t start_ns = 0, duration_ns = 0;
  int64_t tid = -1;
};

// deviceProperties: the GPUs the profiler saw.
struct KinetoDevice {
  int id = -1;
  std::string name;
  int sm_count = 0;
  int64_t memory_bytes = 0;
  int compute_major = 0, compute_minor = 0;
  int64_t l2_cache_bytes = 0;
};

struct KinetoTrace {
  std::string path;
  std::vector<KinetoDevice> devices;
  int rank = -1;       // distributedInfo.rank; -1 when the trace has none
  int world_size = 0;  // distributedInfo.world_size
  std::string nccl_version;
  std::vector<KinetoKernel> kernels;    // in file order
  std::vector<KinetoRange> ranges;      // host ranges
  std::vector<KinetoRange> gpu_ranges;  // their GPU spans
  std::vector<KinetoLaunch> launches;
  std::vector<KinetoOp> ops;               // IsShapeOp calls, in file order
  std::vector<KinetoHostCall> cpu_ops;     // every cpu_op, in file order
  std::map<std::string, int64_t> ignored;  // events not kept, by category ("" = none)
  // Events of a kept category dropped for a field that failed its check: by category ("kernel",
  // "cpu_op", ...), then by reason, e.g. "duration not a finite number in [0, 8.64e+10] us (dur)".
  std::map<std::string, std::map<std::string, int64_t>> dropped;
  int64_t events = 0;  // traceEvents entries read
};

// The bounds of the fields read (microseconds as Kineto writes them). A start time up to 4e15 us
// (127 years: Kineto's clocks, since boot or since the epoch at 1.8e15 us, stay below) and a
// duration up to one day keep every time in int64 nanoseconds with room for start + duration.
inline constexpr double kMaxTraceStartUs = 4e15;
inline constexpr double kMaxTraceDurationUs = 86400e6;
inline constexpr int kMaxTraceWorldSize = 65536;                    // distributedInfo.world_size
inline constexpr int64_t kMaxTraceId = int64_t{1} << 53;            // ids, streams, threads: exact in a double
inline constexpr int64_t kMaxTraceDim = (int64_t{1} << 31) - 1;     // a tensor dimension (Input Dims)
inline constexpr int64_t kMaxTraceListElements = int64_t{1} << 50;  // a TensorList input's summed elements
inline constexpr int64_t kMaxTraceElements = int64_t{1} << 40;      // an NCCL message's elements

// What one trace file may hold. Past a bound the file is refused (InvalidArgument naming the file
// and the bound) as soon as the reader gets there, before the rest is decompressed or parsed.
// Generous for real profiles: one rank of a serving run writes a few MB to tens of MB gzip-compressed
// (torch-tp2-h200's ranks: 0.4-0.7 MB holding 6-11 MB of JSON, 12-16x), an 8-rank profile a few
// hundred MB in all; a gzip bomb (1000x and more) stops within its first 64 MiB.
struct TraceLimits {
  int64_t max_file_bytes = int64_t{1} << 30;  // the file as stored (gzip or plain): 1 GiB
  int64_t max_text_bytes = int64_t{2} << 30;  // its JSON text after decompression: 2 GiB
  // A gzip file's text may run past `expansion_allowance_bytes` only up to `max_expansion` bytes of
  // text per compressed byte read so far.
  int64_t max_expansion = 100;
  int64_t expansion_allowance_bytes = int64_t{64} << 20;
};

// Reads `path` (gzip when its first two bytes are the gzip magic). InvalidArgument naming the file
// for a file that is not JSON, not a Kineto trace (no "traceEvents" array), truncated (with the
// byte offset where the text stops), past a bound of `limits`, with a file-level field that fails
// its check, or without a usable kernel event (saying why the kernels were dropped); NotFound when
// it cannot be opened.
StatusOr<KinetoTrace> ReadKinetoTrace(const std::string& path, const TraceLimits& limits = {});

// The same from JSON text in memory (`name` stands for the file in messages).
StatusOr<KinetoTrace> ParseKinetoTrace(const std::string& json_text, const std::string& name);

}  // namespace specsim::profile
