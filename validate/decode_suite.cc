// decode: a real decode loop of a synthetic transformer with a models/*.textproto model's shapes
// (GQA, or absorbed MLA + MoE for DeepSeek-V3 / Kimi-K2, see validate/README.md): random bf16
// weights, cuBLAS GEMMs, the decode attention kernel over a KV cache, RMSNorm, SiLU, TP over the
// GPUs used with NCCL allreduces (2 per layer + 1 after the vocab-parallel embedding) and a logits
// all-gather. The layer count is reduced to fit memory when needed (recorded per item and in a
// note). Two loops:
//   plain:       one target forward over `batch` tokens, the host reads the next tokens, repeat;
//   speculative: EAGLE-3 style cycle with draft depth S and N = S + 1 verified tokens per sequence:
//                S - 1 draft-head forwards, one target verify forward over batch * N tokens, the
//                host reads the tokens and draws acceptance (seeded, per-position probability p),
//                then a draft-extend forward over batch * N tokens.
// Each is launched three ways:
//   eager:       every kernel from the host;
//   graph:       whole forwards captured as CUDA graphs (plain: 1 graph per step; speculative: the
//                draft forwards and the verify as one graph, the draft extend as another);
//   piecewise:   every maximal run of kernels between two attention cores of one forward captured as
//                its own graph, the attention cores launched eagerly in between (vLLM's piecewise
//                CUDA graphs, SGLang with attention outside the graph): a forward of L layers is
//                L + 1 graph replays and L eager attention cores. The attention core is the part of
//                a layer's attention that such frameworks keep out of the graph: GQA the KV append
//                and the attention kernel; MLA the latent-cache append, the W_kc absorption, the
//                attention kernel and the W_vc lift (the q/kv projections, their norms and o_proj
//                stay in the graphs).
// Step and cycle times are host wall-clock (launch to tokens on the host); tokens/s counts
// batch tokens per step, or batch * (1 + accepted) per cycle.
#include <algorithm>
#include <chrono>
#include <functional>
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
  int64_t h = 0, vocab_local = 0, draft_vocab_local = 0;
  bool mla = false;
  int64_t q_heads = 0, kv_heads = 0, hd = 0;                      // GQA (MLA: q_heads = heads per GPU)
  int64_t q_lora = 0, kv_lora = 0, nope = 0, rope = 0, vdim = 0;  // MLA
  int64_t inter = 0;                                              // dense MLP
  int64_t experts = 0, topk = 0, moe_inter = 0, shared_inter = 0, first_dense = 0;  // MoE
  int64_t dq_heads = 0, dkv_heads = 0, dhd = 0, dinter = 0;                         // draft layer (GQA)
  int64_t qa_n() const { return q_lora + kv_lora + rope; }                          // fused q_a | kv_a output
  int64_t latent() const { return kv_lora + rope; }                                 // MLA cache row / absorbed q head
};

// What one layer is made of (the draft layer: GQA with the draft's dims, qkv over 2h inputs).
struct LayerKind {
  bool mla = false;
  int64_t q_heads = 0, kv_heads = 0, hd = 0, qkv_k = 0;
  int64_t inter = 0;  // dense MLP (0 for an MoE layer)
  bool moe = false;
  int64_t qkv_n() const { return (q_heads + 2 * kv_heads) * hd; }
  int64_t q_dim() const { return q_heads * hd; }
};

struct Layer {
  LayerKind kind;
  DeviceBuffer slab;  // every weight of the layer
  // GQA
  void *qkv = nullptr, *o = nullptr;
  // MLA: fused q_a|kv_a [q_lora + kv_lora + rope][h], norms, q_b [heads*(nope+rope)][q_lora],
  // W_kc [heads][kv_lora][nope] and W_vc [heads][vdim][kv_lora] (kv_b split for absorption), o.
  void *qkv_a = nullptr, *q_a_norm = nullptr, *kv_a_norm = nullptr, *q_b = nullptr, *w_kc = nullptr, *w_vc = nullptr;
  void *gu = nullptr, *down = nullptr;                       // dense MLP
  void *router = nullptr, *sgu = nullptr, *sdown = nullptr;  // MoE: router, shared experts
  int64_t expert_offset = 0;                                 // first pool expert this layer uses
  void *n1 = nullptr, *n2 = nullptr;
  DeviceBuffer k_cache, v_cache;  // MLA: k_cache holds the latent rows, no v_cache
};

struct RankModel {
  int rank = 0, device = 0, tp = 1;
  Dims d;
  Stream stream;
  CublasHandle blas;
  DeviceBuffer embed, lm_head, final_norm;
  std::vector<Layer> layers;
  // Routed experts' weights, shared by the MoE layers: gate_up [pool][2*mi][h], down [pool][h][mi].
  DeviceBuffer pool_gu, pool_down;
  int64_t pool = 0;
  // Draft head (EAGLE-3): fc 3h -> h, one layer with a 2h-wide qkv input, its own LM head.
  DeviceBuffer fc, draft_lm;
  Layer draft;
  // Activations, sized for max_tokens.
  DeviceBuffer ids, x, resid, normed, cat, hidden3, qkv_out, attn_out, gu_out, act, logits, gathered, ws;
  // MLA / MoE activations.
  DeviceBuffer qa_out, q_lat, qb_out, q_full, attn_lat, router_logits, topk_ids, topk_w, e_in, e_gu, e_act, e_out, s_gu,
      s_act, s_out;
  HostBuffer ids_host;
  std::vector<Event> phase_events;
};

// Weights of a layer as (pointer slot, elements), in slab order.
std::vector<std::pair<void**, int64_t>> LayerParts(Layer& l, const Dims& d) {
  const LayerKind& k = l.kind;
  std::vector<std::pair<void**, int64_t>> p;
  if (k.mla) {
    p.push_back({&l.qkv_a, d.qa_n() * d.h});
    p.push_back({&l.q_a_norm, d.q_lora});
    p.push_back({&l.kv_a_norm, d.kv_lora});
    p.push_back({&l.q_b, d.q_heads * (d.nope + d.rope) * d.q_lora});
    p.push_back({&l.w_kc, d.q_heads * d.kv_lora * d.nope});
    p.push_back({&l.w_vc, d.q_heads * d.vdim * d.kv_lora});
    p.push_back({&l.o, d.h * d.q_heads * d.vdim});
  } else {
    p.push_back({&l.qkv, k.qkv_n() * k.qkv_k});
    p.push_back({&l.o, d.h * k.q_dim()});
  }
  if (k.moe) {
    p.push_back({&l.router, d.experts * d.h});
    if (d.shared_inter > 0) {
      p.push_back({&l.sgu, 2 * d.shared_inter * d.h});
      p.push_back({&l.sdown, d.h * d.shared_inter});
    }
  } else {
    p.push_back({&l.gu, 2 * k.inter * d.h});
    p.push_back({&l.down, d.h * k.inter});
  }
  p.push_back({&l.n1, d.h});
  p.push_back({&l.n2, d.h});
  return p;
}

int64_t KvElems(const LayerKind& k, const Dims& d, int64_t max_batch, int64_t context) {
  return k.mla ? max_batch * context * d.latent() : max_batch * k.kv_heads * context * k.hd;
}

// Bytes one layer takes (weights + caches), for the memory plan.
int64_t LayerBytes(const LayerKind& k, const Dims& d, int64_t max_batch, int64_t context) {
  Layer l;
  l.kind = k;
  int64_t e = 0;
  for (const auto& [slot, n] : LayerParts(l, d)) e += (n + 63) / 64 * 64;
  return 2 * e + (k.mla ? 1 : 2) * KvElems(k, d, max_batch, context) * 2;
}

StatusOr<Layer> MakeLayer(int device, const Dims& d, const LayerKind& kind, int64_t max_batch, int64_t context,
                          uint64_t seed, cudaStream_t s) {
  Layer l;
  l.kind = kind;
  auto parts = LayerParts(l, d);
  int64_t elems = 0;
  for (const auto& [slot, n] : parts) elems += (n + 63) / 64 * 64;  // keep every part 128-byte aligned
  ASSIGN_OR_RETURN(l.slab, DeviceBuffer::Create(device, elems * 2));
  CUDA_RETURN_IF_ERROR(LaunchFillRandom(l.slab.data(), elems, seed, 0.02f, s));
  char* p = l.slab.as<char>();
  for (auto& [slot, n] : parts) {
    *slot = p;
    p += (n + 63) / 64 * 64 * 2;
  }
  const int64_t kv_elems = KvElems(kind, d, max_batch, context);
  ASSIGN_OR_RETURN(l.k_cache, DeviceBuffer::Create(device, kv_elems * 2));
  CUDA_RETURN_IF_ERROR(LaunchFillRandom(l.k_cache.data(), kv_elems, seed + 1, 1.0f, s));
  if (!kind.mla) {
    ASSIGN_OR_RETURN(l.v_cache, DeviceBuffer::Create(device, kv_elems * 2));
    CUDA_RETURN_IF_ERROR(LaunchFillRandom(l.v_cache.data(), kv_elems, seed + 2, 1.0f, s));
  }
  return l;
}

enum class Capture { kEager, kGraph, kPiecewise };

const char* CaptureName(Capture c) {
  switch (c) {
    case Capture::kGraph: return "graph";
    case Capture::kPiecewise: return "piecewise";
    default: return "eager";
  }
}

// The piecewise CUDA graphs of one forward: the kernels between attention cores captured as graphs,
// the cores kept as closures (their arguments bound at capture time, as a graph's are) to launch
// eagerly between the replays. Replay: graph 0, core 0, graph 1, core 1, ..., graph k.
class PiecewiseGraphs {
 public:
  PiecewiseGraphs() = default;
  // Captures what body(this) enqueues on `stream`; body hands every attention core to Split().
  template <typename F>
  static StatusOr<PiecewiseGraphs> Capture(int device, cudaStream_t stream, F&& body) {
    PiecewiseGraphs p;
    p.device_ = device;
    p.stream_ = stream;
    RETURN_IF_ERROR(GraphExec::BeginCapture(device, stream));
    p.capturing_ = true;
    Status st = body(&p);
    if (!st.ok()) {
      if (p.capturing_) (void)GraphExec::EndCapture(device, stream);  // leave capture mode
      return st.Annotate("during piecewise CUDA graph capture");
    }
    p.capturing_ = false;
    ASSIGN_OR_RETURN(GraphExec last, GraphExec::EndCapture(device, stream));
    p.graphs_.push_back(std::move(last));
    return p;
  }
  // At an attention core during the capture: ends the current segment (keeping its graph), keeps
  // `core` to run after it, and begins the next segment. `core` is not run now.
  Status Split(std::function<Status()> core) {
    capturing_ = false;
    ASSIGN_OR_RETURN(GraphExec g, GraphExec::EndCapture(device_, stream_));
    graphs_.push_back(std::move(g));
    cores_.push_back(std::move(core));
    RETURN_IF_ERROR(GraphExec::BeginCapture(device_, stream_));
    capturing_ = true;
    return Status::Ok();
  }
  // REQUIRES: called on the capture's device, for its stream.
  Status Replay(cudaStream_t s) const {
    for (size_t i = 0; i < graphs_.size(); ++i) {
      RETURN_IF_ERROR(graphs_[i].Launch(s));
      if (i < cores_.size()) RETURN_IF_ERROR(cores_[i]().Annotate("eager attention between piecewise graphs"));
    }
    return Status::Ok();
  }
  int graphs() const { return static_cast<int>(graphs_.size()); }

 private:
  int device_ = 0;
  cudaStream_t stream_ = nullptr;
  bool capturing_ = false;
  std::vector<GraphExec> graphs_;
  std::vector<std::function<Status()>> cores_;
};

// Runs an attention core now, or hands it to a piecewise capture.
Status AttentionCore(PiecewiseGraphs* pw, std::function<Status()> core) {
  return pw ? pw->Split(std::move(core)) : core();
}

// What a step replays, per rank. graph: whole[0] = the plain forward, or the draft forwards and the
// verify; whole[1] = the draft extend. piecewise: one PiecewiseGraphs per forward kind.
struct StepGraphs {
  std::vector<GraphExec> whole;
  PiecewiseGraphs plain, draft, verify, extend;
};

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

  // max_batch: the most sequences (KV caches); max_tokens: the most tokens one forward runs.
  Status Build(int max_batch, int max_tokens, int verify_n, int* layers_run);
  // One item: plain steps (spec false; qps > 1: a verify-width sweep point, one target forward over
  // batch x qps tokens with the tokens read back, as a verify pass without the draft) or speculative
  // cycles.
  Status RunConfig(int batch, Capture capture, bool spec, int qps = 1);
  int64_t pool() const { return ranks_.empty() ? 0 : ranks_[0]->pool; }
  // After a hang: tears the communicators down so that no kernel stays blocked on a peer.
  void AbortComms() { comms_.Abort(); }

 private:
  // pw: a piecewise capture in progress (the attention cores go to it), else nullptr.
  Status Forward(RankModel& m, int seqs, int qps, bool draft, PhaseRec* ph, PiecewiseGraphs* pw = nullptr);
  Status GqaAttention(RankModel& m, Layer& L, int seqs, int qps, bool draft, PiecewiseGraphs* pw);
  Status MlaAttention(RankModel& m, Layer& L, int seqs, int qps, PiecewiseGraphs* pw);
  Status Moe(RankModel& m, Layer& L, int64_t T);
  Status AllReduce(RankModel& m, void* buf, int64_t count);
  Status Step(RankModel& m, int batch, bool spec, Capture capture, const StepGraphs& g, PhaseRec* ph,
              double* host_accept_us, int qps = 1);
  // The attention kernel as the kernels suite runs it (ProductionAttentionImpl, AttentionSplits),
  // with at most kMaxSplits splits (the workspace's size).
  Status Attend(AttentionArgs& aa, cudaStream_t s) const {
    const AttentionImpl impl = ProductionAttentionImpl(aa.head_dim, aa.v_head_dim, aa.k == aa.v);
    aa.splits = std::min(kMaxSplits, AttentionSplits(impl, aa, sm_count_));
    CUDA_RETURN_IF_ERROR(LaunchAttention(impl, aa, s));
    return Status::Ok();
  }

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

Status DecodeRunner::Build(int max_batch, int max_tokens, int verify_n, int* layers_run) {
  const int n = tp_;
  const auto& c = shape_;
  auto split = [&](int64_t v, const char* what) -> StatusOr<int64_t> {
    if (v % tp_ != 0)
      return InvalidArgument("tp " + std::to_string(tp_) + " does not divide " + what + " " + std::to_string(v));
    return v / tp_;
  };
  ASSIGN_OR_RETURN(AttentionShape a, AttentionFor(shape_, tp_));
  d_.h = c.hidden();
  d_.mla = c.mla();
  d_.q_heads = a.q_heads;
  d_.kv_heads = a.kv_heads;
  d_.hd = a.head_dim;
  if (d_.mla) {
    d_.q_lora = c.q_lora_rank();
    d_.kv_lora = c.kv_lora_rank();
    d_.nope = c.qk_nope_head_dim();
    d_.rope = c.qk_rope_head_dim();
    d_.vdim = c.v_head_dim();
    if (d_.latent() != 576 || d_.kv_lora % 8 || d_.q_lora % 8)
      return InvalidArgument(
          "MLA decode needs kv_lora_rank + qk_rope_head_dim = 576 (the attention kernel's head size), got " +
          std::to_string(d_.latent()));
  } else if (d_.hd != 128) {
    return InvalidArgument("decode attention supports head_dim 128, the model has " + std::to_string(d_.hd));
  }
  if (c.intermediate() > 0) {
    ASSIGN_OR_RETURN(d_.inter, split(c.intermediate(), "intermediate"));
  }
  if (c.num_experts() > 0) {
    d_.experts = c.num_experts();
    d_.topk = c.experts_per_token();
    ASSIGN_OR_RETURN(d_.moe_inter, split(c.moe_intermediate(), "moe_intermediate"));
    d_.shared_inter = d_.moe_inter * c.num_shared_experts();
    d_.first_dense = c.first_dense_layers();
    if (d_.experts * 4 > 48 * 1024 || d_.topk > 64)
      return InvalidArgument("router top-k supports <= 12288 experts, k <= 64");
  }
  d_.vocab_local = (c.vocab() + tp_ - 1) / tp_;
  d_.draft_vocab_local = (c.draft_vocab() + tp_ - 1) / tp_;
  ASSIGN_OR_RETURN(d_.dq_heads, split(c.draft_heads(), "draft heads"));
  d_.dkv_heads = c.draft_kv_heads() >= tp_ ? c.draft_kv_heads() / tp_ : 1;
  d_.dhd = c.draft_head_dim();
  ASSIGN_OR_RETURN(d_.dinter, split(c.draft_intermediate(), "draft intermediate"));
  if (d_.dhd != 128 || d_.dq_heads % d_.dkv_heads != 0)
    return InvalidArgument("draft layer: head_dim must be 128 and heads a multiple of KV heads");

  context_ = ctx_.opt.decode_context;
  verify_n_ = verify_n;
  sm_count_ = ctx_.props[0].multiProcessorCount;
  max_tokens_ = max_tokens;
  rng_.seed(ctx_.opt.seed * 1000003 + 17);
  const int64_t T = max_tokens_;
  const int64_t max_slots = T * d_.topk + d_.experts;
  const int64_t pool =
      d_.experts > 0 ? ExpectedDistinctExperts(static_cast<int>(d_.experts), static_cast<int>(d_.topk), T) : 0;

  LayerKind target;
  target.mla = d_.mla;
  target.q_heads = d_.q_heads;
  target.kv_heads = d_.kv_heads;
  target.hd = d_.hd;
  target.qkv_k = d_.h;
  LayerKind dense = target, moe = target;
  dense.inter = d_.inter;
  moe.moe = true;
  LayerKind draft;
  draft.q_heads = d_.dq_heads;
  draft.kv_heads = d_.dkv_heads;
  draft.hd = d_.dhd;
  draft.qkv_k = 2 * d_.h;
  draft.inter = d_.dinter;
  auto kind_of = [&](int l) { return d_.experts > 0 && l >= d_.first_dense ? moe : dense; };

  std::vector<int> devs(ctx_.devices.begin(), ctx_.devices.begin() + n);
  if (n > 1) {
    auto cm = NcclComms::Create(devs);
    if (!cm.ok()) return cm.status().Annotate("decode communicators");
    comms_ = std::move(cm).value();
  }
  ranks_.resize(n);
  // Phase 1 on every rank: everything but the target layers (embedding, LM head, draft head, expert
  // pool, activations). Phase 2: as many target layers as the smallest free memory allows.
  RETURN_IF_ERROR(ParallelFor(n, ctx_.rank_cpus, [&](int r) -> Status {
    auto m = std::make_unique<RankModel>();
    m->rank = r;
    m->device = devs[r];
    m->tp = n;
    m->d = d_;
    ASSIGN_OR_RETURN(m->stream, Stream::Create(m->device));
    ASSIGN_OR_RETURN(m->blas, CublasHandle::Create(m->device, m->stream.get()));
    cudaStream_t s = m->stream.get();
    const uint64_t seed = ctx_.opt.seed * 1000003 + r * 7919;
    auto alloc = [&](DeviceBuffer& b, int64_t elems, uint64_t sd, float scale) -> Status {
      ASSIGN_OR_RETURN(b, DeviceBuffer::Create(m->device, std::max<int64_t>(elems, 64) * 2));
      if (scale > 0) CUDA_RETURN_IF_ERROR(LaunchFillRandom(b.data(), elems, sd, scale, s));
      return Status::Ok();
    };
    RETURN_IF_ERROR(alloc(m->embed, d_.vocab_local * d_.h, seed + 1, 1.0f));
    RETURN_IF_ERROR(alloc(m->lm_head, d_.vocab_local * d_.h, seed + 2, 0.02f));
    RETURN_IF_ERROR(alloc(m->final_norm, d_.h, seed + 3, 1.0f));
    RETURN_IF_ERROR(alloc(m->fc, d_.h * 3 * d_.h, seed + 4, 0.02f));
    RETURN_IF_ERROR(alloc(m->draft_lm, d_.draft_vocab_local * d_.h, seed + 5, 0.02f));
    ASSIGN_OR_RETURN(m->draft, MakeLayer(m->device, d_, draft, max_batch, context_, seed + 99, s));
    if (pool > 0) {
      m->pool = pool;
      RETURN_IF_ERROR(alloc(m->pool_gu, pool * 2 * d_.moe_inter * d_.h, seed + 8, 0.02f));
      RETURN_IF_ERROR(alloc(m->pool_down, pool * d_.h * d_.moe_inter, seed + 9, 0.02f));
    }
    const int64_t vmax = std::max(d_.vocab_local, d_.draft_vocab_local);
    const int64_t qkv_max = std::max(dense.qkv_n(), draft.qkv_n());
    const int64_t inter_max = std::max({d_.inter, d_.dinter, int64_t(1)});
    ASSIGN_OR_RETURN(m->ids, DeviceBuffer::Create(m->device, T * sizeof(int) * n));
    CUDA_RETURN_IF_ERROR(cudaMemsetAsync(m->ids.data(), 0, T * sizeof(int) * n, s));
    RETURN_IF_ERROR(alloc(m->x, T * d_.h, 0, 0));
    RETURN_IF_ERROR(alloc(m->resid, T * d_.h, 0, 0));
    RETURN_IF_ERROR(alloc(m->normed, T * d_.h, 0, 0));
    RETURN_IF_ERROR(alloc(m->cat, T * 2 * d_.h, seed + 6, 1.0f));
    RETURN_IF_ERROR(alloc(m->hidden3, T * 3 * d_.h, seed + 7, 1.0f));
    RETURN_IF_ERROR(alloc(m->qkv_out, T * qkv_max, 0, 0));
    RETURN_IF_ERROR(alloc(m->attn_out, T * std::max(dense.q_dim(), draft.q_dim()), 0, 0));
    RETURN_IF_ERROR(alloc(m->gu_out, T * 2 * inter_max, 0, 0));
    RETURN_IF_ERROR(alloc(m->act, T * inter_max, 0, 0));
    RETURN_IF_ERROR(alloc(m->logits, T * vmax, 0, 0));
    RETURN_IF_ERROR(alloc(m->gathered, T * vmax * n, 0, 0));
    int64_t ws_bytes = AttentionWorkspaceBytes(static_cast<int>(T), static_cast<int>(std::max(d_.q_heads, d_.dq_heads)),
                                               128, kMaxSplits);
    if (d_.mla) {
      ws_bytes = std::max(ws_bytes, AttentionWorkspaceBytes(static_cast<int>(T), static_cast<int>(d_.q_heads),
                                                            static_cast<int>(d_.kv_lora), kMaxSplits));
      RETURN_IF_ERROR(alloc(m->qa_out, T * d_.qa_n(), 0, 0));
      RETURN_IF_ERROR(alloc(m->q_lat, T * d_.q_lora, 0, 0));
      RETURN_IF_ERROR(alloc(m->qb_out, T * d_.q_heads * (d_.nope + d_.rope), 0, 0));
      RETURN_IF_ERROR(alloc(m->q_full, T * d_.q_heads * d_.latent(), 0, 0));
      RETURN_IF_ERROR(alloc(m->attn_lat, T * d_.q_heads * d_.kv_lora, 0, 0));
      RETURN_IF_ERROR(alloc(m->attn_out, T * std::max(d_.q_heads * d_.vdim, draft.q_dim()), 0, 0));
    }
    if (d_.experts > 0) {
      RETURN_IF_ERROR(alloc(m->router_logits, T * d_.experts, 0, 0));
      ASSIGN_OR_RETURN(m->topk_ids, DeviceBuffer::Create(m->device, T * d_.topk * sizeof(int)));
      ASSIGN_OR_RETURN(m->topk_w, DeviceBuffer::Create(m->device, T * d_.topk * sizeof(float)));
      RETURN_IF_ERROR(alloc(m->e_in, max_slots * d_.h, 0, 0));
      RETURN_IF_ERROR(alloc(m->e_gu, max_slots * 2 * d_.moe_inter, 0, 0));
      RETURN_IF_ERROR(alloc(m->e_act, max_slots * d_.moe_inter, 0, 0));
      RETURN_IF_ERROR(alloc(m->e_out, max_slots * d_.h, 0, 0));
      if (d_.shared_inter > 0) {
        RETURN_IF_ERROR(alloc(m->s_gu, T * 2 * d_.shared_inter, 0, 0));
        RETURN_IF_ERROR(alloc(m->s_act, T * d_.shared_inter, 0, 0));
        RETURN_IF_ERROR(alloc(m->s_out, T * d_.h, 0, 0));
      }
    }
    ASSIGN_OR_RETURN(m->ws, DeviceBuffer::Create(m->device, ws_bytes));
    ASSIGN_OR_RETURN(m->ids_host, HostBuffer::Create(T * sizeof(int), HostKind::kPinned));
    if (r == 0) {
      for (int i = 0; i < 4096; ++i) {
        ASSIGN_OR_RETURN(Event e, Event::Create(m->device));
        m->phase_events.push_back(std::move(e));
      }
    }
    RETURN_IF_ERROR(SyncStream(m->device, s, 600, "decode buffers"));
    ranks_[r] = std::move(m);
    return Status::Ok();
  }));
  int64_t free_min = INT64_MAX;
  for (int r = 0; r < n; ++r) {
    size_t fr = 0, tot = 0;
    CUDA_RETURN_IF_ERROR(cudaSetDevice(ctx_.devices[r]));
    CUDA_RETURN_IF_ERROR(cudaMemGetInfo(&fr, &tot));
    free_min = std::min<int64_t>(free_min, static_cast<int64_t>(fr));
  }
  int64_t budget = static_cast<int64_t>(free_min * 0.95) - (3LL << 30);  // cuBLAS/NCCL/graph headroom
  int L = 0;
  while (L < c.layers()) {
    const int64_t b = LayerBytes(kind_of(L), d_, max_batch, context_);
    if (b > budget) break;
    budget -= b;
    ++L;
  }
  *layers_run = L;
  if (L < 1)
    return OutOfMemory(shape_.name() + " at tp " + std::to_string(tp_) + ": not even one layer fits (" +
                       std::to_string(free_min >> 30) + " GiB free per GPU after the fixed buffers)");
  return ParallelFor(n, ctx_.rank_cpus, [&](int r) -> Status {
    RankModel& m = *ranks_[r];
    CUDA_RETURN_IF_ERROR(cudaSetDevice(m.device));
    cudaStream_t s = m.stream.get();
    const uint64_t seed = ctx_.opt.seed * 1000003 + r * 7919;
    int moe_index = 0;
    for (int l = 0; l < L; ++l) {
      ASSIGN_OR_RETURN(Layer layer, MakeLayer(m.device, d_, kind_of(l), max_batch, context_, seed + 100 * (l + 1), s));
      if (layer.kind.moe) layer.expert_offset = moe_index++ * 97;  // reduced modulo the free range per forward
      m.layers.push_back(std::move(layer));
    }
    return SyncStream(m.device, s, 600, "weight initialisation");
  });
}

Status DecodeRunner::AllReduce(RankModel& m, void* buf, int64_t count) {
  if (m.tp == 1) return Status::Ok();
  NCCL_RETURN_IF_ERROR(ncclAllReduce(buf, buf, count, ncclBfloat16, ncclSum, comms_.get(m.rank), m.stream.get()));
  return Status::Ok();
}

Status DecodeRunner::GqaAttention(RankModel& m, Layer& L, int seqs, int qps, bool draft, PiecewiseGraphs* pw) {
  const LayerKind& k = L.kind;
  const int64_t T = int64_t(seqs) * qps;
  RETURN_IF_ERROR(
      GemmBf16(m.blas.get(), draft ? m.cat.data() : m.normed.data(), L.qkv, m.qkv_out.data(), T, k.qkv_n(), k.qkv_k));
  // The attention core: KV append and the attention kernel.
  RETURN_IF_ERROR(AttentionCore(pw, [this, &m, &L, seqs, qps, pos = pos_ % context_]() -> Status {
    const LayerKind& k = L.kind;
    cudaStream_t s = m.stream.get();
    CUDA_RETURN_IF_ERROR(LaunchKvAppend(m.qkv_out.data(), L.k_cache.data(), L.v_cache.data(), seqs, qps,
                                        static_cast<int>(k.q_heads), static_cast<int>(k.kv_heads),
                                        static_cast<int>(k.hd), context_, pos, s));
    AttentionArgs aa;
    aa.seqs = seqs;
    aa.q_per_seq = qps;
    aa.q_heads = static_cast<int>(k.q_heads);
    aa.kv_heads = static_cast<int>(k.kv_heads);
    aa.head_dim = static_cast<int>(k.hd);
    aa.v_head_dim = static_cast<int>(k.hd);
    aa.context = context_;
    aa.q_row_stride = k.qkv_n();
    aa.q = m.qkv_out.data();
    aa.k = L.k_cache.data();
    aa.v = L.v_cache.data();
    aa.out = m.attn_out.data();
    aa.workspace = m.ws.data();
    return Attend(aa, s);
  }));
  return GemmBf16(m.blas.get(), m.attn_out.data(), L.o, m.x.data(), T, m.d.h, k.q_dim());
}

// Absorbed MLA decode as SGLang runs it (DeepseekV2AttentionMLA, forward_absorb): fused q_a|kv_a
// projection, q_a / kv_a RMSNorms, q_b, then the attention core: the latent row (kv_lora normed +
// rope) appended to the cache, q_nope absorbed into the latent space through W_kc per head (a
// batched GEMM), attention of every head over the 576-wide latent cache (V = its first kv_lora
// values), the output lifted back through W_vc per head; then o_proj. RoPE is not applied (as in the
// GQA path).
Status DecodeRunner::MlaAttention(RankModel& m, Layer& L, int seqs, int qps, PiecewiseGraphs* pw) {
  const Dims& d = m.d;
  cudaStream_t s = m.stream.get();
  cublasHandle_t h = m.blas.get();
  const int64_t T = int64_t(seqs) * qps;
  const int64_t H = d.q_heads, qk = d.nope + d.rope;
  char* qa = m.qa_out.as<char>();
  RETURN_IF_ERROR(GemmBf16(h, m.normed.data(), L.qkv_a, qa, T, d.qa_n(), d.h));
  CUDA_RETURN_IF_ERROR(
      LaunchRmsNormRows(qa, d.qa_n(), L.q_a_norm, m.q_lat.data(), d.q_lora, T, static_cast<int>(d.q_lora), 1e-6f, s));
  void* kv = qa + d.q_lora * 2;
  CUDA_RETURN_IF_ERROR(
      LaunchRmsNormRows(kv, d.qa_n(), L.kv_a_norm, kv, d.qa_n(), T, static_cast<int>(d.kv_lora), 1e-6f, s));
  RETURN_IF_ERROR(GemmBf16(h, m.q_lat.data(), L.q_b, m.qb_out.data(), T, H * qk, d.q_lora));
  RETURN_IF_ERROR(AttentionCore(pw, [this, &m, &L, kv, seqs, qps, pos = pos_ % context_]() -> Status {
    const Dims& d = m.d;
    cudaStream_t s = m.stream.get();
    cublasHandle_t h = m.blas.get();
    const int64_t T = int64_t(seqs) * qps;
    const int64_t H = d.q_heads, qk = d.nope + d.rope, lat = d.latent();
    CUDA_RETURN_IF_ERROR(
        LaunchRowsToCache(kv, d.qa_n(), static_cast<int>(lat), L.k_cache.data(), seqs, qps, context_, pos, s));
    // q_full[t][head][0:kv_lora] = q_nope[t][head] * W_kc[head]^T ; q_full[t][head][kv_lora:] = q_rope.
    RETURN_IF_ERROR(GemmBf16StridedBatched(h, m.qb_out.data(), H * qk, qk, L.w_kc, d.kv_lora * d.nope, m.q_full.data(),
                                           H * lat, lat, T, d.kv_lora, d.nope, H));
    CUDA_RETURN_IF_ERROR(cudaMemcpy2DAsync(m.q_full.as<char>() + d.kv_lora * 2, lat * 2,
                                           m.qb_out.as<char>() + d.nope * 2, qk * 2, d.rope * 2, T * H,
                                           cudaMemcpyDeviceToDevice, s));
    AttentionArgs aa;
    aa.seqs = seqs;
    aa.q_per_seq = qps;
    aa.q_heads = static_cast<int>(H);
    aa.kv_heads = 1;
    aa.head_dim = static_cast<int>(lat);
    aa.v_head_dim = static_cast<int>(d.kv_lora);
    aa.context = context_;
    aa.q = m.q_full.data();
    aa.k = L.k_cache.data();
    aa.v = L.k_cache.data();
    aa.out = m.attn_lat.data();
    aa.workspace = m.ws.data();
    RETURN_IF_ERROR(Attend(aa, s));
    // attn_out[t][head][0:vdim] = attn_lat[t][head] * W_vc[head]^T.
    return GemmBf16StridedBatched(h, m.attn_lat.data(), H * d.kv_lora, d.kv_lora, L.w_vc, d.vdim * d.kv_lora,
                                  m.attn_out.data(), H * d.vdim, d.vdim, T, d.vdim, d.kv_lora, H);
  }));
  return GemmBf16(h, m.attn_out.data(), L.o, m.x.data(), T, d.h, H * d.vdim);
}

// MoE layer: router GEMM and top-k on the GPU; the routed experts run as the expected number of
// distinct experts for T tokens (ExpectedDistinctExperts), a contiguous run of the shared expert
// pool starting at this layer's offset, with the T * k token-expert pairs split evenly among them
// (two strided-batched GEMMs: gate_up and down); shared experts as a dense MLP; the combine weighs
// each pair's output with the router's top-k softmax weights.
Status DecodeRunner::Moe(RankModel& m, Layer& L, int64_t T) {
  const Dims& d = m.d;
  cudaStream_t s = m.stream.get();
  cublasHandle_t h = m.blas.get();
  const int k = static_cast<int>(d.topk);
  RETURN_IF_ERROR(GemmBf16(h, m.normed.data(), L.router, m.router_logits.data(), T, d.experts, d.h));
  CUDA_RETURN_IF_ERROR(LaunchTopK(m.router_logits.data(), T, static_cast<int>(d.experts), k, m.topk_ids.as<int>(),
                                  m.topk_w.as<float>(), s));
  const int64_t ed = ExpectedDistinctExperts(static_cast<int>(d.experts), k, T);
  const int64_t rows = (T * k + ed - 1) / ed;
  const int64_t slots = ed * rows;
  const int64_t off = L.expert_offset % (m.pool - ed + 1);
  const int64_t mi = d.moe_inter;
  CUDA_RETURN_IF_ERROR(LaunchMoeGather(m.normed.data(), m.e_in.data(), T, k, slots, static_cast<int>(d.h), s));
  RETURN_IF_ERROR(GemmBf16StridedBatched(h, m.e_in.data(), d.h, rows * d.h,
                                         m.pool_gu.as<char>() + off * 2 * mi * d.h * 2, 2 * mi * d.h, m.e_gu.data(),
                                         2 * mi, rows * 2 * mi, rows, 2 * mi, d.h, ed));
  CUDA_RETURN_IF_ERROR(LaunchSiluMul(m.e_gu.data(), m.e_act.data(), slots, static_cast<int>(mi), s));
  RETURN_IF_ERROR(GemmBf16StridedBatched(h, m.e_act.data(), mi, rows * mi, m.pool_down.as<char>() + off * d.h * mi * 2,
                                         d.h * mi, m.e_out.data(), d.h, rows * d.h, rows, d.h, mi, ed));
  const void* shared = nullptr;
  if (d.shared_inter > 0) {
    RETURN_IF_ERROR(GemmBf16(h, m.normed.data(), L.sgu, m.s_gu.data(), T, 2 * d.shared_inter, d.h));
    CUDA_RETURN_IF_ERROR(LaunchSiluMul(m.s_gu.data(), m.s_act.data(), T, static_cast<int>(d.shared_inter), s));
    RETURN_IF_ERROR(GemmBf16(h, m.s_act.data(), L.sdown, m.s_out.data(), T, d.h, d.shared_inter));
    shared = m.s_out.data();
  }
  CUDA_RETURN_IF_ERROR(
      LaunchMoeCombine(m.e_out.data(), m.topk_w.as<float>(), shared, m.x.data(), T, k, static_cast<int>(d.h), s));
  return Status::Ok();
}

Status DecodeRunner::Forward(RankModel& m, int seqs, int qps, bool draft, PhaseRec* ph, PiecewiseGraphs* pw) {
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
  for (int l = 0; l < nlayers; ++l) {
    Layer& L = draft ? m.draft : m.layers[l];
    CUDA_RETURN_IF_ERROR(
        LaunchRmsNorm(m.x.data(), m.resid.data(), L.n1, m.normed.data(), T, static_cast<int>(d.h), 1e-5f, s));
    if (L.kind.mla)
      RETURN_IF_ERROR(MlaAttention(m, L, seqs, qps, pw));
    else
      RETURN_IF_ERROR(GqaAttention(m, L, seqs, qps, draft, pw));
    RETURN_IF_ERROR(ph->Fine("attention"));
    RETURN_IF_ERROR(AllReduce(m, m.x.data(), T * d.h));
    RETURN_IF_ERROR(ph->Fine("allreduce"));
    CUDA_RETURN_IF_ERROR(
        LaunchRmsNorm(m.x.data(), m.resid.data(), L.n2, m.normed.data(), T, static_cast<int>(d.h), 1e-5f, s));
    if (L.kind.moe) {
      RETURN_IF_ERROR(Moe(m, L, T));
      RETURN_IF_ERROR(ph->Fine("moe"));
    } else {
      const int64_t inter = L.kind.inter;
      RETURN_IF_ERROR(GemmBf16(h, m.normed.data(), L.gu, m.gu_out.data(), T, 2 * inter, d.h));
      CUDA_RETURN_IF_ERROR(LaunchSiluMul(m.gu_out.data(), m.act.data(), T, static_cast<int>(inter), s));
      RETURN_IF_ERROR(GemmBf16(h, m.act.data(), L.down, m.x.data(), T, d.h, inter));
      RETURN_IF_ERROR(ph->Fine("mlp"));
    }
    RETURN_IF_ERROR(AllReduce(m, m.x.data(), T * d.h));
    RETURN_IF_ERROR(ph->Fine("allreduce"));
  }
  CUDA_RETURN_IF_ERROR(LaunchRmsNorm(m.x.data(), m.resid.data(), m.final_norm.data(), m.normed.data(), T,
                                     static_cast<int>(d.h), 1e-5f, s));
  RETURN_IF_ERROR(
      GemmBf16(h, m.normed.data(), draft ? m.draft_lm.data() : m.lm_head.data(), m.logits.data(), T, vocab_local, d.h));
  RETURN_IF_ERROR(ph->Fine("lm_head"));
  const void* logits = m.logits.data();
  if (m.tp > 1) {
    NCCL_RETURN_IF_ERROR(
        ncclAllGather(m.logits.data(), m.gathered.data(), T * vocab_local, ncclBfloat16, comms_.get(m.rank), s));
    logits = m.gathered.data();
    RETURN_IF_ERROR(ph->Fine("logits_gather"));
  }
  // Synthetic sampling: argmax per row of this rank's slice layout (rows of the gathered buffer).
  CUDA_RETURN_IF_ERROR(LaunchArgmax(logits, m.ids.as<int>(), static_cast<int>(T), vocab_local, s));
  RETURN_IF_ERROR(ph->Fine("sample"));
  return Status::Ok();
}

// One plain step or one speculative cycle on one rank, ending with the tokens on the host.
Status DecodeRunner::Step(RankModel& m, int batch, bool spec, Capture capture, const StepGraphs& g, PhaseRec* ph,
                          double* host_accept_us, int qps) {
  cudaStream_t s = m.stream.get();
  const int S = ctx_.opt.draft_steps;
  auto read_tokens = [&](int64_t count) -> Status {
    CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(m.ids_host.data(), m.ids.data(), count * sizeof(int), cudaMemcpyDeviceToHost, s));
    return SyncStream(m.device, s, ctx_.opt.collective_timeout_s, "decode step");
  };
  if (!spec) {
    if (capture == Capture::kGraph)
      RETURN_IF_ERROR(g.whole[0].Launch(s));
    else if (capture == Capture::kPiecewise)
      RETURN_IF_ERROR(g.plain.Replay(s));
    else
      RETURN_IF_ERROR(Forward(m, batch, qps, false, ph));
    return read_tokens(int64_t(batch) * qps);
  }
  // Draft forwards and verify.
  if (capture == Capture::kGraph) {
    RETURN_IF_ERROR(g.whole[0].Launch(s));
  } else if (capture == Capture::kPiecewise) {
    for (int i = 0; i < S - 1; ++i) RETURN_IF_ERROR(g.draft.Replay(s));
    RETURN_IF_ERROR(g.verify.Replay(s));
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
  if (capture == Capture::kGraph)
    RETURN_IF_ERROR(g.whole[1].Launch(s));
  else if (capture == Capture::kPiecewise)
    RETURN_IF_ERROR(g.extend.Replay(s));
  else
    RETURN_IF_ERROR(Forward(m, batch, verify_n_, true, ph));
  RETURN_IF_ERROR(ph->Mark("draft_extend"));
  return SyncStream(m.device, s, ctx_.opt.collective_timeout_s, "draft extend");
}

Status DecodeRunner::RunConfig(int batch, Capture capture, bool spec, int qps) {
  const int n = tp_;
  const int S = ctx_.opt.draft_steps;
  TimingConfig cfg = ctx_.Timing(3, 30);
  std::vector<std::vector<double>> per_rank(n);
  std::vector<StepGraphs> graphs(n);
  RETURN_IF_ERROR(ParallelFor(n, ctx_.rank_cpus, [&](int r) -> Status {
    RankModel& m = *ranks_[r];
    CUDA_RETURN_IF_ERROR(cudaSetDevice(m.device));
    PhaseRec none;
    StepGraphs& g = graphs[r];
    if (capture == Capture::kGraph) {
      if (!spec) {
        ASSIGN_OR_RETURN(GraphExec e, GraphExec::Capture(m.device, m.stream.get(),
                                                         [&] { return Forward(m, batch, qps, false, &none); }));
        g.whole.push_back(std::move(e));
      } else {
        ASSIGN_OR_RETURN(GraphExec e0, GraphExec::Capture(m.device, m.stream.get(), [&]() -> Status {
                           for (int i = 0; i < S - 1; ++i) RETURN_IF_ERROR(Forward(m, batch, 1, true, &none));
                           return Forward(m, batch, verify_n_, false, &none);
                         }));
        ASSIGN_OR_RETURN(GraphExec e1, GraphExec::Capture(m.device, m.stream.get(),
                                                          [&] { return Forward(m, batch, verify_n_, true, &none); }));
        g.whole.push_back(std::move(e0));
        g.whole.push_back(std::move(e1));
      }
    } else if (capture == Capture::kPiecewise) {
      // One piecewise capture per forward kind; the S - 1 draft forwards replay the same one.
      auto pieces = [&](int qps, bool draft) {
        return PiecewiseGraphs::Capture(m.device, m.stream.get(),
                                        [&](PiecewiseGraphs* pw) { return Forward(m, batch, qps, draft, &none, pw); });
      };
      if (!spec) {
        ASSIGN_OR_RETURN(g.plain, pieces(qps, false));
      } else {
        if (S > 1) {
          ASSIGN_OR_RETURN(g.draft, pieces(1, true));
        }
        ASSIGN_OR_RETURN(g.verify, pieces(verify_n_, false));
        ASSIGN_OR_RETURN(g.extend, pieces(verify_n_, true));
      }
    }
    for (int i = 0; i < cfg.warmup; ++i) RETURN_IF_ERROR(Step(m, batch, spec, capture, g, &none, nullptr, qps));
    for (int i = 0; i < cfg.iters; ++i) {
      auto a = std::chrono::steady_clock::now();
      RETURN_IF_ERROR(Step(m, batch, spec, capture, g, &none, nullptr, qps));
      per_rank[r].push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - a).count());
    }
    return Status::Ok();
  }));
  std::vector<double> us(cfg.iters, 0.0);
  for (int r = 0; r < n; ++r)
    for (int i = 0; i < cfg.iters; ++i) us[i] = std::max(us[i], per_rank[r][i]);
  int graph_launches = 0;
  if (capture == Capture::kGraph) graph_launches = spec ? 2 : 1;
  if (capture == Capture::kPiecewise) {
    const StepGraphs& g = graphs[0];
    graph_launches = spec ? (S - 1) * g.draft.graphs() + g.verify.graphs() + g.extend.graphs() : g.plain.graphs();
  }

  // Phase breakdown: a few eager steps with events on rank 0.
  std::map<std::string, double> phase_us;
  const int phase_steps = capture == Capture::kEager ? 3 : 0;
  double accept_us = 0;
  if (phase_steps > 0) {
    RETURN_IF_ERROR(ParallelFor(n, ctx_.rank_cpus, [&](int r) -> Status {
      RankModel& m = *ranks_[r];
      CUDA_RETURN_IF_ERROR(cudaSetDevice(m.device));
      const StepGraphs none_g;
      for (int i = 0; i < phase_steps; ++i) {
        PhaseRec ph;
        if (r == 0) {
          ph.m = &m;
          ph.sink = &phase_us;
          ph.fine = !spec;
        }
        RETURN_IF_ERROR(ph.Start());
        RETURN_IF_ERROR(Step(m, batch, spec, Capture::kEager, none_g, &ph, r == 0 ? &accept_us : nullptr, qps));
        RETURN_IF_ERROR(ph.Flush());
      }
      return Status::Ok();
    }));
  }

  // Acceptance draws (seeded): tokens per cycle = 1 + accepted prefix of S drafts, per sequence.
  double tokens_per_cycle = 1.0;
  if (spec) {
    // Seeded per configuration so the eager, graph and piecewise runs of one batch see the same draws.
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
                          "decode/" + shape_.name() + "/tp" + std::to_string(tp_) +
                              (spec      ? "/spec"
                               : qps > 1 ? "/verify"
                                         : "/plain") +
                              "/" + CaptureName(capture) + "/b" + std::to_string(batch) +
                              (qps > 1 ? "/q" + std::to_string(qps) : ""));
  auto* p = it->mutable_decode();
  p->set_model(shape_.name());
  p->set_tp(tp_);
  for (int r = 0; r < n; ++r) p->add_gpus(ctx_.devices[r]);
  p->set_layers_model(shape_.layers());
  p->set_layers_run(static_cast<int>(ranks_[0]->layers.size()));
  p->set_batch(batch);
  p->set_context(context_);
  p->set_cuda_graph(capture == Capture::kGraph);
  p->set_capture(CaptureName(capture));
  p->set_graph_launches_per_step(graph_launches);
  p->set_speculative(spec);
  p->set_steps(cfg.iters);
  p->set_seed(ctx_.opt.seed);
  if (spec) {
    p->set_draft_steps(S);
    p->set_verify_tokens(verify_n_);
    p->set_acceptance_p(ctx_.opt.acceptance_p);
    p->set_draft_vocab(shape_.draft_vocab());
    p->set_draft(shape_.draft());
    p->set_draft_file(shape_.draft_file());
  }
  p->set_attention(shape_.mla() ? "mla_absorbed" : "gqa");
  p->set_query_tokens(spec ? verify_n_ : qps);
  {
    const bool shared = shape_.mla();
    const int hd = shared ? static_cast<int>(d_.latent()) : static_cast<int>(d_.hd);
    const int vd = shared ? static_cast<int>(d_.kv_lora) : hd;
    p->set_attention_implementation(AttentionImplName(ProductionAttentionImpl(hd, vd, shared)));
  }
  p->set_gemm_library("cublasGemmEx");
  int dense_run = 0, moe_run = 0;
  for (const auto& l : ranks_[0]->layers) (l.kind.moe ? moe_run : dense_run)++;
  p->set_dense_layers_run(dense_run);
  p->set_moe_layers_run(moe_run);
  if (shape_.num_experts() > 0) {
    const int64_t t = int64_t(batch) * (spec ? verify_n_ : qps);
    const int ed = ExpectedDistinctExperts(shape_.num_experts(), shape_.experts_per_token(), t);
    p->set_routed_experts_per_layer(ed);
    p->set_rows_per_expert(static_cast<int>((t * shape_.experts_per_token() + ed - 1) / ed));
    p->set_expert_pool(static_cast<int>(ranks_[0]->pool));
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
  const int verify_n = ctx.opt.draft_steps + 1;
  int max_batch = *std::max_element(ctx.opt.decode_batches.begin(), ctx.opt.decode_batches.end());
  int max_tokens = max_batch * verify_n;
  for (int b : ctx.opt.verify_batches) {
    max_batch = std::max(max_batch, b);
    for (int q : ctx.opt.verify_widths) max_tokens = std::max(max_tokens, b * q);
  }
  for (const trace::ModelShape& shape : ctx.trace->models()) {
    const std::string& name = shape.name();
    DecodeRunner runner(ctx, shape, tp);
    int layers_run = 0;
    Status st = runner.Build(max_batch, max_tokens, verify_n, &layers_run);
    if (!st.ok()) {
      if (st.code() == StatusCode::kOutOfMemory || st.code() == StatusCode::kInvalidArgument) {
        ctx.Note(trace::Note::WARNING, kSuite, name + " skipped: " + st.message());
        continue;
      }
      return st.Annotate(name);
    }
    if (layers_run < shape.layers())
      ctx.Note(trace::Note::INFO, kSuite,
               name + ": layers reduced from " + std::to_string(shape.layers()) + " to " + std::to_string(layers_run) +
                   " to fit GPU memory at tp " + std::to_string(tp));
    if (shape.num_experts() > 0)
      ctx.Note(
          trace::Note::INFO, kSuite,
          name + ": routed experts: a pool of " + std::to_string(runner.pool()) + " of " +
              std::to_string(shape.num_experts()) +
              " experts' weights shared by the MoE layers (each layer runs the expected number of distinct experts "
              "for its token count, a contiguous run of the pool at a per-layer offset; token-expert pairs split "
              "evenly; the router's top-k weights combine them)");
    ctx.Note(trace::Note::INFO, kSuite,
             name + ": draft " + shape.draft() + (shape.draft_file().empty() ? "" : " (" + shape.draft_file() + ")") +
                 ": heads " + std::to_string(shape.draft_heads()) + ", KV heads " +
                 std::to_string(shape.draft_kv_heads()) + ", intermediate " +
                 std::to_string(shape.draft_intermediate()) + ", draft vocab " + std::to_string(shape.draft_vocab()));
    for (int b : ctx.opt.decode_batches)
      for (bool spec : {false, true})
        for (Capture capture : {Capture::kEager, Capture::kGraph, Capture::kPiecewise}) {
          Status rs = runner.RunConfig(b, capture, spec);
          if (rs.code() == StatusCode::kDeadlineExceeded) {
            ctx.Note(trace::Note::ERROR, kSuite, name + ": decode hung, communicators aborted: " + rs.message());
            runner.AbortComms();
            return Status::Ok();
          }
          RETURN_IF_ERROR(rs.Annotate(name + " batch " + std::to_string(b)));
        }
    // The verify-width sweep: one target forward over b x q tokens, graph and eager (q = 1 is the
    // plain step above when b is one of --batch).
    for (int b : ctx.opt.verify_batches)
      for (int q : ctx.opt.verify_widths) {
        const bool measured = q == 1 && std::find(ctx.opt.decode_batches.begin(), ctx.opt.decode_batches.end(), b) !=
                                            ctx.opt.decode_batches.end();
        if (measured) continue;
        for (Capture capture : {Capture::kEager, Capture::kGraph}) {
          Status rs = runner.RunConfig(b, capture, false, q);
          if (rs.code() == StatusCode::kDeadlineExceeded) {
            ctx.Note(trace::Note::ERROR, kSuite, name + ": decode hung, communicators aborted: " + rs.message());
            runner.AbortComms();
            return Status::Ok();
          }
          RETURN_IF_ERROR(rs.Annotate(name + " verify sweep batch " + std::to_string(b) + " q " + std::to_string(q)));
        }
      }
  }
  return Status::Ok();
}

}  // namespace specsim::validate
