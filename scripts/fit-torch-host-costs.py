#!/usr/bin/env python3
"""The PyTorch-framework host costs the SGLang and vLLM profiles take from our PyTorch probe.

Reads traces of validate/torch_host_probe.py (JSON mapping of proto/specsim/trace.proto) and prints,
per run and over the runs:
  eager_op_host_us   the per-call host cost an eager op of a decode layer pays: the mean, over one
                     layer's program (Layer.LAYER of validate/torch_host_probe.py, each op counted as
                     often as the layer calls it: rms_norm twice), of each op's median host time
                     (KIND_HOST_OP host_op/<op>/b1/q1/rank0, host_quantiles_us[10], in the trace's
                     host_context: "stream" from run n on, the pass's own order with no spin kernel
                     ahead); the value is the median over the runs, the range the runs' lowest and
                     highest.
  tensor_op_host_us  the per-call host cost of a small single-kernel tensor op (what a framework's
                     speculative cycle launches outside its passes: gathers, copies, elementwise ops,
                     argmax): the mean of the median host times of the probe's single-kernel tensor
                     ops TENSOR_OPS (residual adds, slice copies into the cache, argmax over the
                     logits), same context; median over the runs, range the runs' lowest and highest.
  bare replay        torch.cuda.CUDAGraph.replay() alone (host_op/graph_replay/b1/q1/rank0 median):
                     the low end of graph_replay_host_us (a framework adds its own work around it).
and the host each run came from (environment.cpu_model).

    scripts/fit-torch-host-costs.py traces/torch-host-probe/h200-1x-2026-12-03{n,o,p,q}.json
"""

import json
import statistics
import sys

# validate/torch_host_probe.py Layer.LAYER: one decode layer's ops in call order.
LAYER = ["rms_norm", "linear_qkv", "split_heads", "rotary_q", "rotary_k", "cache_write_k", "cache_write_v",
         "attention", "merge_heads", "linear_o", "allreduce_o", "add_o", "rms_norm", "linear_gate_up",
         "silu_mul", "linear_down", "allreduce_down", "add_down"]
# Ops of the probe that are one small kernel launched by a plain tensor op (torch_host_probe.py:
# add: x + o; cache_write: a slice's copy_; argmax: logits.argmax(-1)); rms_norm (F.rms_norm, a
# composite) and merge_heads (a view at q = 1) are left out.
TENSOR_OPS = ["add_o", "add_down", "argmax", "cache_write_k", "cache_write_v"]
MEDIAN = 10  # index of the median among the 21 quantiles (0, 0.05, ..., 1)


def median_us(items, op):
    name = f"host_op/{op}/b1/q1/rank0"
    if name not in items:
        sys.exit(f"{name}: not in the trace (a torch_host_probe.py trace of one rank at batch 1?)")
    q = items[name]["host_op"]["host_quantiles_us"]
    if len(q) != 21:
        sys.exit(f"{name}: host_quantiles_us has {len(q)} values, expected 21")
    return q[MEDIAN]


def main(paths):
    if not paths:
        sys.exit(__doc__)
    per_op, tensor, replay, hosts = [], [], [], set()
    for path in paths:
        with open(path) as f:
            trace = json.load(f)
        items = {i["name"]: i for i in trace["items"]}
        layer = statistics.fmean(median_us(items, op) for op in LAYER)
        small = statistics.fmean(median_us(items, op) for op in TENSOR_OPS)
        bare = median_us(items, "graph_replay")
        cpu = trace["environment"]["cpu_model"]
        hosts.add(cpu)
        per_op.append(layer)
        tensor.append(small)
        replay.append(bare)
        print(f"{path}: eager op {layer:.2f} us (mean of {len(LAYER)} calls' medians), tensor op {small:.2f} us "
              f"(mean of {len(TENSOR_OPS)}), bare replay {bare:.2f} us, "
              f"host {cpu!r}")
    print(f"eager_op_host_us: {statistics.median(per_op):.2f}  range [{min(per_op):.2f}, {max(per_op):.2f}]")
    print(f"tensor_op_host_us: {statistics.median(tensor):.2f}  range [{min(tensor):.2f}, {max(tensor):.2f}]")
    print(f"bare graph replay: median {statistics.median(replay):.2f}, lowest run {min(replay):.2f} us")
    print(f"host: {', '.join(sorted(hosts))}")


if __name__ == "__main__":
    main(sys.argv[1:])
