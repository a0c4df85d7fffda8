#!/usr/bin/env python3
"""Gives every attention implementation of a calibration another implementation's fitted costs.

What simulate does for a kernel nobody measured (sim/scenario/scenario.cc TransferredAttentionKernel,
compute::WithCostsOf): the kernel keeps its own launch geometry (the fields of its
attention_implementations entry other than the costs) and takes the per-step costs of a kernel of
the same class. This script writes that calibration, so that `specsim compare` checks the transfer
against measurements of the kernel itself:

    scripts/transfer-attention-costs.py configs/calibration/h200-pytorch.textproto \\
        torch_flash_fwd_splitkv/64x128+split FITTED.textproto OUT.textproto
    specsim compare traces/flashinfer-attention-probe/h200-1x-2026-12-05.json --calibration OUT.textproto

COSTS: the calibration holding SOURCE (an attention_implementations name). FITTED: a calibration
whose attention_implementations entries give the geometry (e.g. `specsim calibrate` of the measured
kernel's trace). OUT: FITTED with each entry's cost fields (COST_FIELDS, compute::WithCostsOf's
list) replaced by SOURCE's; a cost SOURCE leaves unset is written 0, as WithCostsOf copies it.
The blind check in traces/README.md (flashinfer-attention-probe) was made this way.
"""

import argparse
import re
import sys

# compute::WithCostsOf (sim/compute/attention_cost.cc): the fields it copies.
COST_FIELDS = ["ramp_ns", "memory_efficiency", "tile_ns", "row_ns", "tile_latency_ns", "row_latency_ns",
               "block_ns", "block_row_ns", "block_row_latency_ns", "combine_ns", "combine_block_ns",
               "combine_split_ns"]
ENTRY = re.compile(r"attention_implementations \{.*?\n  \}", re.S)
NUMBER = r"[-+0-9.eE]+"


def entry_name(entry):
    m = re.search(r'\n\s+name: "([^"]*)"', entry)
    return m.group(1) if m else ""


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("costs", help="calibration textproto holding SOURCE's fitted costs")
    p.add_argument("source", help="the attention implementation whose costs are transferred")
    p.add_argument("fitted", help="calibration textproto whose attention implementations keep their geometry")
    p.add_argument("out", help="calibration textproto to write")
    a = p.parse_args()
    try:
        costs_text, fitted_text = open(a.costs).read(), open(a.fitted).read()
    except OSError as e:
        sys.exit(f"transfer-attention-costs.py: {e}")
    sources = [e for e in ENTRY.findall(costs_text) if entry_name(e) == a.source]
    if len(sources) != 1:
        names = ", ".join(entry_name(e) for e in ENTRY.findall(costs_text)) or "none"
        sys.exit(f"transfer-attention-costs.py: {a.costs}: {len(sources)} attention_implementations named "
                 f"'{a.source}' (it has: {names})")
    values = {f: v for f, v in re.findall(rf"\n\s+(\w+): ({NUMBER})", sources[0]) if f in COST_FIELDS}
    changed = []

    def transfer(match):
        entry = match.group(0)
        for f in COST_FIELDS:
            entry = re.sub(rf"\n\s+{f}: {NUMBER}", "", entry)
        name_line = re.search(r'\n\s+name: "[^"]*"', entry)
        if not name_line:
            sys.exit(f"transfer-attention-costs.py: {a.fitted}: an attention_implementations entry without a name")
        changed.append(entry_name(entry))
        costs = "".join(f"\n    {f}: {values.get(f, '0')}" for f in COST_FIELDS)
        return entry[:name_line.end()] + costs + entry[name_line.end():]

    out_text = ENTRY.sub(transfer, fitted_text)
    if not changed:
        sys.exit(f"transfer-attention-costs.py: {a.fitted}: no attention_implementations entries")
    with open(a.out, "w") as f:
        f.write(f"# {a.fitted} with the costs of {a.source} from {a.costs} (scripts/transfer-attention-costs.py)\n")
        f.write(out_text)
    print(f"wrote {a.out}: {', '.join(changed)} with {a.source}'s costs")


if __name__ == "__main__":
    main()
