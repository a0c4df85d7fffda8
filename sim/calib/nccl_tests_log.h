// nccl-tests logs as measurement traces: what all_reduce_perf, all_gather_perf, reduce_scatter_perf
// and alltoall_perf print (NVIDIA/nccl-tests 2.19.6 @a0b82b2, src/common.cu and src/util.cu) read into the
// items `compare` and `calibrate` take, so a box is checked, or its NCCL calibrated, from the logs a
// team already has.
//
// What is read:
//   "# Collective test starting: all_reduce_perf"        the collective
//   "# nThread 1 nGpus 1 ... iters: 20 ... graph: 0"     iterations, CUDA-graph launches
//   "#  Rank  0 Group  0 Pid 1230 on vm device  0 [0000:00:06] NVIDIA H200"
//                                                        one rank each: its device and GPU name
//   "... NCCL INFO NCCL_PROTO set by environment to LL"  the NCCL variables specsim models
//                                                        (NCCL_DEBUG=INFO logs print them)
//   a data row                                           two items: the out-of-place and the
//                                                        in-place half, each its time (us, the
//                                                        mean over iters nccl-tests prints)
// Rows of size 0 (nccl-tests' size below 16 bytes of elements per rank) are dropped and counted.
// The log names no links: the box comes from --hardware (the loaders say so when it is missing).
// Ranks are mapped to the box's GPUs by their device number when every rank runs on one host,
// else by rank. Simplification (stated): a log's time is the mean over its iterations, read as the
// item's median (nccl-tests prints no spread).
#pragma once

#include <string>
#include <string_view>

#include "sim/core/status.h"
#include "specsim/trace.pb.h"

namespace specsim::calib {

// True when `text` begins as an nccl-tests log does (its first non-empty line is "# nccl-tests
// version ..." or "# Collective test starting: ...").
bool LooksLikeNcclTestsLog(std::string_view text);

// The log as a trace (tool "nccl-tests"): its collective items, GPUs and NCCL variables.
// InvalidArgument naming `path` and the line for a log this cannot read: no collective named, a
// test other than the four, no rank line, a data row whose columns do not parse, no data row.
StatusOr<trace::Trace> ParseNcclTestsLog(std::string_view text, const std::string& path);

}  // namespace specsim::calib
