#!/usr/bin/env python3
"""FlashInfer's FA2 paged attention as SGLang's FlashInfer backend launches it, timed on the GPU.

SGLang's default attention backend for GQA models off Hopper and SM100 (and on Hopper under EAGLE
with topk > 1) is FlashInfer with the fa2 template for decode and target verify
(docs/reference/flashinfer-attention-geometry.md, cited there): decode with tensor cores (GQA group
>= 4) and verify both run BatchPrefillWithPagedKVCacheKernel, planned by PrefillPlan, and, when the
plan splits the KV, the persistent merge kernel. FlashInfer's Python package cannot be installed on
the GPU machine; its kernels are header-only templates, compiled here into
validate/flashinfer_probe/libflashinfer_probe.so (build.sh, from a FlashInfer checkout's include/,
which stays out of this repository) and called through ctypes: FlashInfer's own planner and
kernels, with SGLang's arguments:

  decode (q = 1)  qo_indptr 0, 1, .., b; mask none; planned as the decode wrapper's tensor-core
                  path plans it (total_num_rows = b, uniform_q_len 0).
  verify (q > 1)  qo_indptr step q, KV length context + q (the draft tokens are in the cache), the
                  EAGLE custom mask (all bits set here: a mask's content does not change the walk),
                  planned as the prefill wrapper plans it (total_num_rows = b q, uniform_q_len 0).
  graph / eager   enable_cuda_graph as SGLang's CUDA-graph wrappers (graph: the grid fixed at the
                  planner's 2 x SMs CTAs, the merge always run, the Q tile for the ragged worst
                  case) or without a graph (eager).
  --smem          native: this GPU's shared memory; sm120: FlashInfer told SM120's 102400 / 101376
                  bytes (per SM / per block), so that it picks the KV tiles an RTX PRO 6000 runs,
                  on this GPU's SMs (fi_cap_shared_memory).

The K/V cache is SGLang's token pool at page size 1 (NHD: [slots, 1, kv_heads, 128] bf16), each
sequence at consecutive slots, sequences shuffled; the pool rotates over copies past the L2 cache.
Each call's device time is the sum of its kernels' durations in a Kineto trace (one
record_function range per call). Items are KIND_ATTENTION named by implementation
"flashinfer_fa2[_graph]/<smem>" (compute/profiled_attention.h) with splits 0 (the planner's
choice), for `specsim calibrate`. OUT.plans.json holds, per item, what FlashInfer planned and
launched (CTA_TILE_Q, the KV tile from the kernel's name, KV chunk, grids), for the model's
geometry to be checked against.

    validate/flashinfer_probe/build.sh --git FLASHINFER_GIT_DIR COMMIT build-fi
    python3 validate/flashinfer_attention_probe.py --lib build-fi/libflashinfer_probe.so --out traces/x.json \\
        --kineto DIR
"""

import argparse
import ctypes
import datetime
import itertools
import json
import math
import os
import platform
import re
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_host_probe as hp  # noqa: E402  (host facts, stats)
import torch_kernel_probe as kp  # noqa: E402  (export_gzipped, kernels_per_range, L2_BYTES)

HEAD_DIM = 128
PLAN_FIELDS = ["padded_batch_size", "total_num_rows", "total_num_rows_offset", "cta_tile_q", "request_indices_offset",
               "qo_tile_indices_offset", "kv_tile_indices_offset", "merge_indptr_offset", "o_indptr_offset",
               "kv_chunk_size_ptr_offset", "v_offset", "s_offset", "block_valid_mask_offset", "enable_cuda_graph",
               "split_kv"]
SMEM = {"native": (0, 0), "sm120": (102400, 101376)}  # FlashInfer utils.cuh: 101376 B per block on SM120
FLOAT_WS = 1 << 30  # workspace for the split partials: FlashInfer's allocator fails a plan that overflows it (64 heads: 331 MB)
INT_WS = 8 << 20


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lib", required=True, help="libflashinfer_probe.so (validate/flashinfer_probe/build.sh)")
    p.add_argument("--out", required=True, help="trace to write (JSON mapping of proto/specsim/trace.proto)")
    p.add_argument("--kineto", metavar="DIR", help="keep the Kineto trace as DIR/rank0.json.gz")
    p.add_argument("--heads", default="32/8,16/4,8/2", help="query/KV heads per GPU (Llama-3.1-8B at TP 1, 2, 4)")
    p.add_argument("--batches", default="1,2,4,8,16", help="sequences per call")
    p.add_argument("--contexts", default="512,1024,2048,4096,8192", help="cached tokens per sequence")
    p.add_argument("--widths", default="1,2,4,8", help="query tokens per sequence (1: decode; more: verify)")
    p.add_argument("--modes", default="graph,eager", help="planning: graph (SGLang's CUDA-graph wrappers), eager")
    p.add_argument("--smem", default="native,sm120", help="shared memory FlashInfer is told: " + ", ".join(SMEM))
    p.add_argument("--calls", type=int, default=10, help="profiled calls per configuration (after --warmup)")
    p.add_argument("--warmup", type=int, default=3)
    a = p.parse_args()
    try:
        a.heads = [tuple(int(x) for x in h.split("/")) for h in a.heads.split(",") if h]
        for name in ("batches", "contexts", "widths"):
            setattr(a, name, [int(x) for x in getattr(a, name).split(",") if x])
    except ValueError as e:
        p.error(f"--heads / --batches / --contexts / --widths: {e}")
    a.modes = [m for m in a.modes.split(",") if m]
    a.smem = [s for s in a.smem.split(",") if s]
    if any(m not in ("graph", "eager") for m in a.modes):
        p.error(f"--modes {a.modes}: allowed values are graph, eager")
    if any(s not in SMEM for s in a.smem):
        p.error(f"--smem {a.smem}: allowed values are {', '.join(SMEM)}")
    if any(len(h) != 2 or h[0] % h[1] for h in a.heads):
        p.error("--heads: each Q/KV with KV dividing Q")
    if a.calls < 1 or a.warmup < 0 or min(a.batches + a.contexts + a.widths) < 1:
        p.error("--calls, batches, contexts and widths must be >= 1, --warmup >= 0")
    return a


class Lib:
    """The probe library's C ABI (validate/flashinfer_probe/flashinfer_probe.cu)."""

    def __init__(self, path):
        self.lib = ctypes.CDLL(os.path.abspath(path))
        p, i, i64 = ctypes.c_void_p, ctypes.c_int, ctypes.c_int64
        self.lib.fi_last_error.restype = ctypes.c_char_p
        self.lib.fi_cap_shared_memory.argtypes = [i, i]
        self.lib.fi_plan.argtypes = [p, p, i, i, i, i, i, i, i, p, i64, p, p, i64, p, p]
        self.lib.fi_run.argtypes = [p, p, p, p, p, p, p, p, p, i, i, i, i, p, p, p, p, p]
        self.float_ws = torch.empty(FLOAT_WS, dtype=torch.uint8, device="cuda")
        self.int_ws = torch.empty(INT_WS, dtype=torch.uint8, device="cuda")
        self.int_ws_host = torch.empty(INT_WS, dtype=torch.uint8, pin_memory=True)

    def check(self, rc, what):
        if rc != 0:
            raise RuntimeError(f"{what}: {self.lib.fi_last_error().decode()}")

    def cap(self, smem):
        self.lib.fi_cap_shared_memory(*SMEM[smem])

    def plan(self, qo_indptr, kv_indptr, batch, rows, q_heads, kv_heads, graph):
        qo = (ctypes.c_int32 * len(qo_indptr))(*qo_indptr)
        kv = (ctypes.c_int32 * len(kv_indptr))(*kv_indptr)
        out = (ctypes.c_int64 * 15)()
        stream = torch.cuda.current_stream().cuda_stream
        self.check(self.lib.fi_plan(qo, kv, batch, rows, q_heads, kv_heads, 1, int(graph), 0,
                                    self.float_ws.data_ptr(), FLOAT_WS, self.int_ws.data_ptr(),
                                    self.int_ws_host.data_ptr(), INT_WS, out, stream), "fi_plan")
        torch.cuda.synchronize()
        info = dict(zip(PLAN_FIELDS, list(out)))
        # The planner's host copy of its int buffer: the KV chunk (tokens, page size 1).
        chunk = self.int_ws_host[info["kv_chunk_size_ptr_offset"]:info["kv_chunk_size_ptr_offset"] + 4]
        info["kv_chunk_size"] = int(chunk.view(torch.int32)[0])
        return out, info

    def run(self, plan, q, k, v, qo_indptr, kv_indptr, kv_indices, last_page_len, o, batch, q_heads, kv_heads,
            mask, mask_indptr):
        stream = torch.cuda.current_stream().cuda_stream
        self.check(self.lib.fi_run(plan, q.data_ptr(), k.data_ptr(), v.data_ptr(), qo_indptr.data_ptr(),
                                   kv_indptr.data_ptr(), kv_indices.data_ptr(), last_page_len.data_ptr(),
                                   o.data_ptr(), batch, q_heads, kv_heads, 1,
                                   mask.data_ptr() if mask is not None else None,
                                   mask_indptr.data_ptr() if mask_indptr is not None else None,
                                   self.float_ws.data_ptr(), self.int_ws.data_ptr(), stream), "fi_run")


class Call:
    """One configuration: its pool copies (past L2), indices, query, mask and plan."""

    def __init__(self, lib, q_heads, kv_heads, batch, context, width, graph, device, gen):
        self.lib, self.q_heads, self.kv_heads, self.batch, self.width = lib, q_heads, kv_heads, batch, width
        kv_len = context + (width if width > 1 else 0)
        self.kv_len = kv_len
        tokens = batch * kv_len
        token_bytes = kv_heads * HEAD_DIM * 2 * 2  # K and V, bf16
        copies = max(2, math.ceil(kp.L2_BYTES / (tokens * token_bytes)) + 1)
        self.pool = [(torch.randn(tokens, 1, kv_heads, HEAD_DIM, generator=gen, device=device, dtype=torch.bfloat16),
                      torch.randn(tokens, 1, kv_heads, HEAD_DIM, generator=gen, device=device, dtype=torch.bfloat16))
                     for _ in range(copies)]
        self.i = 0
        order = torch.randperm(batch, generator=torch.Generator().manual_seed(batch * 7919 + context))
        self.kv_indices = torch.cat([torch.arange(int(s) * kv_len, (int(s) + 1) * kv_len, dtype=torch.int32)
                                     for s in order]).to(device)
        qo = [i * width for i in range(batch + 1)]
        kv = [i * kv_len for i in range(batch + 1)]
        self.qo_indptr = torch.tensor(qo, dtype=torch.int32, device=device)
        self.kv_indptr = torch.tensor(kv, dtype=torch.int32, device=device)
        self.last_page_len = torch.ones(batch, dtype=torch.int32, device=device)
        self.q = torch.randn(batch * width, q_heads, HEAD_DIM, generator=gen, device=device, dtype=torch.bfloat16)
        self.o = torch.empty_like(self.q)
        if width > 1:  # EAGLE's custom mask, packed bits per request (all set)
            per = (width * kv_len + 7) // 8
            self.mask = torch.full((batch * per,), 255, dtype=torch.uint8, device=device)
            self.mask_indptr = torch.arange(0, (batch + 1) * per, per, dtype=torch.int32, device=device)
        else:
            self.mask = self.mask_indptr = None
        self.plan, self.info = lib.plan(qo, kv, batch, batch * width, q_heads, kv_heads, graph)

    def run(self):
        self.i = (self.i + 1) % len(self.pool)
        k, v = self.pool[self.i]
        self.lib.run(self.plan, self.q, k, v, self.qo_indptr, self.kv_indptr, self.kv_indices, self.last_page_len,
                     self.o, self.batch, self.q_heads, self.kv_heads, self.mask, self.mask_indptr)

    def reference_error(self):
        """Max |FlashInfer - float32 softmax attention| over the call's outputs (current pool copy)."""
        k, v = self.pool[self.i]
        g = self.q_heads // self.kv_heads
        err = 0.0
        for b in range(self.batch):
            idx = self.kv_indices[b * self.kv_len:(b + 1) * self.kv_len].long()
            kk = k[idx, 0].float().repeat_interleave(g, dim=1)  # [L, Hq, D]
            vv = v[idx, 0].float().repeat_interleave(g, dim=1)
            qq = self.q[b * self.width:(b + 1) * self.width].float()  # [q, Hq, D]
            s = torch.einsum("qhd,lhd->hql", qq, kk) / math.sqrt(HEAD_DIM)
            ref = torch.einsum("hql,lhd->qhd", torch.softmax(s, dim=-1), vv)
            err = max(err, (ref - self.o[b * self.width:(b + 1) * self.width].float()).abs().max().item())
        return err


def kernels_per_range(path, prefix):
    """Per record_function range starting with `prefix` (torch_kernel_probe.kernels_per_range): its
    kernels as (name, duration us, grid, block)."""
    return [(name, [(k["name"], k["dur"], k["args"].get("grid"), k["args"].get("block")) for k in found])
            for name, found in kp.kernels_per_range(path, prefix)]


def kv_tile_of(kernel_name):
    """CTA_TILE_KV = NUM_MMA_KV x NUM_WARPS_KV x 16 from KernelTraits<mask, CTA_TILE_Q, NUM_MMA_Q,
    NUM_MMA_KV, NUM_MMA_D_QK, NUM_MMA_D_VO, NUM_WARPS_Q, NUM_WARPS_KV, ...> in the kernel's name."""
    m = re.search(r"KernelTraits<\(flashinfer::MaskMode\)\d+, " + ", ".join([r"(\d+)u?"] * 7), kernel_name)
    if not m:
        return None
    cta_q, _, mma_kv, _, _, warps_q, warps_kv = (int(x) for x in m.groups())
    return dict(cta_tile_q=cta_q, num_mma_kv=mma_kv, warps_q=warps_q, warps_kv=warps_kv,
                cta_tile_kv=mma_kv * warps_kv * 16)


def main():
    a = parse_args()
    if not torch.cuda.is_available():
        sys.exit("flashinfer_attention_probe.py: no CUDA device")
    device = torch.device("cuda", 0)
    torch.cuda.set_device(device)
    props = torch.cuda.get_device_properties(device)
    say = lambda *m: print(*m, flush=True)  # noqa: E731
    started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    t0 = time.monotonic()
    framework = (f"FlashInfer {build_fact(a.lib, 'flashinfer-commit') or '(commit not recorded)'} fa2 paged prefill "
                 f"template via libflashinfer_probe.so ({build_fact(a.lib, 'notes') or 'headers as checked out'}); "
                 f"pytorch {torch.__version__}, python {platform.python_version()}")
    say(f"{torch.cuda.get_device_name(device)} ({props.multi_processor_count} SMs); {framework}")
    lib = Lib(a.lib)
    gen = torch.Generator(device=device).manual_seed(5)
    # Agreement with a float32 reference, per planning mode and shared-memory view, decode and verify.
    for smem in a.smem:
        lib.cap(smem)
        for graph in (m == "graph" for m in a.modes):
            for width in sorted({1, max(a.widths)}):
                c = Call(lib, 32, 8, 2, 700, width, graph, device, gen)
                c.run()
                torch.cuda.synchronize()
                err = c.reference_error()
                say(f"check {smem} {'graph' if graph else 'eager'} q{width}: max |error| {err:.3g}")
                if not err < 0.05:
                    sys.exit(f"FlashInfer's output disagrees with the reference ({err}): the probe's glue is wrong")
    lib.cap("native")
    calls = []
    for smem, mode, (hq, hkv), b, ctx, w in itertools.product(a.smem, a.modes, a.heads, a.batches, a.contexts,
                                                               a.widths):
        impl = f"flashinfer_fa2{'_graph' if mode == 'graph' else ''}/{smem_name(smem, props)}"
        calls.append((f"{impl}/h{hq}-{hkv}/b{b}/s{ctx}/q{w}", impl, smem, (hq, hkv, b, ctx, w, mode == "graph")))
    say(f"{len(calls)} configurations")
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    work = a.kineto or os.path.dirname(os.path.abspath(a.out))
    infos = []
    with torch.profiler.profile(activities=acts) as prof:
        for idx, (label, impl, smem, (hq, hkv, b, ctx, w, graph)) in enumerate(calls):
            lib.cap(smem)
            c = Call(lib, hq, hkv, b, ctx, w, graph, device, gen)
            for _ in range(a.warmup):
                c.run()
            torch.cuda.synchronize()
            for _ in range(a.calls):
                with torch.profiler.record_function(f"call/{idx}"):
                    c.run()
            torch.cuda.synchronize()
            infos.append(dict(c.info, kv_len=c.kv_len))
            del c
            if idx % 50 == 0:
                say(f"  {idx}/{len(calls)} {label}")
    lib.cap("native")
    path = kp.export_gzipped(prof, work)
    say(f"wrote {path}")
    per = {}
    for name, found in kernels_per_range(path, "call/"):
        per.setdefault(int(name.split("/")[1]), []).append(found)
    items, plans = [], []
    for idx, (label, impl, smem, (hq, hkv, b, ctx, w, graph)) in enumerate(calls):
        runs = [f for f in per.get(idx, []) if f]
        if len(runs) < max(1, a.calls // 2):
            say(f"{label}: {len(runs)} of {a.calls} calls had kernels: skipped")
            continue
        times = [sum(d for _, d, _, _ in f) for f in runs]
        main_times = [sum(d for n, d, _, _ in f if "BatchPrefill" in n) for f in runs]
        first = runs[0]
        main = next((k for k in first if "BatchPrefill" in k[0]), None)
        merge = next((k for k in first if "Merge" in k[0]), None)
        kv_len = infos[idx]["kv_len"]
        kv_bytes = b * kv_len * hkv * HEAD_DIM * 2 * 2
        params = dict(batch=b, query_tokens=w, context=str(kv_len), q_heads=hq, kv_heads=hkv, head_dim=HEAD_DIM,
                      v_head_dim=HEAD_DIM, dtype="DTYPE_BF16", kv_bytes=str(kv_bytes), splits=0,
                      model="llama-3.1-8b", gpu=0, implementation=impl, kernel_time_only=True)
        if merge:
            params["main_kernel_median_us"] = statistics.median(main_times)
        median = statistics.median(times)
        items.append(dict(suite="SUITE_KERNELS", name=f"kernels/attention/{label}", kind="KIND_ATTENTION",
                          attention=params, stats=hp.stats_of(times, "kineto_kernels", a.warmup),
                          gbps=kv_bytes / (median * 1e-6) / 1e9))
        info = infos[idx]
        plans.append(dict(label=label, implementation=impl, q_heads=hq, kv_heads=hkv, batch=b, query_tokens=w,
                          kv_len=kv_len, graph=graph, cta_tile_q=info["cta_tile_q"],
                          padded_batch_size=info["padded_batch_size"], split_kv=bool(info["split_kv"]),
                          kv_chunk_size=info["kv_chunk_size"], kernel=kv_tile_of(main[0]) if main else None,
                          grid=main[2] if main else None, merge_grid=merge[2] if merge else None,
                          median_us=median))
    env = hp.environment([device.index or 0])
    trace = dict(schema_version=1, tool="validate/flashinfer_attention_probe.py", tool_version=framework,
                 command_line=" ".join(sys.argv), started_at_utc=started, wall_seconds=time.monotonic() - t0,
                 environment=env, items=items,
                 notes=[dict(severity="INFO", suite="kernels",
                             message=f"FlashInfer's fa2 paged prefill kernel and merge as SGLang plans them "
                                     f"(docs/reference/flashinfer-attention-geometry.md): heads {a.heads}, batches "
                                     f"{a.batches}, contexts {a.contexts}, widths {a.widths}, modes {a.modes}, "
                                     f"shared memory {a.smem}; kernel time from Kineto; plans in "
                                     f"{os.path.basename(a.out)}.plans.json")])
    with open(a.out, "w") as f:
        json.dump(trace, f, indent=1)
    with open(a.out + ".plans.json", "w") as f:
        json.dump(dict(gpu=torch.cuda.get_device_name(device), sm_count=props.multi_processor_count, plans=plans),
                  f, indent=1)
    say(f"wrote {a.out} ({len(items)} items) and its plans in {time.monotonic() - t0:.0f} s")
    say(f"{'implementation':28s} {'heads':6s} q  " + " ".join(f"s{c:>6d}" for c in a.contexts) + "   (batch 1, us)")
    rows = {}
    for p in plans:
        if p["batch"] == 1:
            rows.setdefault((p["implementation"], f"{p['q_heads']}/{p['kv_heads']}", p["query_tokens"]), {})[
                p["kv_len"] - (p["query_tokens"] if p["query_tokens"] > 1 else 0)] = p["median_us"]
    for (impl, heads, q), by in sorted(rows.items()):
        say(f"{impl:28s} {heads:6s} q{q} " + " ".join(f"{by.get(c, float('nan')):7.1f}" for c in a.contexts))


def build_fact(lib, name):
    """build.sh's record beside the library (flashinfer-commit, notes), "" when absent."""
    path = os.path.join(os.path.dirname(os.path.abspath(lib)), name)
    return open(path).read().strip().replace("\n", "; ") if os.path.exists(path) else ""


def smem_name(smem, props):
    """The implementation name's architecture: this GPU's (sm<major><minor>) or the emulated one."""
    return f"sm{props.major}{props.minor}" if smem == "native" else smem


if __name__ == "__main__":
    main()
