#!/usr/bin/env bash
# Builds everything and runs every test: the README's test command, and what CI runs on every
# submission.
#
#   scripts/test.sh           format check, the normal build, every test, clang-tidy
#   scripts/test.sh --full    the same, then the sanitizer build, its tests and the fuzzers
#
# Every submission:
#   1. scripts/format.sh --check (.clang-format): seconds.
#   2. the normal build ($BUILD_DIR, default build/): g++ -O2 with line tables (-g1: backtraces, no
#      variables) for the libraries, specsim, the benchmarks and specsim-validate where CUDA and
#      NCCL exist; test code at -O1 in unity batches of 8 files (cmake/SpecsimHelpers.cmake: half the
#      test objects' compile time).
#   3. every test (CTest), the hold-out accuracy bounds over ten split seeds included.
#   4. scripts/tidy.sh: clang-tidy (.clang-tidy) over the simulator's and benchmarks' sources;
#      a file found clean is not checked again while its inputs are unchanged (DIR/tidy-cache).
# --full adds what takes longer than a submission should wait for:
#   5. scripts/sanitize.sh ($BUILD_DIR-sanitize): a clang build with ASan + UBSan, every simulator
#      test under it, and each libFuzzer target of sim/fuzz for $FUZZ_SECONDS (default 30) over
#      seed corpora made from the bundled files (kept between runs in that build directory).
# Run --full before landing a change to a parser, the fabric, the executor or anything that
# indexes memory by hand; `scripts/fuzz.sh --seconds 600` fuzzes for longer.
set -euo pipefail
cd "$(dirname "$0")/.."
FULL=0
while [ $# -gt 0 ]; do
  case "$1" in
    --full) FULL=1; shift ;;
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "test.sh: unknown option $1 (allowed: --full)" >&2; exit 2 ;;
  esac
done
start=$(date +%s)
stage() { echo "test.sh: $1 ($(( $(date +%s) - start )) s so far)"; }
./scripts/install-deps.sh
./scripts/format.sh --check
BUILD=${BUILD_DIR:-build}
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG"
cmake --build "$BUILD" -j "$(nproc)"
stage "built"
ctest --test-dir "$BUILD" --output-on-failure -j "$(nproc)"
stage "tests passed"
./scripts/tidy.sh --build "$BUILD"
if [ "$FULL" -eq 1 ]; then
  SANITIZE_BUILD_DIR=${SANITIZE_BUILD_DIR:-$BUILD-sanitize} ./scripts/sanitize.sh --fuzz-seconds "${FUZZ_SECONDS:-30}"
fi
stage "done$([ "$FULL" -eq 1 ] && echo ", --full")"
