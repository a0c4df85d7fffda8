#!/usr/bin/env bash
# Configure, build and test specsim-validate on the GPU machine, then run the full measurement.
# Writes into $OUT (default ./out): build.log, tests.log, run.log, <name>.pb, <name>.json.
# Usage (repository root): validate/scripts/device-run.sh [NAME] [extra specsim-validate flags...]
#   NAME defaults to <gpus>x-<gpu>-<date>, e.g. h200-1x-2026-11-29.
set -uo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT"
# NVLink multicast stays off (shared hosts); specsim-validate also sets NCCL_NVLS_ENABLE=0 itself.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
NGPU=$(nvidia-smi -L 2>/dev/null | wc -l)
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | awk '{print tolower($NF)}')
NAME=${1:-${GPU:-gpu}-${NGPU}x-$(date -u +%F)}
shift || true

echo "== configure + build ($(nproc) cores)"
t0=$(date +%s)
if ! { cmake -S . -B build -G Ninja -DSPECSIM_BUILD_SIM=OFF -DSPECSIM_BUILD_VALIDATE=ON &&
       cmake --build build --target specsim-validate validate_core_test validate_gpu_test -j "$(nproc)"; } \
       >"$OUT/build.log" 2>&1; then
  tail -60 "$OUT/build.log"
  exit 1
fi
echo "built in $(( $(date +%s) - t0 )) s"

echo "== tests"
build/validate/validate_core_test --gtest_brief=1 >"$OUT/tests.log" 2>&1; core=$?
timeout 300 build/validate/validate_gpu_test >>"$OUT/tests.log" 2>&1; gpu=$?
grep -E "^\[  (PASSED|FAILED|SKIPPED) " "$OUT/tests.log" | sort | uniq -c
echo "core tests rc=$core, gpu tests rc=$gpu"

echo "== measurement: $NAME"
nvidia-smi --query-gpu=name,pci.bus_id,pcie.link.gen.current,pcie.link.width.current,clocks.sm,clocks.mem,power.limit \
  --format=csv >"$OUT/run.log" 2>&1
t0=$(date +%s)
timeout "${VALIDATE_TIMEOUT:-480}" build/validate/specsim-validate --out "$OUT/$NAME.pb" "$@" >>"$OUT/run.log" 2>&1
rc=$?
echo "specsim-validate rc=$rc in $(( $(date +%s) - t0 )) s"
grep -E "^specsim-validate:|\[.*\] (error|warning)" "$OUT/run.log" | head -30
sed -n '/== specsim-validate summary ==/,$p' "$OUT/run.log"
exit $rc
