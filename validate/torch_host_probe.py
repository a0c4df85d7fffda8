#!/usr/bin/env python3
"""PyTorch's host cost per op, and loops built from those ops, as a measurement trace.

What it stands for: the host side of a Python serving framework's decode loop (SGLang, vLLM) when
it runs eagerly: every op is a PyTorch call (Python, the dispatcher, the kernel launch) issued by
one host thread per rank, plus the host reading tokens back. It is a measurement of this harness
on this host, not of a framework: a framework adds its own scheduling, batching and sampling code
between passes (not measured here) and may fuse ops (fewer calls per layer).

Measured, one process per rank (torchrun), each rank on its own GPU:
  KIND_HOST_OP   every op of a Llama-shaped decode layer (the unfused layer of torch_tp_decode.py:
                 linear, rms_norm, rotary, cache writes, attention, add, silu, mul, views), the
                 lm_head, argmax, a ProcessGroup NCCL allreduce (a world-size-1 group on one GPU
                 still runs PyTorch's whole call path), a CUDA graph replay and the read-back of a
                 result (.cpu(): the host waits for the GPU). Host time per call: each call timed
                 on time.perf_counter_ns while a spin kernel (torch.cuda._sleep) holds the GPU, so
                 the host never waits for a full launch queue: the distribution over --samples
                 calls (21 quantiles), the calls drawn at random among the pass's ops (as a pass
                 runs them, each among the others: "mixed"), and also 32 in a row ("alone"). GPU time per call: CUDA events around --batch-calls calls back
                 to back once the spin ends, eager and inside a replayed CUDA graph.
  KIND_HOST_LOOP loops of those very callables, without a spin kernel, each iteration ending with
                 the read-back: --layers layers ("layers"), a decode step (layers, final norm,
                 lm_head, argmax: "decode_step") and a verify pass over --verify-tokens tokens per
                 sequence ("verify_pass"), eager and as one CUDA graph replayed per iteration.
                 Host wall clock per iteration; GPU time per iteration from events.
Ops (mixed) and loops are measured in --rounds rounds, each a share of both: the host's speed
drifts within minutes on the lent machines (2x between two runs minutes apart), and a model fitted
on ops measured before the loops would be checked against another host.
The loops are what a model fitted on the single ops must predict (specsim calibrate / compare:
held out by kind, never fitted on the loops).

Writes OUT (a specsim.trace.Trace in protobuf's JSON mapping, read by specsim calibrate / compare
from a file named *.json) from rank 0, with every rank's items (names carry the rank), and records
the host: CPU model, cores, kernel, sandbox (container / VM as the machine reports them).

    torchrun --standalone --nproc-per-node 1 validate/torch_host_probe.py --out traces/x.json
    python3 validate/torch_host_probe.py --out x.json          # one rank without torchrun
"""

import argparse
import datetime
import gc
import json
import os
import platform
import socket
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F

QUANTILES = [i / 20 for i in range(21)]


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True, help="trace to write (JSON mapping of proto/specsim/trace.proto)")
    p.add_argument("--hidden", type=int, default=4096, help="Llama-3.1-8B's shapes by default")
    p.add_argument("--heads", type=int, default=32)
    p.add_argument("--kv-heads", type=int, default=8)
    p.add_argument("--head-dim", type=int, default=128)
    p.add_argument("--intermediate", type=int, default=14336)
    p.add_argument("--vocab", type=int, default=128256)
    p.add_argument("--batch", type=int, default=1, help="sequences")
    p.add_argument("--context", type=int, default=1024, help="cached tokens per sequence")
    p.add_argument("--layers", type=int, default=8, help="layers of the loops (Llama-3.1-8B has 32)")
    p.add_argument("--verify-tokens", type=int, default=4, help="tokens per sequence of the verify pass")
    p.add_argument("--samples", type=int, default=640, help="timed calls per op (host time)")
    p.add_argument("--batch-calls", type=int, default=32,
                   help="calls issued behind one spin kernel (few enough not to fill the launch queue)")
    p.add_argument("--iterations", type=int, default=60, help="timed iterations per loop")
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--host-context", choices=("mixed", "sequence", "stream"), default="mixed",
                   help="the single-op host times the trace's host_quantiles_us carry (all three are measured): "
                        "'mixed', each call drawn at random among the pass's ops; 'sequence', calls in the "
                        "pass's own order from a random offset (each op after the op a pass runs before it), "
                        "behind a spin kernel; 'stream', the same with no spin ahead (the GPU runs the kernels "
                        "as they come, as in an eager pass)")
    p.add_argument("--rounds", type=int, default=6,
                   help="rounds that each time every op (mixed) and run every loop, a share of the samples and "
                        "iterations each: the host's speed drifts within minutes, so ops and loops are measured "
                        "side by side in time")
    p.add_argument("--kineto", metavar="DIR",
                   help="also profile the decode steps and verify passes (eager and graph) with torch.profiler "
                        "and write each rank's Kineto trace to DIR/rank<r>.json.gz (what specsim import-profile reads)")
    p.add_argument("--kineto-captures", default="eager,graph", help="which loops to profile: eager, graph or both")
    p.add_argument("--kineto-iterations", type=int, default=20, help="profiled iterations per loop")
    a = p.parse_args()
    for name in ("hidden", "heads", "kv_heads", "head_dim", "intermediate", "vocab", "batch", "context", "layers",
                 "verify_tokens", "samples", "batch_calls", "iterations", "rounds"):
        if getattr(a, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be >= 1")
    if a.warmup < 0:
        p.error("--warmup must be >= 0")
    if a.heads % a.kv_heads:
        p.error("--kv-heads must divide --heads")
    return a


def quantile(sorted_values, q):
    """Linear interpolation between order statistics (numpy's default)."""
    if len(sorted_values) == 1:
        return sorted_values[0]
    x = q * (len(sorted_values) - 1)
    i = min(int(x), len(sorted_values) - 2)
    return sorted_values[i] + (x - i) * (sorted_values[i + 1] - sorted_values[i])


def stats_of(values_us, timer, warmup):
    v = sorted(values_us)
    return dict(iterations=len(v), warmup=warmup, median_us=quantile(v, 0.5), min_us=v[0], max_us=v[-1],
                p10_us=quantile(v, 0.1), p90_us=quantile(v, 0.9), mean_us=statistics.fmean(v),
                stddev_us=statistics.pstdev(v), timer=timer)


def sandbox():
    """What the host runs in, as the machine reports it."""
    found = []
    if os.path.exists("/.dockerenv"):
        found.append("container: docker (/.dockerenv)")
    try:
        with open("/proc/1/cgroup") as f:
            cg = f.read()
        for word in ("docker", "kubepods", "containerd", "lxc", "podman"):
            if word in cg:
                found.append(f"container: {word} (/proc/1/cgroup)")
                break
    except OSError:
        pass
    if os.environ.get("container"):
        found.append(f"container: {os.environ['container']} ($container)")
    try:
        with open("/proc/cpuinfo") as f:
            if " hypervisor" in f.read():
                found.append("VM: hypervisor flag in /proc/cpuinfo")
    except OSError:
        pass
    for dmi in ("/sys/class/dmi/id/product_name", "/sys/class/dmi/id/sys_vendor"):
        try:
            with open(dmi) as f:
                v = f.read().strip()
            if v:
                found.append(f"{os.path.basename(dmi)} {v}")
        except OSError:
            pass
    return "; ".join(found) if found else "bare metal (no container or hypervisor sign found)"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def cuda_version():
    """torch's CUDA runtime as cudaRuntimeGetVersion writes it: major * 1000 + minor * 10."""
    if not torch.version.cuda:
        return 0
    major, minor = (int(x) for x in torch.version.cuda.split(".")[:2])
    return major * 1000 + minor * 10


def environment(devices):
    """The trace's `environment` (proto/specsim/trace.proto): this host, torch's CUDA runtime and
    NCCL, the GPUs of `devices` (indices), the sandbox, the NCCL variables set."""
    gpus = []
    for i in devices:
        p = torch.cuda.get_device_properties(i)
        gpus.append(dict(index=i, name=torch.cuda.get_device_name(i), compute_capability_major=p.major,
                         compute_capability_minor=p.minor, sm_count=p.multi_processor_count,
                         memory_bytes=str(p.total_memory)))
    return dict(hostname=socket.gethostname(), kernel_release=platform.release(), cpu_model=cpu_model(),
                cpu_logical_cores=os.cpu_count() or 0, host_memory_bytes=str(memory_bytes()),
                cuda_runtime_version=cuda_version(), nccl_version=".".join(map(str, torch.cuda.nccl.version())),
                gpus=gpus, sandbox=sandbox(), nccl_env={k: v for k, v in os.environ.items() if k.startswith("NCCL_")})


def memory_bytes():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


class Layer:
    """One rank's Llama-shaped layer at TP 1 (the ops of torch_tp_decode.py's unfused layer), its
    buffers for `tokens` query tokens per sequence, and each of its ops as a callable."""

    def __init__(self, a, tokens, device, group):
        self.a, self.q, self.device, self.group = a, tokens, device, group
        b, h, kvh, d = a.batch, a.heads, a.kv_heads, a.head_dim
        g = torch.Generator(device=device).manual_seed(1234)

        def w(*shape):
            return torch.randn(*shape, generator=g, device=device, dtype=torch.bfloat16) * 0.02

        self.norm_w = torch.ones(a.hidden, device=device, dtype=torch.bfloat16)
        self.w_qkv = w(a.hidden, (h + 2 * kvh) * d)
        self.w_o = w(h * d, a.hidden)
        self.w_gate_up = w(a.hidden, 2 * a.intermediate)
        self.w_down = w(a.intermediate, a.hidden)
        self.w_lm_head = w(a.hidden, a.vocab)
        self.kv = w(2, b, kvh, a.context + tokens, d)
        self.x = torch.randn(b * tokens, a.hidden, generator=g, device=device, dtype=torch.bfloat16)
        pos = torch.arange(a.context, a.context + tokens, device=device, dtype=torch.float32)
        inv = 1.0 / (500000.0 ** (torch.arange(0, d, 2, device=device, dtype=torch.float32) / d))
        f = torch.outer(pos, inv)
        self.cos = torch.cat([f.cos(), f.cos()], -1).to(torch.bfloat16)
        self.sin = torch.cat([f.sin(), f.sin()], -1).to(torch.bfloat16)
        cols = torch.arange(a.context + tokens, device=device)
        rows = torch.arange(tokens, device=device)
        self.mask = (cols[None, :] <= (a.context + rows)[:, None]) if tokens > 1 else None
        # The intermediate tensors, as one layer leaves them (each op reads its inputs from here).
        self.t = {"x": self.x.clone()}
        self.run_layer()
        self.t["logits"] = self.t["h"] @ self.w_lm_head
        self.t["next"] = self.t["logits"].argmax(-1)

    # The ops. Each name is an op of the trace; `cls` says how specsim prices it.
    def ops(self):
        a, b, q, t = self.a, self.a.batch, self.q, self.t
        h, kvh, d, half = a.heads, a.kv_heads, a.head_dim, a.head_dim // 2
        c = a.context

        def rms_norm():
            t["h"] = F.rms_norm(t["x"], (a.hidden,), self.norm_w)

        def linear_qkv():
            t["qkv"] = t["h"] @ self.w_qkv

        def split_heads():  # three views: no kernel
            qh, kh, vh = t["qkv"].split([h * d, kvh * d, kvh * d], dim=-1)
            t["qh"] = qh.view(b, q, h, d).transpose(1, 2)
            t["kh"] = kh.view(b, q, kvh, d).transpose(1, 2)
            t["vh"] = vh.view(b, q, kvh, d).transpose(1, 2)

        def rotary(name):
            def f():
                x = t[name]
                t[name] = x * self.cos + torch.cat([-x[..., half:], x[..., :half]], -1) * self.sin
            return f

        def cache_write(i, name):
            def f():
                self.kv[i, :, :, c:c + q].copy_(t[name])
            return f

        def attention():
            k = self.kv[0, :, :, :c + q]
            v = self.kv[1, :, :, :c + q]
            t["attn"] = F.scaled_dot_product_attention(t["qh"], k, v, attn_mask=self.mask, enable_gqa=True)

        def merge_heads():  # transpose + reshape: a copy kernel when not contiguous
            t["attn2"] = t["attn"].transpose(1, 2).reshape(b * q, h * d)

        def linear_o():
            t["o"] = t["attn2"] @ self.w_o

        def allreduce(name):
            def f():
                dist.all_reduce(t[name], group=self.group)
            return f

        def add(name):
            def f():
                t["x"] = t["x"] + t[name]
            return f

        def linear_gate_up():
            t["gu"] = t["h"] @ self.w_gate_up

        def silu_mul():  # chunk (views), silu, mul
            g_, u_ = t["gu"].chunk(2, dim=-1)
            t["act"] = F.silu(g_) * u_

        def linear_down():
            t["down"] = t["act"] @ self.w_down

        def linear_lm_head():
            t["logits"] = t["h"] @ self.w_lm_head

        def argmax():
            t["next"] = t["logits"].argmax(-1)

        return {
            "rms_norm": ("kernel", rms_norm, f"[{b*q},{a.hidden}] bf16"),
            "linear_qkv": ("library", linear_qkv, f"[{b*q},{a.hidden}] x [{a.hidden},{(h+2*kvh)*d}] bf16"),
            "split_heads": ("metadata", split_heads, "3 views"),
            "rotary_q": ("kernel", rotary("qh"), f"[{b},{h},{q},{d}] bf16"),
            "rotary_k": ("kernel", rotary("kh"), f"[{b},{kvh},{q},{d}] bf16"),
            "cache_write_k": ("kernel", cache_write(0, "kh"), f"[{b},{kvh},{q},{d}] bf16"),
            "cache_write_v": ("kernel", cache_write(1, "vh"), f"[{b},{kvh},{q},{d}] bf16"),
            "attention": ("kernel", attention, f"sdpa q [{b},{h},{q},{d}] kv {c + q} bf16"),
            "merge_heads": ("kernel", merge_heads, f"[{b},{h},{q},{d}] -> [{b*q},{h*d}] bf16"),
            "linear_o": ("library", linear_o, f"[{b*q},{h*d}] x [{h*d},{a.hidden}] bf16"),
            "allreduce_o": ("collective", allreduce("o"), f"[{b*q},{a.hidden}] bf16"),
            "add_o": ("kernel", add("o"), f"[{b*q},{a.hidden}] bf16"),
            "linear_gate_up": ("library", linear_gate_up,
                               f"[{b*q},{a.hidden}] x [{a.hidden},{2*a.intermediate}] bf16"),
            "silu_mul": ("kernel", silu_mul, f"[{b*q},{a.intermediate}] bf16"),
            "linear_down": ("library", linear_down, f"[{b*q},{a.intermediate}] x [{a.intermediate},{a.hidden}] bf16"),
            "allreduce_down": ("collective", allreduce("down"), f"[{b*q},{a.hidden}] bf16"),
            "add_down": ("kernel", add("down"), f"[{b*q},{a.hidden}] bf16"),
            "linear_lm_head": ("library", linear_lm_head, f"[{b*q},{a.hidden}] x [{a.hidden},{a.vocab}] bf16"),
            "argmax": ("kernel", argmax, f"[{b*q},{a.vocab}] bf16"),
        }

    LAYER = ["rms_norm", "linear_qkv", "split_heads", "rotary_q", "rotary_k", "cache_write_k", "cache_write_v",
             "attention", "merge_heads", "linear_o", "allreduce_o", "add_o", "rms_norm", "linear_gate_up",
             "silu_mul", "linear_down", "allreduce_down", "add_down"]
    HEAD = ["rms_norm", "linear_lm_head", "argmax"]

    def run_layer(self):
        ops = self.ops()
        for name in self.LAYER:
            ops[name][1]()

    def program(self, what, layers):
        return self.LAYER * layers + (self.HEAD if what != "layers" else [])


def spin_cycles_per_us(device):
    """The GPU's clock as torch.cuda._sleep counts it: cycles per microsecond."""
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda._sleep(1000)
    s.record()
    torch.cuda._sleep(20_000_000)
    e.record()
    e.synchronize()
    return 20_000_000 / (s.elapsed_time(e) * 1e3)


def time_calls(calls):
    """Each call's host time: [(index, us)], the host's clock around the call."""
    batch = []
    for i, fn in enumerate(calls):
        t0 = time.perf_counter_ns()
        fn()
        batch.append((i, (time.perf_counter_ns() - t0) / 1e3))
    return batch


class SpinGate:
    """Runs a batch of host calls while a spin kernel holds the GPU, so that no call waits for a
    full launch queue or a busy GPU. A batch counts only when the spin was still running after its
    last call (an event behind the spin not yet reached); else the spin was too short (or a call
    waited for the GPU) and the batch is run again with a spin twice as long, at most `tries` times
    in a row (then the op cannot be timed behind a gate: an error, not a silent sample). The spin's
    length follows the calls' median, not their maximum, so that one slow call does not lengthen
    every later spin. The batch's first call comes right after the host waited for the GPU and
    costs 2.2-2.6x its op's median (the others 1.0-1.25x; h200-1x-2026-12-03f.log): it is not a
    sample (a loop pays it once per iteration, not once per 32 calls). run() returns it apart, and
    the others as (index in the batch, us)."""

    def __init__(self, cycles_per_us, tries=8):
        self.cycles_per_us, self.tries = cycles_per_us, tries
        self.per_call_us = 50.0
        self.done = torch.cuda.Event()

    def run(self, calls, name):
        for _ in range(self.tries):
            torch.cuda.synchronize()
            spin_us = min(self.per_call_us * len(calls) * 2 + 2000, 200_000)
            torch.cuda._sleep(int(self.cycles_per_us * spin_us))
            self.done.record()
            batch = time_calls(calls)
            gated = not self.done.query()
            torch.cuda.synchronize()
            self.per_call_us = max(self.per_call_us, statistics.median(dt for _, dt in batch))
            if gated:
                return batch[0][1], batch[1:]
            self.per_call_us *= 2
        sys.exit(f"torch_host_probe.py: {name}: the GPU finished a {spin_us:.0f} us spin before "
                 f"{len(calls)} calls were issued, {self.tries} times in a row: a call waits for the GPU")


def time_op_host(fn, a, cycles_per_us, idle_gpu=False):
    """Host time per call (us), calls issued behind a spin kernel long enough to cover them; with
    `idle_gpu` (a read-back, which waits for the GPU) each call on an idle GPU instead."""
    samples = []
    if idle_gpu:
        for _ in range(a.samples):
            torch.cuda.synchronize()
            t0 = time.perf_counter_ns()
            fn()
            samples.append((time.perf_counter_ns() - t0) / 1e3)
        return samples
    gate = SpinGate(cycles_per_us)
    while len(samples) < a.samples:
        _, batch = gate.run([fn] * a.batch_calls, name="one op")
        samples += [dt for _, dt in batch]
    return samples[: a.samples]


def time_ops_mixed(ops, a, cycles_per_us, seed, samples_per_op, first_ratio=None):
    """Host time per call (us) of each op of `ops` (name -> callable) among the others: calls drawn
    at random (seeded) from the whole set, `batch_calls` at a time behind a spin kernel, until
    every op has `samples`. An op called among a pass's other ops finds the host's caches holding
    their code, not its own (called 32 times in a row, attention took 33 us; among the layer's
    other ops, 66 us: validate/probes/torch_host_context.py)."""
    import random
    rng = random.Random(seed)
    names = list(ops)
    samples = {n: [] for n in names}
    firsts = []  # (op, us): each batch's first call, not a sample (SpinGate)
    gate = SpinGate(cycles_per_us)
    while min(len(v) for v in samples.values()) < samples_per_op:
        batch_names = [rng.choice(names) for _ in range(a.batch_calls)]
        first_us, batch = gate.run([ops[n] for n in batch_names],
                                   name="mixed ops " + ",".join(sorted(set(batch_names))))
        firsts.append((batch_names[0], first_us))
        for i, dt in batch:
            samples[batch_names[i]].append(dt)
    if first_ratio is not None:  # each call against its op's median: the batches' first calls, the others
        median = {n: max(1e-3, statistics.median(v)) for n, v in samples.items()}
        first_ratio[0].extend(dt / median[n] for n, dt in firsts)
        first_ratio[1].extend(dt / median[n] for n, v in samples.items() for dt in v)
    return {n: v[:samples_per_op] for n, v in samples.items()}


def run_ungated(calls):
    """The batch's calls on an idle GPU with nothing ahead of them: the GPU runs each call's kernels
    as they come, as in an eager pass (a call that waited for the GPU would count: the pass's ops
    issue no sync, and 32 calls do not fill the launch queue). As SpinGate.run: the first call
    apart, the others as (index in the batch, us)."""
    torch.cuda.synchronize()
    batch = time_calls(calls)
    torch.cuda.synchronize()
    return batch[0][1], batch[1:]


def call_correlation(batches):
    """How much of a call's host time is the host's speed of the moment, shared by the calls close to
    it in time: the intraclass correlation, within batches, of the calls' normal scores (each call's
    quantile among its op's calls, through the inverse normal CDF). 0: the calls of a batch are as
    far apart as any; 1: a batch's calls all sit at one quantile of their ops. specsim draws a pass's
    calls with this correlation (a Gaussian copula; sim/llm/rank_timeline.h). `batches`: lists of
    (op, us); one-way ANOVA over batches of equal size k: (MSB - MSW) / (MSB + (k - 1) MSW)."""
    import bisect
    norm = statistics.NormalDist()
    by_op = {}
    for batch in batches:
        for n, dt in batch:
            by_op.setdefault(n, []).append(dt)
    for v in by_op.values():
        v.sort()

    def score(n, dt):
        v = by_op[n]
        rank = (bisect.bisect_left(v, dt) + bisect.bisect_right(v, dt)) / 2
        return norm.inv_cdf(min(max(rank / len(v), 0.5 / len(v)), 1 - 0.5 / len(v)))

    k = min(len(b) for b in batches)
    groups = [[score(n, dt) for n, dt in b[:k]] for b in batches]
    if len(groups) < 2 or k < 2:
        return 0.0
    means = [statistics.fmean(g) for g in groups]
    grand = statistics.fmean(means)
    msb = k * sum((m - grand) ** 2 for m in means) / (len(groups) - 1)
    msw = sum((x - m) ** 2 for g, m in zip(groups, means) for x in g) / (len(groups) * (k - 1))
    return min(max((msb - msw) / (msb + (k - 1) * msw), 0.0), 0.99)


def time_ops_sequence(ops, program, a, cycles_per_us, seed, samples_per_op, gated=True, batches=None):
    """Host time per call (us) of each op of `program` (a list of names of `ops`, a pass's calls in
    order, taken as a cycle) called in the pass's order: batches of `batch_calls` consecutive
    calls from a random (seeded) offset, behind a spin kernel (`gated`) or on an idle GPU that
    runs them as they come (run_ungated), until every op has `samples_per_op`. Each call follows
    the op the pass runs before it, as in the pass; the batch's first call (after the host waited)
    is not a sample. `batches`, if given, gets each batch's samples as a list of (op, us)."""
    import random
    rng = random.Random(seed)
    samples = {n: [] for n in set(program)}
    gate = SpinGate(cycles_per_us)
    while min(len(v) for v in samples.values()) < samples_per_op:
        start = rng.randrange(len(program))
        names = [program[(start + i) % len(program)] for i in range(a.batch_calls)]
        calls = [ops[n] for n in names]
        _, batch = gate.run(calls, name="sequence from " + names[0]) if gated else run_ungated(calls)
        if batches is not None:
            batches.append([(names[i], dt) for i, dt in batch])
        for i, dt in batch:
            samples[names[i]].append(dt)
    return {n: v[:samples_per_op] for n, v in samples.items()}


def time_op_device(fn, a, cycles_per_us, graph):
    """GPU time per call (us): `batch_calls` calls back to back behind a spin kernel (eager), or
    one replay of a graph of them; None when the op cannot be captured."""
    n = a.batch_calls
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    if not graph:
        torch.cuda.synchronize()
        torch.cuda._sleep(int(cycles_per_us * 200 * n))
        s.record()
        for _ in range(n):
            fn()
        e.record()
        e.synchronize()
        return s.elapsed_time(e) * 1e3 / n
    try:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            fn()
        torch.cuda.current_stream().wait_stream(side)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for _ in range(n):
                fn()
    except Exception:  # not capturable (a sync, a collective this build cannot capture)
        torch.cuda.synchronize()
        return None
    g.replay()
    torch.cuda.synchronize()
    s.record()
    g.replay()
    e.record()
    e.synchronize()
    return s.elapsed_time(e) * 1e3 / n


def kernels_per_call(fn):
    """The GPU kernels one call launches (the profiler's device events)."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return sum(1 for ev in prof.events() if ev.device_type == torch.autograd.DeviceType.CUDA)


def op_item(rank, name, cls, shape, fn, a, framework, cycles_per_us, tokens, mixed=None, sequence=None,
            stream=None):
    """`mixed`, `sequence`, `stream`: the op's host times among the pass's other ops (time_ops_mixed,
    time_ops_sequence gated and not); the trace's distribution is --host-context's, else the op
    timed alone."""
    alone = time_op_host(fn, a, cycles_per_us, idle_gpu=cls == "sync")
    contexts = {"mixed": mixed, "sequence": sequence, "stream": stream}
    context = a.host_context if contexts[a.host_context] is not None else "alone"
    host = dict(contexts, alone=alone)[context]
    extra = {}
    for c, v in contexts.items():
        if v is not None and c != context:
            extra[f"{c}_host_quantiles_us"] = [quantile(sorted(v), q) for q in QUANTILES]
    va = sorted(alone)
    device = time_op_device(fn, a, cycles_per_us, graph=False) if cls not in ("metadata", "sync") else 0.0
    graph = time_op_device(fn, a, cycles_per_us, graph=True) if cls not in ("metadata", "sync") else None
    kernels = kernels_per_call(fn) if cls != "sync" else 1
    v = sorted(host)
    return dict(suite="SUITE_PACING", name=f"host_op/{name}/b{a.batch}/q{tokens}/rank{rank}", kind="KIND_HOST_OP",
                host_op=dict(framework=framework, op=name, op_class=cls, shape=shape, kernels=kernels,
                             device_us=device or 0.0, graph_device_us=graph or 0.0,
                             host_quantiles_us=[quantile(v, q) for q in QUANTILES], rank=rank, tokens=tokens,
                             host_context=context,
                             alone_host_quantiles_us=[quantile(va, q) for q in QUANTILES],
                             call_correlation=a.call_correlation, **extra),
                stats=stats_of(host, "host_monotonic", 0))


class Loop:
    """One composite loop (`what` over `layers` layers, eager or one CUDA graph replayed per
    iteration), each iteration ending with the read-back of its result (.cpu(): the host waits for
    the GPU). A graph loop runs on a layer of its own, captured once and only replayed (eager
    iterations reassign a layer's tensors, which a graph captured on them reads)."""

    def __init__(self, layer, what, capture, a):
        self.what, self.capture, self.a = what, capture, a
        if capture == "graph":
            layer = Layer(a, layer.q, layer.device, layer.group)
        self.layer = layer
        self.program = layer.program(what, a.layers)
        ops = layer.ops()
        calls = [ops[n][1] for n in self.program]

        def body():
            for c in calls:
                c()

        self.launch = body
        if capture == "graph":
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                body()
            torch.cuda.current_stream().wait_stream(side)
            # The graph reads the tensors the layer holds now, which its first ops replace: kept
            # alive here, or the next capture's empty_cache() returns them to the driver and a
            # replay reads freed memory (an illegal address). torch.cuda.graph.__enter__ calls
            # torch.cuda.empty_cache() (pytorch/pytorch torch/cuda/graphs.py @006be72d).
            self.inputs = dict(layer.t)
            self.graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.graph):
                body()
            self.launch = self.graph.replay
        self.wall, self.gpu = [], []

    def run(self, iterations, warmup):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        for i in range(warmup + iterations):
            torch.cuda.synchronize()
            t0 = time.perf_counter_ns()
            s.record()
            self.launch()
            e.record()
            self.layer.t["next" if self.what != "layers" else "x"][:1].cpu()
            t1 = time.perf_counter_ns()
            if i >= warmup:
                self.wall.append((t1 - t0) / 1e3)
                self.gpu.append(s.elapsed_time(e) * 1e3)

    def item(self, rank, framework):
        a, layer = self.a, self.layer
        # The same ops either way: in a graph the host issues one replay of them (specsim prices the
        # capture from HostLoopParams.capture).
        full = self.program + ["sync"]
        return dict(suite="SUITE_PACING",
                    name=f"host_loop/{self.what}/{self.capture}/L{a.layers}/b{a.batch}/q{layer.q}/rank{rank}",
                    kind="KIND_HOST_LOOP",
                    host_loop=dict(framework=framework, capture=self.capture, what=self.what, ops=full,
                                   layers=a.layers, tokens=layer.q, batch=a.batch,
                                   device_us=statistics.median(self.gpu), rank=rank),
                    stats=stats_of(self.wall, "host_monotonic", a.warmup))


def profile_loops(rank, decode, verify, a, out_dir):
    """Each rank's Kineto trace of the loops a framework's profile would show: decode steps and
    verify passes, eager and as graph replays, each iteration (the pass and its read-back) inside
    a record_function range named as plain PyTorch code would name it ("decode_step",
    "verify_pass"), with record_shapes on, as users profile. The four loops take turns, one
    iteration each, so that a drift of the host's speed reaches them alike (run one after the
    other, a decode step measured slower than the verify pass it is a subset of: runs d, e). The
    profiler itself costs the host time per op: these traces are what import-profile predicts from
    their own launch events, not the probe's unprofiled loops. The eager passes' calls are timed
    one by one on the host as they run (perf_counter around each call): returned per tokens and op,
    what import-profile's per-operator costs are checked against (the same calls, two clocks)."""
    import gzip
    captures = a.kineto_captures.split(",")
    # Graph loops captured before the profiler starts, as a framework captures at start-up (their
    # inputs kept alive by Loop).
    loops = [Loop(layer, what, capture, a) for what, layer in (("decode_step", decode), ("verify_pass", verify))
             for capture in ("eager", "graph") if capture in captures]
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    timed = {}  # tokens -> op -> [us]
    calls = {id(loop): [(n, loop.layer.ops()[n][1]) for n in loop.program] for loop in loops}
    with torch.profiler.profile(activities=acts, record_shapes=True) as prof:
        for i in range(a.warmup + a.kineto_iterations):
            for loop in loops:
                torch.cuda.synchronize()
                with torch.profiler.record_function(loop.what):
                    if loop.capture == "graph":
                        loop.launch()
                    else:
                        per_op = timed.setdefault(loop.layer.q, {})
                        for n, fn in calls[id(loop)]:
                            t0 = time.perf_counter_ns()
                            fn()
                            if i >= a.warmup:
                                per_op.setdefault(n, []).append((time.perf_counter_ns() - t0) / 1e3)
                    loop.layer.t["next"][:1].cpu()
    os.makedirs(out_dir, exist_ok=True)
    plain = os.path.join(out_dir, f"rank{rank}.json")
    prof.export_chrome_trace(plain)
    with open(plain, "rb") as f, gzip.open(plain + ".gz", "wb") as z:
        z.write(f.read())
    os.remove(plain)
    return plain + ".gz", timed


def main():
    a = parse_args()
    a.call_correlation = 0.0  # set once the stream batches are in (main)
    rank = int(os.environ.get("RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    local = int(os.environ.get("LOCAL_RANK", "0"))
    if not torch.cuda.is_available():
        sys.exit("torch_host_probe.py: no CUDA device")
    torch.cuda.set_device(local)
    device = torch.device("cuda", local)
    if "MASTER_ADDR" not in os.environ:  # one rank without torchrun
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT="29517", RANK="0", WORLD_SIZE="1")
    dist.init_process_group("nccl", device_id=device)
    # Each rank its own world-size-1 group too: the single ops measure PyTorch's call path alone,
    # the loops measure what the ranks' group costs.
    framework = f"pytorch {torch.__version__}, python {platform.python_version()}"
    say = (lambda *m: print(f"[rank {rank}]", *m, flush=True)) if rank == 0 else (lambda *m: None)
    started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    t_start = time.monotonic()
    cycles_per_us = spin_cycles_per_us(device)
    say(f"{world} ranks on {torch.cuda.get_device_name(device)}; spin {cycles_per_us:.0f} cycles/us; {framework}")

    items = []
    decode = Layer(a, 1, device, None)
    verify = Layer(a, a.verify_tokens, device, None)
    layers = (decode, verify)
    loops = [Loop(layer, what, capture, a) for what, layer in (("layers", decode), ("decode_step", decode),
                                                                 ("verify_pass", verify))
             for capture in ("eager", "graph")]
    # Rounds: every op of both shapes timed among the others (decode: 1 token per sequence; verify:
    # N: the host's cost per call hardly depends on the shape, the GPU's does), then every loop, a
    # share of the samples and iterations per round, so that a drift of the host's speed over the
    # run (2x within minutes on the lent machines) reaches ops and loops alike.
    mixed = {layer.q: {n: [] for n in layer.ops()} for layer in layers}
    sequence = {layer.q: {} for layer in layers}
    stream = {layer.q: {} for layer in layers}
    stream_batches = {layer.q: [] for layer in layers}
    samples_per_round = -(-a.samples // a.rounds)
    iterations_per_round = -(-a.iterations // a.rounds)
    in_loop = {}
    for r in range(a.rounds):
        line = []
        for layer in layers:
            ops = {n: fn for n, (_, fn, _) in layer.ops().items()}
            ratio = ([], [])
            got = time_ops_mixed(ops, a, cycles_per_us, seed=1000 * (r + 1) + layer.q, samples_per_op=samples_per_round,
                                 first_ratio=ratio)
            line.append(f"q{layer.q} call / its op's median: first of a batch {statistics.fmean(ratio[0]):.2f}, "
                        f"others {statistics.fmean(ratio[1]):.2f}")
            program = layer.program("decode_step" if layer.q == 1 else "verify_pass", a.layers)
            in_order = time_ops_sequence(ops, program, a, cycles_per_us, seed=2000 * (r + 1) + layer.q,
                                         samples_per_op=samples_per_round)
            for n, v in in_order.items():
                sequence[layer.q].setdefault(n, []).extend(v)
            as_they_come = time_ops_sequence(ops, program, a, cycles_per_us, seed=4000 * (r + 1) + layer.q,
                                             samples_per_op=samples_per_round, gated=False,
                                             batches=stream_batches[layer.q])
            for n, v in as_they_come.items():
                stream[layer.q].setdefault(n, []).extend(v)
            line.append(f"q{layer.q} ops sum in sequence {sum(statistics.median(v) for v in in_order.values()):7.0f} us")
            for n, v in got.items():
                mixed[layer.q][n] += v
            line.append(f"q{layer.q} ops sum {sum(statistics.median(v) for v in got.values()):7.0f} us")
        for loop in loops:
            loop.run(iterations_per_round, a.warmup if r == 0 else 2)
        # Diagnostic (log only): each op's host time inside the eager decode step, call by call.
        ops = decode.ops()
        for _ in range(iterations_per_round):
            torch.cuda.synchronize()
            for n in decode.program("decode_step", a.layers):
                t0 = time.perf_counter_ns()
                ops[n][1]()
                in_loop.setdefault(n, []).append((time.perf_counter_ns() - t0) / 1e3)
            decode.t["next"][:1].cpu()
        say(f"round {r + 1}/{a.rounds}: " + ", ".join(line) + "; loops " +
            " ".join(f"{statistics.median(l.wall[-iterations_per_round:]):.0f}" for l in loops) + " us")
    # One figure for the run: the batches of both shapes, each op scored among its own calls.
    correlation = call_correlation([[(f"{n}/q{q}", dt) for n, dt in b] for q, bs in stream_batches.items()
                                    for b in bs])
    say(f"call correlation within a batch (stream): {correlation:.3f}")
    a.call_correlation = correlation
    for layer in layers:
        ops = layer.ops()
        for name, (cls, fn, shape) in ops.items():
            in_order, ungated = sequence[layer.q].get(name), stream[layer.q].get(name)
            items.append(op_item(rank, name, cls, shape, fn, a, framework, cycles_per_us, layer.q,
                                 mixed[layer.q][name][: a.samples], in_order[: a.samples] if in_order else None,
                                 ungated[: a.samples] if ungated else None))
            say(f"{name:16s} q{layer.q} host median {items[-1]['stats']['median_us']:7.2f} us  device "
                f"{items[-1]['host_op']['device_us']:7.2f} us  kernels {items[-1]['host_op']['kernels']}")
        # A graph replay (a graph of one kernel) and a read-back (.cpu(): the host waits for the GPU).
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            ops["add_o"][1]()
        items.append(op_item(rank, "graph_replay", "graph_launch", "a graph of one kernel", g.replay, a, framework,
                             cycles_per_us, layer.q))
        small = layer.t["next"]
        items.append(op_item(rank, "sync", "sync", f"[1] of {list(small.shape)} int64 .cpu() on an idle GPU",
                             lambda small=small: small[:1].cpu(), a, framework, cycles_per_us, layer.q))
        say(f"graph_replay host median {items[-2]['stats']['median_us']:.2f} us; "
            f"sync {items[-1]['stats']['median_us']:.2f} us")
    say("op               mixed median  sequence median  stream median  in-loop median  "
        "mixed mean  stream mean  in-loop mean  (us, decode step q1)")
    for n, v in in_loop.items():
        m, sq, st = mixed[1][n], sequence[1].get(n) or [0.0], stream[1].get(n) or [0.0]
        say(f"{n:16s} {statistics.median(m):12.1f} {statistics.median(sq):16.1f} {statistics.median(st):14.1f} "
            f"{statistics.median(v):15.1f} {statistics.fmean(m):11.1f} {statistics.fmean(st):12.1f} "
            f"{statistics.fmean(v):13.1f}")
    for loop in loops:
        items.append(loop.item(rank, framework))
        say(f"{items[-1]['name']:44s} host {items[-1]['stats']['median_us']:9.1f} us  gpu "
            f"{items[-1]['host_loop']['device_us']:9.1f} us")

    if a.kineto:
        path, profiled = profile_loops(rank, decode, verify, a, a.kineto)
        say(f"wrote {path} (and every rank its own)")
        for it in items:  # each op's calls inside the profiled eager passes, timed on the host
            op = it.get("host_op")
            v = sorted(profiled.get(op["tokens"], {}).get(op["op"], [])) if op else []
            if v:
                op["profiled_host_quantiles_us"] = [quantile(v, q) for q in QUANTILES]

    gathered = [None] * world
    dist.all_gather_object(gathered, items)
    if rank == 0:
        env = environment(range(world))
        trace = dict(schema_version=1, tool="validate/torch_host_probe.py", tool_version=framework,
                     command_line=" ".join(sys.argv), started_at_utc=started,
                     wall_seconds=time.monotonic() - t_start, environment=env,
                     items=[it for per_rank in gathered for it in per_rank],
                     notes=[dict(severity="INFO", suite="pacing",
                                 message=f"gc {'enabled' if gc.isenabled() else 'disabled'}; {world} ranks; "
                                         f"layers {a.layers}, batch {a.batch}, context {a.context}, "
                                         f"verify tokens {a.verify_tokens}; spin {cycles_per_us:.0f} cycles/us")])
        os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
        with open(a.out, "w") as f:
            json.dump(trace, f, indent=1)
        say(f"wrote {a.out} ({len(trace['items'])} items)")
    sys.stdout.flush()
    os._exit(0)  # as torch_tp_decode.py: no NCCL teardown with graphs alive


if __name__ == "__main__":
    main()
