#!/usr/bin/env python3
"""The PyTorch probe's graph passes (issue 38) predicted from its Kineto traces, run by run.

    scripts/torch-probe-graph-passes.py SPECSIM

For every committed torch_host_probe.py Kineto trace (traces/torch-host-probe/*.kineto.rank0.json.gz),
`SPECSIM import-profile --names pytorch` against the Llama-3.1-8B scenario at the probe's shape (TP 1,
batch 1, context 1024, 8 layers, a 4-token verify), the plain-PyTorch kernel inventory
(configs/frameworks/pytorch.textproto) and the H200 PyTorch calibration (fitted on the probe's
single ops and other traces: no pass is fitted). Prints each CUDA-graph pass's measured and
predicted busy time, then the median |error| over all of them. Deterministic."""
import glob
import json
import statistics
import subprocess
import sys


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    specsim = sys.argv[1]
    errors = []
    for path in sorted(glob.glob("traces/torch-host-probe/*.kineto.rank0.json.gz")):
        argv = [specsim, "import-profile", path, "--names", "pytorch", "--scenario",
                "configs/scenarios/llama-3.1-8b-eagle3-h200-2x.textproto",
                "--set", "model=traces/torch-kernel-probe/llama-3.1-8b-8-layers.textproto",
                "--set", "parallelism.tensor_parallel=1", "--set", "serving.batch_size=1",
                "--set", "serving.context_length=1024", "--set", "speculation.num_steps=3",
                "--set", "speculation.topk=1", "--set", "speculation.num_draft_tokens=4",
                "--set", "speculation.accept_length_histogram=1,1,1,1",
                "--set", "framework=configs/frameworks/pytorch.textproto",
                "--calibration", "configs/calibration/h200-pytorch.textproto", "--json"]
        p = subprocess.run(argv, capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"torch-probe-graph-passes: {' '.join(argv)}: exit {p.returncode}: {p.stderr[:400]}")
        run = path.split("/")[-1].split(".")[0]
        for g in json.loads(p.stdout).get("pass_predictions", []):
            if " graph" not in g["pass"] or "not_predicted" in g:
                continue
            errors.append(abs(g["error"]))
            print(f"{run:24s} {g['pass']:34s} tokens {g['tokens']:2d}  measured {g['measured_busy_us']:8.1f} us  "
                  f"predicted {g['predicted_busy_us']:8.1f} us  {100 * g['error']:+6.1f}%")
    if not errors:
        sys.exit("torch-probe-graph-passes: no graph pass predicted")
    print(f"graph passes: median |error| {100 * statistics.median(errors):.1f}% over {len(errors)} "
          f"(max {100 * max(errors):.1f}%)")


if __name__ == "__main__":
    main()
