#!/usr/bin/env bash
# Builds specsim and runs the main job: the README's first command.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
BUILD=${BUILD_DIR:-build}
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD" -j "$(nproc)" --target specsim
if [ $# -eq 0 ]; then set -- simulate; fi
exec "$BUILD/sim/tools/specsim" "$@"
