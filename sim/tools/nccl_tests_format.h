// nccl-tests' conventions (NVIDIA/nccl-tests 2.19.6 @a0b82b2, the build that wrote traces/nccl-tests/;
// src/common.cu, src/util.cu, src/*.cu; util.cu's header and footer re-read @0fdb00a), so that
// `specsim collective` reads and prints like all_reduce_perf and its siblings:
//
//   dtype names   int8 uint8 int32 uint32 int64 uint64 half float double bfloat16 f8e4m3 f8e5m2
//                 (test_typenames; specsim also takes fp32, bf16, fp16, fp8 and int as aliases)
//   redop names   sum prod max min avg (test_opnames); "none" for all-gather and all-to-all, which
//                 reduce nothing (the tests print "none" there)
//   size / count  size = the larger of the send and receive buffers per rank (bytes); count = the
//                 elements each rank passes to NCCL: all-reduce size / elt; all-gather and
//                 reduce-scatter base = (size / elt / n) rounded down to 16 bytes of elements, the
//                 size printed base * n * elt; all-to-all the same base, count printed = base
//                 (GetCollByteCount of each test)
//   sizes         -b minbytes, -e maxbytes, -f stepfactor or -i stepbytes (default 1M when no -f)
//   row           "%12li  %12li  %8s  %6s  %6s" (size, count, type, redop, root) then, out of place
//                 and in place, "  %7s  %6s  %6s    N/A" (time us, algbw, busbw GB/s, #wrong when
//                 not checked) with getFloatStr's widths (writeBenchmarkLineBody)
//   footer        "# %-20s : %d %s" out of bounds values, "# %-20s : %g %s" average bus bandwidth
//                 (the mean busbw of every printed half), "#" (writeResultFooter)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/coll/collective_planner.h"
#include "sim/core/status.h"

namespace specsim::tools {

struct NcclTestsType {
  std::string name;  // nccl-tests' name
  int bytes = 0;
};
// The type of a name or alias; InvalidArgument listing nccl-tests' names.
StatusOr<NcclTestsType> ParseNcclTestsType(const std::string& name);

// The reduction's name for `collective`: "none" where it reduces nothing; InvalidArgument for a
// name that is not one of nccl-tests' (sum prod max min avg).
StatusOr<std::string> NcclTestsRedop(coll::Collective collective, const std::string& redop);

struct NcclTestsSize {
  int64_t size_bytes = 0;  // what the size column prints (and what is simulated)
  int64_t count = 0;       // what the count column prints
};
// The size and count columns for a requested size (nccl-tests' -b/-e value) of `collective` on n
// ranks; size 0 when the size is below 16 bytes of elements per rank (nccl-tests rounds it to 0).
NcclTestsSize NcclTestsSizeOf(coll::Collective collective, int64_t requested_bytes, int element_bytes, int ranks);

// -b / -e / -f / -i as nccl-tests steps them: from min to max, times factor when factor > 1,
// else plus step. InvalidArgument for min > max, min < 1, or a step that would not advance.
StatusOr<std::vector<int64_t>> NcclTestsSizeSweep(int64_t min_bytes, int64_t max_bytes, double factor,
                                                  int64_t step_bytes);
// "32M", "1G", "8" (nccl-tests' parseInt: K, M, G suffixes of 1024).
StatusOr<int64_t> ParseNcclTestsBytes(const std::string& text);

// One half of a row: the out-of-place or the in-place call.
struct NcclTestsHalf {
  double time_us = 0;
  double algbw_gbps = 0;
  double busbw_gbps = 0;
};

// The three header lines, a row and the footer as nccl-tests prints them (both halves, #wrong N/A
// as with -c 0), with specsim's columns after each header line and row.
std::string NcclTestsHeader(const std::string& extra_names, const std::string& extra_units);
std::string NcclTestsRow(int64_t size_bytes, int64_t count, const std::string& type, const std::string& redop,
                         const NcclTestsHalf& out_of_place, const NcclTestsHalf& in_place, const std::string& extra);
// "# Out of bounds values : 0 OK", "# Avg bus bandwidth    : <mean busbw of every half>", "#".
std::string NcclTestsFooter(const std::vector<NcclTestsHalf>& halves);

}  // namespace specsim::tools
