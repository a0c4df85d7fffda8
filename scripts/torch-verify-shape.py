#!/usr/bin/env python3
"""The PyTorch probe's verify pass against the model, width by width (issue 40's verify shape).

    scripts/torch-verify-shape.py SPECSIM [--framework F] [--calibration C] [--held-out-q]
                                  [--shape qwen3-32b-tp2 [--held-out-family]]

Runs `SPECSIM import-profile` on each committed Kineto trace of the probe's verify pass
(traces/torch-kernel-probe/h200-1x-2026-12-04{,b}.kineto.rank0.json.gz: the unfused 8-layer Llama
verify pass, one CUDA graph per width q = 1..64, two runs on two lent machines) against the
Llama-3.1-8B scenario at the probe's shape (TP 1, batch 1, context 1024, 8 layers) with FRAMEWORK's
kernel inventory (default configs/frameworks/pytorch.textproto: PyTorch's separate kernels) and a
calibration, and prints per width the measured busy time, the prediction, the shape
time(q) / time(1) of both and each kernel class (measured -> predicted), then the median errors
over both runs: all widths, and the widths q >= 16.

The calibration: C, else configs/calibration/h200-pytorch.textproto (whose kernel costs were
fitted on, among others, the eager profile of the same kernels at every width), else with
--held-out-q one fitted here on nothing measured above 8 tokens per call: `specsim calibrate` on
that file's inputs with the eager profile's calls restricted by `import-profile --call-ranges`
to calls of at most 8 tokens (the layer ops at batch 1 x q <= 8 and batch 4 x q <= 2, SDPA at
q <= 8 over every batch and context, argmax over <= 8 rows) and the F.linear GEMMs of m >= 16 left
out (`--exclude`). Deterministic.

--shape qwen3-32b-tp2: the probe's pass at Qwen3-32B's TP 2 shard instead (trace
h200-1x-2026-12-04g, `torch_kernel_probe.py --verify-shape qwen3-32b-tp2`, one run; model
qwen3-32b-tp2-shard-8-layers.textproto). With --held-out-family the calibration is refitted without
any measurement of that shape: its F.linear GEMM families (qwen3-32b) left out; the eager profile's
layer ops, SDPA (32/8 heads) and norms are Llama-3.1-8B's shapes already."""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = "traces/torch-kernel-probe/"
RUNS = ["h200-1x-2026-12-04", "h200-1x-2026-12-04b"]
EAGER = ROOT + "h200-1x-2026-12-04c.eager.kineto.rank0.json.gz"
HOST_PROBES = ["traces/torch-host-probe/h200-1x-2026-12-03" + r + ".json" for r in "nopq"]
# Calls of at most 8 tokens (see the docstring); the GEMMs of 16 rows and more.
NARROW_CALLS = r"layer b1 q[1248]$|layer b4 q[12]$|sdpa[a-z-]* b[0-9]+ c[0-9]+ q[1248]$|argmax [a-z0-9]+ r[1248]$"
WIDE_GEMMS = r"/gemm/.*/m(16|32|64|128|256|512)$"
# The validate suite's own RMSNorm kernel, not PyTorch's: left out of every PyTorch calibration.
VALIDATE_NORMS = r"^h200-1x-2026-11-30/kernels/rmsnorm/"


# The pass shapes: the traces (runs) of each and the model file at the probe's shape.
SHAPES = {
    "llama-3.1-8b": (RUNS, ROOT + "llama-3.1-8b-8-layers.textproto", None),
    "qwen3-32b-tp2": (["h200-1x-2026-12-04g"], ROOT + "qwen3-32b-tp2-shard-8-layers.textproto", r"/gemm/qwen3-32b/"),
}


def run(argv):
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"torch-verify-shape: {' '.join(argv)}: exit {p.returncode}: {p.stderr[:600]}")
    return p.stdout


def held_out_calibration(specsim, work):
    eager = os.path.join(work, "eager-narrow.pb")
    out = run([specsim, "import-profile", EAGER, "--call-ranges", NARROW_CALLS, "-o", eager])
    # "wrote PATH (N items)": a range renamed in the probe would select fewer calls, silently.
    m = re.search(r"wrote \S+ \((\d+) items\)", out)
    if not m or int(m.group(1)) < 200:
        sys.exit(f"torch-verify-shape: --call-ranges selected {m.group(1) if m else 'no'} items of {EAGER} "
                 "(249 when committed): have the probe's range names changed?")
    print(f"held out by q: fitted on {m.group(1)} eager items of calls of at most 8 tokens")
    out = os.path.join(work, "held-out-q.textproto")
    run([specsim, "calibrate", "traces/h200-1x-2026-11-30.pb"] + HOST_PROBES +
        [ROOT + "h200-1x-2026-12-04.json", eager, "--exclude", VALIDATE_NORMS + "|" + WIDE_GEMMS, "-o", out])
    return out


def held_out_family_calibration(specsim, work, families):
    """h200-pytorch.textproto's inputs refitted without the F.linear GEMM families matching `families`."""
    out = os.path.join(work, "held-out-family.textproto")
    run([specsim, "calibrate", "traces/h200-1x-2026-11-30.pb"] + HOST_PROBES +
        [ROOT + "h200-1x-2026-12-04.json", ROOT + "h200-1x-2026-12-04c.eager.pb", ROOT + "h200-1x-2026-12-04f.flash.pb",
         "--exclude", VALIDATE_NORMS + "|" + families, "-o", out])
    print(f"held out by shape family: fitted without the GEMM families matching {families}")
    return out


def predict(specsim, trace, framework, calibration, model):
    argv = [specsim, "import-profile", ROOT + trace + ".kineto.rank0.json.gz", "--name-map", ROOT + "pass-names.textproto",
            "--scenario", "configs/scenarios/llama-3.1-8b-eagle3-h200-2x.textproto", "--set", "speculation.method=NONE",
            "--set", "model=" + model, "--set", "parallelism.tensor_parallel=1",
            "--set", "serving.batch_size=1", "--set", "serving.context_length=1024", "--set", "framework=" + framework,
            "--calibration", calibration, "--json"]
    rows = {}
    for g in json.loads(run(argv))["pass_predictions"]:
        if "not_predicted" in g:
            sys.exit(f"torch-verify-shape: {g['pass']} not predicted: {g['not_predicted']}")
        rows[g["tokens"]] = g
    if 1 not in rows:
        sys.exit("torch-verify-shape: no q = 1 pass predicted")
    return rows


def classes(g):
    measured, predicted = g.get("measured_class_us", {}), g.get("predicted_class_us", {})
    return "  ".join(f"{c} {measured.get(c, 0):.0f}->{predicted.get(c, 0):.0f}"
                     for c in sorted(set(measured) | set(predicted)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("specsim")
    ap.add_argument("--framework", default="configs/frameworks/pytorch.textproto")
    ap.add_argument("--calibration")
    ap.add_argument("--held-out-q", action="store_true")
    ap.add_argument("--shape", default="llama-3.1-8b", choices=sorted(SHAPES))
    ap.add_argument("--held-out-family", action="store_true",
                    help="refit the calibration without the shape's GEMM families (--shape qwen3-32b-tp2)")
    a = ap.parse_args()
    runs, model, families = SHAPES[a.shape]
    if a.held_out_family and not families:
        ap.error(f"--held-out-family: the {a.shape} pass's GEMM families are those the eager profile measured; "
                 "choose --shape qwen3-32b-tp2")
    if sum(map(bool, (a.calibration, a.held_out_q, a.held_out_family))) > 1:
        ap.error("--calibration, --held-out-q and --held-out-family choose the calibration: give one")
    with tempfile.TemporaryDirectory() as work:
        calibration = a.calibration or (held_out_calibration(a.specsim, work) if a.held_out_q
                                        else held_out_family_calibration(a.specsim, work, families) if a.held_out_family
                                        else "configs/calibration/h200-pytorch.textproto")
        errors, held, shape_errors = [], [], []
        for trace in runs:
            rows = predict(a.specsim, trace, a.framework, calibration, model)
            m1, p1 = rows[1]["measured_busy_us"], rows[1]["predicted_busy_us"]
            print(f"{trace}\n{'q':>3} {'measured us':>12} {'predicted us':>13} {'error':>7} {'measured/q1':>12} "
                  f"{'predicted/q1':>13} {'shape error':>12}  by class (measured -> predicted us)")
            for q in sorted(rows):
                m, pr = rows[q]["measured_busy_us"], rows[q]["predicted_busy_us"]
                e = pr / m - 1
                errors.append(abs(e))
                if q >= 16:
                    held.append(abs(e))
                line = f"{q:>3} {m:>12.1f} {pr:>13.1f} {100 * e:>+6.1f}% {m / m1:>12.3f} {pr / p1:>13.3f}"
                if q > 1:
                    se = (pr / p1) / (m / m1) - 1
                    shape_errors.append(abs(se))
                    line += f" {100 * se:>+11.1f}%"
                else:
                    line += " " * 12
                print(line + "  " + classes(rows[q]))
        print(f"median |error| over {len(runs)} runs: passes {100 * statistics.median(errors):.1f}% (all widths), "
              f"{100 * statistics.median(held):.1f}% (q >= 16); shape time(q)/time(1) "
              f"{100 * statistics.median(shape_errors):.1f}% (q >= 2), max {100 * max(shape_errors):.1f}%")


if __name__ == "__main__":
    main()
