#!/usr/bin/env bash
# Builds everything and runs every test: the README's test command, and what CI runs.
#   1. the normal build ($BUILD_DIR, default build/): g++ -O2 with line tables (-g1: backtraces,
#      no variables, half the compile time of -g), specsim-validate where CUDA and NCCL exist, the
#      benchmarks; every test.
#   2. scripts/tidy.sh: clang-tidy (.clang-tidy) over the simulator's and benchmarks' sources.
#   3. scripts/sanitize.sh ($BUILD_DIR-sanitize): the simulator's tests under ASan + UBSan, and a
#      short run of each fuzz target.
# First, the formatter check (scripts/format.sh --check, .clang-format): seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/format.sh --check
BUILD=${BUILD_DIR:-build}
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG"
cmake --build "$BUILD" -j "$(nproc)"
ctest --test-dir "$BUILD" --output-on-failure -j "$(nproc)"
./scripts/tidy.sh --build "$BUILD"
SANITIZE_BUILD_DIR=${SANITIZE_BUILD_DIR:-$BUILD-sanitize} ./scripts/sanitize.sh
