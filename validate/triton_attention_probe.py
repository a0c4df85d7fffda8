#!/usr/bin/env python3
"""Triton attention kernels with the launch geometry of SGLang's Triton backend, timed on the GPU.

SGLang's Triton attention backend (and vLLM's TRITON_MLA, derived from the same lightllm kernels)
is what MLA models run on SM120 and SM8x in both frameworks (configs/frameworks/*.textproto
attention_backends). Neither framework can be installed on the GPU machine, and their code stays
out of this repository; this probe times kernels of our own, written here from the flash-decoding
algorithm, that launch as SGLang's do (docs/reference/triton-attention-geometry.md, cited there):

  decode (q = 1)  stage 1: grid (batch, ceil(q_heads / min(BLOCK_H, G)), max_kv_splits), BLOCK_H = 16
                  query heads of one KV head per block (G = q_heads / kv_heads), BLOCK_N = 32 tokens
                  per step, 4 warps, 2 pipeline stages, each block one split of the context (split
                  lengths rounded up to 32 tokens; blocks past the last split exit), MLA's 576-wide
                  keys as a 512 + 64 pair of dots and its values taken from the key tile;
                  max_kv_splits 8, for MLA the SMs' next power of two; the splits SGLang's planner
                  picks and others (--forced-splits); stage 2: grid (batch, q_heads), each block
                  merging its head's splits over a loop of max_kv_splits (also with one split).
  verify (q > 1)  extend kernel: grid (batch, q_heads, ceil(q / BLOCK_M)), one query head per block,
                  BLOCK_M query rows, the whole cached prefix walked in BLOCK_N-token tiles (no split),
                  then the q new tokens under a causal mask; 8 warps (head dim > 64), 1 stage.
                  BLOCK_M x BLOCK_N as SGLang picks per architecture: 32 x 32 (SM120, MLA), 32 x 64
                  (SM90, MLA), 64 x 128 (SM120, head dim 128), 128 x 64 (SM90, head dim 128).

The K/V cache is a token pool read through an index array (page size 1), as SGLang's; the pools
rotate over copies past the L2 cache, as a forward pass reads each layer's cache once. Each call's
device time is the sum of its kernels' durations in a Kineto trace (one record_function range per
call): kernel time only. Items are KIND_ATTENTION with the implementation names
compute/profiled_attention.h gives these geometries ("triton_decode/16x32", "triton_extend/32x64"),
for `specsim calibrate` to fit their costs.

What differs from SGLang's kernels: no logit cap, no sliding window, no custom (tree) mask (a chain
of draft tokens is causal: SGLang skips the prefix's custom mask and reads it for the new tokens
only), no FP8 KV, no sink; the index loads, the dots, the online softmax and the stores are there.

    python3 validate/triton_attention_probe.py --out traces/x.json [--kineto DIR]
"""

import argparse
import datetime
import json
import math
import os
import platform
import statistics
import sys
import time
import types

import torch
import triton
import triton.language as tl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_host_probe as hp  # noqa: E402  (host facts, stats)
import torch_kernel_probe as kp  # noqa: E402  (kernel_times_per_range, export_gzipped, L2_BYTES)

MIN_BLOCK_KV = 32  # split lengths are multiples of this many tokens


@triton.jit
def decode_stage1(Q, K, V, kv_indptr, kv_indices, num_splits, Mid, Lse, sm_scale,
                  stride_qb, stride_qh, stride_kt, stride_kh, stride_vt, stride_vh, stride_mb, stride_mh, stride_ms,
                  G: tl.constexpr, HEADS: tl.constexpr, BLOCK_H: tl.constexpr, BLOCK_N: tl.constexpr,
                  BLOCK_D: tl.constexpr, BLOCK_DPE: tl.constexpr, BLOCK_DV: tl.constexpr,
                  LK: tl.constexpr, LV: tl.constexpr, MIN_KV: tl.constexpr, V_IN_K: tl.constexpr):
    """One split of one sequence's context for BLOCK_H query heads of one KV head. V_IN_K (MLA): the
    values are the first LV columns of the key tile already loaded (SGLang's HAS_MLA), not a second load."""
    b = tl.program_id(0)
    hb = tl.program_id(1)
    split = tl.program_id(2)
    VALID_H: tl.constexpr = BLOCK_H if BLOCK_H < G else G
    kvh = hb // tl.cdiv(G, BLOCK_H)
    heads = hb * VALID_H + tl.arange(0, BLOCK_H)
    mask_h = (heads < (hb + 1) * VALID_H) & (heads < HEADS)
    start = tl.load(kv_indptr + b)
    length = tl.load(kv_indptr + b + 1) - start
    splits = tl.load(num_splits + b)
    per_split = tl.cdiv(tl.cdiv(length, splits), MIN_KV) * MIN_KV
    lo = per_split * split
    hi = tl.minimum(lo + per_split, length)
    offs_d = tl.arange(0, BLOCK_D)
    offs_dv = tl.arange(0, BLOCK_DV)
    m_i = tl.zeros([BLOCK_H], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_H], dtype=tl.float32)
    acc = tl.zeros([BLOCK_H, BLOCK_DV], dtype=tl.float32)
    if hi > lo:
        q = tl.load(Q + b * stride_qb + heads[:, None] * stride_qh + offs_d[None, :],
                    mask=mask_h[:, None] & (offs_d[None, :] < LK), other=0.0)
        if BLOCK_DPE > 0:
            offs_pe = BLOCK_D + tl.arange(0, BLOCK_DPE)
            q_pe = tl.load(Q + b * stride_qb + heads[:, None] * stride_qh + offs_pe[None, :],
                           mask=mask_h[:, None] & (offs_pe[None, :] < LK), other=0.0)
        for n0 in range(lo, hi, BLOCK_N):
            offs_n = n0 + tl.arange(0, BLOCK_N)
            mask_n = offs_n < hi
            loc = tl.load(kv_indices + start + offs_n, mask=mask_n, other=0)
            k = tl.load(K + loc[None, :] * stride_kt + kvh * stride_kh + offs_d[:, None],
                        mask=mask_n[None, :] & (offs_d[:, None] < LK), other=0.0)
            s = tl.dot(q, k)
            if BLOCK_DPE > 0:
                k_pe = tl.load(K + loc[None, :] * stride_kt + kvh * stride_kh + offs_pe[:, None],
                               mask=mask_n[None, :] & (offs_pe[:, None] < LK), other=0.0)
                s += tl.dot(q_pe, k_pe)
            s = tl.where(mask_h[:, None] & mask_n[None, :], s * sm_scale, float("-inf"))
            if V_IN_K:
                v = tl.trans(k)
            else:
                v = tl.load(V + loc[:, None] * stride_vt + kvh * stride_vh + offs_dv[None, :],
                            mask=mask_n[:, None] & (offs_dv[None, :] < LV), other=0.0)
            m_new = tl.maximum(tl.max(s, 1), m_i)
            alpha = tl.exp(m_i - m_new)
            p = tl.exp(s - m_new[:, None])
            acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
            l_i = l_i * alpha + tl.sum(p, 1)
            m_i = m_new
        tl.store(Mid + b * stride_mb + heads[:, None] * stride_mh + split * stride_ms + offs_dv[None, :],
                 acc / l_i[:, None], mask=mask_h[:, None] & (offs_dv[None, :] < LV))
        tl.store(Lse + (b * stride_mb + heads * stride_mh + split * stride_ms) // LV, m_i + tl.log(l_i), mask=mask_h)


@triton.jit
def decode_stage2(Mid, Lse, O, kv_indptr, num_splits, stride_mb, stride_mh, stride_ms, stride_ob, stride_oh,
                  MAX_SPLITS: tl.constexpr, BLOCK_DV: tl.constexpr, LV: tl.constexpr, MIN_KV: tl.constexpr):
    """One (sequence, head): the splits' partial outputs merged by their log-sum-exp."""
    b = tl.program_id(0)
    h = tl.program_id(1)
    length = tl.load(kv_indptr + b + 1) - tl.load(kv_indptr + b)
    splits = tl.load(num_splits + b)
    per_split = tl.cdiv(tl.cdiv(length, splits), MIN_KV) * MIN_KV
    offs_dv = tl.arange(0, BLOCK_DV)
    mask_dv = offs_dv < LV
    m_i = -float("inf")
    l_i = 0.0
    acc = tl.zeros([BLOCK_DV], dtype=tl.float32)
    base = b * stride_mb + h * stride_mh
    for split in range(0, MAX_SPLITS):
        lo = per_split * split
        if lo < length:
            part = tl.load(Mid + base + split * stride_ms + offs_dv, mask=mask_dv, other=0.0)
            lse = tl.load(Lse + (base + split * stride_ms) // LV)
            m_new = tl.maximum(lse, m_i)
            alpha = tl.exp(m_i - m_new)
            w = tl.exp(lse - m_new)
            acc = acc * alpha + w * part
            l_i = l_i * alpha + w
            m_i = m_new
    tl.store(O + b * stride_ob + h * stride_oh + offs_dv, acc / l_i, mask=mask_dv)


@triton.jit
def extend_fwd(Q, K_new, V_new, O, K, V, qo_indptr, kv_indptr, kv_indices, sm_scale,
               stride_qt, stride_qh, stride_knt, stride_knh, stride_vnt, stride_vnh, stride_ot, stride_oh,
               stride_kt, stride_kh, stride_vt, stride_vh,
               G: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
               BLOCK_DPE: tl.constexpr, BLOCK_DV: tl.constexpr, LK: tl.constexpr, LV: tl.constexpr):
    """BLOCK_M new tokens of one sequence and one query head against the cached prefix, then against
    the new tokens (causal)."""
    b = tl.program_id(0)
    h = tl.program_id(1)
    mb = tl.program_id(2)
    kvh = h // G
    q_start = tl.load(qo_indptr + b)
    q_len = tl.load(qo_indptr + b + 1) - q_start
    if mb * BLOCK_M >= q_len:
        return
    kv_start = tl.load(kv_indptr + b)
    prefix = tl.load(kv_indptr + b + 1) - kv_start
    offs_m = mb * BLOCK_M + tl.arange(0, BLOCK_M)
    mask_m = offs_m < q_len
    offs_d = tl.arange(0, BLOCK_D)
    offs_dv = tl.arange(0, BLOCK_DV)
    offs_n = tl.arange(0, BLOCK_N)
    q = tl.load(Q + (q_start + offs_m)[:, None] * stride_qt + h * stride_qh + offs_d[None, :],
                mask=mask_m[:, None] & (offs_d[None, :] < LK), other=0.0)
    if BLOCK_DPE > 0:
        offs_pe = BLOCK_D + tl.arange(0, BLOCK_DPE)
        q_pe = tl.load(Q + (q_start + offs_m)[:, None] * stride_qt + h * stride_qh + offs_pe[None, :],
                       mask=mask_m[:, None], other=0.0)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_DV], dtype=tl.float32)
    for n0 in range(0, prefix, BLOCK_N):  # the cached prefix
        mask_n = (n0 + offs_n) < prefix
        loc = tl.load(kv_indices + kv_start + n0 + offs_n, mask=mask_n, other=0)
        k = tl.load(K + loc[None, :] * stride_kt + kvh * stride_kh + offs_d[:, None],
                    mask=mask_n[None, :] & (offs_d[:, None] < LK), other=0.0)
        s = tl.dot(q, k)
        if BLOCK_DPE > 0:
            k_pe = tl.load(K + loc[None, :] * stride_kt + kvh * stride_kh + offs_pe[:, None],
                           mask=mask_n[None, :], other=0.0)
            s += tl.dot(q_pe, k_pe)
        s = tl.where(mask_m[:, None] & mask_n[None, :], s * sm_scale, float("-inf"))
        m_new = tl.maximum(tl.max(s, 1), m_i)
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(V + loc[:, None] * stride_vt + kvh * stride_vh + offs_dv[None, :],
                    mask=mask_n[:, None] & (offs_dv[None, :] < LV), other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    end = tl.minimum(q_len, (mb + 1) * BLOCK_M)
    for n0 in range(0, end, BLOCK_N):  # the new tokens, causal
        mask_n = (n0 + offs_n) < end
        k = tl.load(K_new + (q_start + n0 + offs_n)[None, :] * stride_knt + kvh * stride_knh + offs_d[:, None],
                    mask=mask_n[None, :] & (offs_d[:, None] < LK), other=0.0)
        s = tl.dot(q, k)
        if BLOCK_DPE > 0:
            k_pe = tl.load(K_new + (q_start + n0 + offs_n)[None, :] * stride_knt + kvh * stride_knh +
                           offs_pe[:, None], mask=mask_n[None, :], other=0.0)
            s += tl.dot(q_pe, k_pe)
        causal = (offs_m[:, None] >= (n0 + offs_n)[None, :]) & mask_m[:, None] & mask_n[None, :]
        s = tl.where(causal, s * sm_scale, float("-inf"))
        m_new = tl.maximum(tl.max(s, 1), m_i)
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(V_new + (q_start + n0 + offs_n)[:, None] * stride_vnt + kvh * stride_vnh + offs_dv[None, :],
                    mask=mask_n[:, None] & (offs_dv[None, :] < LV), other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    tl.store(O + (q_start + offs_m)[:, None] * stride_ot + h * stride_oh + offs_dv[None, :],
             acc / l_i[:, None], mask=mask_m[:, None] & (offs_dv[None, :] < LV))


def sglang_max_splits(latent, max_splits, sm_count):
    """The decode grid's split axis (max_kv_splits): --triton-attention-num-kv-splits, raised for MLA
    to the SMs' next power of two (_mla_decode_kv_splits_cap, for a model whose context length is at
    least 32 tokens per split of that: every MLA model here)."""
    return max(max_splits, triton.next_power_of_2(sm_count)) if latent else max_splits


def sglang_splits(seqs, context, shape, max_splits, sm_count):
    """The KV splits SGLang's Triton backend gives a decode batch of equal lengths (its split planner
    as docs/reference/triton-attention-geometry.md states it): the SMs times max(log2(context / 64), 1),
    over the planner's view of the grid (sequences x heads for MLA, whose config lists as many KV
    heads as query heads; else sequences x head tiles), at most max_kv_splits; then as many splits as
    ceil(context / ceil(context / that)) give."""
    cap = sglang_max_splits(shape.latent, max_splits, sm_count)
    g = 1 if shape.latent else shape.g
    grid = seqs * (shape.q_heads if g == 1 else -(-shape.q_heads // min(16, g)))
    ext_cores = int(sm_count * max(math.log2(context / 64.0), 1.0))
    s2 = min(-(-ext_cores // grid), cap)
    chunk = -(-context // s2)
    return -(-context // chunk)


class Shape:
    """One attention shape: MLA (one latent head, keys 576 = 512 + 64 wide, values the first 512 of
    them) or GQA (head_dim wide keys and values)."""

    def __init__(self, model, q_heads, kv_heads, head_dim, v_head_dim, latent):
        self.model, self.q_heads, self.kv_heads = model, q_heads, kv_heads
        self.head_dim, self.v_head_dim, self.latent = head_dim, v_head_dim, latent

    @property
    def suffix(self):
        """The implementation names' family suffix: MLA's latent-cache kernels are their own."""
        return "_mla" if self.latent else ""

    @property
    def g(self):
        return self.q_heads // self.kv_heads

    def dims(self):
        """(BLOCK_D, BLOCK_DPE, BLOCK_DV) as SGLang splits the key width."""
        if self.head_dim == 576:
            return 512, 64, 512
        return triton.next_power_of_2(self.head_dim), 0, triton.next_power_of_2(self.v_head_dim)

    def token_bytes(self):
        """Cache bytes per token (bf16): the latent row once, or K and V."""
        return self.kv_heads * (self.head_dim if self.latent else self.head_dim + self.v_head_dim) * 2


SHAPES = {
    # Kimi-K2 (64 heads) and DeepSeek-V3 (128 heads) at TP 8: MLA's absorbed attention per GPU.
    "kimi-k2-tp8": Shape("kimi-k2", 8, 1, 576, 512, True),
    "deepseek-v3-tp8": Shape("deepseek-v3", 16, 1, 576, 512, True),
    # Llama-3.1-8B at TP 1, 2, 4 (32 query heads, 8 KV heads, head_dim 128).
    "llama-3.1-8b-tp1": Shape("llama-3.1-8b", 32, 8, 128, 128, False),
    "llama-3.1-8b-tp2": Shape("llama-3.1-8b", 16, 4, 128, 128, False),
    "llama-3.1-8b-tp4": Shape("llama-3.1-8b", 8, 2, 128, 128, False),
}
# (BLOCK_M, BLOCK_N) of the extend kernel per key width: SGLang's SM120 and SM90 choices.
EXTEND_BLOCKS = {576: [(32, 32), (32, 64)], 128: [(64, 128), (128, 64)]}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, help="trace to write (JSON mapping of proto/specsim/trace.proto)")
    p.add_argument("--kineto", metavar="DIR", help="keep the Kineto trace as DIR/rank0.json.gz")
    p.add_argument("--shapes", default=",".join(SHAPES), help="attention shapes: " + ", ".join(SHAPES))
    p.add_argument("--batches", default="1,2,4,8", help="sequences per call")
    p.add_argument("--contexts", default="512,1024,2048,4096,8192", help="cached tokens per sequence")
    p.add_argument("--widths", default="2,4,8,16", help="new tokens per sequence of the verify (extend) calls")
    p.add_argument("--max-splits", type=int, default=8,
                   help="SGLang's --triton-attention-num-kv-splits (the decode grid's split axis)")
    p.add_argument("--forced-splits", default="1,4,8,16,32,64",
                   help="decode calls also run with these split counts (besides SGLang's own), so that the "
                        "fit sees the split axis; a count above the context's 32-token chunks is skipped")
    p.add_argument("--calls", type=int, default=10, help="profiled calls per shape (after --warmup)")
    p.add_argument("--warmup", type=int, default=3)
    a = p.parse_args()
    a.shapes = [s for s in a.shapes.split(",") if s]
    unknown = [s for s in a.shapes if s not in SHAPES]
    if unknown:
        p.error(f"--shapes: unknown {unknown}; allowed: {', '.join(SHAPES)}")
    for name in ("batches", "contexts", "widths", "forced_splits"):
        setattr(a, name, [int(x) for x in getattr(a, name).split(",") if x])
    if a.max_splits < 1 or a.calls < 1 or a.warmup < 0:
        p.error("--max-splits and --calls must be >= 1, --warmup >= 0")
    return a


class Pool:
    """The KV token pool of `batch` sequences of `context` (+ `width`) tokens, in copies past L2."""

    def __init__(self, shape, batch, context, device, gen):
        tokens = batch * context
        bytes_per_copy = tokens * shape.token_bytes()
        self.copies = []
        for _ in range(max(2, math.ceil(kp.L2_BYTES / bytes_per_copy) + 1)):
            if shape.latent:
                k = torch.randn(tokens, 1, shape.head_dim, generator=gen, device=device, dtype=torch.bfloat16)
                v = k[..., :shape.v_head_dim]  # MLA: the values are the latent part of the same rows
            else:
                k = torch.randn(tokens, shape.kv_heads, shape.head_dim, generator=gen, device=device,
                                dtype=torch.bfloat16)
                v = torch.randn(tokens, shape.kv_heads, shape.v_head_dim, generator=gen, device=device,
                                dtype=torch.bfloat16)
            self.copies.append((k, v))
        self.i = 0
        # Each sequence's tokens at consecutive slots, sequences shuffled in the pool.
        order = torch.randperm(batch, generator=torch.Generator().manual_seed(batch * 7919 + context))
        self.indices = torch.cat([torch.arange(int(s) * context, (int(s) + 1) * context) for s in order]).to(device)
        self.indptr = torch.arange(0, (batch + 1) * context, context, device=device, dtype=torch.int32)

    def next(self):
        self.i = (self.i + 1) % len(self.copies)
        return self.copies[self.i]


def decode_call(shape, pool, batch, splits, max_splits, device, gen):
    """One decode call on the pool's next copy: .both() runs stage 1 and stage 2, .stage1() stage 1
    alone; .q and .out are its query and output."""
    bd, bdpe, bdv = shape.dims()
    c = types.SimpleNamespace()
    c.q = torch.randn(batch, shape.q_heads, shape.head_dim, generator=gen, device=device, dtype=torch.bfloat16)
    mid = torch.empty(batch, shape.q_heads, max_splits, shape.v_head_dim, device=device, dtype=torch.float32)
    lse = torch.empty(batch, shape.q_heads, max_splits, device=device, dtype=torch.float32)
    c.out = torch.empty(batch, shape.q_heads, shape.v_head_dim, device=device, dtype=torch.bfloat16)
    nsplits = torch.full((batch,), splits, device=device, dtype=torch.int32)
    head_blocks = -(-shape.q_heads // min(16, shape.g))
    scale = 1.0 / math.sqrt(shape.head_dim)

    def stage1():
        k, v = pool.next()
        decode_stage1[(batch, head_blocks, max_splits)](
            c.q, k, v, pool.indptr, pool.indices, nsplits, mid, lse, scale,
            c.q.stride(0), c.q.stride(1), k.stride(0), k.stride(1), v.stride(0), v.stride(1),
            mid.stride(0), mid.stride(1), mid.stride(2),
            G=shape.g, HEADS=shape.q_heads, BLOCK_H=16, BLOCK_N=32, BLOCK_D=bd, BLOCK_DPE=bdpe, BLOCK_DV=bdv,
            LK=shape.head_dim, LV=shape.v_head_dim, MIN_KV=MIN_BLOCK_KV, V_IN_K=shape.latent and bd == shape.v_head_dim,
            num_warps=4, num_stages=2)

    def both():
        stage1()
        decode_stage2[(batch, shape.q_heads)](
            mid, lse, c.out, pool.indptr, nsplits, mid.stride(0), mid.stride(1), mid.stride(2), c.out.stride(0),
            c.out.stride(1), MAX_SPLITS=max_splits, BLOCK_DV=bdv, LV=shape.v_head_dim, MIN_KV=MIN_BLOCK_KV,
            num_warps=4, num_stages=2)
    c.stage1, c.both = stage1, both
    return c


def extend_call(shape, pool, batch, width, block_m, block_n, device, gen):
    """One verify (extend) call of `width` new tokens per sequence: .run(); .q, .k_new, .v_new, .out."""
    bd, bdpe, bdv = shape.dims()
    tokens = batch * width
    c = types.SimpleNamespace()
    c.q = torch.randn(tokens, shape.q_heads, shape.head_dim, generator=gen, device=device, dtype=torch.bfloat16)
    c.k_new = torch.randn(tokens, shape.kv_heads, shape.head_dim, generator=gen, device=device, dtype=torch.bfloat16)
    c.v_new = c.k_new[..., :shape.v_head_dim] if shape.latent else torch.randn(
        tokens, shape.kv_heads, shape.v_head_dim, generator=gen, device=device, dtype=torch.bfloat16)
    c.out = torch.empty(tokens, shape.q_heads, shape.v_head_dim, device=device, dtype=torch.bfloat16)
    qo_indptr = torch.arange(0, (batch + 1) * width, width, device=device, dtype=torch.int32)
    scale = 1.0 / math.sqrt(shape.head_dim)
    warps = 4 if shape.head_dim <= 64 else 8

    def run():
        k, v = pool.next()
        extend_fwd[(batch, shape.q_heads, -(-width // block_m))](
            c.q, c.k_new, c.v_new, c.out, k, v, qo_indptr, pool.indptr, pool.indices, scale,
            c.q.stride(0), c.q.stride(1), c.k_new.stride(0), c.k_new.stride(1), c.v_new.stride(0),
            c.v_new.stride(1), c.out.stride(0), c.out.stride(1), k.stride(0), k.stride(1), v.stride(0), v.stride(1),
            G=shape.g, BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_D=bd, BLOCK_DPE=bdpe, BLOCK_DV=bdv,
            LK=shape.head_dim, LV=shape.v_head_dim, num_warps=warps, num_stages=1)
    c.run = run
    return c


def reference(shape, q, k_seq, v_seq, prefix):
    """Float32 attention: q [t, h, d] against k_seq [s, kvh, d] / v_seq [s, kvh, dv], query row i
    seeing keys up to prefix + i."""
    kk = k_seq.float().repeat_interleave(shape.g, dim=1)
    vv = v_seq.float().repeat_interleave(shape.g, dim=1)
    s = torch.einsum("thd,shd->hts", q.float(), kk) / math.sqrt(shape.head_dim)
    t, n = q.shape[0], k_seq.shape[0]
    allowed = torch.arange(n, device=q.device)[None, :] <= (prefix + torch.arange(t, device=q.device))[:, None]
    return torch.einsum("hts,shd->thd", s.masked_fill(~allowed[None], float("-inf")).softmax(-1), vv)


def check_against_torch(shape, device):
    """Both kernels against the float32 reference on a small case (a wrong kernel would time the wrong
    work); returns the largest difference, exits above 0.05."""
    gen = torch.Generator(device=device).manual_seed(5)
    batch, context, width = 2, 300, 5
    pool = Pool(shape, batch, context, device, gen)
    k, v = pool.copies[0]
    worst = 0.0
    pool.i = len(pool.copies) - 1  # next() gives copy 0
    d = decode_call(shape, pool, batch, 3, 8, device, gen)
    d.both()
    pool.i = len(pool.copies) - 1
    e = extend_call(shape, pool, batch, width, *EXTEND_BLOCKS[shape.head_dim][0], device, gen)
    e.run()
    torch.cuda.synchronize()
    for b in range(batch):
        slots = pool.indices[pool.indptr[b]:pool.indptr[b + 1]].long()
        ref = reference(shape, d.q[b:b + 1], k[slots], v[slots], context)
        worst = max(worst, (ref - d.out[b:b + 1].float()).abs().max().item())
        rows = slice(b * width, (b + 1) * width)
        ref = reference(shape, e.q[rows], torch.cat([k[slots], e.k_new[rows]]), torch.cat([v[slots], e.v_new[rows]]),
                        context)
        worst = max(worst, (ref - e.out[rows].float()).abs().max().item())
    if not worst < 0.05:
        sys.exit(f"triton_attention_probe.py: {shape.model} kernels disagree with the float32 reference by {worst:.3g}")
    return worst


def calls_of(a, device, sm_count, say):
    """Every call to time: (label, item fields, callable, stage-1-alone callable or None)."""
    gen = torch.Generator(device=device).manual_seed(3)
    out = []
    for name in a.shapes:
        shape = SHAPES[name]
        for b in a.batches:
            for ctx in a.contexts:
                pool = Pool(shape, b, ctx, device, gen)
                own = sglang_splits(b, ctx, shape, a.max_splits, sm_count)
                cap = sglang_max_splits(shape.latent, a.max_splits, sm_count)
                for splits in sorted({own} | {s for s in a.forced_splits if s * MIN_BLOCK_KV <= ctx and s <= cap}):
                    grid_splits = cap
                    c = decode_call(shape, pool, b, splits, grid_splits, device, gen)
                    impl = f"triton_decode{shape.suffix}/16x32"
                    label = f"{impl}/{name}/b{b}/s{ctx}/k{splits}"
                    out.append((label, dict(shape=shape, batch=b, q=1, context=ctx, splits=splits,
                                            implementation=impl, sglang_splits=splits == own),
                                c.both, c.stage1))
                for q in a.widths:
                    for bm, bn in EXTEND_BLOCKS[shape.head_dim]:
                        c = extend_call(shape, pool, b, q, bm, bn, device, gen)
                        impl = f"triton_extend{shape.suffix}/{bm}x{bn}"
                        out.append((f"{impl}/{name}/b{b}/s{ctx}/q{q}",
                                    dict(shape=shape, batch=b, q=q, context=ctx + q, splits=1, implementation=impl,
                                         sglang_splits=True),
                                    c.run, None))
    say(f"{len(out)} calls over {len(a.shapes)} shapes")
    return out


def profile(a, calls, out_dir, say):
    """Warm every call up (Triton compiles each configuration once), then profile each --calls
    times, its stage 1 alone too where it has one; per label the kernels' summed device time per call."""
    for label, _, run, stage1 in calls:
        for _ in range(a.warmup):
            run()
            if stage1:
                stage1()
    torch.cuda.synchronize()
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts) as prof:
        for idx, (label, _, run, stage1) in enumerate(calls):
            for _ in range(a.calls):
                with torch.profiler.record_function(f"call/{idx}"):
                    run()
            if stage1:
                for _ in range(a.calls):
                    with torch.profiler.record_function(f"stage1/{idx}"):
                        stage1()
            torch.cuda.synchronize()
    path = kp.export_gzipped(prof, out_dir)
    per = {}
    for name, us, kernels in kp.kernel_times_per_range(path, ""):
        kind, _, idx = name.partition("/")
        if kind not in ("call", "stage1") or not idx.isdigit():
            continue
        per.setdefault((kind, int(idx)), []).append((us, kernels))
    say(f"wrote {path}")
    return per


def items_of(a, calls, per, say):
    items = []
    for idx, (label, f, _, stage1) in enumerate(calls):
        times = [us for us, _ in per.get(("call", idx), []) if us > 0]
        if len(times) < max(1, a.calls // 2):
            say(f"{label}: {len(times)} of {a.calls} calls had kernels: skipped")
            continue
        shape = f["shape"]
        kv_bytes = f["batch"] * f["context"] * shape.token_bytes()
        params = dict(batch=f["batch"], query_tokens=f["q"], context=str(f["context"]), q_heads=shape.q_heads,
                      kv_heads=shape.kv_heads, head_dim=shape.head_dim, v_head_dim=shape.v_head_dim,
                      kv_shared=shape.latent, dtype="DTYPE_BF16", kv_bytes=str(kv_bytes), splits=f["splits"],
                      model=shape.model, gpu=0, implementation=f["implementation"], kernel_time_only=True)
        if stage1 and f["splits"] > 1:
            main = [us for us, _ in per.get(("stage1", idx), []) if us > 0]
            if main:
                params["main_kernel_median_us"] = statistics.median(main)
        median = statistics.median(times)
        items.append(dict(suite="SUITE_KERNELS", name=f"kernels/attention/{label}", kind="KIND_ATTENTION",
                          attention=params, stats=hp.stats_of(times, "kineto_kernels", a.warmup),
                          gbps=kv_bytes / (median * 1e-6) / 1e9))
    return items


def main():
    a = parse_args()
    if not torch.cuda.is_available():
        sys.exit("triton_attention_probe.py: no CUDA device")
    device = torch.device("cuda", 0)
    torch.cuda.set_device(device)
    props = torch.cuda.get_device_properties(device)
    framework = f"pytorch {torch.__version__}, triton {triton.__version__}, python {platform.python_version()}"
    say = lambda *m: print(*m, flush=True)  # noqa: E731
    started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    t0 = time.monotonic()
    say(f"{torch.cuda.get_device_name(device)} ({props.multi_processor_count} SMs); {framework}")
    for name in a.shapes:
        say(f"{name}: kernels agree with the float32 reference within {check_against_torch(SHAPES[name], device):.3g}")
    calls = calls_of(a, device, props.multi_processor_count, say)
    work = a.kineto or os.path.dirname(os.path.abspath(a.out))
    per = profile(a, calls, work, say)
    items = items_of(a, calls, per, say)
    env = hp.environment([device.index or 0])
    trace = dict(schema_version=1, tool="validate/triton_attention_probe.py", tool_version=framework,
                 command_line=" ".join(sys.argv), started_at_utc=started, wall_seconds=time.monotonic() - t0,
                 environment=env, items=items,
                 notes=[dict(severity="INFO", suite="kernels",
                             message=f"Triton kernels of our own with SGLang's Triton-backend launch geometry "
                                     f"(docs/reference/triton-attention-geometry.md): shapes {a.shapes}, batches "
                                     f"{a.batches}, contexts {a.contexts}, verify widths {a.widths}, decode splits "
                                     f"SGLang's (max {a.max_splits}) and {a.forced_splits}; kernel time from Kineto")])
    with open(a.out, "w") as f:
        json.dump(trace, f, indent=1)
    say(f"wrote {a.out} ({len(items)} items) in {time.monotonic() - t0:.0f} s")
    # The table: batch 1, median us per context, for SGLang's own decode splits and 4-token verifies.
    say(f"{'implementation':22s} {'shape':18s} q  " + " ".join(f"s{c:>6d}" for c in a.contexts))
    rows = {}
    for idx, (label, f, _, _) in enumerate(calls):
        times = [us for us, _ in per.get(("call", idx), []) if us > 0]
        if f["batch"] != 1 or not times or (f["q"] == 1 and not f["sglang_splits"]) or f["q"] not in (1, 4):
            continue
        key = (f["implementation"], label.split("/")[2], f["q"])
        rows.setdefault(key, {})[f["context"] - (f["q"] if f["q"] > 1 else 0)] = statistics.median(times)
    for (impl, shape, q), by in sorted(rows.items()):
        say(f"{impl:22s} {shape:18s} q{q} " + " ".join(f"{by.get(c, float('nan')):7.1f}" for c in a.contexts))

if __name__ == "__main__":
    main()
