#!/usr/bin/env python3
"""A tensor-parallel decode loop in plain PyTorch, profiled with torch's own profiler (Kineto).

What it is for: a real PyTorch profiler trace of a TP decode / speculative loop, on the GPUs at
hand, as input for `specsim import-profile` (issue 13) and its tests. It is not a serving engine:
the model is a Llama-shaped stack with random bf16 weights, the attention is
torch.nn.functional.scaled_dot_product_attention over a static KV cache, and "speculation" is the
shape of EAGLE-style decoding (S draft steps of a one-layer head, one verify forward of N tokens of
the target, one draft extend of N tokens), not its outcome.

Run one process per GPU:
    torchrun --standalone --nproc-per-node 2 validate/scripts/torch_tp_decode.py --out DIR
Each rank writes DIR/rank<R>.trace.json.gz (Chrome trace JSON, as torch.profiler's
export_chrome_trace writes it) and rank 0 writes DIR/run.json (the shapes, modes and ranges, so a
test can check what the importer finds).

Ranges (torch.profiler.record_function), one per pass, so that an importer can find the phases:
    specsim.run/<mode>              a whole measured run (mode: decode.eager, decode.graph,
                                    spec.eager, spec.graph)
    decode                          one plain decode forward of the target (q = 1)
    draft                           one draft step (q = 1, the one-layer head)
    verify                          one target forward over N tokens per sequence
    draft_extend                    the head over the N verified tokens
The names follow the phases of SGLang's speculative loop (draft / verify / draft-extend); SGLang's
own profiler ranges were not checked against its source (not available here): [UNVERIFIED].

CUDA graphs: each pass shape is captured once (torch.cuda.CUDAGraph, NCCL collectives inside) and
replayed; if capture fails the graph modes are skipped and run.json says why.

--fused: the layer as serving engines fuse it (vLLM through torch.compile, SGLang through its own
kernels): the residual add with the RMSNorm, rotary with the K/V pair for the cache, and SiLU x
up each one Triton kernel (torch.compile of small functions, before capture), so a layer launches
about a dozen kernels (norm, qkv, rotary, cache write, attention, o, allreduce, norm, gate_up,
act, down, allreduce) instead of some 25.
"""

import argparse
import gzip
import json
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True, help="output directory (created)")
    p.add_argument("--layers", type=int, default=4, help="target layers (Llama-3.1-8B has 32)")
    p.add_argument("--hidden", type=int, default=4096)
    p.add_argument("--heads", type=int, default=32)
    p.add_argument("--kv-heads", type=int, default=8)
    p.add_argument("--head-dim", type=int, default=128)
    p.add_argument("--intermediate", type=int, default=14336)
    p.add_argument("--vocab", type=int, default=128256)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--context", type=int, default=1024, help="cached tokens per sequence")
    p.add_argument("--draft-steps", type=int, default=3, help="S: draft steps per cycle")
    p.add_argument("--verify-widths", default="4,8", help="N values: tokens verified per sequence")
    p.add_argument("--steps", type=int, default=3, help="measured steps (or cycles) per mode and width")
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--fused", action="store_true",
                   help="fuse residual+norm, rotary+KV pair and SiLU x up with torch.compile (see above)")
    p.add_argument("--modes", default="decode.eager,decode.graph,spec.eager,spec.graph")
    a = p.parse_args()
    a.verify_widths = [int(x) for x in a.verify_widths.split(",") if x]
    a.modes = [m for m in a.modes.split(",") if m]
    for m in a.modes:
        if m not in ("decode.eager", "decode.graph", "spec.eager", "spec.graph"):
            p.error(f"--modes: '{m}' is not one of decode.eager, decode.graph, spec.eager, spec.graph")
    for name in ("layers", "batch", "context", "draft_steps", "steps"):
        if getattr(a, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be >= 1")
    if not a.verify_widths or min(a.verify_widths) < 1:
        p.error("--verify-widths: positive integers, comma separated")
    return a


class Shard:
    """One rank's share of a Llama-shaped layer stack (column-parallel qkv and gate_up, row-parallel
    o and down, each followed by an allreduce), plus the final norm and a column-parallel lm_head."""

    def __init__(self, a, layers, tp, max_q, device):
        assert a.heads % tp == 0 and a.kv_heads % tp == 0 and a.intermediate % tp == 0 and a.vocab % tp == 0
        self.a, self.tp, self.device = a, tp, device
        self.h, self.kvh, self.d = a.heads // tp, a.kv_heads // tp, a.head_dim
        self.inter = a.intermediate // tp
        g = torch.Generator(device=device).manual_seed(1234)

        def w(*shape):
            return (torch.randn(*shape, generator=g, device=device, dtype=torch.bfloat16) * 0.02)

        qkv = (self.h + 2 * self.kvh) * self.d
        self.layers = []
        for _ in range(layers):
            self.layers.append(dict(
                norm1=torch.ones(a.hidden, device=device, dtype=torch.bfloat16),
                qkv=w(a.hidden, qkv), o=w(self.h * self.d, a.hidden),
                norm2=torch.ones(a.hidden, device=device, dtype=torch.bfloat16),
                gate_up=w(a.hidden, 2 * self.inter), down=w(self.inter, a.hidden),
                kv_cache=w(2, a.batch, self.kvh, a.context + max_q, self.d)))
        self.norm = torch.ones(a.hidden, device=device, dtype=torch.bfloat16)
        self.lm_head = w(a.hidden, a.vocab // tp)
        self.masks = {}
        self.rope = {}
        self.fused = a.fused
        if a.fused:
            self.c_norm = torch.compile(_rms_norm, dynamic=False, fullgraph=True)
            self.c_add_norm = torch.compile(_add_rms_norm, dynamic=False, fullgraph=True)
            self.c_rope_kv = torch.compile(_rope_kv, dynamic=False, fullgraph=True)
            self.c_silu_mul = torch.compile(_silu_mul, dynamic=False, fullgraph=True)

    def mask(self, q):
        # Causal among the q new tokens: token j sees cache positions <= context + j.
        if q not in self.masks:
            c = self.a.context
            cols = torch.arange(c + q, device=self.device)
            rows = torch.arange(q, device=self.device)
            self.masks[q] = (cols[None, :] <= (c + rows)[:, None])
        return self.masks[q]

    def rotary(self, q):
        if q not in self.rope:
            pos = torch.arange(self.a.context, self.a.context + q, device=self.device, dtype=torch.float32)
            inv = 1.0 / (500000.0 ** (torch.arange(0, self.d, 2, device=self.device, dtype=torch.float32) / self.d))
            f = torch.outer(pos, inv)
            self.rope[q] = (torch.cat([f.cos(), f.cos()], -1).to(torch.bfloat16), torch.cat([f.sin(), f.sin()], -1).to(torch.bfloat16))
        return self.rope[q]

    def forward(self, x, q):
        """x: [batch * q, hidden] -> next tokens [batch * q] (argmax over the gathered logits)."""
        a, b = self.a, self.a.batch
        cos, sin = self.rotary(q)
        mask = self.mask(q) if q > 1 else None
        fused = self.fused
        h = self.c_norm(x, self.layers[0]["norm1"]) if fused else None
        for i, L in enumerate(self.layers):
            if not fused:
                h = F.rms_norm(x, (a.hidden,), L["norm1"])
            qkv = h @ L["qkv"]
            kv = L["kv_cache"]
            if fused:
                qh, kvh = self.c_rope_kv(qkv, cos, sin, b, q, self.h, self.kvh, self.d)
                kv[:, :, :, a.context:a.context + q].copy_(kvh)
            else:
                qh, kh, vh = qkv.split([self.h * self.d, self.kvh * self.d, self.kvh * self.d], dim=-1)
                qh = qh.view(b, q, self.h, self.d).transpose(1, 2)
                kh = kh.view(b, q, self.kvh, self.d).transpose(1, 2)
                vh = vh.view(b, q, self.kvh, self.d).transpose(1, 2)
                half = self.d // 2
                rot = lambda t: t * cos + torch.cat([-t[..., half:], t[..., :half]], -1) * sin
                qh, kh = rot(qh), rot(kh)
                kv[0, :, :, a.context:a.context + q].copy_(kh)
                kv[1, :, :, a.context:a.context + q].copy_(vh)
            k = kv[0, :, :, :a.context + q]
            v = kv[1, :, :, :a.context + q]
            o = F.scaled_dot_product_attention(qh, k, v, attn_mask=mask, enable_gqa=True)
            o = o.transpose(1, 2).reshape(b * q, self.h * self.d) @ L["o"]
            dist.all_reduce(o)
            if fused:
                x, h = self.c_add_norm(x, o, L["norm2"])
            else:
                x = x + o
                h = F.rms_norm(x, (a.hidden,), L["norm2"])
            gu = h @ L["gate_up"]
            if fused:
                act = self.c_silu_mul(gu)
            else:
                g, u = gu.chunk(2, dim=-1)
                act = F.silu(g) * u
            d = act @ L["down"]
            dist.all_reduce(d)
            if fused:
                nxt = self.layers[i + 1]["norm1"] if i + 1 < len(self.layers) else self.norm
                x, h = self.c_add_norm(x, d, nxt)
            else:
                x = x + d
        if not fused:
            h = F.rms_norm(x, (a.hidden,), self.norm)
        logits = h @ self.lm_head
        gathered = torch.empty((self.tp,) + tuple(logits.shape), device=self.device, dtype=logits.dtype)
        dist.all_gather_into_tensor(gathered, logits)
        return gathered.permute(1, 0, 2).reshape(b * q, -1).argmax(-1)


# The fused pieces (--fused), each compiled by torch.compile into one Triton kernel.
def _rms_norm(x, w):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)).to(x.dtype) * w


def _add_rms_norm(x, delta, w):
    r = x + delta
    rf = r.float()
    return r, (rf * torch.rsqrt(rf.pow(2).mean(-1, keepdim=True) + 1e-6)).to(x.dtype) * w


def _rope_kv(qkv, cos, sin, b: int, q: int, heads: int, kv_heads: int, d: int):
    """qkv [b*q, (heads + 2 kv_heads) d] -> rotated q [b, heads, q, d] and the K/V pair [2, b, kv_heads, q, d]."""
    qh, kh, vh = qkv.split([heads * d, kv_heads * d, kv_heads * d], dim=-1)
    qh = qh.view(b, q, heads, d).transpose(1, 2)
    kh = kh.view(b, q, kv_heads, d).transpose(1, 2)
    vh = vh.view(b, q, kv_heads, d).transpose(1, 2)
    half = d // 2
    rot = lambda t: t * cos + torch.cat([-t[..., half:], t[..., :half]], -1) * sin
    return rot(qh), torch.stack([rot(kh), vh])


def _silu_mul(gu):
    g, u = gu.chunk(2, dim=-1)
    return F.silu(g) * u


class Pass:
    """One pass shape (model, q), run eagerly or as a captured CUDA graph."""

    def __init__(self, shard, q, graph):
        self.shard, self.q = shard, q
        self.x = torch.randn(shard.a.batch * q, shard.a.hidden, device=shard.device, dtype=torch.bfloat16)
        self.graph = None
        if graph:
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                for _ in range(2):
                    self.out = shard.forward(self.x, q)
            torch.cuda.current_stream().wait_stream(s)
            self.graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.graph):
                self.out = shard.forward(self.x, q)

    def run(self):
        if self.graph is not None:
            self.graph.replay()
            return self.out
        return self.shard.forward(self.x, self.q)


def main():
    a = parse_args()
    rank = int(os.environ.get("RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    local = int(os.environ.get("LOCAL_RANK", "0"))
    if not torch.cuda.is_available():
        sys.exit("torch_tp_decode.py: no CUDA device")
    torch.cuda.set_device(local)
    device = torch.device("cuda", local)
    dist.init_process_group("nccl", device_id=device)
    os.makedirs(a.out, exist_ok=True)
    max_q = max([1] + a.verify_widths)
    target = Shard(a, a.layers, world, max_q, device)
    draft = Shard(a, 1, world, max_q, device)
    say = (lambda *m: print(f"[rank {rank}]", *m, flush=True)) if rank == 0 else (lambda *m: None)
    say(f"{world} ranks, {a.layers} layers, batch {a.batch}, context {a.context}, widths {a.verify_widths}")

    passes, skipped = {}, {}
    for mode in a.modes:
        graph = mode.endswith(".graph")
        shapes = [("decode", target, 1)] if mode.startswith("decode") else \
            [("draft", draft, 1)] + [(f"verify{n}", target, n) for n in a.verify_widths] + \
            [(f"draft_extend{n}", draft, n) for n in a.verify_widths]
        try:
            passes[mode] = {name: Pass(m, q, graph) for name, m, q in shapes}
        except Exception as e:  # capture not supported here: say so, go on with the others
            skipped[mode] = f"{type(e).__name__}: {e}"
            say(f"{mode}: skipped ({skipped[mode]})")
    torch.cuda.synchronize()
    dist.barrier()

    def decode_step(p):
        with torch.profiler.record_function("decode"):
            p["decode"].run().cpu()  # the sampled tokens back to the host, as a server does

    def spec_cycle(p, n):
        for _ in range(a.draft_steps):
            with torch.profiler.record_function("draft"):
                p["draft"].run()
        with torch.profiler.record_function("verify"):
            accepted = p[f"verify{n}"].run().cpu()  # acceptance is decided on the host
        with torch.profiler.record_function("draft_extend"):
            p[f"draft_extend{n}"].run()
        return accepted

    runs = []
    for mode, p in passes.items():
        work = [(lambda p=p: decode_step(p), None)] if mode.startswith("decode") else \
            [(lambda p=p, n=n: spec_cycle(p, n), n) for n in a.verify_widths]
        for fn, n in work:
            for _ in range(a.warmup):
                fn()
            torch.cuda.synchronize()
            runs.append(dict(mode=mode, verify_tokens=n, steps=a.steps))
    profile_dir = a.out
    activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=activities, record_shapes=True) as prof:
        for mode, p in passes.items():
            work = [(lambda p=p: decode_step(p), None)] if mode.startswith("decode") else \
                [(lambda p=p, n=n: spec_cycle(p, n), n) for n in a.verify_widths]
            for fn, n in work:
                name = f"specsim.run/{mode}" + (f"/n{n}" if n else "")
                dist.barrier()
                t0 = time.perf_counter()
                with torch.profiler.record_function(name):
                    for _ in range(a.steps):
                        fn()
                    torch.cuda.synchronize()
                say(f"{name}: {(time.perf_counter() - t0) / a.steps * 1e3:.2f} ms per step (profiled)")
    path = os.path.join(profile_dir, f"rank{rank}.trace.json")
    prof.export_chrome_trace(path)
    with open(path, "rb") as f, gzip.open(path + ".gz", "wb") as g:
        g.write(f.read())
    os.remove(path)
    if rank == 0:
        meta = dict(tool="validate/scripts/torch_tp_decode.py", torch=torch.__version__,
                    nccl=".".join(map(str, torch.cuda.nccl.version())), gpu=torch.cuda.get_device_name(device),
                    world_size=world, layers=a.layers, hidden=a.hidden, heads=a.heads, kv_heads=a.kv_heads,
                    head_dim=a.head_dim, intermediate=a.intermediate, vocab=a.vocab, batch=a.batch, fused=a.fused,
                    context=a.context, draft_steps=a.draft_steps, verify_widths=a.verify_widths,
                    steps=a.steps, runs=runs, skipped=skipped,
                    env={k: v for k, v in os.environ.items() if k.startswith("NCCL_")})
        with open(os.path.join(profile_dir, "run.json"), "w") as f:
            json.dump(meta, f, indent=1)
    say(f"wrote {profile_dir}")
    # Leave without tearing NCCL down: with collectives captured in live CUDA graphs,
    # destroy_process_group hung on the 2x H200 (torch 2.11, NCCL 2.28.9); the files are complete.
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
