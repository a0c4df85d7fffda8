#!/usr/bin/env bash
# Builds libflashinfer_probe.so: validate/flashinfer_probe/flashinfer_probe.cu compiled against a
# FlashInfer checkout's header-only include/ directory (kept out of this repository: the library's
# rule for public code).
#
#   validate/flashinfer_probe/build.sh --git GIT_DIR COMMIT OUT_DIR [ARCHS]
#   validate/flashinfer_probe/build.sh FLASHINFER_INCLUDE_DIR OUT_DIR [ARCHS]
#
# --git: takes include/ of COMMIT from a FlashInfer git directory (a clone or `fetch`'s mirror) into
# OUT_DIR/include, writes OUT_DIR/flashinfer-commit, and builds from it. Since 6ddbdb0f (April 2026)
# FlashInfer's fastdiv.cuh wraps cuda::fast_mod_div from the CCCL it vendors (3.3.2); a CUDA
# Toolkit whose CCCL lacks it (13.0) gets fastdiv.cuh of 93e1a263 instead, FlashInfer's own
# multiply-shift division before that change (the same divmod, recorded in OUT_DIR/notes).
# ARCHS: nvcc targets, default "sm_90" (the GPU machine's H200); "sm_90,sm_120" for both. ptxas's
# registers and shared memory per kernel go to OUT_DIR/resource-usage.txt.
set -euo pipefail
usage() { sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }
[[ "${1:-}" == "-h" || "${1:-}" == "--help" ]] && usage 0
command -v nvcc >/dev/null || { echo "build.sh: nvcc not found" >&2; exit 2; }
if [[ "${1:-}" == "--git" ]]; then
  [[ $# -lt 4 ]] && { echo "build.sh: --git needs GIT_DIR COMMIT OUT_DIR" >&2; usage 2 >&2; }
  git_dir="$2"; commit="$3"; out="$4"; archs="${5:-sm_90}"
  mkdir -p "$out"; rm -rf "$out/include"
  git --git-dir="$git_dir" archive "$commit" include | tar -x -C "$out"
  git --git-dir="$git_dir" rev-parse "$commit" > "$out/flashinfer-commit"
  : > "$out/notes"
  if grep -q "fast_mod_div" "$out/include/flashinfer/fastdiv.cuh" &&
     ! printf '#include <cuda/cmath>\ncuda::fast_mod_div<unsigned> d(3);\n' |
       nvcc -x cu -std=c++17 -fsyntax-only - >/dev/null 2>&1; then
    git --git-dir="$git_dir" show 93e1a2634:include/flashinfer/fastdiv.cuh > "$out/include/flashinfer/fastdiv.cuh"
    echo "fastdiv.cuh from 93e1a2634 (this CUDA Toolkit's CCCL has no cuda::fast_mod_div)" >> "$out/notes"
  fi
  inc="$out/include"
else
  [[ $# -lt 2 ]] && { echo "build.sh: need FLASHINFER_INCLUDE_DIR and OUT_DIR" >&2; usage 2 >&2; }
  inc="$1"; out="$2"; archs="${3:-sm_90}"
  mkdir -p "$out"
fi
[[ -f "$inc/flashinfer/attention/prefill.cuh" ]] || {
  echo "build.sh: $inc/flashinfer/attention/prefill.cuh not found (give a FlashInfer checkout's include/)" >&2; exit 2; }
gencode=()
for a in ${archs//,/ }; do gencode+=(-gencode "arch=compute_${a#sm_},code=${a}"); done
here="$(cd "$(dirname "$0")" && pwd)"
nvcc -O3 -std=c++17 --expt-relaxed-constexpr -shared -Xcompiler -fPIC "${gencode[@]}" --resource-usage \
  -DFLASHINFER_ENABLE_BF16 -DNDEBUG -I"$inc" "$here/flashinfer_probe.cu" -o "$out/libflashinfer_probe.so" \
  2> "$out/resource-usage.txt" || { cat "$out/resource-usage.txt" >&2; exit 1; }
echo "built $out/libflashinfer_probe.so for $archs (ptxas resource usage: $out/resource-usage.txt)"
