#!/usr/bin/env bash
# Runs specsim's libFuzzer targets (sim/fuzz) over seed corpora made from the bundled files.
#
#   scripts/fuzz.sh [--seconds N] [--jobs J] [--build DIR] [TARGET...]
#
# Builds DIR (default build-fuzz) with clang, ASan + UBSan and fuzzer coverage when needed, then
# runs each TARGET (default: all) for N seconds (default 600), J targets at a time (default: the
# cores). Corpora grow in DIR/fuzz/corpus/TARGET (kept between runs); a crashing, leaking or
# hanging input (-timeout=30 s) lands in DIR/fuzz/artifacts/TARGET and fails the script; make it a
# regression test (sim/fuzz/README.md). Prints per target: executions, coverage (libFuzzer's
# cov: edges and ft: features) and the result. Needs clang and libclang-rt (scripts/install-deps.sh
# --fuzz installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=600
JOBS=$(nproc)
BUILD=build-fuzz
TARGETS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) SECONDS_EACH=$2; shift 2 ;;
    --jobs) JOBS=$2; shift 2 ;;
    --build) BUILD=$2; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1 (allowed: --seconds N, --jobs J, --build DIR, TARGET...)" >&2; exit 2 ;;
    *) TARGETS+=("$1"); shift ;;
  esac
done
ALL=(hardware_config_fuzz scenario_config_fuzz model_config_fuzz hf_config_fuzz calibration_fuzz
     framework_config_fuzz trace_fuzz kineto_fuzz flags_fuzz topo_fuzz nccl_tests_log_fuzz)
if [ ${#TARGETS[@]} -eq 0 ]; then TARGETS=("${ALL[@]}"); fi
for t in "${TARGETS[@]}"; do
  [[ " ${ALL[*]} " == *" $t "* ]] || { echo "fuzz.sh: unknown target $t (allowed: ${ALL[*]})" >&2; exit 2; }
done

./scripts/install-deps.sh --fuzz
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" -DSPECSIM_SANITIZE=address,undefined \
    -DSPECSIM_BUILD_FUZZ=ON -DSPECSIM_BUILD_BENCH=OFF -DSPECSIM_BUILD_VALIDATE=OFF >/dev/null
fi
cmake --build "$BUILD" -j "$(nproc)" --target "${TARGETS[@]}"

seeds() {  # the bundled files each target starts from
  case "$1" in
    hardware_config_fuzz) ls configs/hardware/*.textproto ;;
    scenario_config_fuzz) ls configs/scenarios/*.textproto ;;
    model_config_fuzz) ls models/*.textproto ;;
    hf_config_fuzz) ls models/hf/*.json ;;
    calibration_fuzz) ls configs/calibration/*.textproto ;;
    framework_config_fuzz) ls configs/frameworks/*.textproto ;;
    trace_fuzz) ls traces/*.pb ;;
    kineto_fuzz) ls sim/profile/testdata/*.json ;;
    topo_fuzz) ls sim/io/testdata/topo/*.txt traces/topo/*/*.txt traces/topo/*/*.csv ;;
    nccl_tests_log_fuzz) ls traces/nccl-tests/*/*.log ;;
    flags_fuzz) ;;
  esac
}

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
LOGS="$BUILD/fuzz/logs"
mkdir -p "$LOGS"
run_one() {
  local t=$1 corpus="$BUILD/fuzz/corpus/$1" artifacts="$BUILD/fuzz/artifacts/$1/"
  mkdir -p "$corpus" "$artifacts"
  for f in $(seeds "$t"); do cp -n "$f" "$corpus/seed-$(basename "$f")"; done
  if "$BUILD/sim/fuzz/$t" -max_total_time="$SECONDS_EACH" -timeout=30 -rss_limit_mb=4096 -max_len=262144 \
       -print_final_stats=1 -artifact_prefix="$artifacts" "$corpus" >"$LOGS/$t.log" 2>&1; then
    echo ok >"$LOGS/$t.result"
  else
    echo "FAILED: $(ls -t "$artifacts" | head -1)" >"$LOGS/$t.result"  # the newest finding
  fi
}
pids=()
for t in "${TARGETS[@]}"; do
  run_one "$t" &
  pids+=($!)
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do sleep 1; done
done
wait "${pids[@]}" || true

status=0
printf '%-22s %12s %8s %8s %7s  %s\n' target executions cov ft corpus result
for t in "${TARGETS[@]}"; do
  log="$LOGS/$t.log"
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo "?")
  ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo "?")
  corpus=$(ls "$BUILD/fuzz/corpus/$t" | wc -l)
  result=$(cat "$LOGS/$t.result" 2>/dev/null || echo "no result")
  printf '%-22s %12s %8s %8s %7s  %s\n' "$t" "$execs" "$cov" "$ft" "$corpus" "$result"
  [ "$result" = ok ] || { status=1; echo "  log: $log"; }
done
exit $status
