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
  KIND_HOST_LOOP torch_host_probe.py's verify pass (its unfused Llama-shaped layer: linear,
                 rms_norm, rotary, cache writes, SDPA with a causal mask, add, silu, mul; --layers
                 layers, final norm, lm_head, argmax) captured as one CUDA graph and replayed, at
                 each width q of --verify-widths (q = 1 is the decode step): the GPU time per pass
                 from CUDA events, the host's wall clock per iteration (replay and read-back).
                 With --kineto, one Kineto trace of those replays (a record_function range
                 "verify_pass/q<q>" per replay): every kernel of the pass by name and duration.

Writes OUT (protobuf's JSON mapping of specsim.trace.Trace, read by specsim calibrate / compare) and
records the host as torch_host_probe.py does.

    python3 validate/torch_kernel_probe.py --out traces/x.json [--kineto DIR]
"""

import argparse
import datetime
import gzip
import json
import math
import os
import platform
import socket
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
    p.add_argument("--layers", type=int, default=8, help="layers of the verify pass (Llama-3.1-8B's shapes)")
    p.add_argument("--context", type=int, default=1024, help="cached tokens per sequence")
    p.add_argument("--iterations", type=int, default=40, help="timed iterations per verify width")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--kineto", metavar="DIR", help="write the Kineto trace of the verify replays to DIR/rank0.json.gz")
    a = p.parse_args()
    try:
        a.models = [m for m in a.models.split(",") if m]
        a.tp = [int(x) for x in a.tp.split(",")]
        a.ms = [int(x) for x in a.ms.split(",")]
        a.verify_widths = [int(x) for x in a.verify_widths.split(",")]
    except ValueError as e:
        p.error(f"a list of integers expected: {e}")
    for m in a.models:
        if m not in MODELS:
            p.error(f"--models: unknown model {m!r} (allowed: {', '.join(MODELS)})")
    for name, values in (("tp", a.tp), ("ms", a.ms), ("verify-widths", a.verify_widths)):
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


def kernel_times_per_range(trace_path, prefix):
    """From a Kineto Chrome trace: for each record_function range whose name starts with `prefix`,
    the summed duration (us) of the GPU kernels its launches started, in the ranges' order, with
    the kernels' names."""
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
        total, names, i = 0.0, [], j
        while i < len(launches) and launches[i]["ts"] <= end:
            for k in kernels.get(launches[i]["args"]["correlation"], []):
                total += k["dur"]
                names.append(k["name"])
            i += 1
        out.append((r["name"], total, names))
    return out


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
    pa = types.SimpleNamespace(hidden=4096, heads=32, kv_heads=8, head_dim=128, intermediate=14336, vocab=128256,
                               batch=1, context=a.context, layers=a.layers, warmup=a.warmup)
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


def profile_verify(a, loops, out_dir):
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts) as prof:
        for _ in range(5):
            for q, loop in loops:
                torch.cuda.synchronize()
                with torch.profiler.record_function(f"verify_pass/q{q}"):
                    loop.launch()
                    loop.layer.t["next"][:1].cpu()
    os.makedirs(out_dir, exist_ok=True)
    plain = os.path.join(out_dir, "rank0.json")
    prof.export_chrome_trace(plain)
    with open(plain, "rb") as f, gzip.open(plain + ".gz", "wb") as z:
        z.write(f.read())
    os.remove(plain)
    return plain + ".gz"


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
    items = time_gemms(a, device, say, work)
    say(f"GEMMs timed in {time.monotonic() - t0:.0f} s")
    loop_items, loops = time_verify_widths(a, device, framework, say)
    items += loop_items
    if a.kineto:
        say(f"wrote {profile_verify(a, loops, a.kineto)}")
    props = torch.cuda.get_device_properties(device)
    env = dict(hostname=socket.gethostname(), kernel_release=platform.release(), cpu_model=hp.cpu_model(),
               cpu_logical_cores=os.cpu_count() or 0, host_memory_bytes=str(hp.memory_bytes()),
               cuda_runtime_version=hp.cuda_version(), nccl_version=".".join(map(str, torch.cuda.nccl.version())),
               gpus=[dict(index=0, name=torch.cuda.get_device_name(device), compute_capability_major=props.major,
                          compute_capability_minor=props.minor, sm_count=props.multi_processor_count,
                          memory_bytes=str(props.total_memory))],
               sandbox=hp.sandbox(), nccl_env={k: v for k, v in os.environ.items() if k.startswith("NCCL_")})
    trace = dict(schema_version=1, tool="validate/torch_kernel_probe.py", tool_version=framework,
                 command_line=" ".join(sys.argv), started_at_utc=started, wall_seconds=time.monotonic() - t0,
                 environment=env, items=items,
                 notes=[dict(severity="INFO", suite="kernels",
                             message=f"GEMMs: F.linear over {len(a.models)} models x TP {a.tp} x m {a.ms}, "
                                     f"kernel time from Kineto; verify pass: {a.layers} layers, context "
                                     f"{a.context}, widths {a.verify_widths}, CUDA graph")])
    with open(a.out, "w") as f:
        json.dump(trace, f, indent=1)
    say(f"wrote {a.out} ({len(items)} items) in {time.monotonic() - t0:.0f} s")
    sys.stdout.flush()
    os._exit(0)  # no NCCL teardown with graphs alive (as torch_host_probe.py)


if __name__ == "__main__":
    main()
