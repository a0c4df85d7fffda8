#!/usr/bin/env bash
# Build and test specsim-validate on the GPU machine, then run it once per NCCL environment of a list.
# Each run is preceded by a short pass with the same environment, suites and sizes (--iters 1
# --warmup 0) under NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING, whose logs the real run reads with
# --nccl-log to record the algorithm, protocol and channels NCCL picked on every NCCL item.
#
# Usage (repository root): OUT=dir validate/scripts/device-run-matrix.sh [NAME_PREFIX] [extra flags...]
#   NAME_PREFIX defaults to <gpu>-<count>x (e.g. h200-2x); the traces are named <prefix>-<env>-<date>.
#   Extra flags go to every specsim-validate call (e.g. --model ...). Not --suites, --out, --iters,
#   --warmup or --nccl-log: the script sets those.
# Environments (MATRIX_ENVS, default all, in this order):
#   default     (no extra variables)                  pcie,collectives,kernels,decode,pacing
#   shm         NCCL_P2P_DISABLE=1                    collectives,pacing,decode,kernels
#   ll          NCCL_PROTO=LL                         collectives
#   simple      NCCL_PROTO=Simple                     collectives
#   shm-ll      NCCL_P2P_DISABLE=1 NCCL_PROTO=LL      collectives
#   shm-simple  NCCL_P2P_DISABLE=1 NCCL_PROTO=Simple  collectives
# MATRIX_SUITES (e.g. decode,pacing) replaces every environment's suites; MATRIX_REPEATS=K (default
# 1) measures each environment K times in a row (traces <prefix>-<env>-<date>-r1..rK; one NCCL pick
# pass per environment), for run-to-run repeatability.
# MATRIX_TESTS=0 skips the unit and GPU tests (a second call on a machine where they already ran).
# Time: MATRIX_BUDGET_S (default 540) bounds the whole script, build included: every run is under
# `timeout`, capped by what is left of the budget, and a run that would get less than 30 s is skipped.
# Output: $OUT ends with at most 8 files: <name>.pb per environment, traces.tgz (the <name>.json
# files) and logs.tgz (build and test logs, every run's output, the NCCL logs, nvidia-smi, the table).
# Scratch files go to $WORK (default build/matrix-work). Exit code 0 when every step succeeded.
set -uo pipefail
shopt -s nullglob
OUT=${OUT:-out}
WORK=${WORK:-build/matrix-work}
BUDGET=${MATRIX_BUDGET_S:-540}
read -r -a ENVS <<<"${MATRIX_ENVS:-default shm ll simple shm-ll shm-simple}"
REPEATS=${MATRIX_REPEATS:-1}
if ! [[ $REPEATS =~ ^[1-9][0-9]*$ ]]; then
  echo "MATRIX_REPEATS=$REPEATS: must be a positive integer" >&2
  exit 2
fi
START=$(date +%s)
mkdir -p "$OUT"
rm -rf "$WORK"
mkdir -p "$WORK"
# Required on the shared NVLink hosts: no NVLink multicast (specsim-validate also sets NCCL_NVLS_ENABLE=0).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
NGPU=$(nvidia-smi -L 2>/dev/null | wc -l)
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | awk '{print tolower($NF)}')
DATE=$(date -u +%F)
PREFIX=${1:-${GPU:-gpu}-${NGPU}x}
shift || true
BIN=build/validate/specsim-validate

env_vars() {
  case $1 in
    default) echo "" ;;
    shm) echo "NCCL_P2P_DISABLE=1" ;;
    ll) echo "NCCL_PROTO=LL" ;;
    simple) echo "NCCL_PROTO=Simple" ;;
    shm-ll) echo "NCCL_P2P_DISABLE=1 NCCL_PROTO=LL" ;;
    shm-simple) echo "NCCL_P2P_DISABLE=1 NCCL_PROTO=Simple" ;;
    *) return 1 ;;
  esac
}
env_suites() {
  if [[ -n ${MATRIX_SUITES:-} ]]; then
    echo "$MATRIX_SUITES"
    return
  fi
  case $1 in
    default) echo "pcie,collectives,kernels,decode,pacing" ;;
    shm) echo "collectives,pacing,decode,kernels" ;;
    *) echo "collectives" ;;
  esac
}
# Default time limits in seconds (capped by the budget left).
env_limit() {
  case $1 in
    default) echo 300 ;;
    shm) echo 240 ;;
    *) echo 150 ;;
  esac
}
left() { echo $(( START + BUDGET - $(date +%s) )); }
# limit WANTED: WANTED capped by the budget left minus a reserve for the archives; 0 (never passed to
# `timeout`, for which 0 means no limit) when under 30 s.
limit() {
  local l=$(( $(left) - 20 ))
  (( l > $1 )) && l=$1
  (( l < 30 )) && l=0
  echo "$l"
}

TABLE="$WORK/matrix.txt"
FINISHED=0
finish() {
  (( FINISHED )) && return
  FINISHED=1
  local json=() f
  for f in "$WORK"/*.json; do [[ $f == *-picks.json ]] || json+=("${f##*/}"); done
  if (( ${#json[@]} )); then tar -czf "$OUT/traces.tgz" -C "$WORK" "${json[@]}"; fi
  tar -czf "$OUT/logs.tgz" -C "$WORK" --exclude='*.pb' --exclude='*.json' . 2>/dev/null
}
trap 'finish; exit 143' TERM INT

{
  nvidia-smi
  nvidia-smi topo -m
  nvidia-smi --query-gpu=name,pci.bus_id,pcie.link.gen.current,pcie.link.width.current,clocks.sm,clocks.mem,power.limit \
    --format=csv
} >"$WORK/nvidia-smi.txt" 2>&1

echo "== configure + build ($(nproc) cores)"
t0=$(date +%s)
tb=$(limit 400)
(( tb > 0 )) || tb=30
if ! { cmake -S . -B build -G Ninja -DSPECSIM_BUILD_SIM=OFF -DSPECSIM_BUILD_VALIDATE=ON -DCMAKE_CUDA_ARCHITECTURES=90 &&
       timeout -k 10 "$tb" cmake --build build --target specsim-validate validate_core_test validate_gpu_test \
         -j "$(nproc)"; } >"$WORK/build.log" 2>&1; then
  tail -60 "$WORK/build.log"
  finish
  exit 1
fi
echo "built in $(( $(date +%s) - t0 )) s"

status=0
if [[ ${MATRIX_TESTS:-1} != 0 ]]; then
  echo "== tests"
  timeout -k 10 60 build/validate/validate_core_test --gtest_brief=1 >"$WORK/tests.log" 2>&1; core=$?
  t=$(limit 240)
  gpu=124
  (( t > 0 )) && { timeout -k 10 "$t" build/validate/validate_gpu_test >>"$WORK/tests.log" 2>&1; gpu=$?; }
  grep -E "^\[  (PASSED|FAILED|SKIPPED) " "$WORK/tests.log" | sort | uniq -c
  echo "core tests rc=$core, gpu tests rc=$gpu"
  (( core == 0 && gpu == 0 )) || status=1
fi

printf "%-12s %5s %6s %6s %6s  %s\n" env rc secs items errors trace >"$TABLE"
for e in "${ENVS[@]}"; do
  if ! vars=$(env_vars "$e"); then
    echo "unknown environment '$e' (default shm ll simple shm-ll shm-simple)"
    status=1
    continue
  fi
  read -r -a nccl_env <<<"$vars"
  suites=$(env_suites "$e")
  base="$PREFIX-$e-$DATE"
  name=$base
  echo "== $e: ${vars:-no extra NCCL variables}; suites $suites"
  # 1. NCCL's picks: the suites with NCCL items, same sizes, one iteration.
  pick_suites=$(echo "$suites" | tr ',' '\n' | grep -E '^(collectives|pacing)$' | paste -sd, -)
  name=$base
  nccl_logs=""
  t=$(limit 150)
  if [[ -n $pick_suites && $t -gt 0 ]]; then
    env "${nccl_env[@]}" NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING NCCL_DEBUG_FILE="$WORK/$name-nccl.%p.log" \
      timeout -k 10 "$t" "$BIN" --suites "$pick_suites" --iters 1 --warmup 0 --no-json \
      --out "$WORK/$name-picks.pb" "$@" >"$WORK/$name-picks.log" 2>&1
    prc=$?
    logs=("$WORK/$name-nccl".*.log)
    nccl_logs=$(IFS=,; echo "${logs[*]}")
    echo "   pick pass rc=$prc, $(cat "${logs[@]}" /dev/null | grep -c 'Bytes -> Algo') tuning lines in ${#logs[@]} file(s)"
  fi
  # 2. The measurement (K times with MATRIX_REPEATS).
  for (( k = 1; k <= REPEATS; ++k )); do
    (( REPEATS > 1 )) && name="$base-r$k"
    t=$(limit "$(env_limit "$e")")
    if (( t == 0 )); then
      echo "   skipped: budget spent"
      printf "%-12s %5s %6s %6s %6s  %s\n" "$e" skip - - - - >>"$TABLE"
      status=1
      continue
    fi
    t0=$(date +%s)
    env "${nccl_env[@]}" timeout -k 10 "$t" "$BIN" --suites "$suites" --out "$WORK/$name.pb" \
      ${nccl_logs:+--nccl-log "$nccl_logs"} "$@" >"$WORK/$name.log" 2>&1
    rc=$?
    secs=$(( $(date +%s) - t0 ))
    (( rc == 0 )) || status=1
    [[ -f "$WORK/$name.pb" ]] && cp "$WORK/$name.pb" "$OUT/$name.pb"
    items=$(grep -oE '[0-9]+ items, [0-9]+ s' "$WORK/$name.log" | head -1 | awk '{print $1}')
    errors=$(grep -oE -- '-- notes: [0-9]+ \([0-9]+ errors\)' "$WORK/$name.log" | head -1 | sed -E 's/.*\(([0-9]+) errors\)/\1/')
    printf "%-12s %5s %6s %6s %6s  %s\n" "$e" "$rc" "$secs" "${items:--}" "${errors:-0}" \
      "$( [[ -f "$WORK/$name.pb" ]] && echo "$name.pb" || echo none)" >>"$TABLE"
    echo "   rc=$rc in $secs s"
    grep -E "^specsim-validate:|\[.*\] (error|warning)" "$WORK/$name.log" | head -20 | sed 's/^/   /'
  done
done

echo "== matrix ($(( $(date +%s) - START )) s)"
cat "$TABLE"
default_log="$WORK/$PREFIX-default-$DATE.log"
(( REPEATS > 1 )) && default_log="$WORK/$PREFIX-default-$DATE-r1.log"
if [[ -f $default_log ]]; then
  echo "== default run summary"
  sed -n '/== specsim-validate summary ==/,$p' "$default_log"
fi
finish
ls -la "$OUT"
exit $status
