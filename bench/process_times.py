#!/usr/bin/env python3
"""Wall time of whole commands, as a user runs them: median, min and mean over N runs.

  bench/process_times.py [--runs N] [--warmup W] [--cpu C] -- 'command one' 'command two' ...

Each command runs W times untimed, then N times; the runs of the commands are interleaved so
that a change in the machine's load falls on all of them alike. --cpu pins every run to one CPU
(taskset), which removes migration noise on an idle many-core machine. The spawn cost of this
script itself (fork/exec from Python) is measured on /bin/true and printed, not subtracted.
For hyperfine's figures where hyperfine exists: hyperfine -N -w 5 -r 100 'command'.
"""
import argparse
import shlex
import statistics
import subprocess
import sys
import time


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=50, help="timed runs per command (default 50)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed runs per command first (default 3)")
    parser.add_argument("--cpu", type=int, default=None, help="pin every run to this CPU (taskset -c)")
    parser.add_argument("commands", nargs="+", help="commands, each one shell-quoted string")
    args = parser.parse_args()
    if args.runs < 1 or args.warmup < 0:
        parser.error("--runs must be >= 1 and --warmup >= 0")
    commands = ["/bin/true"] + args.commands
    argvs = []
    for c in commands:
        argv = shlex.split(c)
        if args.cpu is not None:
            argv = ["taskset", "-c", str(args.cpu)] + argv
        argvs.append(argv)
    times = [[] for _ in argvs]
    for r in range(args.warmup + args.runs):
        for i, argv in enumerate(argvs):
            start = time.perf_counter()
            done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            elapsed = time.perf_counter() - start
            if done.returncode != 0:
                print(f"process_times: '{commands[i]}' exited {done.returncode}", file=sys.stderr)
                return 1
            if r >= args.warmup:
                times[i].append(elapsed * 1e3)
    print(f"# {args.runs} runs each after {args.warmup} warm-up runs" +
          (f", pinned to CPU {args.cpu}" if args.cpu is not None else "") + "; ms")
    print(f"{'median':>8} {'min':>8} {'mean':>8}  command")
    for c, t in zip(commands, times):
        print(f"{statistics.median(t):8.2f} {min(t):8.2f} {statistics.mean(t):8.2f}  {c}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
