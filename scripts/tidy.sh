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
#
# Cached per checkout: a file found clean is not checked again while it, every header its object
# was built from (ninja's dependency log), its compile command, .clang-tidy and clang-tidy are
# unchanged (keys in DIR/tidy-cache). --no-cache checks every file.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=build
CACHE=1
while [ $# -gt 0 ]; do
  case "$1" in
    --build) BUILD=$2; shift 2 ;;
    --no-cache) CACHE=0; shift ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "tidy.sh: unknown option $1 (allowed: --build DIR, --no-cache)" >&2; exit 2 ;;
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
  mapfile -t files < <(git ls-files 'sim/*.cc' 'bench/*.cc' | grep -v -e '_test\.cc$' -e '_fuzz\.cc$' -e '^sim/fuzz/')
fi
TIDY=${CLANG_TIDY:-$(command -v clang-tidy-14 || command -v clang-tidy || true)}
if [ -z "$TIDY" ]; then
  echo "tidy.sh: clang-tidy not found (scripts/install-deps.sh installs it)" >&2
  exit 2
fi
start=$(date +%s)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The files to check, and the cache key of each (scripts/tidy-cache.py; "-": not cacheable).
declare -A key_of=()
todo=()
cached=0
if [ "$CACHE" -eq 1 ]; then
  mkdir -p "$BUILD/tidy-cache"
  while read -r f key; do
    if [ "$key" != "-" ] && [ -f "$BUILD/tidy-cache/$key" ]; then
      cached=$((cached + 1))
    else
      todo+=("$f")
      key_of[$f]=$key
    fi
  done < <(python3 scripts/tidy-cache.py "$BUILD" "$("$TIDY" --version | tr '\n' ' ')" "${files[@]}")
else
  todo=("${files[@]}")
fi
# One clang-tidy per file, as many at once as cores; a file with a finding lands in $tmp/failed.
if [ ${#todo[@]} -gt 0 ]; then
  printf '%s\n' "${todo[@]}" | xargs -P "$(nproc)" -I{} sh -c \
    '"$0" -p "$1" --quiet "{}" >"$2/$(echo "{}" | tr / _).log" 2>&1 || echo "{}" >>"$2/failed"' \
    "$TIDY" "$BUILD" "$tmp"
fi
failed=0
for f in "${todo[@]}"; do
  if grep -qxF "$f" "$tmp/failed" 2>/dev/null; then
    failed=$((failed + 1))
    sed 's/\x1b\[[0-9;]*m//g' "$tmp/$(echo "$f" | tr / _).log" |
      grep -v -e '^[0-9]* warnings\{0,1\} generated' -e '^Suppressed ' -e '^Use -header-filter' || true
  elif [ -n "${key_of[$f]:-}" ] && [ "${key_of[$f]}" != "-" ]; then
    touch "$BUILD/tidy-cache/${key_of[$f]}"
  fi
done
echo "tidy.sh: ${#files[@]} files (${cached} unchanged since found clean, ${#todo[@]} checked) in" \
  "$(( $(date +%s) - start )) s: $([ "$failed" -eq 0 ] && echo clean || echo "$failed with findings above")"
[ "$failed" -eq 0 ]
