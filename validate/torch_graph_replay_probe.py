#!/usr/bin/env python3
"""The host cost of a CUDA graph replay as a piecewise-captured Python framework pays it.

What it stands for: vLLM's PIECEWISE passes replay one graph per piece (a layer's ops between two
attention calls: L + 1 replays per pass), each through its CUDA-graph wrapper's replay path, which
vllm-project/vllm vllm/compilation/cuda_graph.py @018fe84 (CUDAGraphWrapper.__call__) shows as:
read the forward context (a module-level object) and its batch descriptor and runtime mode, check
the mode against the wrapper's, look the descriptor up in the wrapper's entries (a dict keyed by
vllm/forward_context.py's BatchDescriptor, a NamedTuple), replay the entry's graph, return its
kept output. configs/frameworks/vllm*.textproto had no measurement of that path
(graph_replay_host_us UNMEASURED, a range from a bare replay to a bare replay plus one eager op).

Measured here, on this host, as the torch probe times its ops (validate/torch_host_probe.py: each
call on time.perf_counter_ns while a spin kernel holds the GPU, so no call waits for the GPU; the
first call of each batch of --batch-calls is not a sample):
  KIND_HOST_OP graph_replay/k{K}        torch.cuda.CUDAGraph.replay() of a graph of K small kernels
  KIND_HOST_OP wrapper_replay/k{K}      the same replay through WrapperEmulation below: the replay
                                        path's Python steps as the source reads, written here (not
                                        vLLM's code; no vLLM installed on the GPU machine)
  KIND_HOST_OP eager_add                one eager torch.add, the eager op of the same pass
each alone (32 calls in a row) and mixed (calls drawn at random among the three kinds: the
piecewise pass interleaves its replays with eager attention calls).
What it is not: vLLM's own wrapper (its interpreter state, its torch.compile'd caller), nor the
attention op's cost between replays (eager_op_host_us).

Writes OUT (a specsim.trace.Trace in protobuf's JSON mapping) and prints a table.

Status: written 2026-12-05 and not yet run (no GPU machine could be started after it was written;
it reuses validate/torch_host_probe.py's timing, which ran). Its first run decides
graph_replay_host_us of configs/frameworks/vllm*.textproto (today a range, 4.88-41.24 us).

    python3 validate/torch_graph_replay_probe.py --out traces/torch-graph-replay/x.json
"""

import argparse
import dataclasses
import datetime
import enum
import json
import os
import statistics
import sys
import time
from typing import NamedTuple

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_host_probe as thp  # noqa: E402  (the torch probe's timing protocol and helpers)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, help="trace to write (JSON mapping of proto/specsim/trace.proto)")
    p.add_argument("--kernels", default="1,8,32", help="kernels per captured graph (a piece: a layer's ops)")
    p.add_argument("--hidden", type=int, default=4096, help="elements per kernel's tensor (bf16)")
    p.add_argument("--samples", type=int, default=640, help="timed calls per callable")
    p.add_argument("--batch-calls", type=int, default=32, help="calls per spin-gated batch")
    a = p.parse_args()
    a.kernel_counts = [int(k) for k in a.kernels.split(",")]
    if any(k < 1 for k in a.kernel_counts) or a.samples < 10 or a.batch_calls < 2:
        p.error("--kernels: counts >= 1; --samples >= 10; --batch-calls >= 2")
    return a


class Mode(enum.Enum):
    NONE = 0
    PIECEWISE = 1
    FULL = 2


class Descriptor(NamedTuple):
    """A dispatch key of the fields forward_context.py's BatchDescriptor holds."""
    num_tokens: int
    num_reqs: int | None = None
    uniform: bool = False
    has_lora: bool = False
    num_active_loras: int = 0


@dataclasses.dataclass
class Context:
    batch_descriptor: Descriptor
    cudagraph_runtime_mode: Mode


_CONTEXT = None


def current_context():
    assert _CONTEXT is not None, "no forward context"
    return _CONTEXT


@dataclasses.dataclass
class Entry:
    descriptor: Descriptor
    graph: torch.cuda.CUDAGraph
    output: torch.Tensor


class WrapperEmulation:
    """The replay path of a piecewise CUDA-graph wrapper, step by step as the source has it."""

    def __init__(self, graph, output, descriptor, mode):
        self.mode = mode
        self.debugging = False
        self.entries = {descriptor: Entry(descriptor, graph, output)}

    def __call__(self, *args):
        context = current_context()
        descriptor = context.batch_descriptor
        mode = context.cudagraph_runtime_mode
        if mode == Mode.NONE or mode != self.mode:
            raise RuntimeError("not a replay")
        assert descriptor is not None
        if descriptor not in self.entries:
            raise RuntimeError("not captured")
        entry = self.entries[descriptor]
        if entry.graph is None:
            raise RuntimeError("not captured")
        if self.debugging:
            raise RuntimeError("debug checks not emulated")
        entry.graph.replay()
        return entry.output


def main():
    global _CONTEXT
    a = parse_args()
    if not torch.cuda.is_available():
        sys.exit("torch_graph_replay_probe.py: no CUDA device")
    device = torch.device("cuda", 0)
    torch.cuda.set_device(device)
    started = datetime.datetime.now(datetime.timezone.utc).isoformat()
    t_start = time.monotonic()
    cycles_per_us = thp.spin_cycles_per_us(device)
    a.batch, a.host_context, a.call_correlation = 1, "mixed", 0.0
    framework = f"torch {torch.__version__}, Python {sys.version.split()[0]}"
    x = torch.randn(1, a.hidden, device=device, dtype=torch.bfloat16)
    y = torch.randn(1, a.hidden, device=device, dtype=torch.bfloat16)
    descriptor = Descriptor(num_tokens=8, num_reqs=None, uniform=False)
    _CONTEXT = Context(descriptor, Mode.PIECEWISE)

    callables = {}  # name -> (op class, shape, callable)
    keep = []
    for k in a.kernel_counts:
        out = torch.empty_like(x)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            torch.add(x, y, out=out)
        torch.cuda.current_stream().wait_stream(side)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for _ in range(k):
                torch.add(out, y, out=out)
        g.replay()
        torch.cuda.synchronize()
        wrapper = WrapperEmulation(g, out, descriptor, Mode.PIECEWISE)
        keep.append((g, out, wrapper))
        callables[f"graph_replay/k{k}"] = ("graph_launch", f"a graph of {k} bf16 adds of [1, {a.hidden}]", g.replay)
        callables[f"wrapper_replay/k{k}"] = (
            "graph_launch", f"the piecewise wrapper's replay path (emulated) around a graph of {k} adds",
            lambda w=wrapper: w(x, y))
    callables["eager_add"] = ("kernel", f"torch.add of [1, {a.hidden}] bf16", lambda: torch.add(x, y))

    for fn in [c for _, _, c in callables.values()]:  # warm every path
        for _ in range(20):
            fn()
    torch.cuda.synchronize()
    mixed = thp.time_ops_mixed({n: c for n, (_, _, c) in callables.items()}, a, cycles_per_us, seed=1,
                               samples_per_op=a.samples)
    items = []
    for name, (cls, shape, fn) in callables.items():
        it = thp.op_item(0, name, cls, shape, fn, a, framework, cycles_per_us, 1, mixed=mixed[name])
        it["name"] = f"host_op/{name}/rank0"
        items.append(it)
    rows = []
    for it in items:
        op = it["host_op"]
        alone = op["alone_host_quantiles_us"]
        mixed_q = op["host_quantiles_us"]
        rows.append((op["op"], alone[10], mixed_q[10], mixed_q[18], op["kernels"]))
    trace = dict(schema_version=1, tool="validate/torch_graph_replay_probe.py", tool_version=framework,
                 command_line=" ".join(sys.argv), started_at_utc=started, wall_seconds=time.monotonic() - t_start,
                 environment=thp.environment([0]), items=items,
                 notes=[dict(severity="INFO", suite="pacing",
                             message="wrapper_replay: an emulation of the replay path of vLLM's CUDAGraphWrapper "
                                     "(vllm/compilation/cuda_graph.py @018fe84), not vLLM's code")])
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w") as f:
        json.dump(trace, f, indent=1)
    print(f"wrote {a.out} ({len(items)} items, {time.monotonic() - t_start:.0f} s)")
    print(f"{'callable':22s} {'alone median':>13s} {'mixed median':>13s} {'mixed p90':>10s} {'kernels':>8s}  (host us)")
    for name, al, mm, m90, kern in rows:
        print(f"{name:22s} {al:13.2f} {mm:13.2f} {m90:10.2f} {kern:8d}")
    for k in a.kernel_counts:
        bare = statistics.median(mixed[f"graph_replay/k{k}"])
        wrapped = statistics.median(mixed[f"wrapper_replay/k{k}"])
        print(f"k{k}: the wrapper's path adds {wrapped - bare:.2f} us to a bare replay's {bare:.2f} us (mixed medians)")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
