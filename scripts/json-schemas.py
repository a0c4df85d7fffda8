#!/usr/bin/env python3
"""The JSON outputs of specsim's commands against their schemas (schemas/<command>.schema.json).

    scripts/json-schemas.py check SPECSIM     run every command's --json (the cases below) and
                                              validate each output against its command's schema
                                              (JSON Schema draft 7, python3-jsonschema); exit 1
                                              naming the case, the path in the output and the rule
    scripts/json-schemas.py draft SPECSIM     print, per command, a schema inferred from the cases'
                                              outputs (types, the keys every case has as required,
                                              no other keys allowed): a first draft to edit into
                                              schemas/, never the check's own reference

Run from anywhere; the cases use the repository's committed configs and traces. A command's
output gaining a key or changing a type fails the check until its schema says so: the schemas
are the documented format of `--json` (README, "Machine-readable output")."""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRACE = "traces/h200-2x-ll-2026-11-30.pb"
PROFILE = "traces/profiles/torch-tp2-h200-fused-2026-11-30/fused-b1"
LLAMA_4X = "configs/scenarios/llama-3.1-8b-eagle3-rtxpro6000-4x.textproto"


def cases(tmp):
    """(command, case name, argv after the binary)."""
    return [
        ("simulate", "simulate", ["simulate", "--json"]),
        ("simulate", "simulate --compare-algos", ["simulate", "--json", "--compare-algos"]),
        ("simulate", "simulate --memory", ["simulate", "--json", "--memory"]),
        ("collective", "collective --algo all", ["collective", "--json", "--algo", "all", "--sizes", "1K,1M"]),
        ("sweep", "sweep", ["sweep", "--json", "--no-progress", "--vary", "serving.batch_size=1,2"]),
        ("sweep", "sweep with a point that does not fit",
         ["sweep", "--json", "--no-progress", "--vary", "serving.expert_weight_dtype=INT4,BF16",
          "--set", "speculation.cycles=20"]),
        ("advise", "advise", ["advise", "--json", "--no-progress", "--scenario", LLAMA_4X]),
        ("calibrate", "calibrate", ["calibrate", "--json", TRACE, "--output", os.path.join(tmp, "c.textproto")]),
        ("compare", "compare", ["compare", "--json", TRACE]),
        ("compare", "compare --holdout --seeds 2", ["compare", "--json", TRACE, "--holdout", "0.3", "--seeds", "2"]),
        ("hardware-from-trace", "hardware-from-trace", ["hardware-from-trace", "--json", TRACE]),
        ("import-profile", "import-profile", ["import-profile", "--json", PROFILE]),
        ("nccl-transport", "nccl-transport",
         ["nccl-transport", "--json", TRACE, "traces/h200-2x-shm-ll-2026-11-30.pb", "--hardware",
          "configs/hardware/h200-2x-nvlink.textproto", "--calibration", "configs/calibration/h200-2x.textproto"]),
    ]


def run_cases(specsim):
    with tempfile.TemporaryDirectory() as tmp:
        for command, name, argv in cases(tmp):
            p = subprocess.run([specsim] + argv, cwd=ROOT, capture_output=True, text=True)
            if p.returncode != 0:
                sys.exit(f"json-schemas: {name}: exit {p.returncode}: {p.stderr[:500]}")
            yield command, name, json.loads(p.stdout)


def infer(values):
    """A schema every value of `values` meets."""
    types = set()
    for v in values:
        types.add("null" if v is None else "boolean" if isinstance(v, bool) else
                  "number" if isinstance(v, (int, float)) else "string" if isinstance(v, str) else
                  "array" if isinstance(v, list) else "object")
    s = {"type": sorted(types)[0] if len(types) == 1 else sorted(types)}
    objs = [v for v in values if isinstance(v, dict)]
    if objs:
        keys = sorted({k for o in objs for k in o})
        s["properties"] = {k: infer([o[k] for o in objs if k in o]) for k in keys}
        s["required"] = [k for k in keys if all(k in o for o in objs)]
        s["additionalProperties"] = False
    arrays = [v for v in values if isinstance(v, list)]
    items = [x for a in arrays for x in a]
    if items:
        s["items"] = infer(items)
    return s


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("check", "draft"):
        sys.exit(__doc__)
    specsim = os.path.abspath(sys.argv[2])
    if sys.argv[1] == "draft":
        by_command = {}
        for command, _, out in run_cases(specsim):
            by_command.setdefault(command, []).append(out)
        for command, outs in by_command.items():
            schema = {"$schema": "http://json-schema.org/draft-07/schema#", "title": f"specsim {command} --json"}
            schema.update(infer(outs))
            print(f"== {command}\n{json.dumps(schema, indent=1)}")
        return
    try:
        import jsonschema
    except ImportError:
        sys.exit("json-schemas: python3-jsonschema is missing (scripts/install-deps.sh installs it)")
    failed = 0
    for command, name, out in run_cases(specsim):
        path = os.path.join(ROOT, "schemas", f"{command}.schema.json")
        with open(path) as f:
            schema = json.load(f)
        errors = sorted(jsonschema.Draft7Validator(schema).iter_errors(out), key=lambda e: list(e.path))
        for e in errors[:10]:
            print(f"{name}: at {'/'.join(map(str, e.path)) or '(top)'}: {e.message[:300]} "
                  f"(schemas/{command}.schema.json: {'/'.join(map(str, e.schema_path))})")
        print(f"{'ok  ' if not errors else 'FAIL'} {name}: {len(errors)} violation(s) of schemas/{command}.schema.json")
        failed += bool(errors)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
