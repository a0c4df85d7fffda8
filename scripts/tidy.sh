#!/usr/bin/env bash
# clang-tidy with the repository's .clang-tidy (a few checks that catch real bugs, and no function
# over 80 lines without a reason) over the simulator's and the benchmarks' C++ sources, tests and
# fuzz targets aside. Part of the README's test command (scripts/test.sh, after the normal build,
# whose compile_commands.json it reads); alone:
#
#   scripts/tidy.sh [--build DIR] [FILE...]     (default build/, every source of sim/ and bench/)
#
# Any finding fails (WarningsAsErrors). A deliberate exception carries its reason on the line:
# `// NOLINT(check-name): why`, or `// NOLINTNEXTLINE(check-name): why` above it.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=build
while [ $# -gt 0 ]; do
  case "$1" in
    --build) BUILD=$2; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "tidy.sh: unknown option $1 (allowed: --build DIR)" >&2; exit 2 ;;
    *) break ;;
  esac
done
if [ ! -f "$BUILD/compile_commands.json" ]; then
  echo "tidy.sh: $BUILD/compile_commands.json missing: configure and build first (scripts/test.sh does)" >&2
  exit 2
fi
if [ $# -gt 0 ]; then
  files=("$@")
else
  mapfile -t files < <(git ls-files 'sim/*.cc' 'bench/*.cc' | grep -v -e '_test\.cc$' -e '^sim/fuzz/')
fi
start=$(date +%s)
# run-clang-tidy exits non-zero when any file has a finding; -quiet keeps the passing files silent.
log=$(mktemp)
trap 'rm -f "$log"' EXIT
rc=0
run-clang-tidy -p "$BUILD" -j "$(nproc)" -quiet "${files[@]/#/$PWD/}" >"$log" 2>&1 || rc=$?
sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -v -e '^[0-9]* warnings\{0,1\} generated' -e '^Suppressed ' \
  -e '^Use -header-filter' -e '^clang-tidy-[0-9]* ' -e '^Running clang-tidy' || true
echo "tidy.sh: ${#files[@]} files in $(( $(date +%s) - start )) s: $([ "$rc" -eq 0 ] && echo clean || echo findings above)"
exit "$rc"
