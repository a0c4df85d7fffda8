// kernels: cuBLAS GEMMs (cublasGemmEx and cuBLASLt) at a model's shapes and TP degree for 1..256
// tokens (weights rotated over more than three L2 caches so every call streams its weights from
// memory), attention over a KV cache (decode grid and verify-width sweep, per implementation),
// RMSNorm, and launch overhead eager against CUDA-graph replay. Runs on the first GPU (the GPUs of
// one box are alike; the trace records which).
#include <algorithm>
#include <string>

#include "validate/gemm.h"
#include "validate/kernels.h"
#include "validate/models.h"
#include "validate/suite.h"
#include "validate/sweep.h"

namespace specsim::validate {
namespace {

constexpr const char* kSuite = "kernels";

struct Rig {
  int device = 0;
  int64_t l2 = 0;
  int sm_count = 1;
  Stream stream;
  CublasHandle blas;
};

Status Gemms(Context& ctx, Rig& r, const trace::ModelShape& m, int tp) {
  ASSIGN_OR_RETURN(auto gemms, LayerGemms(m, tp));
  const auto tokens = TokenCounts(ctx.opt.quick);
  const int64_t max_m = tokens.back();
  cudaStream_t s = r.stream.get();
  for (const auto& g : gemms) {
    const int64_t wbytes = g.n * g.k * 2;
    const int copies = static_cast<int>(std::clamp<int64_t>((3 * r.l2 + wbytes - 1) / wbytes, 1, 64));
    std::vector<DeviceBuffer> w;
    for (int c = 0; c < copies; ++c) {
      ASSIGN_OR_RETURN(DeviceBuffer b, DeviceBuffer::Create(r.device, wbytes));
      CUDA_RETURN_IF_ERROR(LaunchFillRandom(b.data(), g.n * g.k, ctx.opt.seed + c, 0.05f, s));
      w.push_back(std::move(b));
    }
    ASSIGN_OR_RETURN(DeviceBuffer in, DeviceBuffer::Create(r.device, max_m * g.k * 2));
    ASSIGN_OR_RETURN(DeviceBuffer out, DeviceBuffer::Create(r.device, max_m * g.n * 2));
    CUDA_RETURN_IF_ERROR(LaunchFillRandom(in.data(), max_m * g.k, ctx.opt.seed + 99, 1.0f, s));
    // cublasGemmEx (item names without a library segment, as in earlier traces) and cuBLASLt with
    // its heuristic's first algorithm ("/cublasLt/" in the name).
    for (const char* library : {"cublasGemmEx", "cublasLt"}) {
      const bool lt = std::string(library) == "cublasLt";
      for (int64_t mt : tokens) {
        LtGemmPlan plan;
        if (lt) {
          ASSIGN_OR_RETURN(plan, LtGemmPlan::Create(r.device, mt, g.n, g.k));
        }
        TimingConfig cfg = ctx.Timing(3, 20);
        int iter = 0;
        auto t = TimeOp(
            r.device, s, cfg,
            [&]() -> Status {
              const void* wp = w[iter++ % copies].data();
              return lt ? plan.Run(in.data(), wp, out.data(), s)
                        : GemmBf16(r.blas.get(), in.data(), wp, out.data(), mt, g.n, g.k);
            },
            std::string("gemm ") + library + " " + g.op);
        if (!t.ok()) return t.status();
        auto* it = ctx.NewItem(trace::SUITE_KERNELS, trace::KIND_GEMM,
                               "kernels/gemm/" + m.name() + "/tp" + std::to_string(tp) + "/" + g.op +
                                   (lt ? "/cublasLt" : "") + "/m" + std::to_string(mt));
        auto* p = it->mutable_gemm();
        p->set_m(mt);
        p->set_n(g.n);
        p->set_k(g.k);
        p->set_dtype(trace::DTYPE_BF16);
        p->set_model(m.name());
        p->set_tp(tp);
        p->set_op(g.op);
        p->set_weight_copies(copies);
        p->set_weight_bytes(wbytes);
        p->set_gpu(r.device);
        p->set_library(library);
        FillStats(*t, cfg, "cuda_events", it);
        const double us = it->stats().median_us();
        it->set_tflops(TFlops(2.0 * mt * g.n * g.k, us));
        it->set_gbps(GBps(static_cast<double>(wbytes) + 2.0 * mt * (g.n + g.k), us));
      }
    }
  }
  return Status::Ok();
}

// One attention point: (implementation, batch, query tokens per sequence, context).
struct AttentionPoint {
  AttentionImpl impl;
  int batch;
  int qps;
  int64_t context;
};

// The points measured: the decode grid (q = 1 over batches and contexts) and the verify-width sweep
// (--verify-widths at --verify-batch, context 4096; q = 4, 16, 64 also at the grid's other contexts)
// for the production implementation; for a GQA
// model also simt_reference on the decode grid and at widths <= 16 (a second implementation the
// simulator must keep apart; wider it re-reads the cache once per 8 rows and gains nothing).
std::vector<AttentionPoint> AttentionPoints(const Context& ctx, const AttentionShape& a) {
  const AttentionImpl prod = ProductionAttentionImpl(a.head_dim, a.v_head_dim, a.kv_shared);
  std::vector<int> batches = ctx.opt.quick ? std::vector<int>{1, 32} : std::vector<int>{1, 8, 32};
  std::vector<int64_t> contexts = ctx.opt.quick ? std::vector<int64_t>{4096} : std::vector<int64_t>{1024, 4096, 16384};
  std::vector<AttentionImpl> impls{prod};
  if (prod != AttentionImpl::kSimtReference) impls.push_back(AttentionImpl::kSimtReference);
  std::vector<AttentionPoint> out;
  for (AttentionImpl impl : impls) {
    for (int b : batches)
      for (int64_t c : contexts) out.push_back({impl, b, 1, c});
    for (int b : ctx.opt.verify_batches)
      for (int q : ctx.opt.verify_widths) {
        if (q == 1 && std::find(batches.begin(), batches.end(), b) != batches.end() &&
            std::find(contexts.begin(), contexts.end(), 4096) != contexts.end())
          continue;  // on the decode grid already
        if (impl == AttentionImpl::kSimtReference && impl != prod && q > 16) continue;
        out.push_back({impl, b, q, 4096});
      }
    // The production kernel's verify widths at the decode grid's other contexts (a few q), and its
    // decode at batch 8 on long contexts (32 K, 64 K: the cache of one 16 K batch-32 point, so no
    // larger buffer), where a launch's fixed costs weigh least against the stream.
    if (impl == prod && !ctx.opt.quick) {
      for (int b : ctx.opt.verify_batches)
        for (int q : {4, 16, 64})
          for (int64_t c : contexts)
            if (c != 4096 && q <= c) out.push_back({impl, b, q, c});
      for (int64_t c : {int64_t{32768}, int64_t{65536}}) out.push_back({impl, 8, 1, c});
    }
  }
  return out;
}

Status Attention(Context& ctx, Rig& r, const trace::ModelShape& m, int tp) {
  ASSIGN_OR_RETURN(AttentionShape a, AttentionFor(m, tp));
  if (!ReferenceAttentionSupports(a.head_dim))
    return InvalidArgument("attention head_dim " + std::to_string(a.head_dim) +
                           ": validate's attention kernels run head_dim 64, 128 and 576 (MLA); not measured");
  cudaStream_t s = r.stream.get();
  const std::vector<AttentionPoint> points = AttentionPoints(ctx, a);
  int64_t max_kv_tokens = 0, max_rows = 0;  // per KV head: sequences x context
  for (const AttentionPoint& pt : points) {
    max_kv_tokens = std::max(max_kv_tokens, pt.batch * pt.context);
    max_rows = std::max<int64_t>(max_rows, int64_t(pt.batch) * pt.qps);
  }
  const int64_t kv_elems = max_kv_tokens * a.kv_heads * a.head_dim;
  ASSIGN_OR_RETURN(DeviceBuffer k, DeviceBuffer::Create(r.device, kv_elems * 2));
  DeviceBuffer v;
  if (!a.kv_shared) {
    ASSIGN_OR_RETURN(v, DeviceBuffer::Create(r.device, kv_elems * 2));
    CUDA_RETURN_IF_ERROR(LaunchFillRandom(v.data(), kv_elems, ctx.opt.seed + 2, 1.0f, s));
  }
  CUDA_RETURN_IF_ERROR(LaunchFillRandom(k.data(), kv_elems, ctx.opt.seed + 1, 1.0f, s));
  ASSIGN_OR_RETURN(DeviceBuffer q, DeviceBuffer::Create(r.device, max_rows * a.q_heads * a.head_dim * 2));
  CUDA_RETURN_IF_ERROR(LaunchFillRandom(q.data(), max_rows * a.q_heads * a.head_dim, ctx.opt.seed + 3, 1.0f, s));
  ASSIGN_OR_RETURN(DeviceBuffer out, DeviceBuffer::Create(r.device, max_rows * a.q_heads * a.v_head_dim * 2));
  for (const AttentionPoint& pt : points) {
    const int b = pt.batch, qps = pt.qps;
    const int64_t ctxlen = pt.context;
    AttentionArgs args;
    args.seqs = b;
    args.q_per_seq = qps;
    args.q_heads = a.q_heads;
    args.kv_heads = a.kv_heads;
    args.head_dim = a.head_dim;
    args.v_head_dim = a.v_head_dim;
    args.context = ctxlen;
    args.splits = AttentionSplits(pt.impl, args, r.sm_count);
    // The buffer holds max_kv_tokens per KV head; this point uses its start as a [b][kv][ctxlen] cache.
    ASSIGN_OR_RETURN(
        DeviceBuffer ws,
        DeviceBuffer::Create(r.device, AttentionWorkspaceBytes(b * qps, a.q_heads, a.v_head_dim, args.splits)));
    args.q = q.data();
    args.k = k.data();
    args.v = a.kv_shared ? k.data() : v.data();
    args.out = out.data();
    args.workspace = ws.data();
    const TimingConfig cfg = ctx.Timing(3, 20);
    auto time_call = [&](const AttentionArgs& call, const char* what) {
      return TimeOp(
          r.device, s, cfg,
          [&]() -> Status {
            CUDA_RETURN_IF_ERROR(LaunchAttention(pt.impl, call, s));
            return Status::Ok();
          },
          what);
    };
    auto t = time_call(args, "attention");
    if (!t.ok()) return t.status();
    double main_us = 0;
    if (args.splits > 1) {
      // The main kernel alone: what the split merge adds is the difference.
      AttentionArgs main_only = args;
      main_only.combine = false;
      auto tm = time_call(main_only, "attention main kernel");
      if (!tm.ok()) return tm.status();
      main_us = Percentile(*tm, 50);
    }
    const bool prod = pt.impl == ProductionAttentionImpl(a.head_dim, a.v_head_dim, a.kv_shared);
    // Production items keep the names of earlier traces; the second implementation is named.
    auto* it = ctx.NewItem(trace::SUITE_KERNELS, trace::KIND_ATTENTION,
                           "kernels/attention/" + m.name() + "/tp" + std::to_string(tp) +
                               (prod ? "" : std::string("/") + AttentionImplName(pt.impl)) + "/b" + std::to_string(b) +
                               "/q" + std::to_string(qps) + "/ctx" + std::to_string(ctxlen));
    auto* p = it->mutable_attention();
    p->set_batch(b);
    p->set_query_tokens(qps);
    p->set_context(ctxlen);
    p->set_q_heads(a.q_heads);
    p->set_kv_heads(a.kv_heads);
    p->set_head_dim(a.head_dim);
    p->set_v_head_dim(a.v_head_dim);
    p->set_kv_shared(a.kv_shared);
    p->set_dtype(trace::DTYPE_BF16);
    const int64_t kv_bytes =
        int64_t(b) * a.kv_heads * ctxlen * (a.kv_shared ? a.head_dim : a.head_dim + a.v_head_dim) * 2;
    p->set_kv_bytes(kv_bytes);
    p->set_splits(args.splits);
    p->set_model(m.name());
    p->set_tp(tp);
    p->set_gpu(r.device);
    p->set_implementation(AttentionImplName(pt.impl));
    p->set_main_kernel_median_us(main_us);
    FillStats(*t, cfg, "cuda_events", it);
    it->set_gbps(GBps(kv_bytes, it->stats().median_us()));
    it->set_tflops(TFlops(2.0 * b * qps * a.q_heads * ctxlen * (a.head_dim + a.v_head_dim), it->stats().median_us()));
  }
  return Status::Ok();
}

Status RmsNorm(Context& ctx, Rig& r, const std::vector<int>& hiddens) {
  cudaStream_t s = r.stream.get();
  std::vector<int64_t> tokens = ctx.opt.quick ? std::vector<int64_t>{1, 256} : std::vector<int64_t>{1, 16, 256, 4096};
  for (int h : hiddens) {
    const int64_t max_t = tokens.back();
    ASSIGN_OR_RETURN(DeviceBuffer x, DeviceBuffer::Create(r.device, max_t * h * 2));
    ASSIGN_OR_RETURN(DeviceBuffer res, DeviceBuffer::Create(r.device, max_t * h * 2));
    ASSIGN_OR_RETURN(DeviceBuffer out, DeviceBuffer::Create(r.device, max_t * h * 2));
    ASSIGN_OR_RETURN(DeviceBuffer w, DeviceBuffer::Create(r.device, int64_t(h) * 2));
    CUDA_RETURN_IF_ERROR(LaunchFillRandom(x.data(), max_t * h, 5, 1.0f, s));
    CUDA_RETURN_IF_ERROR(LaunchFillRandom(res.data(), max_t * h, 6, 1.0f, s));
    CUDA_RETURN_IF_ERROR(LaunchFillRandom(w.data(), h, 7, 1.0f, s));
    for (bool fused : {false, true}) {
      for (int64_t t : tokens) {
        TimingConfig cfg = ctx.Timing(3, 30);
        auto tm = TimeOp(
            r.device, s, cfg,
            [&]() -> Status {
              CUDA_RETURN_IF_ERROR(
                  LaunchRmsNorm(x.data(), fused ? res.data() : nullptr, w.data(), out.data(), t, h, 1e-5f, s));
              return Status::Ok();
            },
            "rmsnorm");
        if (!tm.ok()) return tm.status();
        auto* it = ctx.NewItem(trace::SUITE_KERNELS, trace::KIND_RMSNORM,
                               std::string("kernels/rmsnorm/") + (fused ? "residual/" : "plain/") + "h" +
                                   std::to_string(h) + "/t" + std::to_string(t));
        auto* p = it->mutable_rmsnorm();
        p->set_tokens(t);
        p->set_hidden(h);
        p->set_dtype(trace::DTYPE_BF16);
        p->set_fused_residual(fused);
        p->set_gpu(r.device);
        FillStats(*tm, cfg, "cuda_events", it);
        it->set_gbps(GBps(2.0 * t * h * (fused ? 4 : 2), it->stats().median_us()));
      }
    }
  }
  return Status::Ok();
}

Status LaunchOverhead(Context& ctx, Rig& r) {
  cudaStream_t s = r.stream.get();
  for (int kernels : {1, 10, 100}) {
    for (bool graph : {false, true}) {
      TimingConfig cfg = ctx.Timing(5, 50);
      GraphExec exec;
      auto body = [&]() -> Status {
        for (int i = 0; i < kernels; ++i) CUDA_RETURN_IF_ERROR(LaunchEmptyKernel(1, 32, s));
        return Status::Ok();
      };
      if (graph) {
        ASSIGN_OR_RETURN(exec, GraphExec::Capture(r.device, s, body));
      }
      auto t = TimeOp(
          r.device, s, cfg, [&]() -> Status { return graph ? exec.Launch(s) : body(); }, "launch overhead");
      if (!t.ok()) return t.status();
      auto* it =
          ctx.NewItem(trace::SUITE_KERNELS, trace::KIND_LAUNCH_OVERHEAD,
                      std::string("kernels/launch/") + (graph ? "graph" : "eager") + "/k" + std::to_string(kernels));
      auto* p = it->mutable_launch();
      p->set_kernels(kernels);
      p->set_cuda_graph(graph);
      p->set_blocks(1);
      p->set_threads_per_block(32);
      p->set_gpu(r.device);
      FillStats(*t, cfg, "cuda_events", it);
      it->set_us_per_kernel(it->stats().median_us() / kernels);
    }
  }
  return Status::Ok();
}

}  // namespace

Status RunKernelsSuite(Context& ctx) {
  Rig r;
  r.device = ctx.devices[0];
  r.l2 = ctx.props[0].l2CacheSize;
  r.sm_count = ctx.props[0].multiProcessorCount;
  ASSIGN_OR_RETURN(r.stream, Stream::Create(r.device));
  ASSIGN_OR_RETURN(r.blas, CublasHandle::Create(r.device, r.stream.get()));
  const int tp = ctx.tp();
  std::vector<int> hiddens;
  for (const trace::ModelShape& m : ctx.trace->models()) {
    Status st = Gemms(ctx, r, m, tp);
    if (st.ok()) st = Attention(ctx, r, m, tp);
    if (!st.ok()) {
      if (st.code() == StatusCode::kOutOfMemory || st.code() == StatusCode::kInvalidArgument) {
        ctx.Note(trace::Note::WARNING, kSuite, m.name() + " skipped: " + st.message());
        continue;
      }
      return st.Annotate(m.name());
    }
    if (std::find(hiddens.begin(), hiddens.end(), m.hidden()) == hiddens.end()) hiddens.push_back(m.hidden());
  }
  RETURN_IF_ERROR(RmsNorm(ctx, r, hiddens));
  RETURN_IF_ERROR(LaunchOverhead(ctx, r));
  return SyncStream(r.device, r.stream.get(), ctx.opt.collective_timeout_s, "kernels suite");
}

}  // namespace specsim::validate
