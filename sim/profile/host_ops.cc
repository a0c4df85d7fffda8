#include "sim/profile/host_ops.h"

#include <algorithm>

#include "sim/core/median.h"
#include "sim/profile/item_stats.h"

namespace specsim::profile {
namespace {

// A host call that waits for the GPU.
bool Synchronizes(const std::string& call) {
  return call.find("Synchronize") != std::string::npos || call == "cudaMemcpy" || call == "cuMemcpyDtoH_v2";
}

template <class T>
void SortByStart(std::vector<const T*>* v) {
  // By start; an enclosing call (longer) before the calls it encloses that start with it.
  std::stable_sort(v->begin(), v->end(), [](const T* a, const T* b) {
    return a->start_ns != b->start_ns ? a->start_ns < b->start_ns : a->duration_ns > b->duration_ns;
  });
}

// The calls of `v` (sorted by start) that start within [from, to].
template <class T>
std::pair<size_t, size_t> Within(const std::vector<const T*>& v, int64_t from, int64_t to) {
  auto lo = std::lower_bound(v.begin(), v.end(), from, [](const T* c, int64_t t) { return c->start_ns < t; });
  auto hi = std::upper_bound(v.begin(), v.end(), to, [](int64_t t, const T* c) { return t < c->start_ns; });
  return {static_cast<size_t>(lo - v.begin()), static_cast<size_t>(hi - v.begin())};
}

}  // namespace

HostCallIndex::HostCallIndex(const KinetoTrace& t) : t_(t) {
  for (const KinetoHostCall& o : t.cpu_ops) ops_[o.tid].push_back(&o);
  for (const KinetoLaunch& l : t.launches) calls_[l.tid].push_back(&l);
  for (const KinetoOp& o : t.ops)
    if (IsNormOp(o.name) && !o.input_dims.empty() && o.input_dims[0].size() >= 2) norms_[o.tid].push_back(&o);
  for (auto& [tid, v] : ops_) SortByStart(&v);
  for (auto& [tid, v] : calls_) SortByStart(&v);
  for (auto& [tid, v] : norms_) SortByStart(&v);
  for (const KinetoKernel& k : t.kernels)
    if (k.correlation >= 0) kernel_of_[k.correlation] = &k;
}

EagerPassOps HostCallIndex::PassOps(int64_t tid, int64_t start_ns, int64_t end_ns, int64_t gpu_end_ns) const {
  EagerPassOps pass;
  std::vector<HostOpCall> top;
  auto ops = ops_.find(tid);
  auto calls = calls_.find(tid);
  if (ops != ops_.end()) {
    const auto [a, b] = Within(ops->second, start_ns, end_ns);
    int64_t open_until = INT64_MIN;  // the end of the last top-level operator
    for (size_t i = a; i < b; ++i) {
      const KinetoHostCall& o = *ops->second[i];
      if (o.start_ns < open_until) continue;  // nested in the previous top-level operator
      open_until = o.start_ns + o.duration_ns;
      HostOpCall c;
      c.name = o.name;
      c.start_ns = o.start_ns;
      if (calls != calls_.end()) {
        const auto [ca, cb] = Within(calls->second, o.start_ns, open_until);
        for (size_t j = ca; j < cb; ++j) {
          const KinetoLaunch& l = *calls->second[j];
          c.syncs = c.syncs || Synchronizes(l.name);
          auto k = kernel_of_.find(l.correlation);
          if (l.correlation < 0 || k == kernel_of_.end()) continue;
          ++c.kernels;
          c.device_ns += k->second->duration_ns;
        }
      }
      top.push_back(std::move(c));
    }
  }
  // The read-back: the last operator that waits for the GPU.
  int sync = -1;
  for (int i = static_cast<int>(top.size()) - 1; i >= 0 && sync < 0; --i)
    if (top[i].syncs) sync = i;
  const size_t priced = sync >= 0 ? static_cast<size_t>(sync) : top.size();
  for (size_t i = 0; i < priced; ++i) {
    HostOpCall c = top[i];
    const int64_t next = i + 1 < top.size() ? top[i + 1].start_ns : end_ns;
    c.host_ns = std::max<int64_t>(0, (i + 1 < priced || sync >= 0 ? next : end_ns) - c.start_ns);
    pass.ops.push_back(std::move(c));
  }
  if (sync >= 0) {
    pass.has_sync = true;
    pass.sync = top[sync];
    pass.sync.name = "sync";
    pass.sync.host_ns = std::max<int64_t>(0, end_ns - std::max(top[sync].start_ns, gpu_end_ns));
  }
  pass.head_ns = top.empty() ? 0 : top.front().start_ns - start_ns;
  // Tokens: the first RMSNorm's input rows.
  auto norms = norms_.find(tid);
  if (norms != norms_.end()) {
    const auto [a, b] = Within(norms->second, start_ns, end_ns);
    if (a < b) {
      const std::vector<int64_t>& dims = norms->second[a]->input_dims[0];
      int64_t rows = 1;
      for (size_t d = 0; d + 1 < dims.size(); ++d) rows *= dims[d];
      pass.tokens = static_cast<int>(rows);
    }
  }
  return pass;
}

std::string HostOpGroup::ItemName() const {
  return "profile/host_op/" + kind + "/" + op + "/q" + std::to_string(tokens) + "/rank" + std::to_string(rank);
}

std::string HostLoopGroup::ItemName() const {
  return "profile/host_loop/" + phase + "/eager/q" + std::to_string(tokens) + "/rank" + std::to_string(rank);
}

std::string HostOpClass(const std::string& op, int kernels) {
  if (op == "sync") return "sync";
  if (op.find("c10d::") == 0 || op.find("allreduce") != std::string::npos ||
      op.find("all_reduce") != std::string::npos || op == "record_param_comms")
    return "collective";
  if (op == "aten::matmul" || op == "aten::mm" || op == "aten::addmm" || op == "aten::linear" || op == "aten::bmm")
    return "library";
  return kernels == 0 ? "metadata" : "kernel";
}

std::vector<double> HostQuantiles(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  std::vector<double> q;
  for (int i = 0; i < kHostQuantiles; ++i) q.push_back(PercentileOf(v, i / double(kHostQuantiles - 1)));
  return q;
}

void DescribeHostOpItem(const HostOpGroup& g, trace::Item* it) {
  it->set_suite(trace::SUITE_PACING);
  it->set_kind(trace::KIND_HOST_OP);
  it->set_name(g.ItemName());
  trace::HostOpParams* p = it->mutable_host_op();
  p->set_framework("pytorch (profiled: Kineto)");
  p->set_op(g.op);
  p->set_op_class(g.op_class);
  p->set_kernels(g.kernels);
  p->set_device_us(g.device_us);
  for (double q : HostQuantiles(g.host_us)) p->add_host_quantiles_us(q);
  p->set_rank(g.rank);
  p->set_tokens(g.tokens);
  p->set_host_context("profiled");
  FillStats(g.host_us, it->mutable_stats());
}

void DescribeHostLoopItem(const HostLoopGroup& g, trace::Item* it) {
  it->set_suite(trace::SUITE_PACING);
  it->set_kind(trace::KIND_HOST_LOOP);
  it->set_name(g.ItemName());
  trace::HostLoopParams* p = it->mutable_host_loop();
  p->set_framework("pytorch (profiled: Kineto)");
  p->set_capture("eager");
  p->set_what(g.kind);
  for (const std::string& op : g.ops) p->add_ops(op);
  p->set_layers(g.layers);
  p->set_tokens(g.tokens);
  p->set_device_us(g.device_us);
  p->set_rank(g.rank);
  FillStats(g.host_span_us, it->mutable_stats());
}

}  // namespace specsim::profile
