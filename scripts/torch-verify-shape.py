#!/usr/bin/env python3
"""The PyTorch probe's verify pass against the model, width by width (issue 40's verify shape).

    scripts/torch-verify-shape.py SPECSIM [FRAMEWORK]

Runs `SPECSIM import-profile` on traces/torch-kernel-probe/h200-1x-2026-12-04.kineto.rank0.json.gz
(the probe's unfused 8-layer Llama verify pass, one CUDA graph per width q = 1..64) against the
Llama-3.1-8B scenario at the probe's shape (TP 1, batch 1, context 1024, 8 layers) with the H200
PyTorch calibration and FRAMEWORK's kernel inventory (default configs/frameworks/pytorch.textproto:
PyTorch's separate kernels), and prints per width the measured busy time, the prediction and the
shape time(q) / time(1) of both, then the median errors: all widths, and the widths q >= 16
(nothing in the model is fitted on these passes at any width: the calibration comes from other
traces). Deterministic."""
import json
import statistics
import subprocess
import sys

ROOT = "traces/torch-kernel-probe/"


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    specsim = sys.argv[1]
    framework = sys.argv[2] if len(sys.argv) == 3 else "configs/frameworks/pytorch.textproto"
    argv = [specsim, "import-profile", ROOT + "h200-1x-2026-12-04.kineto.rank0.json.gz", "--name-map",
            ROOT + "pass-names.textproto", "--scenario", "configs/scenarios/llama-3.1-8b-eagle3-h200-2x.textproto",
            "--set", "model=" + ROOT + "llama-3.1-8b-8-layers.textproto", "--set", "parallelism.tensor_parallel=1",
            "--set", "serving.batch_size=1", "--set", "serving.context_length=1024", "--set", "framework=" + framework,
            "--calibration", "configs/calibration/h200-pytorch.textproto", "--json"]
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"torch-verify-shape: {' '.join(argv)}: exit {p.returncode}: {p.stderr[:400]}")
    rows = {}
    for g in json.loads(p.stdout)["pass_predictions"]:
        if "not_predicted" in g:
            sys.exit(f"torch-verify-shape: {g['pass']} not predicted: {g['not_predicted']}")
        rows[g["tokens"]] = (g["measured_busy_us"], g["predicted_busy_us"])
    if 1 not in rows:
        sys.exit("torch-verify-shape: no q = 1 pass predicted")
    m1, p1 = rows[1]
    print(f"{'q':>3} {'measured us':>12} {'predicted us':>13} {'error':>7} {'measured/q1':>12} {'predicted/q1':>13} "
          f"{'shape error':>12}")
    errors, shape_errors, held = [], [], []
    for q in sorted(rows):
        m, pr = rows[q]
        e = pr / m - 1
        errors.append(abs(e))
        if q >= 16:
            held.append(abs(e))
        line = f"{q:>3} {m:>12.1f} {pr:>13.1f} {100 * e:>+6.1f}% {m / m1:>12.3f} {pr / p1:>13.3f}"
        if q > 1:
            se = (pr / p1) / (m / m1) - 1
            shape_errors.append(abs(se))
            line += f" {100 * se:>+11.1f}%"
        print(line)
    print(f"median |error|: passes {100 * statistics.median(errors):.1f}% (all widths), "
          f"{100 * statistics.median(held):.1f}% (q >= 16); shape time(q)/time(1) "
          f"{100 * statistics.median(shape_errors):.1f}% (q >= 2), max {100 * max(shape_errors):.1f}%")


if __name__ == "__main__":
    main()
