#!/usr/bin/env python3
"""Checks import-profile's per-operator host costs (read off a Kineto profile's operator events,
sim/profile/host_ops.h) against the PyTorch probe's own timing of the same calls (the host's clock
around each call inside the profiled eager passes: HostOpParams.profiled_host_quantiles_us,
validate/torch_host_probe.py --kineto).

The probe's ops are Python functions; the profile's operators are the top-level aten / c10d calls.
Compared are the probe ops that run one top-level operator each (a many-operator op such as rotary,
five operators, cannot be told apart in the profile without the probe's names):
    rms_norm -> aten::rms_norm, attention -> aten::scaled_dot_product_attention,
    argmax -> aten::argmax, linear_* (5 ops) -> aten::matmul, allreduce_* (2 ops) -> c10d::allreduce_.
Where several probe ops share one operator, the probe side is their calls' mixture (each op's
distribution weighted by its calls in the pass), and its median is compared with the operator's.
An operator's cost in the profile runs from its start to the next operator's start, so it also
carries the Python between them; the probe's clock covers the Python function around the call.

Usage: check-profile-host-ops.py PROBE.json KINETO.json.gz [--specsim build/sim/tools/specsim]
Prints one row per (pass kind, operator) and the median |error|; exits 1 when the probe trace has
no profiled timings (a run without --kineto, or before 2026-12-03p)."""
import argparse
import json
import statistics
import subprocess
import sys

LAYER = ["rms_norm", "linear_qkv", "split_heads", "rotary_q", "rotary_k", "cache_write_k", "cache_write_v",
         "attention", "merge_heads", "linear_o", "allreduce_o", "add_o", "rms_norm", "linear_gate_up",
         "silu_mul", "linear_down", "allreduce_down", "add_down"]
HEAD = ["rms_norm", "linear_lm_head", "argmax"]
OPERATOR = {"rms_norm": "aten::rms_norm", "attention": "aten::scaled_dot_product_attention",
            "argmax": "aten::argmax", "linear_qkv": "aten::matmul", "linear_o": "aten::matmul",
            "linear_gate_up": "aten::matmul", "linear_down": "aten::matmul", "linear_lm_head": "aten::matmul",
            "allreduce_o": "c10d::allreduce_", "allreduce_down": "c10d::allreduce_"}
KIND = {1: "decode", 4: "verify"}


def cdf(quantiles, x):
    """F(x) of a distribution given at equally spaced quantiles, linear between them."""
    k = len(quantiles) - 1
    if x <= quantiles[0]:
        return 0.0
    if x >= quantiles[-1]:
        return 1.0
    for i in range(k):
        lo, hi = quantiles[i], quantiles[i + 1]
        if lo <= x <= hi:
            return (i + (0.5 if hi == lo else (x - lo) / (hi - lo))) / k
    return 1.0


def mixture_median(parts):
    """The median of a mixture [(weight, quantiles)] by bisection on its CDF."""
    lo = min(q[0] for _, q in parts)
    hi = max(q[-1] for _, q in parts)
    total = sum(w for w, _ in parts)
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if sum(w * cdf(q, mid) for w, q in parts) / total < 0.5:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("probe", help="the probe's trace (JSON) of the run that wrote the profile")
    p.add_argument("kineto", help="that run's Kineto trace (rank 0), .json or .json.gz")
    p.add_argument("--specsim", default="build/sim/tools/specsim", help="the specsim binary")
    a = p.parse_args()
    with open(a.probe) as f:
        probe = json.load(f)
    ops = {}
    for it in probe["items"]:
        op = it.get("host_op")
        if op and op.get("rank", 0) == 0 and op.get("profiled_host_quantiles_us"):
            ops[(op["tokens"], op["op"])] = op["profiled_host_quantiles_us"]
    if not ops:
        sys.exit(f"{a.probe}: no host-op item has profiled_host_quantiles_us (a run with --kineto, 2026-12-03p on)")
    out = subprocess.run([a.specsim, "import-profile", a.kineto, "--names", "pytorch", "--json"],
                         capture_output=True, text=True, check=True)
    profile = {(h["kind"], h["op"]): h for h in json.loads(out.stdout)["host_ops"] if h["rank"] == 0}
    program = LAYER * 8 + HEAD
    rows, errors = [], []
    for tokens, kind in KIND.items():
        for operator in sorted(set(OPERATOR.values())):
            names = [n for n in OPERATOR if OPERATOR[n] == operator]
            parts = [(program.count(n), ops[(tokens, n)]) for n in names if (tokens, n) in ops]
            h = profile.get((kind, operator))
            if not parts or h is None:
                rows.append((kind, operator, "+".join(names), None, None, None, "missing"))
                continue
            probe_us = mixture_median(parts)
            err = h["host_median_us"] / probe_us - 1
            errors.append(abs(err))
            rows.append((kind, operator, "+".join(names), probe_us, h["host_median_us"], err, f"{h['calls']} calls"))
    print(f"{'pass':7s} {'operator':36s} {'probe (its clock)':>18s} {'profile (events)':>17s} {'error':>8s}  probe ops")
    for kind, operator, names, pu, hu, err, note in rows:
        if pu is None:
            print(f"{kind:7s} {operator:36s} {'':>18s} {'':>17s} {'':>8s}  {names} ({note})")
        else:
            print(f"{kind:7s} {operator:36s} {pu:18.1f} {hu:17.1f} {100 * err:+7.1f}%  {names} ({note})")
    if errors:
        print(f"median |error| {100 * statistics.median(errors):.1f}% over {len(errors)} (max {100 * max(errors):.1f}%)")


if __name__ == "__main__":
    main()
