#!/usr/bin/env bash
# Runs every line of README.md's (or the given markdown file's) examples block (between <!-- examples:begin --> and
# <!-- examples:end -->) with the given specsim binary, from a scratch directory (so the bundled
# configs and committed traces must be found from anywhere), in order (later lines may read what
# earlier ones wrote there). Fails on the first line that does not exit 0, printing its output.
#   scripts/readme-examples.sh build/sim/tools/specsim [docs/your-box.md]
set -euo pipefail
specsim=$(realpath "$1")
root="$(cd "$(dirname "$0")/.." && pwd)"
readme="$root/${2:-README.md}"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mapfile -t lines < <(awk '/<!-- examples:begin -->/{f=1;next}/<!-- examples:end -->/{f=0}f' "$readme" |
  grep '^specsim ')
[ "${#lines[@]}" -gt 0 ] || { echo "readme-examples: no examples found in $readme"; exit 1; }
cd "$scratch"
n=0
for line in "${lines[@]}"; do
  n=$((n + 1))
  start=$(date +%s.%N)
  # The line's words after "specsim" (no shell syntax in the examples but "double quotes" around
  # an argument with spaces).
  eval "args=(${line#specsim })"
  if ! "$specsim" "${args[@]}" >"out.$n" 2>&1; then
    echo "readme-examples: FAILED ($n): $line"
    tail -20 "out.$n"
    exit 1
  fi
  printf 'ok %5.1f s  %s\n' "$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{print b - a}')" "${line:0:110}"
done
echo "readme-examples: ${#lines[@]} examples ran"
