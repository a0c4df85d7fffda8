#!/usr/bin/env python3
"""The cache keys of scripts/tidy.sh: one line "FILE KEY" per source file given.

A file's key is the SHA-256 of everything clang-tidy's verdict on it depends on: its compile
command, the content of the source and of every header its object was built from (ninja's
dependency log of BUILD, which lists system headers too), .clang-tidy and clang-tidy's version.
A file whose object is not in the log yet (never built) gets the key "-": always checked.

    scripts/tidy-cache.py BUILD TIDY_VERSION FILE...
"""
import hashlib
import json
import os
import subprocess
import sys


def main():
    build, tidy_version, files = sys.argv[1], sys.argv[2], sys.argv[3:]
    with open(os.path.join(build, "compile_commands.json")) as f:
        commands = {os.path.realpath(e["file"]): e for e in json.load(f)}
    with open(".clang-tidy", "rb") as f:
        setup = hashlib.sha256(f.read() + tidy_version.encode()).hexdigest()

    objects = {}
    for path in files:
        entry = commands.get(os.path.realpath(path))
        if entry is None:
            continue
        args = entry.get("command", "").split()
        obj = entry.get("output") or (args[args.index("-o") + 1] if "-o" in args else None)
        if obj:
            objects[path] = (obj, entry.get("command", ""))

    deps = {}
    if objects:
        out = subprocess.run(["ninja", "-C", build, "-t", "deps"] + [o for o, _ in objects.values()],
                             capture_output=True, text=True).stdout
        current = None
        for line in out.splitlines():
            if line and not line.startswith(" "):
                # "OBJ: #deps N, deps mtime M (VALID|STALE)": only a valid record is trusted.
                name, _, rest = line.partition(": ")
                current = name if "(VALID)" in rest else None
                if current:
                    deps[current] = []
            elif current and line.strip():
                deps[current].append(line.strip())

    content = {}

    def digest(p):
        if p not in content:
            try:
                with open(p, "rb") as f:
                    content[p] = hashlib.sha256(f.read()).hexdigest()
            except OSError:
                content[p] = "missing"
        return content[p]

    for path in files:
        key = "-"
        if path in objects and objects[path][0] in deps:
            obj, command = objects[path]
            h = hashlib.sha256((setup + command).encode())
            for dep in sorted(set(deps[obj])):
                # Generated headers are listed relative to the build directory.
                h.update((dep + digest(dep if os.path.isabs(dep) else os.path.join(build, dep))).encode())
            key = h.hexdigest()
        print(path, key)


if __name__ == "__main__":
    main()
