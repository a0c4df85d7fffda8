#!/usr/bin/env python3
"""Why PyTorch ops cost the host more inside a loop than alone (a diagnostic for
validate/torch_host_probe.py, whose single-op host times under-predict its eager loops).

Times every op of the probe's decode layer three ways, host time per call (time.perf_counter_ns):
  alone, gated     the op called 32 times in a row behind a spin kernel (the probe's singles);
  alone, idle GPU  the op called 32 times in a row with the GPU idle between calls (synchronize
                   before each call): does a launch onto an idle GPU cost more?
  in the loop      each call of an eager loop of --layers layers (the probe's loop, no gate): the
                   op between the layer's other ops, as a framework runs it.
and prints, per op, the three medians, and the loop's sum of in-loop host times against its wall
clock. Writes OUT (JSON) with the three distributions per op.

    python3 validate/probes/torch_host_context.py --out ctx.json
"""

import argparse
import json
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import torch_host_probe as probe  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True)
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--iterations", type=int, default=40)
    args = p.parse_args()
    a = argparse.Namespace(hidden=4096, heads=32, kv_heads=8, head_dim=128, intermediate=14336, vocab=128256,
                           batch=1, context=1024, samples=320, batch_calls=32)
    torch.cuda.set_device(0)
    device = torch.device("cuda", 0)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT="29518", RANK="0", WORLD_SIZE="1")
    dist.init_process_group("nccl", device_id=device)
    cycles = probe.spin_cycles_per_us(device)
    layer = probe.Layer(a, 1, device, None)
    ops = layer.ops()
    out = {}
    for name, (cls, fn, _) in ops.items():
        gated = probe.time_op_host(fn, a, cycles)
        idle = []
        for _ in range(a.samples):
            torch.cuda.synchronize()
            t0 = time.perf_counter_ns()
            fn()
            idle.append((time.perf_counter_ns() - t0) / 1e3)
        out[name] = dict(cls=cls, gated=gated, idle=idle, in_loop=[])
    program = layer.program("layers", args.layers)
    walls, sums = [], []
    for i in range(args.iterations + 5):
        torch.cuda.synchronize()
        t_start = time.perf_counter_ns()
        total = 0.0
        for name in program:
            t0 = time.perf_counter_ns()
            ops[name][1]()
            dt = (time.perf_counter_ns() - t0) / 1e3
            total += dt
            if i >= 5:
                out[name]["in_loop"].append(dt)
        layer.t["x"][:1].cpu()
        if i >= 5:
            walls.append((time.perf_counter_ns() - t_start) / 1e3)
            sums.append(total)
    print(f"{'op':16s} {'gated':>8s} {'idle':>8s} {'in loop':>8s}  (host us per call, medians)")
    for name, d in out.items():
        med = lambda v: statistics.median(v) if v else 0.0
        print(f"{name:16s} {med(d['gated']):8.2f} {med(d['idle']):8.2f} {med(d['in_loop']):8.2f}")
    print(f"loop of {args.layers} layers: wall {statistics.median(walls):.1f} us, sum of in-loop op host times "
          f"{statistics.median(sums):.1f} us")
    with open(args.out, "w") as f:
        json.dump(dict(ops=out, walls=walls, sums=sums), f)
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
