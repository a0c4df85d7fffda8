#!/usr/bin/env python3
"""What one more barrier flag in a 128-byte line of host memory costs, from a host_staged trace.

Reads the rank-group custom allreduce items of `specsim-validate --suites host_staged` (JSON trace)
and prints, per flag layout, the start-barrier phase (phase_us[1]: when the last block passed the
start barrier) against the number of flags written into each line in that barrier, and the cost per
extra flag: (phase - the one-rank one-block phase) / (flags per line - 1).

  vLLM's layout (-vllmflags, block-major): a line holds 4 blocks x 8 rank slots; each barrier writes
    n x min(blocks, 4) flags per line, polled by min(blocks, 4) blocks (one warp each).
  ours (packed, rank-major): a line holds 32 blocks of one writer rank: `blocks` flags per line,
    polled by as many blocks (estimated at n = 1 only).

The estimate specsim uses (coll::kHostFlagLineWriteUs) is the median over the vLLM-layout items
with at most 2 blocks per rank (larger grids read so much that the flags queue behind the reads).

usage: scripts/host-flag-lines.py TRACE.json [TRACE.json ...]
"""
import json
import statistics
import sys


def main(paths):
    if not paths:
        print(__doc__.strip().split("\n\n")[-1], file=sys.stderr)
        return 2
    estimates = []
    for path in paths:
        try:
            with open(path) as f:
                trace = json.load(f)
        except (OSError, ValueError) as e:
            print(f"{path}: cannot read a JSON trace: {e}", file=sys.stderr)
            return 1
        items = {}
        for it in trace.get("items", []):
            c = it.get("collective", {})
            if it.get("kind") != "KIND_CUSTOM_ALLREDUCE" or not c.get("rank_groups_on_one_gpu"):
                continue
            if c.get("custom_barrier") != "BARRIER_FRAMEWORK" or c.get("implementation") != "IMPL_ONE_SHOT":
                continue
            if c.get("host_memory") == "HOST_MAPPED" or c.get("custom_load_nc") or int(c.get("host_huge_page_bytes", 0)) > 0:
                continue
            if int(c.get("custom_flag_stride_bytes", 4)) != 4 or len(c.get("phase_us", [])) < 2:
                continue
            layout = "vllm" if c.get("custom_flags_block_major") else "packed"
            items[(layout, int(c["nranks"]), int(c["blocks"]))] = float(c["phase_us"][1])
        lone = items.get(("vllm", 1, 1), items.get(("packed", 1, 1)))
        if lone is None:
            print(f"{path}: no one-rank one-block item with phases", file=sys.stderr)
            return 1
        print(f"{path}: one rank, one block passes the start barrier at {lone:.2f} us")
        print(f"  {'layout':7} {'n':>2} {'blocks':>6} {'flags/line':>10} {'phase us':>9} {'per extra flag':>14}")
        for (layout, n, blocks), phase in sorted(items.items()):
            per_line = n * min(blocks, 4) if layout == "vllm" else blocks
            # Packed with n > 1: each line takes one writer rank's blocks, and its flags wait on
            # the other ranks' lines too: no per-flag estimate.
            comparable = per_line > 1 and (layout == "vllm" or n == 1)
            extra = (phase - lone) / (per_line - 1) if comparable else float("nan")
            print(f"  {layout:7} {n:2d} {blocks:6d} {per_line:10d} {phase:9.2f} {extra:14.2f}")
            if layout == "vllm" and blocks <= 2 and per_line > 1:
                estimates.append(extra)
    if estimates:
        print(f"per extra flag, vLLM layout, <= 2 blocks: median {statistics.median(estimates):.2f} us "
              f"over {len(estimates)} items [{min(estimates):.2f}, {max(estimates):.2f}]")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
