#!/usr/bin/env bash
# Builds libflashinfer_probe.so: validate/flashinfer_probe/flashinfer_probe.cu compiled against a
# FlashInfer checkout's header-only include/ directory (kept out of this repository: the library's
# rule for public code). The checkout's commit is written beside the library for the trace.
#
#   validate/flashinfer_probe/build.sh FLASHINFER_INCLUDE_DIR OUT_DIR [ARCHS]
#
# FLASHINFER_INCLUDE_DIR: the checkout's include/ (holding flashinfer/attention/prefill.cuh).
# ARCHS: nvcc -gencode targets, default "sm_90" (the GPU machine's H200). One compile takes a few
# minutes per arch (12 kernel instantiations: CTA_TILE_Q 16/64/128 x the KV tiles x two masks).
set -euo pipefail
usage() { sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }
[[ "${1:-}" == "-h" || "${1:-}" == "--help" ]] && usage 0
[[ $# -lt 2 ]] && { echo "build.sh: need FLASHINFER_INCLUDE_DIR and OUT_DIR" >&2; usage 2 >&2; }
inc="$1"; out="$2"; archs="${3:-sm_90}"
[[ -f "$inc/flashinfer/attention/prefill.cuh" ]] || {
  echo "build.sh: $inc/flashinfer/attention/prefill.cuh not found (give a FlashInfer checkout's include/)" >&2; exit 2; }
command -v nvcc >/dev/null || { echo "build.sh: nvcc not found" >&2; exit 2; }
mkdir -p "$out"
gencode=()
for a in ${archs//,/ }; do gencode+=(-gencode "arch=compute_${a#sm_},code=${a}"); done
here="$(cd "$(dirname "$0")" && pwd)"
# --resource-usage: ptxas's registers and shared memory per kernel (resident blocks per SM follow),
# kept beside the library.
nvcc -O3 -std=c++17 --expt-relaxed-constexpr -shared -Xcompiler -fPIC "${gencode[@]}" --resource-usage \
  -DFLASHINFER_ENABLE_BF16 -DNDEBUG -I"$inc" "$here/flashinfer_probe.cu" -o "$out/libflashinfer_probe.so" \
  2> "$out/resource-usage.txt" || { cat "$out/resource-usage.txt" >&2; exit 1; }
echo "built $out/libflashinfer_probe.so for $archs (ptxas resource usage: $out/resource-usage.txt)"
