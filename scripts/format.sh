#!/usr/bin/env bash
# The project's C++ / CUDA formatting (.clang-format, clang-format 14): every tracked source file.
#   scripts/format.sh           rewrite the files in place
#   scripts/format.sh --check   list the files that differ and fail (CI: scripts/test.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
FORMAT=${CLANG_FORMAT:-$(command -v clang-format-14 || command -v clang-format || true)}
if [ -z "$FORMAT" ]; then
  echo "format.sh: clang-format not found (scripts/install-deps.sh installs it)" >&2
  exit 2
fi
mapfile -t files < <(git ls-files '*.cc' '*.h' '*.cu' '*.cuh')
if [ "${1:-}" = "--check" ]; then
  # One run over every file; each difference is reported as "FILE:LINE:COL: error: ...".
  mapfile -t bad < <("$FORMAT" --style=file --dry-run --Werror "${files[@]}" 2>&1 |
                      sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error:.*/\1/p' | sort -u)
  if [ ${#bad[@]} -gt 0 ]; then
    echo "format.sh: ${#bad[@]} file(s) not formatted (run scripts/format.sh):" >&2
    printf '  %s\n' "${bad[@]}" >&2
    exit 1
  fi
  echo "format.sh: ${#files[@]} files formatted"
else
  "$FORMAT" --style=file -i "${files[@]}"
fi
