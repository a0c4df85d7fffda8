// An eager pass's host time, operator by operator, read from the profile's own events. Under
// PyTorch an eager pass is host-bound: its host span is the sum of what each operator costs the
// host thread (Python, the dispatcher, the launches), then the read-back.
//
// The operators of a pass: the top-level cpu_op events on the pass range's thread, inside the
// range (outermost only: aten::mm inside aten::matmul is one call, of aten::matmul). Operator i's
// host cost = start of operator i+1 - start of operator i (what the thread spent from issuing it
// to issuing the next: the operator, and the Python between them). The read-back: the last
// top-level operator that waits for the GPU (a cudaStreamSynchronize / cudaDeviceSynchronize /
// cudaEventSynchronize / blocking cudaMemcpy inside it, as .cpu() / .item() / .tolist() do); the
// operator before it costs up to its start, and the read-back itself ("sync") costs the range's
// end - max(its start, the pass's last kernel end): its host cost once the GPU is done, not the
// wait. Operators after the read-back are not counted. Without a read-back the last operator
// costs up to the range's end. An operator's kernels: those whose launch call lies inside it on
// the same thread (CUPTI correlation), their summed durations its device time.
//
// Tokens of a pass: the rows of its first RMSNorm's input (every sequence's tokens; with
// record_shapes=True), 0 when the profile has none.
//
// In the measurement trace each operator of a pass kind and token count is a KIND_HOST_OP item
// (its host-cost quantiles, kHostQuantiles of them, over every call in those passes; op_class library for GEMMs,
// collective for c10d / NCCL calls, metadata for calls without a kernel, sync for the read-back,
// kernel otherwise) and each eager pass group a KIND_HOST_LOOP item (its operators in order, then
// "sync"), which calibrate fits (llm::HostOpCost, "<op>/q<tokens>") and compare prices
// (sim/calib/host_op_predictors.h). The profiler's own cost per operator is in these figures: they
// price profiled passes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/profile/kineto_trace.h"
#include "specsim/trace.pb.h"

namespace specsim::profile {

// One top-level operator call of a pass.
struct HostOpCall {
  std::string name;
  int64_t start_ns = 0;
  int64_t host_ns = 0;  // its host cost (above)
  int kernels = 0;
  int64_t device_ns = 0;  // its kernels' summed durations
  bool syncs = false;     // waits for the GPU inside
};

// One eager pass's operators.
struct EagerPassOps {
  std::vector<HostOpCall> ops;  // before the read-back, in issue order
  bool has_sync = false;
  HostOpCall sync;      // the read-back (name "sync"), when has_sync
  int tokens = 0;       // rows of the first RMSNorm's input, 0 when unknown
  int64_t head_ns = 0;  // range start to the first operator (not priced)
};

// A trace's host calls indexed for the pass scans: operators and launch calls per thread by start
// (an enclosing operator before those it encloses), kernels by correlation id.
class HostCallIndex {
 public:
  explicit HostCallIndex(const KinetoTrace& t);
  // The pass whose range is [start_ns, end_ns] on thread `tid`, its kernels ending at gpu_end_ns.
  EagerPassOps PassOps(int64_t tid, int64_t start_ns, int64_t end_ns, int64_t gpu_end_ns) const;

 private:
  const KinetoTrace& t_;
  std::map<int64_t, std::vector<const KinetoHostCall*>> ops_;  // by thread
  std::map<int64_t, std::vector<const KinetoLaunch*>> calls_;  // by thread
  std::map<int64_t, std::vector<const KinetoOp*>> norms_;      // RMSNorm calls with shapes, by thread
  std::map<int64_t, const KinetoKernel*> kernel_of_;           // by correlation
};

// An operator over the passes of one kind and token count on one rank.
struct HostOpGroup {
  std::string kind;  // the passes' kind (PassNameKindName)
  std::string op;    // the operator's name, or "sync"
  std::string op_class;
  int tokens = 0, rank = 0;
  int kernels = 0;               // per call, the most seen
  double device_us = 0;          // median over calls of its kernels' time
  std::vector<double> host_us;   // every call's host cost
  std::string ItemName() const;  // "profile/host_op/<kind>/<op>/q<tokens>/rank<r>"
};

// An eager pass group's operators (one rank's first pass with a read-back), as a loop.
struct HostLoopGroup {
  std::string pass;  // the PassGroup's Key()
  std::string phase, kind;
  int tokens = 0, rank = 0, layers = 0;
  std::vector<std::string> ops;      // in issue order, then "sync"
  double device_us = 0;              // the group's median GPU busy time
  std::vector<double> host_span_us;  // each pass's range
  std::string ItemName() const;      // "profile/host_loop/<phase>/eager/q<tokens>/rank<r>"
};

// The trace items (above). `loop`: stats = its passes' host spans.
void DescribeHostOpItem(const HostOpGroup& g, trace::Item* it);
void DescribeHostLoopItem(const HostLoopGroup& g, trace::Item* it);

// The quantiles an operator's host cost is written with: 101 (0, 1, ..., 100 %), not the probe's
// 21. A profile's costs have rare long calls (a GC pause, the profiler flushing its buffers: 3.2 ms
// once among 240 SDPA calls of 200 us); with 21 quantiles the draws between the 95th percentile and
// the slowest call (5% of them) average half that call, which priced the probe's profiled decode
// pass 45% long; with 101 the slowest call weighs 1%.
inline constexpr int kHostQuantiles = 101;

// kHostQuantiles equally spaced quantiles of `v`, linear between order statistics.
// REQUIRES: !v.empty().
std::vector<double> HostQuantiles(std::vector<double> v);

// The op class of an operator's name and kernel count (above).
std::string HostOpClass(const std::string& op, int kernels);

}  // namespace specsim::profile
