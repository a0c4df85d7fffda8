// Synthetic trace items for sim/calib's tests (calib_test.cc, compare_test.cc and the fitters'
// fit_*_test.cc), named by their position and "measured" by the caller (Measure: the predictor's
// time under known parameters, so a fit's truth is known); the hardware configs they run on; and
// the synthetic box whose launch and kernel costs the compute fits must recover.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "sim/calib/fit.h"
#include "sim/calib/fit_context.h"
#include "sim/calib/params.h"
#include "sim/calib/predictors.h"
#include "sim/io/hardware_loader.h"
#include "sim/net/topology.h"
#include "specsim/trace.pb.h"

namespace specsim::calib::testing {

inline net::Topology Hardware(const std::string& file) {
  auto t = io::LoadHardwareFile("configs/hardware/" + file);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return *t;
}

inline net::Topology H200() { return Hardware("h200-1x.textproto"); }

// Two NVLink-joined H200s.
inline net::Topology H200x2() { return Hardware("h200-2x-nvlink.textproto"); }

// Fills every item's median with the predictor's time under `params` (a synthetic measurement).
inline void Measure(trace::Trace* t, const net::Topology& topo, const CalibParams& params) {
  trace::Trace copy = *t;
  Predictor p(copy, topo, params);
  for (trace::Item& it : *t->mutable_items()) {
    Prediction pr = p.Predict(it);
    ASSERT_TRUE(pr.simulated) << it.name() << ": " << pr.reason;
    it.mutable_stats()->set_median_us(pr.predicted_us);
  }
}

// The fitted value of `name` (a test failure when it was not fitted).
inline double Fitted(const FitResult& r, const std::string& name) {
  for (const FittedParam& p : r.fitted)
    if (p.name == name) return p.value;
  ADD_FAILURE() << name << " not fitted";
  return 0;
}

// A fit's state on all of `t`'s items from `start`, for calling one fitter (fitters.h) alone: the
// other groups' parameters are the truth's, the fitter's own are what the test resets.
inline FitContext ContextOf(const trace::Trace& t, const net::Topology& topo, const CalibParams& start) {
  FitContext c{t, {}, topo, {}, {}};
  for (const trace::Item& it : t.items()) c.items.push_back(&it);
  c.result.params = start;
  c.result.topology = topo;
  return c;
}

// True when a not-fitted line names `name`.
inline bool NotFitted(const FitResult& r, const std::string& name) {
  for (const std::string& s : r.not_fitted)
    if (s.find(name) == 0) return true;
  return false;
}

// ---- Host link ----

inline trace::Item* AddCopy(trace::Trace* t, trace::Kind kind, trace::Direction dir, int64_t bytes, int streams = 1) {
  trace::Item* it = t->add_items();
  it->set_suite(trace::SUITE_PCIE);
  it->set_kind(kind);
  it->set_name("copy/" + std::to_string(t->items_size()));
  trace::TransferParams* p = it->mutable_transfer();
  p->set_bytes(bytes);
  p->set_direction(dir);
  p->set_host_memory(trace::HOST_PINNED);
  p->set_streams(streams);
  return it;
}

// A single-stream H2D or D2H copy.
inline trace::Item* AddCopy(trace::Trace* t, trace::Direction dir, int64_t bytes) {
  return AddCopy(t, dir == trace::DIRECTION_H2D ? trace::KIND_H2D_COPY : trace::KIND_D2H_COPY, dir, bytes);
}

// A kernel reading (KIND_ZERO_COPY_READ, with `blocks`) or writing host memory on GPU 0.
inline trace::Item* AddZeroCopy(trace::Trace* t, trace::Kind kind, int64_t bytes, int blocks) {
  trace::Item* it = AddCopy(t, kind, trace::DIRECTION_H2D, bytes);
  it->mutable_transfer()->set_blocks(blocks);
  return it;
}

// A small pinned copy issued while a bulk copy of `load_bytes` runs (validate's latency under load).
inline trace::Item* AddUnderLoad(trace::Trace* t, trace::Direction dir, int64_t bytes, trace::Direction load_dir,
                                 int64_t load_bytes) {
  trace::Item* it = AddCopy(t, trace::KIND_LATENCY_UNDER_LOAD, dir, bytes, 2);
  it->mutable_transfer()->set_load_direction(load_dir);
  it->mutable_transfer()->set_load_bytes(load_bytes);
  return it;
}

// Pinned copies of `bytes` each, one per (GPU, direction), all at once (KIND_HOST_COPIES_MULTI).
inline trace::Item* AddHostCopiesTogether(trace::Trace* t, const std::vector<std::pair<int, trace::Direction>>& copies,
                                          int64_t bytes) {
  trace::Item* it = AddCopy(t, trace::KIND_HOST_COPIES_MULTI, trace::DIRECTION_H2D, bytes);
  it->mutable_transfer()->set_gpu(-1);
  for (const auto& [gpu, dir] : copies) {
    trace::ConcurrentCopy* c = it->mutable_transfer()->add_copies();
    c->set_gpu(gpu);
    c->set_direction(dir);
    c->set_bytes(bytes);
    c->set_host_memory(trace::HOST_PINNED);
  }
  return it;
}

// ---- GPU to GPU ----

// A P2P copy, kernel write or kernel read of `bytes` from `src` to `dst` over a path of `path`.
inline trace::Item* AddP2p(trace::Trace* t, trace::Kind kind, trace::PathClass path, int src, int dst, int64_t bytes) {
  trace::Item* it = t->add_items();
  it->set_suite(trace::SUITE_PCIE);
  it->set_kind(kind);
  it->set_name("p2p/" + std::to_string(t->items_size()));
  trace::TransferParams* p = it->mutable_transfer();
  p->set_bytes(bytes);
  p->set_direction(trace::DIRECTION_P2P);
  p->set_src_gpu(src);
  p->set_dst_gpu(dst);
  p->set_path_class(path);
  return it;
}

// An NCCL allreduce over GPUs 0..ranks-1 (ring; `proto` empty: NCCL's pick).
inline trace::Item* AddAllreduce(trace::Trace* t, int ranks, int64_t bytes, const std::string& proto) {
  trace::Item* it = t->add_items();
  it->set_suite(trace::SUITE_COLLECTIVES);
  it->set_kind(trace::KIND_COLLECTIVE);
  it->set_name("allreduce/" + std::to_string(t->items_size()));
  trace::CollectiveParams* c = it->mutable_collective();
  c->set_op(trace::ALLREDUCE);
  c->set_implementation(trace::IMPL_NCCL);
  c->set_nranks(ranks);
  for (int g = 0; g < ranks; ++g) c->add_gpus(g);
  c->set_bytes(bytes);
  c->set_nccl_algo("Ring");
  c->set_nccl_proto(proto);
  return it;
}

// validate's one-shot or two-shot allreduce kernel over GPUs 0..ranks-1 through peer or host-mapped
// memory, with `blocks` thread blocks.
inline trace::Item* AddCustomAllreduce(trace::Trace* t, trace::Implementation impl, trace::Transport transport,
                                       int ranks, int64_t bytes, int blocks) {
  trace::Item* it = t->add_items();
  it->set_suite(trace::SUITE_COLLECTIVES);
  it->set_kind(trace::KIND_CUSTOM_ALLREDUCE);
  it->set_name("custom/" + std::to_string(t->items_size()));
  trace::CollectiveParams* c = it->mutable_collective();
  c->set_op(trace::ALLREDUCE);
  c->set_implementation(impl);
  c->set_transport(transport);
  c->set_nranks(ranks);
  for (int g = 0; g < ranks; ++g) c->add_gpus(g);
  c->set_bytes(bytes);
  c->set_blocks(blocks);
  return it;
}

// Sets every collective item's bus bandwidth from its median, as validate writes it:
// busbw = B / t * 2 (n - 1) / n (nccl-tests' allreduce factor).
inline void SetAllreduceBusBandwidth(trace::Trace* t) {
  for (trace::Item& it : *t->mutable_items()) {
    const double n = it.collective().nranks();
    it.set_busbw_gbps(it.collective().bytes() / (it.stats().median_us() * 1e3) * 2 * (n - 1) / n);
  }
}

// ---- Kernels ----

inline trace::Item* AddGemm(trace::Trace* t, int64_t m, int64_t n, int64_t k) {
  trace::Item* it = t->add_items();
  it->set_suite(trace::SUITE_KERNELS);
  it->set_kind(trace::KIND_GEMM);
  it->set_name("gemm/" + std::to_string(t->items_size()));
  trace::GemmParams* g = it->mutable_gemm();
  g->set_m(m);
  g->set_n(n);
  g->set_k(k);
  g->set_dtype(trace::DTYPE_BF16);
  return it;
}

inline trace::Item* AddLaunch(trace::Trace* t, int kernels, bool graph) {
  trace::Item* it = t->add_items();
  it->set_suite(trace::SUITE_KERNELS);
  it->set_kind(trace::KIND_LAUNCH_OVERHEAD);
  it->set_name("launch/" + std::to_string(t->items_size()));
  it->mutable_launch()->set_kernels(kernels);
  it->mutable_launch()->set_cuda_graph(graph);
  return it;
}

inline trace::Item* AddNorm(trace::Trace* t, int64_t tokens, int hidden) {
  trace::Item* it = t->add_items();
  it->set_suite(trace::SUITE_KERNELS);
  it->set_kind(trace::KIND_RMSNORM);
  it->set_name("norm/" + std::to_string(t->items_size()));
  it->mutable_rmsnorm()->set_tokens(tokens);
  it->mutable_rmsnorm()->set_hidden(hidden);
  return it;
}

// A synthetic box's launch and kernel costs (the truth the compute fits must recover).
inline CalibParams ComputeTruth(const net::Topology& topo) {
  CalibParams truth = DefaultParams(topo, 0);
  compute::ComputeParams& c = truth.compute;
  c.launch_overhead_eager_ns = 3500;
  c.kernel_floor_ns = 600;
  c.graph_launch_ns = 2500;
  c.launch_overhead_graph_ns = 100;
  c.memory_ramp_ns = 900;
  c.gemm_memory_ramp_ns = 4000;
  c.memory_efficiency = 0.8;
  c.skinny_gemm_memory_efficiency = 0.9;
  c.gemm_compute_efficiency = 0.75;
  return truth;
}

// The launch items that pin the launch overheads: 1, 10 and 100 kernels, eager and in a graph.
inline void AddLaunchItems(trace::Trace* t) {
  for (int k : {1, 10, 100}) {
    AddLaunch(t, k, false);
    AddLaunch(t, k, true);
  }
}

// The launch items, memory-bound GEMMs of several sizes, compute-bound ones at large m, and large
// norms (beyond L2): what the compute fit separates its parameters with.
inline void AddKernelItems(trace::Trace* t) {
  AddLaunchItems(t);
  for (int64_t n : {4096, 14336, 28672, 128256}) {
    AddGemm(t, 1, n, 4096);
    AddGemm(t, 16, n, 4096);
    AddGemm(t, 4096, n, 4096);
  }
  for (int64_t tokens : {8192, 16384, 65536}) AddNorm(t, tokens, 8192);
}

// ---- Host pacing ----

// A flash_mma attention call of `batch` sequences x `q` query tokens over `context` cached tokens
// (32 query heads, 8 KV heads of 128, bf16 cache), named by its position.
inline trace::Item* AddAttention(trace::Trace* t, int batch, int q, int64_t context) {
  trace::Item* it = t->add_items();
  it->set_suite(trace::SUITE_KERNELS);
  it->set_kind(trace::KIND_ATTENTION);
  it->set_name("attention/" + std::to_string(t->items_size()));
  trace::AttentionParams* a = it->mutable_attention();
  a->set_batch(batch);
  a->set_query_tokens(q);
  a->set_context(context);
  a->set_q_heads(32);
  a->set_kv_heads(8);
  a->set_head_dim(128);
  a->set_v_head_dim(128);
  a->set_kv_bytes(int64_t{batch} * context * 8 * 128 * 2 * 2);
  a->set_implementation("flash_mma");
  return it;
}

// The pacing suite's layer loop: `layers` x [a bf16 GEMM m x 4096 x 4096 when `gemm`; an NCCL
// allreduce of `allreduce_bytes` over GPUs 0..ranks-1 when > 0], captured in a graph or eager.
inline trace::Item* AddLayerLoop(trace::Trace* t, int ranks, bool gemm, int64_t m, int64_t allreduce_bytes,
                                 const std::string& capture) {
  trace::Item* it = t->add_items();
  it->set_suite(trace::SUITE_PACING);
  it->set_kind(trace::KIND_LAYER_LOOP);
  it->set_name("layers/" + std::to_string(t->items_size()));
  trace::LayerLoopParams* l = it->mutable_layer_loop();
  l->set_layers(32);
  l->set_gemm(gemm);
  l->set_gemm_m(m);
  l->set_gemm_n(4096);
  l->set_gemm_k(4096);
  l->set_allreduce_bytes(allreduce_bytes);
  l->set_capture(capture);
  l->mutable_host_cost()->set_distribution(trace::HostCost::NONE);
  l->set_slow_rank(-1);
  if (allreduce_bytes > 0) {
    trace::CollectiveParams* c = l->mutable_collective();
    c->set_op(trace::ALLREDUCE);
    c->set_implementation(trace::IMPL_NCCL);
    c->set_nranks(ranks);
    for (int g = 0; g < ranks; ++g) c->add_gpus(g);
    c->set_bytes(allreduce_bytes);
    c->set_cuda_graph(capture == "graph");
  }
  return it;
}

// The pacing suite's skew loop: an NCCL allreduce of `bytes` over GPUs 0..ranks-1 in a graph per
// iteration after each rank's host cost, with a host sync per iteration when `sync`.
inline trace::Item* AddSkewLoop(trace::Trace* t, int ranks, int64_t bytes, trace::HostCost::Distribution cost,
                                double cost_mean_us, bool sync) {
  trace::Item* it = t->add_items();
  it->set_suite(trace::SUITE_PACING);
  it->set_kind(trace::KIND_COLLECTIVE_SKEW);
  it->set_name("skew/" + std::to_string(t->items_size()));
  trace::SkewParams* k = it->mutable_skew();
  trace::CollectiveParams* c = k->mutable_collective();
  c->set_op(trace::ALLREDUCE);
  c->set_implementation(trace::IMPL_NCCL);
  c->set_nranks(ranks);
  for (int g = 0; g < ranks; ++g) c->add_gpus(g);
  c->set_bytes(bytes);
  c->set_cuda_graph(true);
  c->set_ops_per_graph(1);
  k->mutable_host_cost()->set_distribution(cost);
  k->mutable_host_cost()->set_mean_us(cost_mean_us);
  k->set_slow_rank(-1);
  k->set_sync_each_iteration(sync);
  return it;
}

}  // namespace specsim::calib::testing
