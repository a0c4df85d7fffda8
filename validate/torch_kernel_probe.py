#!/usr/bin/env python3
"""PyTorch's kernels as the frameworks launch them, timed on the GPU, as a measurement trace.

Measured on one GPU (issue 40: GEMM costs that generalise, the verify pass's shape):
  KIND_GEMM      F.linear(x[m, k], W[n, k]) (nn.Linear's layout, no bias: at::linear -> cuBLAS /
                 cuBLASLt as torch picks), for the weight matrices of several models at several
                 tensor-parallel sizes (a shape family: the (n, k) of one weight matrix, over every
                 m of --ms). Each call's device time is the sum of its kernels' durations in a
                 torch.profiler (Kineto) trace (one record_function range per call, the kernels
                 found through their launches' correlation ids): kernel time only, no launch gap
                 (GemmParams.kernel_time_only; library "aten"). The weights rotate over copies that
                 together exceed the L2 cache, as a forward pass reads each weight once.
  KIND_HOST_LOOP torch_host_probe.py's verify pass (its unfused Llama-style layer at --verify-shape's
                 shapes, Llama-3.1-8B's by default: linear,
                 rms_norm, rotary, cache writes, SDPA with a causal mask, add, silu, mul; --layers
                 layers, final norm, lm_head, argmax) captured as one CUDA graph and replayed, at
                 each width q of --verify-widths (q = 1 is the decode step): the GPU time per pass
                 from CUDA events, the host's wall clock per iteration (replay and read-back).
                 With --kineto, one Kineto trace of those replays (a record_function range
                 "verify_pass/q<q>" per replay): every kernel of the pass by name and duration.
  eager ops      (--parts eager, with --kineto) one Kineto trace, record_shapes on, of PyTorch's own
                 kernels called eagerly, for `specsim import-profile -o` to turn into kernels-suite
                 items (attention, RMSNorm, argmax, elementwise) and `specsim calibrate` to fit:
                 the verify pass's layer ops (everything but its collectives) at each width of
                 --verify-widths and batch of --eager-batches; SDPA as the layer calls it (a boolean
                 mask above one query token, enable_gqa: cuDNN's kernels on Hopper) over batch x
                 context x width, and with the FlashAttention-2 (one query token: no mask) and
                 memory-efficient (K and V repeated to the query heads beforehand) backends forced;
                 argmax over [rows, vocab] logits in bf16 and fp32. The KV caches rotate over copies
                 past the L2 cache, as a forward pass reads each layer's cache once; the layer ops
                 reuse one layer's tensors, as the verify pass's graph does.
  flash          (--parts flash, with --kineto) one Kineto trace (DIR/flash/rank0.json.gz) of
                 PyTorch's FlashAttention-2 (SDPA with the flash backend forced, enable_gqa) over
                 query/KV heads (--flash-heads) x batch (--sdpa-batches) x context
                 (--flash-contexts) x width (--verify-widths): the kernel vLLM's FLASH_ATTN backend
                 forks (docs/reference/fa2-geometry.md). No mask at any width (FlashAttention-2
                 takes no boolean mask; a causal one would mask only the last q x q corner of the
                 walk, and EAGLE's tree mask trims nothing).

Writes OUT (protobuf's JSON mapping of specsim.trace.Trace, read by specsim calibrate / compare) and
records the host as torch_host_probe.py does.

    python3 validate/torch_kernel_probe.py --out traces/x.json [--kineto DIR] [--parts gemm,verify,eager]
"""

import argparse
import datetime
import gzip
import json
import math
import os
import platform
import statistics
import sys
import time
import types

import torch
import torch.distributed as dist
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_host_probe as hp  # noqa: E402  (the verify pass's layer and loop, the host facts)

# Attention and MLP shapes of the models whose weight matrices form the shape families (the
# models/*.textproto of the same names): hidden, query heads, KV heads, head dim, MLP intermediate.
MODELS = {
    "llama-3.1-8b": (4096, 32, 8, 128, 14336),
    "llama-3.1-70b": (8192, 64, 8, 128, 28672),
    "qwen3-32b": (5120, 64, 8, 128, 25600),
}
# The verify pass's layer per GPU (--verify-shape): hidden, query heads, KV heads, head dim, MLP
# intermediate, vocabulary, each the model's shard at the named TP (the LM head sharded by vocabulary).
VERIFY_SHAPES = {
    "llama-3.1-8b": (4096, 32, 8, 128, 14336, 128256),
    "qwen3-32b-tp2": (5120, 64 // 2, 8 // 2, 128, 25600 // 2, 151936 // 2),
}
L2_BYTES = 64 << 20  # more than any of today's GPUs' L2 (H200: 50 MiB): rotated copies exceed it


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, help="trace to write (JSON mapping of proto/specsim/trace.proto)")
    p.add_argument("--models", default=",".join(MODELS), help="models whose weight matrices are timed: " +
                   ", ".join(MODELS))
    p.add_argument("--tp", default="1,2,4,8", help="tensor-parallel sizes (a weight's shard per GPU)")
    p.add_argument("--ms", default="1,2,4,8,16,32,64,128,256,512", help="rows (tokens) per GEMM")
    p.add_argument("--calls", type=int, default=10, help="profiled calls per GEMM shape (after --warmup)")
    p.add_argument("--verify-widths", default="1,2,4,8,16,32,64", help="tokens per sequence of the verify pass")
    p.add_argument("--layers", type=int, default=8, help="layers of the verify pass")
    p.add_argument("--verify-shape", default="llama-3.1-8b", help="the verify pass's layer shapes per GPU: " +
                   ", ".join(VERIFY_SHAPES) + " (a model's shard at that TP, run on one GPU)")
    p.add_argument("--context", type=int, default=1024, help="cached tokens per sequence")
    p.add_argument("--iterations", type=int, default=40, help="timed iterations per verify width")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--kineto", metavar="DIR", help="write the Kineto trace of the verify replays to DIR/rank0.json.gz "
                   "(of the eager ops to DIR/eager/rank0.json.gz, of the flash grid to DIR/flash/rank0.json.gz)")
    p.add_argument("--parts", default="gemm,verify", help="what to run: gemm, verify, eager, flash (eager and flash "
                   "need --kineto)")
    p.add_argument("--eager-batches", default="1,4", help="batches of the eager layer ops")
    p.add_argument("--sdpa-batches", default="1,2,4,8", help="batches of the eager SDPA grid")
    p.add_argument("--sdpa-contexts", default="512,1024,2048,4096", help="cached tokens of the eager SDPA grid")
    p.add_argument("--flash-heads", default="32/8,16/4,8/2", help="query/KV heads per GPU of the flash grid "
                   "(Llama-3.1-8B at TP 1, 2, 4)")
    p.add_argument("--flash-contexts", default="512,1024,2048,4096,8192", help="cached tokens of the flash grid")
    p.add_argument("--argmax-rows", default="1,2,4,8,16,32,64,128,256,512", help="rows of the eager argmax calls")
    a = p.parse_args()
    try:
        a.models = [m for m in a.models.split(",") if m]
        a.tp = [int(x) for x in a.tp.split(",")]
        a.ms = [int(x) for x in a.ms.split(",")]
        a.verify_widths = [int(x) for x in a.verify_widths.split(",")]
        for name in ("eager_batches", "sdpa_batches", "sdpa_contexts", "flash_contexts", "argmax_rows"):
            setattr(a, name, [int(x) for x in getattr(a, name).split(",") if x])
        a.flash_heads = [tuple(int(v) for v in x.split("/")) for x in a.flash_heads.split(",") if x]
    except ValueError as e:
        p.error(f"a list of integers expected (--flash-heads: Q/KV pairs such as 32/8): {e}")
    for pair in a.flash_heads:
        if len(pair) != 2 or min(pair) < 1 or pair[0] % pair[1]:
            p.error(f"--flash-heads: {'/'.join(map(str, pair))}: query/KV heads >= 1 with the KV heads dividing the "
                    "query heads expected")
    for m in a.models:
        if m not in MODELS:
            p.error(f"--models: unknown model {m!r} (allowed: {', '.join(MODELS)})")
    if a.verify_shape not in VERIFY_SHAPES:
        p.error(f"--verify-shape: unknown shape {a.verify_shape!r} (allowed: {', '.join(VERIFY_SHAPES)})")
    a.parts = [x for x in a.parts.split(",") if x]
    for x in a.parts:
        if x not in ("gemm", "verify", "eager", "flash"):
            p.error(f"--parts: unknown part {x!r} (allowed: gemm, verify, eager, flash)")
    for x in ("eager", "flash"):
        if x in a.parts and not a.kineto:
            p.error(f"--parts {x} writes a Kineto trace: give --kineto DIR")
    for name, values in (("tp", a.tp), ("ms", a.ms), ("verify-widths", a.verify_widths),
                         ("eager-batches", a.eager_batches), ("sdpa-batches", a.sdpa_batches),
                         ("sdpa-contexts", a.sdpa_contexts), ("flash-contexts", a.flash_contexts),
                         ("argmax-rows", a.argmax_rows)):
        if not values or min(values) < 1:
            p.error(f"--{name}: every value must be >= 1")
    for name in ("calls", "layers", "context", "iterations"):
        if getattr(a, name) < 1:
            p.error(f"--{name} must be >= 1")
    if a.warmup < 0:
        p.error("--warmup must be >= 0")
    return a


def families(a):
    """(model, tp, op, n, k) of every weight matrix timed: one shape family each."""
    out = []
    for model in a.models:
        hidden, heads, kv_heads, head_dim, inter = MODELS[model]
        for tp in a.tp:
            if heads % tp or inter % tp:
                continue
            kvh = max(1, kv_heads // tp)  # KV heads replicated below one per GPU
            out += [(model, tp, "qkv", (heads // tp + 2 * kvh) * head_dim, hidden),
                    (model, tp, "o", hidden, heads // tp * head_dim),
                    (model, tp, "gate_up", 2 * inter // tp, hidden),
                    (model, tp, "down", hidden, inter // tp)]
    return out


def kernels_per_range(trace_path, prefix):
    """From a Kineto Chrome trace: for each record_function range whose name starts with `prefix`,
    in the ranges' order, (range name, the GPU kernel events its launches started)."""
    with gzip.open(trace_path, "rt") if trace_path.endswith(".gz") else open(trace_path) as f:
        events = json.load(f)["traceEvents"]
    ranges = sorted((e for e in events if e.get("cat") == "user_annotation" and e.get("name", "").startswith(prefix)
                     and e.get("ph") == "X"), key=lambda e: e["ts"])
    launches = sorted((e for e in events if e.get("cat") in ("cuda_runtime", "cuda_driver") and e.get("ph") == "X"
                       and "correlation" in e.get("args", {})), key=lambda e: e["ts"])
    kernels = {}
    for e in events:
        if e.get("cat") == "kernel" and e.get("ph") == "X" and "correlation" in e.get("args", {}):
            kernels.setdefault(e["args"]["correlation"], []).append(e)
    out, j = [], 0
    for r in ranges:
        start, end = r["ts"], r["ts"] + r["dur"]
        while j < len(launches) and launches[j]["ts"] < start:
            j += 1
        found, i = [], j
        while i < len(launches) and launches[i]["ts"] <= end:
            found.extend(kernels.get(launches[i]["args"]["correlation"], []))
            i += 1
        out.append((r["name"], found))
    return out


def kernel_times_per_range(trace_path, prefix):
    """For each range of kernels_per_range: (range name, the kernels' summed duration in us, their
    names)."""
    return [(name, sum((k["dur"] for k in found), 0.0), [k["name"] for k in found])
            for name, found in kernels_per_range(trace_path, prefix)]


def time_gemms(a, device, say, work_dir):
    """Every (family, m): --calls profiled F.linear calls, each in its own range; their kernels'
    summed device time per call."""
    shapes = []
    g = torch.Generator(device=device).manual_seed(7)
    for model, tp, op, n, k in families(a):
        copies = max(2, math.ceil(L2_BYTES / (n * k * 2)) + 1)
        weights = [torch.randn(n, k, generator=g, device=device, dtype=torch.bfloat16) * 0.02 for _ in range(copies)]
        for m in a.ms:
            x = torch.randn(m, k, generator=g, device=device, dtype=torch.bfloat16)
            shapes.append((model, tp, op, n, k, m, x, weights))
    say(f"{len(shapes)} GEMM shapes ({len(families(a))} families x {len(a.ms)} m)")
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    for s in shapes:  # warm-up outside the profiler: cuBLAS handles, heuristics, workspaces
        for i in range(a.warmup):
            F.linear(s[6], s[7][i % len(s[7])])
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=acts) as prof:
        for idx, s in enumerate(shapes):
            for i in range(a.calls):
                with torch.profiler.record_function(f"gemm/{idx}"):
                    F.linear(s[6], s[7][i % len(s[7])])
            torch.cuda.synchronize()
    path = os.path.join(work_dir, "gemm-kineto.json")
    prof.export_chrome_trace(path)
    per = {}
    for name, us, kernels in kernel_times_per_range(path, "gemm/"):
        per.setdefault(int(name.split("/")[1]), []).append((us, kernels))
    os.remove(path)
    items = []
    for idx, (model, tp, op, n, k, m, x, weights) in enumerate(shapes):
        calls = per.get(idx, [])
        times = [us for us, _ in calls if us > 0]
        if len(times) < max(1, a.calls // 2):
            say(f"gemm {model} tp{tp} {op} m{m}: {len(times)} of {a.calls} calls had kernels: skipped")
            continue
        kernel_names = sorted({kn for _, ks in calls for kn in ks})
        items.append(dict(
            suite="SUITE_KERNELS", name=f"kernels/gemm/{model}/tp{tp}/{op}/m{m}", kind="KIND_GEMM",
            gemm=dict(m=str(m), n=str(n), k=str(k), dtype="DTYPE_BF16", model=model, tp=tp, op=op,
                      weight_copies=len(weights), weight_bytes=str(n * k * 2), gpu=device.index or 0, library="aten",
                      kernel_time_only=True),
            stats=hp.stats_of(times, "kineto_kernels", a.warmup),
            tflops=2.0 * m * n * k / (statistics.median(times) * 1e-6) / 1e12,
            gbps=(n * k + m * k + m * n) * 2 / (statistics.median(times) * 1e-6) / 1e9))
        if m == a.ms[0] or m == a.ms[-1]:
            say(f"gemm {model:14s} tp{tp} {op:8s} n {n:6d} k {k:6d} m {m:4d}: {statistics.median(times):8.2f} us "
                f"({', '.join(kn[:40] for kn in kernel_names)})")
    return items


def time_verify_widths(a, device, framework, say):
    """The probe's verify pass at each width, one CUDA graph replayed per iteration."""
    hidden, heads, kv_heads, head_dim, intermediate, vocab = VERIFY_SHAPES[a.verify_shape]
    pa = types.SimpleNamespace(hidden=hidden, heads=heads, kv_heads=kv_heads, head_dim=head_dim,
                               intermediate=intermediate, vocab=vocab, batch=1, context=a.context, layers=a.layers,
                               warmup=a.warmup)
    items, loops = [], []
    for q in a.verify_widths:
        layer = hp.Layer(pa, q, device, None)
        loop = hp.Loop(layer, "verify_pass", "graph", pa)
        loops.append((q, loop))
    # Rounds over the widths, so that a drift of the GPU's or host's speed reaches them alike.
    rounds = 4
    for r in range(rounds):
        for q, loop in loops:
            loop.run(-(-a.iterations // rounds), a.warmup if r == 0 else 1)
    for q, loop in loops:
        it = loop.item(0, framework)
        items.append(it)
        say(f"{it['name']:44s} gpu {it['host_loop']['device_us']:9.1f} us  host {it['stats']['median_us']:9.1f} us")
    return items, loops


def export_gzipped(prof, out_dir):
    """The profiler's Chrome trace as OUT_DIR/rank0.json.gz (the name import-profile reads per rank)."""
    os.makedirs(out_dir, exist_ok=True)
    plain = os.path.join(out_dir, "rank0.json")
    prof.export_chrome_trace(plain)
    with open(plain, "rb") as f, gzip.open(plain + ".gz", "wb") as z:
        z.write(f.read())
    os.remove(plain)
    return plain + ".gz"


def profile_verify(a, loops, out_dir):
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts) as prof:
        for _ in range(5):
            for q, loop in loops:
                torch.cuda.synchronize()
                with torch.profiler.record_function(f"verify_pass/q{q}"):
                    loop.launch()
                    loop.layer.t["next"][:1].cpu()
    return export_gzipped(prof, out_dir)


def layer_args(a, batch):
    """The verify pass's layer (Llama-3.1-8B's shapes at TP 1) for `batch` sequences."""
    return types.SimpleNamespace(hidden=4096, heads=32, kv_heads=8, head_dim=128, intermediate=14336, vocab=128256,
                                 batch=batch, context=a.context, layers=a.layers, warmup=a.warmup)


def eager_layer_ops(a, device):
    """Callables running one layer of the verify pass eagerly (its collectives left out: this is one
    GPU), then the head, at each (batch, width): [(label, callable)]. The layer objects stay alive
    with their callables (about 1.3 GiB each, the LM head's weight most of it)."""
    out = []
    for b in a.eager_batches:
        for q in a.verify_widths:
            layer = hp.Layer(layer_args(a, b), q, device, None)
            ops = layer.ops()
            calls = [ops[n][1] for n in hp.Layer.LAYER + hp.Layer.HEAD if ops[n][0] != "collective"]

            def run(calls=calls, layer=layer):
                for c in calls:
                    c()
            out.append((f"layer b{b} q{q}", run))
    return out


def sdpa_calls(a, device):
    """SDPA over batch x context x width as the layer calls it, then with two backends forced:
    [(label, callable)], each callable running one call on the next copy of its KV cache."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    h, kvh, d = 32, 8, 128
    g = torch.Generator(device=device).manual_seed(11)
    out = []
    for b in a.sdpa_batches:
        for c in a.sdpa_contexts:
            for q in a.verify_widths:
                s = c + q
                copies = max(2, math.ceil(L2_BYTES / (2 * b * kvh * s * d * 2)) + 1)
                kv = [torch.randn(2, b, kvh, s, d, generator=g, device=device, dtype=torch.bfloat16) for _ in range(copies)]
                query = torch.randn(b, h, q, d, generator=g, device=device, dtype=torch.bfloat16)
                cols, rows = torch.arange(s, device=device), torch.arange(q, device=device)
                mask = (cols[None, :] <= (c + rows)[:, None]) if q > 1 else None
                state = {"i": 0}

                def next_kv(kv=kv, state=state):
                    state["i"] = (state["i"] + 1) % len(kv)
                    return kv[state["i"]]

                def layer_call(query=query, mask=mask, next_kv=next_kv):
                    k = next_kv()
                    F.scaled_dot_product_attention(query, k[0], k[1], attn_mask=mask, enable_gqa=True)
                out.append((f"sdpa b{b} c{c} q{q}", layer_call))
                if q == 1:  # FlashAttention-2 takes no boolean mask: the decode call only
                    def flash(query=query, next_kv=next_kv):
                        k = next_kv()
                        with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
                            F.scaled_dot_product_attention(query, k[0], k[1], enable_gqa=True)
                    out.append((f"sdpa-flash b{b} c{c} q{q}", flash))
                expanded = [x.repeat_interleave(h // kvh, dim=2) for x in kv[:2]]
                state_e = {"i": 0}

                def efficient(query=query, mask=mask, expanded=expanded, state=state_e):
                    state["i"] ^= 1
                    k = expanded[state["i"]]
                    with sdpa_kernel([SDPBackend.EFFICIENT_ATTENTION]):
                        F.scaled_dot_product_attention(query, k[0], k[1], attn_mask=mask)
                out.append((f"sdpa-efficient b{b} c{c} q{q}", efficient))
    return out


def flash_calls(a, device):
    """SDPA with FlashAttention-2 forced over heads x batch x context x width, no mask:
    [(label, callable)], each callable running one call on the next copy of its KV cache."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    d = 128
    g = torch.Generator(device=device).manual_seed(17)
    out = []
    for h, kvh in a.flash_heads:
        for b in a.sdpa_batches:
            for c in a.flash_contexts:
                for q in a.verify_widths:
                    s = c + q
                    copies = max(2, math.ceil(L2_BYTES / (2 * b * kvh * s * d * 2)) + 1)
                    kv = [torch.randn(2, b, kvh, s, d, generator=g, device=device, dtype=torch.bfloat16)
                          for _ in range(copies)]
                    query = torch.randn(b, h, q, d, generator=g, device=device, dtype=torch.bfloat16)
                    state = {"i": 0}

                    def flash(query=query, kv=kv, state=state):
                        state["i"] = (state["i"] + 1) % len(kv)
                        k = kv[state["i"]]
                        with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
                            F.scaled_dot_product_attention(query, k[0], k[1], enable_gqa=True)
                    out.append((f"sdpa-flash h{h}/{kvh} b{b} c{c} q{q}", flash))
    return out


def argmax_calls(a, device):
    """argmax over [rows, vocab] logits, bf16 (the probe's) and fp32 (a sampler's cast logits)."""
    g = torch.Generator(device=device).manual_seed(13)
    out = []
    for dtype in (torch.bfloat16, torch.float32):
        for r in a.argmax_rows:
            x = torch.randn(r, 128256, generator=g, device=device, dtype=dtype)
            out.append((f"argmax {str(dtype)[6:]} r{r}", lambda x=x: x.argmax(-1)))
    return out


def profile_eager(a, calls, out_dir, say):
    """One Kineto trace (record_shapes on) of the eager calls above: every input built and every call
    run a.warmup times before the profiler starts (so that neither the inputs' creation nor a first
    call's set-up is in the trace), then each a.calls times inside it, one record_function range per
    call. A call that raises in its warm-up (a backend refusing a shape) is left out with a note.
    Returns (path, notes)."""
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    notes, ready = [], []
    for label, c in calls:
        try:
            for _ in range(a.warmup):
                c()
            torch.cuda.synchronize()
        except RuntimeError as e:
            notes.append(f"{label}: not run ({str(e).splitlines()[0][:160]})")
            continue
        ready.append((label, c))
    with torch.profiler.profile(activities=acts, record_shapes=True) as prof:
        for label, c in ready:
            for _ in range(a.calls):
                with torch.profiler.record_function(f"eager/{label}"):
                    c()
            torch.cuda.synchronize()
    say(f"{os.path.basename(out_dir)}: {len(ready)} groups x {a.calls} calls profiled; {len(notes)} not run")
    for n in notes:
        say(f"  {n}")
    return export_gzipped(prof, out_dir), notes


def main():
    a = parse_args()
    if not torch.cuda.is_available():
        sys.exit("torch_kernel_probe.py: no CUDA device")
    device = torch.device("cuda", 0)
    torch.cuda.set_device(device)
    if "MASTER_ADDR" not in os.environ:  # the layer's allreduce runs in a world-size-1 group
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT="29519", RANK="0", WORLD_SIZE="1")
    dist.init_process_group("nccl", device_id=device)
    framework = f"pytorch {torch.__version__}, python {platform.python_version()}"
    say = lambda *m: print(*m, flush=True)  # noqa: E731
    started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    t0 = time.monotonic()
    say(f"{torch.cuda.get_device_name(device)}; {framework}")
    work = os.path.dirname(os.path.abspath(a.out))
    os.makedirs(work, exist_ok=True)
    items, eager_notes = [], []
    if "gemm" in a.parts:
        items += time_gemms(a, device, say, work)
        say(f"GEMMs timed in {time.monotonic() - t0:.0f} s")
    if "verify" in a.parts:
        loop_items, loops = time_verify_widths(a, device, framework, say)
        items += loop_items
        if a.kineto:
            say(f"wrote {profile_verify(a, loops, a.kineto)}")
    if "eager" in a.parts:
        calls = eager_layer_ops(a, device) + sdpa_calls(a, device) + argmax_calls(a, device)
        path, notes = profile_eager(a, calls, os.path.join(a.kineto, "eager"), say)
        eager_notes += notes
        say(f"wrote {path}")
    if "flash" in a.parts:
        path, notes = profile_eager(a, flash_calls(a, device), os.path.join(a.kineto, "flash"), say)
        eager_notes += notes
        say(f"wrote {path}")
    env = hp.environment([device.index or 0])
    trace = dict(schema_version=1, tool="validate/torch_kernel_probe.py", tool_version=framework,
                 command_line=" ".join(sys.argv), started_at_utc=started, wall_seconds=time.monotonic() - t0,
                 environment=env, items=items,
                 notes=[dict(severity="INFO", suite="kernels",
                             message=f"GEMMs: F.linear over {len(a.models)} models x TP {a.tp} x m {a.ms}, "
                                     f"kernel time from Kineto; verify pass: {a.layers} layers, context "
                                     f"{a.context}, widths {a.verify_widths}, shape {a.verify_shape}, CUDA graph; flash grid heads {a.flash_heads} x "
                                     f"batches {a.sdpa_batches} x contexts {a.flash_contexts}; parts {a.parts}")] +
                 [dict(severity="WARNING", suite="kernels", message=n) for n in eager_notes])
    with open(a.out, "w") as f:
        json.dump(trace, f, indent=1)
    say(f"wrote {a.out} ({len(items)} items) in {time.monotonic() - t0:.0f} s")
    sys.stdout.flush()
    os._exit(0)  # no NCCL teardown with graphs alive (as torch_host_probe.py)


if __name__ == "__main__":
    main()
