#!/usr/bin/env python3
"""What a CUDA-graph memory pool holds, measured: a Llama-shaped decode forward (layers of
Llama-3.1-8B's shape at TP 1, its LM head) captured as one CUDA graph per batch size into one
shared pool (torch.cuda.graph_pool_handle()), largest batch first, as the serving frameworks capture
their decode graphs; each graph's output (the logits) kept, as a runner keeps its output buffers.

For each capture list, the pool's size is the allocator's reserved memory after the captures minus
before (the weights, the KV cache and the static inputs are allocated before). A single graph at
the largest size isolates the forward's peak of live intermediates; the full lists add the outputs
the graphs keep. specsim's memory plan prices the pool from the same mechanism
(sim/llm/memory_plan.h CudaGraphPoolBytes); scripts/graph-pool-check.py compares.

Usage: python3 validate/torch_graph_pool_probe.py --out pool.json [--layers 4] [--context 1024]
"""
import argparse
import json
import platform
import sys

import torch
import torch.nn.functional as F

HIDDEN, HEADS, KV_HEADS, HEAD_DIM, INTER, VOCAB = 4096, 32, 8, 128, 14336, 128256


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, help="JSON file to write")
    p.add_argument("--layers", type=int, default=4, help="decoder layers (default 4)")
    p.add_argument("--context", type=int, default=1024, help="KV-cache tokens per sequence (default 1024)")
    p.add_argument("--max-sizes", default="1,8,32,64,128,256",
                   help="largest batch of each capture list measured (default 1,8,32,64,128,256)")
    return p.parse_args()


def capture_list(largest):
    """Batch sizes 1, 2, 4, 8 then every 8 up to `largest` (the shape of the frameworks' lists; the
    list the measurement uses is written to the output)."""
    sizes = [s for s in (1, 2, 4) if s < largest] + list(range(8, largest + 1, 8))
    return sorted(set(sizes + [largest]))


class Model:
    def __init__(self, layers, context, max_batch, device):
        g = torch.Generator(device=device).manual_seed(7)

        def w(*shape):
            return torch.randn(*shape, generator=g, device=device, dtype=torch.bfloat16) * 0.02

        self.layers = [dict(w_qkv=w(HIDDEN, (HEADS + 2 * KV_HEADS) * HEAD_DIM), w_o=w(HEADS * HEAD_DIM, HIDDEN),
                            w_gate_up=w(HIDDEN, 2 * INTER), w_down=w(INTER, HIDDEN),
                            kv=w(2, max_batch, KV_HEADS, context, HEAD_DIM)) for _ in range(layers)]
        self.norm = torch.ones(HIDDEN, device=device, dtype=torch.bfloat16)
        self.w_lm = w(HIDDEN, VOCAB)

    def forward(self, x):
        """Decode of x.shape[0] sequences, one token each; intermediates are locals (freed as the
        forward moves on, as a framework's forward frees them)."""
        b = x.shape[0]
        h = x
        for l in self.layers:
            r = F.rms_norm(h, (HIDDEN,), self.norm)
            q, _, _ = (r @ l["w_qkv"]).split([HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM], -1)
            q = q.view(b, 1, HEADS, HEAD_DIM).transpose(1, 2)
            attn = F.scaled_dot_product_attention(q, l["kv"][0, :b], l["kv"][1, :b], enable_gqa=True)
            h = h + attn.transpose(1, 2).reshape(b, HEADS * HEAD_DIM) @ l["w_o"]
            r = F.rms_norm(h, (HIDDEN,), self.norm)
            gate, up = (r @ l["w_gate_up"]).chunk(2, -1)
            h = h + (F.silu(gate) * up) @ l["w_down"]
        return F.rms_norm(h, (HIDDEN,), self.norm) @ self.w_lm


def measure(model, sizes, device):
    """Captures `sizes`, largest first, into one pool; the pool's reserved and allocated bytes."""
    inputs = {s: torch.randn(s, HIDDEN, device=device, dtype=torch.bfloat16) for s in sizes}
    for s in sizes:  # warm-up outside capture (cuBLAS handles, kernels loaded)
        model.forward(inputs[s])
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    reserved0, allocated0 = torch.cuda.memory_reserved(device), torch.cuda.memory_allocated(device)
    pool = torch.cuda.graph_pool_handle()
    graphs, outputs = [], []
    stream = torch.cuda.Stream(device)
    for s in sorted(sizes, reverse=True):
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, pool=pool, stream=stream):
            outputs.append(model.forward(inputs[s]))
        graphs.append(g)
    torch.cuda.synchronize()
    for g in graphs:  # replays run (the pool holds what they need)
        g.replay()
    torch.cuda.synchronize()
    item = {"sizes": sizes, "largest": max(sizes),
            "pool_reserved_bytes": torch.cuda.memory_reserved(device) - reserved0,
            "pool_allocated_bytes": torch.cuda.memory_allocated(device) - allocated0,
            "outputs_bytes": sum(o.numel() * o.element_size() for o in outputs)}
    del graphs, outputs
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    return item


def main():
    a = parse_args()
    if not torch.cuda.is_available():
        print("torch_graph_pool_probe: no CUDA device", file=sys.stderr)
        return 2
    device = torch.device("cuda", 0)
    largest = [int(s) for s in a.max_sizes.split(",")]
    model = Model(a.layers, a.context, max(largest), device)
    items = []
    for m in largest:
        for kind, sizes in (("single", [m]), ("list", capture_list(m))):
            it = measure(model, sizes, device)
            it["kind"] = kind
            items.append(it)
            print(f"{kind:6s} largest {m:4d} ({len(sizes):2d} graphs): pool reserved {it['pool_reserved_bytes'] / 2**20:9.1f}"
                  f" MiB, allocated {it['pool_allocated_bytes'] / 2**20:9.1f} MiB, outputs {it['outputs_bytes'] / 2**20:8.1f} MiB",
                  flush=True)
    out = {"probe": "torch_graph_pool_probe", "torch": torch.__version__, "cuda": torch.version.cuda,
           "gpu": torch.cuda.get_device_name(device), "host": platform.node(),
           "model": {"hidden": HIDDEN, "heads": HEADS, "kv_heads": KV_HEADS, "head_dim": HEAD_DIM,
                     "intermediate": INTER, "vocab": VOCAB, "layers": a.layers, "context": a.context,
                     "dtype": "bf16", "output": "logits [batch, vocab] bf16, kept per graph"},
           "items": items}
    with open(a.out, "w") as f:
        json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
