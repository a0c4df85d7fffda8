#!/usr/bin/env bash
# The NCCL transport model's fit and transfer check (sim/coll/nccl_step_model.h, docs/calibration.md
# "NCCL's small-message time"): protocol work fitted on the 2x H200's NCCL calls of 1-16 KiB over NVLink
# and SHM (NCCL_P2P_DISABLE=1), then fitted on one transport and checked on the other.
# Usage: scripts/nccl-transport-transfer.sh [SPECSIM] [extra nccl-transport flags, e.g. --json]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
specsim="${1:-$root/build/sim/tools/specsim}"
shift || true
exec "$specsim" nccl-transport \
  "$root/traces/h200-2x-ll-2026-11-30.pb" "$root/traces/h200-2x-simple-2026-11-30.pb" \
  "$root/traces/h200-2x-shm-ll-2026-11-30.pb" "$root/traces/h200-2x-shm-simple-2026-11-30.pb" \
  --hardware "$root/configs/hardware/h200-2x-nvlink.textproto" \
  --calibration "$root/configs/calibration/h200-2x.textproto" --max-error 0.25 "$@"
