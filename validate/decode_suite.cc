// decode: a real decode loop of a synthetic transformer with a built-in model's shapes: random bf16
// weights, cuBLAS GEMMs, the decode attention kernel over a KV cache, RMSNorm, SiLU, TP over the
// GPUs used with NCCL allreduces (2 per layer + 1 after the vocab-parallel embedding) and a logits
// all-gather. The layer count is reduced to fit memory when needed (recorded per item and in a
// note). Two loops, each eager and CUDA-graph captured:
//   plain:       one target forward over `batch` tokens, the host reads the next tokens, repeat;
//   speculative: EAGLE-3 style cycle with draft depth S and N = S + 1 verified tokens per sequence:
//                S - 1 draft-head forwards, one target verify forward over batch * N tokens, the
//                host reads the tokens and draws acceptance (seeded, per-position probability p),
//                then a draft-extend forward over batch * N tokens.
// Step and cycle times are host wall-clock (launch to tokens on the host); tokens/s counts
// batch tokens per step, or batch * (1 + accepted) per cycle.
#include <algorithm>
#include <chrono>
#include <map>
#include <random>

#include "validate/gemm.h"
#include "validate/kernels.h"
#include "validate/models.h"
#include "validate/suite.h"

namespace specsim::validate {
namespace {

constexpr const char* kSuite = "decode";
constexpr int kMaxSplits = 32;

// Dimensions per GPU.
struct Dims {
  int64_t h = 0, q_heads = 0, kv_heads = 0, hd = 0, inter = 0, vocab_local = 0, draft_vocab_local = 0;
  int64_t qkv_n() const { return (q_heads + 2 * kv_heads) * hd; }
  int64_t q_dim() const { return q_heads * hd; }
};

struct Layer {
  DeviceBuffer slab;  // qkv | o | gate_up | down | norm1 | norm2
  void *qkv, *o, *gu, *down, *n1, *n2;
  DeviceBuffer k_cache, v_cache;
};

struct RankModel {
  int rank = 0, device = 0, tp = 1;
  Dims d;
  Stream stream;
  CublasHandle blas;
  DeviceBuffer embed, lm_head, final_norm;
  std::vector<Layer> layers;
  // Draft head (EAGLE-3): fc 3h -> h, one layer with a 2h-wide qkv input, its own LM head.
  DeviceBuffer fc, draft_lm;
  Layer draft;
  // Activations, sized for max_tokens.
  DeviceBuffer ids, x, resid, normed, cat, hidden3, qkv_out, attn_out, gu_out, act, logits, gathered, ws;
  HostBuffer ids_host;
  std::vector<Event> phase_events;
};

int64_t LayerSlabElems(const Dims& d, int64_t qkv_k) {
  return d.qkv_n() * qkv_k + d.h * d.q_dim() + 2 * d.inter * d.h + d.h * d.inter + 2 * d.h;
}

StatusOr<Layer> MakeLayer(int device, const Dims& d, int64_t qkv_k, int64_t kv_elems, uint64_t seed, cudaStream_t s) {
  Layer l;
  const int64_t elems = LayerSlabElems(d, qkv_k);
  ASSIGN_OR_RETURN(l.slab, DeviceBuffer::Create(device, elems * 2));
  CUDA_RETURN_IF_ERROR(LaunchFillRandom(l.slab.data(), elems, seed, 0.02f, s));
  char* p = l.slab.as<char>();
  auto take = [&](int64_t n) {
    void* r = p;
    p += n * 2;
    return r;
  };
  l.qkv = take(d.qkv_n() * qkv_k);
  l.o = take(d.h * d.q_dim());
  l.gu = take(2 * d.inter * d.h);
  l.down = take(d.h * d.inter);
  l.n1 = take(d.h);
  l.n2 = take(d.h);
  ASSIGN_OR_RETURN(l.k_cache, DeviceBuffer::Create(device, kv_elems * 2));
  ASSIGN_OR_RETURN(l.v_cache, DeviceBuffer::Create(device, kv_elems * 2));
  CUDA_RETURN_IF_ERROR(LaunchFillRandom(l.k_cache.data(), kv_elems, seed + 1, 1.0f, s));
  CUDA_RETURN_IF_ERROR(LaunchFillRandom(l.v_cache.data(), kv_elems, seed + 2, 1.0f, s));
  return l;
}

// Records phase boundaries on rank 0 (eager runs only) and sums the GPU time of each label into
// `sink`. Fine marks (inside a forward) are kept only when `fine` is set; coarse marks always.
struct PhaseRec {
  RankModel* m = nullptr;
  std::map<std::string, double>* sink = nullptr;
  bool fine = false;
  std::vector<std::string> labels;
  Status Start() {
    labels.clear();
    return Record("");
  }
  Status Fine(const std::string& label) { return fine ? Record(label) : Status::Ok(); }
  Status Mark(const std::string& label) { return Record(label); }
  // REQUIRES: every recorded event has completed (the stream was synchronized).
  Status Flush() {
    if (!m) return Status::Ok();
    for (size_t i = 1; i < labels.size(); ++i) {
      float ms = 0;
      CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&ms, m->phase_events[i - 1].get(), m->phase_events[i].get()));
      (*sink)[labels[i]] += ms * 1000.0;
    }
    labels.clear();
    return Status::Ok();
  }

 private:
  Status Record(const std::string& label) {
    if (!m) return Status::Ok();
    if (labels.size() >= m->phase_events.size()) return Status::Ok();  // pool exhausted: coarser totals
    CUDA_RETURN_IF_ERROR(cudaEventRecord(m->phase_events[labels.size()].get(), m->stream.get()));
    labels.push_back(label);
    return Status::Ok();
  }
};

class DecodeRunner {
 public:
  DecodeRunner(Context& ctx, const trace::ModelShape& shape, int tp) : ctx_(ctx), shape_(shape), tp_(tp) {}

  Status Build(int max_batch, int verify_n, int* layers_run);
  Status RunConfig(int batch, bool graph, bool spec);

 private:
  Status Forward(RankModel& m, int seqs, int qps, bool draft, PhaseRec* ph);
  Status AllReduce(RankModel& m, void* buf, int64_t count);
  Status Step(RankModel& m, int batch, bool spec, bool graph, std::vector<GraphExec>& g, PhaseRec* ph,
              double* host_accept_us);

  Context& ctx_;
  trace::ModelShape shape_;
  int tp_ = 1;
  Dims d_;
  int64_t context_ = 0;
  int max_tokens_ = 0;
  int verify_n_ = 1;
  int sm_count_ = 132;
  int64_t pos_ = 0;
  std::vector<std::unique_ptr<RankModel>> ranks_;
  NcclComms comms_;
  std::mt19937_64 rng_;
};

Status DecodeRunner::Build(int max_batch, int verify_n, int* layers_run) {
  const int n = tp_;
  ASSIGN_OR_RETURN(AttentionShape a, AttentionFor(shape_, tp_));
  d_.h = shape_.hidden();
  d_.q_heads = a.q_heads;
  d_.kv_heads = a.kv_heads;
  d_.hd = a.head_dim;
  d_.inter = shape_.intermediate() / tp_;
  d_.vocab_local = (shape_.vocab() + tp_ - 1) / tp_;
  d_.draft_vocab_local = (shape_.draft_vocab() + tp_ - 1) / tp_;
  context_ = ctx_.opt.decode_context;
  verify_n_ = verify_n;
  sm_count_ = ctx_.props[0].multiProcessorCount;
  max_tokens_ = max_batch * verify_n;
  rng_.seed(ctx_.opt.seed);
  const int64_t kv_elems = int64_t(max_batch) * d_.kv_heads * context_ * d_.hd;
  // Memory plan: per layer weights + KV; fixed: embedding, LM head, draft head, activations.
  const int64_t per_layer = LayerSlabElems(d_, d_.h) * 2 + 2 * kv_elems * 2;
  const int64_t T = max_tokens_;
  const int64_t act_elems = T * (3 * d_.h + 2 * d_.h + 2 * d_.h + d_.qkv_n() + d_.q_dim() + 3 * d_.inter +
                                 (1 + n) * std::max(d_.vocab_local, d_.draft_vocab_local));
  const int64_t fixed = (d_.vocab_local * d_.h * 2 + d_.h + d_.h * 3 * d_.h + d_.draft_vocab_local * d_.h) * 2 +
                        LayerSlabElems(d_, 2 * d_.h) * 2 + 2 * kv_elems * 2 + act_elems * 2 +
                        AttentionWorkspaceBytes(T, d_.q_heads, d_.hd, kMaxSplits) + (3LL << 30);
  int64_t free_min = INT64_MAX;
  for (int r = 0; r < n; ++r) {
    size_t fr = 0, tot = 0;
    CUDA_RETURN_IF_ERROR(cudaSetDevice(ctx_.devices[r]));
    CUDA_RETURN_IF_ERROR(cudaMemGetInfo(&fr, &tot));
    free_min = std::min<int64_t>(free_min, static_cast<int64_t>(fr));
  }
  int64_t fit = (static_cast<int64_t>(free_min * 0.92) - fixed) / per_layer;
  *layers_run = static_cast<int>(std::min<int64_t>(shape_.layers(), fit));
  if (*layers_run < 1)
    return OutOfMemory(shape_.name() + " at tp " + std::to_string(tp_) + ": not even one layer fits (" +
                       std::to_string(free_min >> 30) + " GiB free per GPU)");
  std::vector<int> devs(ctx_.devices.begin(), ctx_.devices.begin() + n);
  if (n > 1) {
    auto c = NcclComms::Create(devs);
    if (!c.ok()) return c.status().Annotate("decode communicators");
    comms_ = std::move(c).value();
  }
  ranks_.resize(n);
  const int L = *layers_run;
  return ParallelFor(n, [&](int r) -> Status {
    auto m = std::make_unique<RankModel>();
    m->rank = r;
    m->device = devs[r];
    m->tp = n;
    m->d = d_;
    ASSIGN_OR_RETURN(m->stream, Stream::Create(m->device));
    ASSIGN_OR_RETURN(m->blas, CublasHandle::Create(m->device, m->stream.get()));
    cudaStream_t s = m->stream.get();
    const uint64_t seed = ctx_.opt.seed * 1000003 + r * 7919;
    ASSIGN_OR_RETURN(m->embed, DeviceBuffer::Create(m->device, d_.vocab_local * d_.h * 2));
    ASSIGN_OR_RETURN(m->lm_head, DeviceBuffer::Create(m->device, d_.vocab_local * d_.h * 2));
    ASSIGN_OR_RETURN(m->final_norm, DeviceBuffer::Create(m->device, d_.h * 2));
    ASSIGN_OR_RETURN(m->fc, DeviceBuffer::Create(m->device, d_.h * 3 * d_.h * 2));
    ASSIGN_OR_RETURN(m->draft_lm, DeviceBuffer::Create(m->device, d_.draft_vocab_local * d_.h * 2));
    CUDA_RETURN_IF_ERROR(LaunchFillRandom(m->embed.data(), d_.vocab_local * d_.h, seed + 1, 1.0f, s));
    CUDA_RETURN_IF_ERROR(LaunchFillRandom(m->lm_head.data(), d_.vocab_local * d_.h, seed + 2, 0.02f, s));
    CUDA_RETURN_IF_ERROR(LaunchFillRandom(m->final_norm.data(), d_.h, seed + 3, 1.0f, s));
    CUDA_RETURN_IF_ERROR(LaunchFillRandom(m->fc.data(), d_.h * 3 * d_.h, seed + 4, 0.02f, s));
    CUDA_RETURN_IF_ERROR(LaunchFillRandom(m->draft_lm.data(), d_.draft_vocab_local * d_.h, seed + 5, 0.02f, s));
    for (int l = 0; l < L; ++l) {
      ASSIGN_OR_RETURN(Layer layer, MakeLayer(m->device, d_, d_.h, kv_elems, seed + 100 * (l + 1), s));
      m->layers.push_back(std::move(layer));
    }
    ASSIGN_OR_RETURN(m->draft, MakeLayer(m->device, d_, 2 * d_.h, kv_elems, seed + 99, s));
    const int64_t vmax = std::max(d_.vocab_local, d_.draft_vocab_local);
    ASSIGN_OR_RETURN(m->ids, DeviceBuffer::Create(m->device, T * sizeof(int) * n));
    CUDA_RETURN_IF_ERROR(cudaMemsetAsync(m->ids.data(), 0, T * sizeof(int) * n, s));
    ASSIGN_OR_RETURN(m->x, DeviceBuffer::Create(m->device, T * d_.h * 2));
    ASSIGN_OR_RETURN(m->resid, DeviceBuffer::Create(m->device, T * d_.h * 2));
    ASSIGN_OR_RETURN(m->normed, DeviceBuffer::Create(m->device, T * d_.h * 2));
    ASSIGN_OR_RETURN(m->cat, DeviceBuffer::Create(m->device, T * 2 * d_.h * 2));
    ASSIGN_OR_RETURN(m->hidden3, DeviceBuffer::Create(m->device, T * 3 * d_.h * 2));
    CUDA_RETURN_IF_ERROR(LaunchFillRandom(m->cat.data(), T * 2 * d_.h, seed + 6, 1.0f, s));
    CUDA_RETURN_IF_ERROR(LaunchFillRandom(m->hidden3.data(), T * 3 * d_.h, seed + 7, 1.0f, s));
    ASSIGN_OR_RETURN(m->qkv_out, DeviceBuffer::Create(m->device, T * d_.qkv_n() * 2));
    ASSIGN_OR_RETURN(m->attn_out, DeviceBuffer::Create(m->device, T * d_.q_dim() * 2));
    ASSIGN_OR_RETURN(m->gu_out, DeviceBuffer::Create(m->device, T * 2 * d_.inter * 2));
    ASSIGN_OR_RETURN(m->act, DeviceBuffer::Create(m->device, T * d_.inter * 2));
    ASSIGN_OR_RETURN(m->logits, DeviceBuffer::Create(m->device, T * vmax * 2));
    ASSIGN_OR_RETURN(m->gathered, DeviceBuffer::Create(m->device, T * vmax * 2 * n));
    ASSIGN_OR_RETURN(m->ws, DeviceBuffer::Create(m->device, AttentionWorkspaceBytes(static_cast<int>(T), d_.q_heads,
                                                                                     d_.hd, kMaxSplits)));
    ASSIGN_OR_RETURN(m->ids_host, HostBuffer::Create(T * sizeof(int), HostKind::kPinned));
    if (r == 0) {
      for (int i = 0; i < 4096; ++i) {
        ASSIGN_OR_RETURN(Event e, Event::Create(m->device));
        m->phase_events.push_back(std::move(e));
      }
    }
    RETURN_IF_ERROR(SyncStream(m->device, s, 600, "weight initialisation"));
    ranks_[r] = std::move(m);
    return Status::Ok();
  });
}

Status DecodeRunner::AllReduce(RankModel& m, void* buf, int64_t count) {
  if (m.tp == 1) return Status::Ok();
  NCCL_RETURN_IF_ERROR(ncclAllReduce(buf, buf, count, ncclBfloat16, ncclSum, comms_.get(m.rank), m.stream.get()));
  return Status::Ok();
}

Status DecodeRunner::Forward(RankModel& m, int seqs, int qps, bool draft, PhaseRec* ph) {
  const Dims& d = m.d;
  cudaStream_t s = m.stream.get();
  cublasHandle_t h = m.blas.get();
  const int64_t T = int64_t(seqs) * qps;
  const int64_t vocab_local = draft ? d.draft_vocab_local : d.vocab_local;
  CUDA_RETURN_IF_ERROR(LaunchEmbedding(m.ids.as<int>(), m.embed.data(), m.x.data(), T, static_cast<int>(d.h),
                                       m.rank * d.vocab_local, d.vocab_local, s));
  CUDA_RETURN_IF_ERROR(cudaMemsetAsync(m.resid.data(), 0, T * d.h * 2, s));
  RETURN_IF_ERROR(ph->Fine("embed"));
  RETURN_IF_ERROR(AllReduce(m, m.x.data(), T * d.h));
  RETURN_IF_ERROR(ph->Fine("allreduce"));
  if (draft) {
    RETURN_IF_ERROR(GemmBf16(h, m.hidden3.data(), m.fc.data(), m.x.data(), T, d.h, 3 * d.h));
    RETURN_IF_ERROR(ph->Fine("draft_fc"));
  }
  const int nlayers = draft ? 1 : static_cast<int>(m.layers.size());
  AttentionArgs aa;
  aa.seqs = seqs;
  aa.q_per_seq = qps;
  aa.q_heads = static_cast<int>(d.q_heads);
  aa.kv_heads = static_cast<int>(d.kv_heads);
  aa.head_dim = static_cast<int>(d.hd);
  aa.v_head_dim = static_cast<int>(d.hd);
  aa.context = context_;
  aa.q_row_stride = d.qkv_n();
  const int64_t blocks = int64_t(seqs) * d.kv_heads * ((d.q_heads / d.kv_heads * qps + 7) / 8);
  aa.splits = static_cast<int>(std::clamp<int64_t>((2 * sm_count_ + blocks - 1) / blocks, 1, std::min<int64_t>(kMaxSplits, std::max<int64_t>(1, context_ / 256))));
  aa.q = m.qkv_out.data();
  aa.out = m.attn_out.data();
  aa.workspace = m.ws.data();
  for (int l = 0; l < nlayers; ++l) {
    Layer& L = draft ? m.draft : m.layers[l];
    CUDA_RETURN_IF_ERROR(LaunchRmsNorm(m.x.data(), m.resid.data(), L.n1, m.normed.data(), T, static_cast<int>(d.h), 1e-5f, s));
    if (draft) RETURN_IF_ERROR(GemmBf16(h, m.cat.data(), L.qkv, m.qkv_out.data(), T, d.qkv_n(), 2 * d.h));
    else RETURN_IF_ERROR(GemmBf16(h, m.normed.data(), L.qkv, m.qkv_out.data(), T, d.qkv_n(), d.h));
    CUDA_RETURN_IF_ERROR(LaunchKvAppend(m.qkv_out.data(), L.k_cache.data(), L.v_cache.data(), seqs, qps,
                                        static_cast<int>(d.q_heads), static_cast<int>(d.kv_heads), static_cast<int>(d.hd),
                                        context_, pos_ % context_, s));
    aa.k = L.k_cache.data();
    aa.v = L.v_cache.data();
    CUDA_RETURN_IF_ERROR(LaunchDecodeAttention(aa, s));
    RETURN_IF_ERROR(GemmBf16(h, m.attn_out.data(), L.o, m.x.data(), T, d.h, d.q_dim()));
    RETURN_IF_ERROR(ph->Fine("attention"));
    RETURN_IF_ERROR(AllReduce(m, m.x.data(), T * d.h));
    RETURN_IF_ERROR(ph->Fine("allreduce"));
    CUDA_RETURN_IF_ERROR(LaunchRmsNorm(m.x.data(), m.resid.data(), L.n2, m.normed.data(), T, static_cast<int>(d.h), 1e-5f, s));
    RETURN_IF_ERROR(GemmBf16(h, m.normed.data(), L.gu, m.gu_out.data(), T, 2 * d.inter, d.h));
    CUDA_RETURN_IF_ERROR(LaunchSiluMul(m.gu_out.data(), m.act.data(), T, static_cast<int>(d.inter), s));
    RETURN_IF_ERROR(GemmBf16(h, m.act.data(), L.down, m.x.data(), T, d.h, d.inter));
    RETURN_IF_ERROR(ph->Fine("mlp"));
    RETURN_IF_ERROR(AllReduce(m, m.x.data(), T * d.h));
    RETURN_IF_ERROR(ph->Fine("allreduce"));
  }
  CUDA_RETURN_IF_ERROR(LaunchRmsNorm(m.x.data(), m.resid.data(), m.final_norm.data(), m.normed.data(), T,
                                     static_cast<int>(d.h), 1e-5f, s));
  RETURN_IF_ERROR(GemmBf16(h, m.normed.data(), draft ? m.draft_lm.data() : m.lm_head.data(), m.logits.data(), T,
                           vocab_local, d.h));
  RETURN_IF_ERROR(ph->Fine("lm_head"));
  const void* logits = m.logits.data();
  if (m.tp > 1) {
    NCCL_RETURN_IF_ERROR(ncclAllGather(m.logits.data(), m.gathered.data(), T * vocab_local, ncclBfloat16,
                                       comms_.get(m.rank), s));
    logits = m.gathered.data();
    RETURN_IF_ERROR(ph->Fine("logits_gather"));
  }
  // Synthetic sampling: argmax per row of this rank's slice layout (rows of the gathered buffer).
  CUDA_RETURN_IF_ERROR(LaunchArgmax(logits, m.ids.as<int>(), static_cast<int>(T), vocab_local, s));
  RETURN_IF_ERROR(ph->Fine("sample"));
  return Status::Ok();
}

// One plain step or one speculative cycle on one rank, ending with the tokens on the host.
Status DecodeRunner::Step(RankModel& m, int batch, bool spec, bool graph, std::vector<GraphExec>& g, PhaseRec* ph,
                          double* host_accept_us) {
  cudaStream_t s = m.stream.get();
  const int S = ctx_.opt.draft_steps;
  auto read_tokens = [&](int64_t count) -> Status {
    CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(m.ids_host.data(), m.ids.data(), count * sizeof(int), cudaMemcpyDeviceToHost, s));
    return SyncStream(m.device, s, ctx_.opt.collective_timeout_s, "decode step");
  };
  if (!spec) {
    if (graph) RETURN_IF_ERROR(g[0].Launch(s));
    else RETURN_IF_ERROR(Forward(m, batch, 1, false, ph));
    return read_tokens(batch);
  }
  // Draft forwards and verify.
  if (graph) {
    RETURN_IF_ERROR(g[0].Launch(s));
  } else {
    for (int i = 0; i < S - 1; ++i) RETURN_IF_ERROR(Forward(m, batch, 1, true, ph));
    RETURN_IF_ERROR(ph->Mark("draft"));
    RETURN_IF_ERROR(Forward(m, batch, verify_n_, false, ph));
    RETURN_IF_ERROR(ph->Mark("verify"));
  }
  if (host_accept_us) {
    // Phase runs: wait for the GPU first so that host_accept is the read-back alone.
    RETURN_IF_ERROR(SyncStream(m.device, s, ctx_.opt.collective_timeout_s, "verify"));
    auto a = std::chrono::steady_clock::now();
    RETURN_IF_ERROR(read_tokens(int64_t(batch) * verify_n_));
    *host_accept_us += std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - a).count();
  } else {
    RETURN_IF_ERROR(read_tokens(int64_t(batch) * verify_n_));
  }
  // The host gap is not GPU time: bank the GPU phases so far and restart the phase clock.
  RETURN_IF_ERROR(ph->Flush());
  RETURN_IF_ERROR(ph->Start());
  if (graph) RETURN_IF_ERROR(g[1].Launch(s));
  else RETURN_IF_ERROR(Forward(m, batch, verify_n_, true, ph));
  RETURN_IF_ERROR(ph->Mark("draft_extend"));
  return SyncStream(m.device, s, ctx_.opt.collective_timeout_s, "draft extend");
}

Status DecodeRunner::RunConfig(int batch, bool graph, bool spec) {
  const int n = tp_;
  const int S = ctx_.opt.draft_steps;
  TimingConfig cfg = ctx_.Timing(3, 30);
  std::vector<std::vector<double>> per_rank(n);
  std::vector<std::vector<GraphExec>> graphs(n);
  RETURN_IF_ERROR(ParallelFor(n, [&](int r) -> Status {
    RankModel& m = *ranks_[r];
    CUDA_RETURN_IF_ERROR(cudaSetDevice(m.device));
    PhaseRec none;
    if (graph) {
      auto& g = graphs[r];
      if (!spec) {
        ASSIGN_OR_RETURN(GraphExec e, GraphExec::Capture(m.device, m.stream.get(), [&] { return Forward(m, batch, 1, false, &none); }));
        g.push_back(std::move(e));
      } else {
        ASSIGN_OR_RETURN(GraphExec e0, GraphExec::Capture(m.device, m.stream.get(), [&]() -> Status {
          for (int i = 0; i < S - 1; ++i) RETURN_IF_ERROR(Forward(m, batch, 1, true, &none));
          return Forward(m, batch, verify_n_, false, &none);
        }));
        ASSIGN_OR_RETURN(GraphExec e1, GraphExec::Capture(m.device, m.stream.get(), [&] { return Forward(m, batch, verify_n_, true, &none); }));
        g.push_back(std::move(e0));
        g.push_back(std::move(e1));
      }
    }
    for (int i = 0; i < cfg.warmup; ++i) RETURN_IF_ERROR(Step(m, batch, spec, graph, graphs[r], &none, nullptr));
    for (int i = 0; i < cfg.iters; ++i) {
      auto a = std::chrono::steady_clock::now();
      RETURN_IF_ERROR(Step(m, batch, spec, graph, graphs[r], &none, nullptr));
      per_rank[r].push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - a).count());
    }
    return Status::Ok();
  }));
  std::vector<double> us(cfg.iters, 0.0);
  for (int r = 0; r < n; ++r)
    for (int i = 0; i < cfg.iters; ++i) us[i] = std::max(us[i], per_rank[r][i]);

  // Phase breakdown: a few eager steps with events on rank 0.
  std::map<std::string, double> phase_us;
  const int phase_steps = graph ? 0 : 3;
  double accept_us = 0;
  if (phase_steps > 0) {
    RETURN_IF_ERROR(ParallelFor(n, [&](int r) -> Status {
      RankModel& m = *ranks_[r];
      CUDA_RETURN_IF_ERROR(cudaSetDevice(m.device));
      std::vector<GraphExec> none_g;
      for (int i = 0; i < phase_steps; ++i) {
        PhaseRec ph;
        if (r == 0) {
          ph.m = &m;
          ph.sink = &phase_us;
          ph.fine = !spec;
        }
        RETURN_IF_ERROR(ph.Start());
        RETURN_IF_ERROR(Step(m, batch, spec, false, none_g, &ph, r == 0 ? &accept_us : nullptr));
        RETURN_IF_ERROR(ph.Flush());
      }
      return Status::Ok();
    }));
  }

  // Acceptance draws (seeded): tokens per cycle = 1 + accepted prefix of S drafts, per sequence.
  double tokens_per_cycle = 1.0;
  if (spec) {
    // Seeded per configuration so eager and graph runs of one batch see the same draws.
    rng_.seed(ctx_.opt.seed * 1000003 + static_cast<uint64_t>(batch));
    std::uniform_real_distribution<double> u(0.0, 1.0);
    int64_t total = 0, draws = 0;
    for (int i = 0; i < cfg.iters; ++i) {
      for (int b = 0; b < batch; ++b) {
        int k = 0;
        while (k < S && u(rng_) < ctx_.opt.acceptance_p) ++k;
        total += 1 + k;
        ++draws;
      }
    }
    tokens_per_cycle = static_cast<double>(total) / draws;
  }

  auto* it = ctx_.NewItem(trace::SUITE_DECODE, spec ? trace::KIND_SPEC_CYCLE : trace::KIND_DECODE_STEP,
                          "decode/" + shape_.name() + "/tp" + std::to_string(tp_) + (spec ? "/spec" : "/plain") +
                              (graph ? "/graph" : "/eager") + "/b" + std::to_string(batch));
  auto* p = it->mutable_decode();
  p->set_model(shape_.name());
  p->set_tp(tp_);
  for (int r = 0; r < n; ++r) p->add_gpus(ctx_.devices[r]);
  p->set_layers_model(shape_.layers());
  p->set_layers_run(static_cast<int>(ranks_[0]->layers.size()));
  p->set_batch(batch);
  p->set_context(context_);
  p->set_cuda_graph(graph);
  p->set_speculative(spec);
  p->set_steps(cfg.iters);
  p->set_seed(ctx_.opt.seed);
  if (spec) {
    p->set_draft_steps(S);
    p->set_verify_tokens(verify_n_);
    p->set_acceptance_p(ctx_.opt.acceptance_p);
    p->set_draft_vocab(shape_.draft_vocab());
  }
  FillStats(us, cfg, "host_wall_clock", it);
  it->set_tokens_per_cycle(tokens_per_cycle);
  it->set_tokens_per_s(batch * tokens_per_cycle / (it->stats().median_us() * 1e-6));
  for (const auto& [name, total] : phase_us) {
    auto* ph = it->add_phases();
    ph->set_name(name);
    ph->set_mean_us(total / phase_steps);
  }
  if (spec && phase_steps > 0) {
    auto* ph = it->add_phases();
    ph->set_name("host_accept");
    ph->set_mean_us(accept_us / phase_steps);
  }
  pos_ += 1;
  return Status::Ok();
}

}  // namespace

Status RunDecodeSuite(Context& ctx) {
  const int tp = ctx.tp();
  if (tp > ctx.n())
    return InvalidArgument("--tp " + std::to_string(tp) + " needs " + std::to_string(tp) + " GPUs, " +
                           std::to_string(ctx.n()) + " used");
  const int max_batch = *std::max_element(ctx.opt.decode_batches.begin(), ctx.opt.decode_batches.end());
  const int verify_n = ctx.opt.draft_steps + 1;
  for (const auto& name : ctx.opt.models) {
    ASSIGN_OR_RETURN(trace::ModelShape shape, BuiltinModel(name));
    if (shape.mla()) {
      ctx.Note(trace::Note::WARNING, kSuite, name + ": MLA decode is not implemented; its GEMM and attention shapes are in the kernels suite");
      continue;
    }
    DecodeRunner runner(ctx, shape, tp);
    int layers_run = 0;
    Status st = runner.Build(max_batch, verify_n, &layers_run);
    if (!st.ok()) {
      if (st.code() == StatusCode::kOutOfMemory || st.code() == StatusCode::kInvalidArgument) {
        ctx.Note(trace::Note::WARNING, kSuite, name + " skipped: " + st.message());
        continue;
      }
      return st.Annotate(name);
    }
    if (layers_run < shape.layers())
      ctx.Note(trace::Note::INFO, kSuite, name + ": layers reduced from " + std::to_string(shape.layers()) + " to " +
                                              std::to_string(layers_run) + " to fit GPU memory at tp " + std::to_string(tp));
    for (int b : ctx.opt.decode_batches)
      for (bool spec : {false, true})
        for (bool graph : {false, true}) {
          Status rs = runner.RunConfig(b, graph, spec);
          if (rs.code() == StatusCode::kDeadlineExceeded) {
            ctx.Note(trace::Note::ERROR, kSuite, name + ": decode hung: " + rs.message());
            return Status::Ok();
          }
          RETURN_IF_ERROR(rs.Annotate(name + " batch " + std::to_string(b)));
        }
  }
  return Status::Ok();
}

}  // namespace specsim::validate
