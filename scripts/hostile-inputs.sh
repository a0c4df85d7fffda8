#!/usr/bin/env bash
# The hostile-input campaign of issue 15, replayed: every input that campaign found crashing,
# hanging or silently wrong, and its unclear messages, run through the real binary. Each case
# expects an exit code (2: bad input, 1: output lost) and a fragment of the message that names
# what was wrong (the file, field or flag, and the allowed range).
#
#   scripts/hostile-inputs.sh SPECSIM [--verbose]
#
# Prints one line per case and the count per category, exit 1 when a case is not a clear answer.
# Categories, as the campaign counted them:
#   clear    the expected exit code and the fragment in the message
#   unclear  the expected exit code, the message without the fragment; or an error under another
#            exit code
#   crash    killed by a signal or a sanitizer report (exit >= 128, or "Sanitizer" in the output)
#   hang     past 60 s
#   silent   exit 0 where an error was due (a silently wrong result), or an error where none was
# Needs protoc (the traces are edited as text: protoc --decode / --encode).
set -uo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 1 ] || [ "$1" = "-h" ] || [ "$1" = "--help" ]; then
  sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'
  [ $# -lt 1 ] && exit 2 || exit 0
fi
SPECSIM=$(realpath "$1")
VERBOSE=${2:-}
[ -x "$SPECSIM" ] || { echo "hostile-inputs.sh: $1 is not an executable" >&2; exit 2; }
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

declare -A COUNT=([clear]=0 [unclear]=0 [crash]=0 [hang]=0 [silent]=0)
FAILED=0
# check NAME EXPECTED_RC FRAGMENT -- ARGS...   (ARGS run as specsim ARGS; stdout and stderr kept)
check() {
  local name=$1 want_rc=$2 fragment=$3
  shift 4
  local out rc verdict
  out=$(cd "$W" && timeout 60 "$SPECSIM" "$@" 2>&1)
  rc=$?
  if [ $rc -eq 124 ]; then verdict=hang
  elif [ $rc -ge 128 ] || grep -q "Sanitizer" <<<"$out"; then verdict=crash
  elif [ $rc -ne "$want_rc" ] && { [ $rc -eq 0 ] || [ "$want_rc" -eq 0 ]; }; then verdict=silent
  elif [ $rc -ne "$want_rc" ]; then verdict=unclear  # an error, under another exit code
  elif grep -qF -- "$fragment" <<<"$out"; then verdict=clear
  else verdict=unclear
  fi
  COUNT[$verdict]=$((COUNT[$verdict] + 1))
  [ "$verdict" = clear ] || FAILED=1
  printf '%-8s %-58s exit %3d (want %d)\n' "$verdict" "$name" "$rc" "$want_rc"
  if [ "$verdict" != clear ] || [ -n "$VERBOSE" ]; then
    printf '%s\n' "$(head -c 600 <<<"$out")" | sed 's/^/           | /'
  fi
}
# A bundled file with one sed expression applied: edited FILE 'SED' OUT
edited() { sed -e "$2" "$1" >"$W/$3"; }
# A committed trace, decoded, edited with a sed expression, encoded: trace_edited TRACE 'SED' OUT
trace_edited() {
  protoc -Iproto --decode=specsim.trace.Trace proto/specsim/trace.proto <"$1" | sed -e "$2" |
    protoc -Iproto --encode=specsim.trace.Trace proto/specsim/trace.proto >"$W/$3"
}
HW=configs/hardware/rtxpro6000-4x-pcie-switch.textproto
T1=$(pwd)/traces/h200-1x-2026-11-30.pb
T2=$(pwd)/traces/h200-2x-ll-2026-11-30.pb
LLAMA=configs/scenarios/llama-3.1-8b-eagle3-rtxpro6000-4x.textproto

# 1. The segfault: a median of 1e-307 us (rows weighted 1/t became inf; the SVD's failure unread).
trace_edited "$T2" '0,/median_us: /s/median_us: [0-9.e+-]*/median_us: 1e-307/' tiny-median.pb
check "1 calibrate: median_us 1e-307" 2 "median_us" -- calibrate "$W/tiny-median.pb" --output "$W/c.textproto"
check "1 compare --holdout: median_us 1e-307" 2 "median_us" -- compare "$W/tiny-median.pb" --holdout 0.3

# 2. int64 picosecond overflow from accepted values.
edited $HW '0,/bandwidth_gbps: 63.015/s//bandwidth_gbps: 1e-300/' bw-tiny.textproto
check "2 link bandwidth_gbps 1e-300" 2 "bandwidth_gbps" -- collective --hardware "$W/bw-tiny.textproto"
edited $HW '0,/latency_ns: 275/s//latency_ns: 1e300/' lat-huge.textproto
check "2 link latency_ns 1e300" 2 "latency_ns" -- collective --hardware "$W/lat-huge.textproto"
edited $HW 's/forward_latency_ns: 100/forward_latency_ns: 1e300/' fwd-huge.textproto
check "2 switch forward_latency_ns 1e300" 2 "forward_latency_ns" -- collective --hardware "$W/fwd-huge.textproto"
printf 'compute { memory_efficiency: 1e-300 }\n' >"$W/mem-eff.textproto"
check "2 calibration memory_efficiency 1e-300" 2 "memory_efficiency" -- simulate --calibration "$W/mem-eff.textproto"
trace_edited "$T1" '0,/    k: 4096/s//    k: 9223372036854775807/' k-max.pb
check "2 trace GEMM k = INT64_MAX" 2 "gemm.k" -- compare "$W/k-max.pb"
for v in nan inf 1e300 -1; do
  check "2 --custom-launch-us $v" 2 "--custom-launch-us" -- collective --algo oneshot --custom-launch-us "$v"
done

# 3. A GPU on a socket without a HOST_MEMORY node.
edited $HW '/kind: HOST_MEMORY/d; /kind: MEMORY/d' no-host-memory.textproto
check "3 GPU socket without HOST_MEMORY (--p2p-disable)" 2 "HOST_MEMORY" -- collective --hardware "$W/no-host-memory.textproto" --p2p-disable

# 4. Trace items unchecked.
trace_edited "$T2" '0,/    bytes: 1024/s//    bytes: -5/' negative-bytes.pb
check "4 negative byte count" 2 "bytes" -- compare "$W/negative-bytes.pb"
trace_edited "$T1" '0,/    m: 1$/s//    m: 0/' m-zero.pb
check "4 GEMM m = 0" 2 "gemm.m" -- calibrate "$W/m-zero.pb" --output "$W/c.textproto"
trace_edited "$T2" '0,/    index: 1$/s//    index: 0/' gpu-twice.pb
check "4 a GPU listed twice in the environment" 2 "listed twice" -- compare "$W/gpu-twice.pb"
trace_edited "$T2" 's/median_us: [0-9.e+-]*/median_us: 0/' nothing-measured.pb
check "4 calibrate: no usable median" 2 "measured" -- calibrate "$W/nothing-measured.pb" --output "$W/c.textproto"
printf 'fabric { h2d_pinned { latency_ns: nan } }\n' >"$W/nan.textproto"
check "4 calibration with a NaN" 2 "latency_ns" -- simulate --calibration "$W/nan.textproto"

# 5. --gpus.
check "5 --gpus 0-2147483647" 2 "--gpus" -- collective --gpus 0-2147483647
check "5 --gpus 0-1-5" 2 "--gpus" -- collective --gpus 0-1-5

# 6. No bounds on work.
check "6 --channels 100000" 2 "--channels" -- collective --channels 100000
check "6 speculation.cycles=2000000000" 2 "speculation.cycles" -- simulate --set speculation.cycles=2000000000
check "6 a 1,000,000-point sweep without --yes" 2 "--yes" -- sweep --vary "serving.batch_size=$(seq -s, 1 1000)" \
  --vary "serving.context_length=$(seq -s, 1 1000)"

# 7. Failed writes exit 0 (the campaign wrote to /dev/full: open succeeds, the write fails).
check "7 sweep --out /dev/full" 1 "/dev/full: cannot write" -- sweep --vary serving.batch_size=1,2 --out /dev/full
check "7 sweep --svg /dev/full" 1 "/dev/full: cannot write" -- sweep --vary serving.batch_size=1,2 --out "$W/x.csv" --svg /dev/full
check "7 simulate --trace /dev/full" 1 "/dev/full: cannot write" -- simulate --trace /dev/full
check "7 sweep --out into a missing directory" 1 "$W/missing/x.csv" -- sweep --vary serving.batch_size=1,2 --out "$W/missing/x.csv"
out=$(cd "$W" && timeout 60 "$SPECSIM" simulate 2>&1 >/dev/full); rc=$?
if [ $rc -eq 1 ] && grep -q "standard output" <<<"$out"; then v=clear; else v=silent; fi
COUNT[$v]=$((COUNT[$v] + 1)); [ $v = clear ] || FAILED=1
printf '%-8s %-58s exit %3d (want 1)\n' $v "7 simulate > /dev/full" $rc
# A device is written in place, never replaced by a file renamed over it (as root, that once
# turned /dev/null into a regular file).
check "7 simulate --trace /dev/null" 0 "tokens/s" -- simulate --trace /dev/null
for dev in /dev/full /dev/null; do
  [ -c $dev ] || { echo "FAILED: $dev is no longer a character device"; FAILED=1; }
done

# 8. Silent nonsense.
check "8 a field given to two --vary" 2 "serving.batch_size" -- sweep --vary serving.batch_size=1,2 --vary serving.batch_size=4
check "8 accept_length_histogram of 1e308 counts" 2 "accept_length_histogram" -- simulate "$LLAMA" \
  --set speculation.accept_length_histogram=1e308,1e308,1e308,1e308,1e308,1e308
check "8 advise --batch 0" 2 "--batch" -- advise --scenario "$LLAMA" --batch 0
check "8 advise --context -5" 2 "--context" -- advise --scenario "$LLAMA" --context -5
check "8 advise --tp 0" 2 "--tp" -- advise --scenario "$LLAMA" --tp 0
check "8 compare --max-error nan" 2 "--max-error" -- compare "$T2" --max-error nan
check "43 compare --max-error inf" 2 "--max-error inf: must be a finite number" -- compare "$T2" --max-error inf
check "43 compare --max-error 0 (a bound: any error fails it)" 1 "above --max-error 0.0%" -- compare "$T2" --max-error 0
check "43 an unknown command names the commands" 2 "unknown command \"bogus\": the commands are simulate" -- bogus
check "43 an unknown flag is bad input (exit 2)" 2 "--bogus" -- simulate --bogus
check "43 advise: nothing fits is exit 3 with the figures" 3 "none fits (the first," -- advise --scenario configs/scenarios/kimi-k2-eagle3-rtxpro6000-8x.textproto --weight-dtype BF16 --context 1000000 --batch 64
check "43 collective -f 1.0000001 no longer drops the sizes after the first" 2 "-f 1.0000001: at 1024 bytes" -- collective -b 1K -e 1M -f 1.0000001
check "43 sweep: --set of a varied field" 2 "is also varied" -- sweep "$LLAMA" --vary serving.batch_size=1,2 --set serving.batch_size=8
check "43 sweep: --out and --svg one file" 2 "name the same file" -- sweep "$LLAMA" --vary serving.batch_size=1,2 --out same.csv --svg same.csv
check "43 calibrate --hardware of another GPU warns" 0 "the box has 8x RTX PRO 6000 Blackwell Server Edition, the trace was measured on 1x NVIDIA H200" -- calibrate "$T1" --hardware configs/hardware/rtxpro6000-8x-dual-socket.textproto --output "$W/c.textproto"
check "43 compare --seeds 1e9 is refused" 2 "--seeds 1000000000: must be in [1, 1000]" -- compare "$T2" --holdout 0.3 --seeds 1000000000
{ cat "$HW"; for i in $(seq 1 5000); do echo "nodes { name: \"x$i\" kind: GPU gpu_model: \"G\" }"; done; } >"$W/many-gpus.textproto"
check "43 a hardware file of 5000+ GPUs is refused before its pair tables" 2 "GPU nodes: at most 4096 per hardware file" -- collective --hardware "$W/many-gpus.textproto" --gpus 0-1
edited "$HW" '0,/payload_efficiency: 0.914/s//payload_efficiency: 4.94065645841247e-324/' tiny-efficiency.textproto
check "43 link payload_efficiency 4.9e-324 (found by the structure-aware fuzzer: a starved flow aborted)" 2 "payload_efficiency" -- collective --hardware "$W/tiny-efficiency.textproto" --algo all -b 1M -e 1M
check "43 an expert dtype on a dense model is refused" 2 "serving.expert_weight_dtype: model" -- advise --scenario "$LLAMA" --weight-dtype BF16 --expert-weight-dtype INT4

# 9. Unclear messages.
trace_edited "$T2" '0,/    sm_count: 132/s//    sm_count: 0/' bad-env.pb
check "9 hardware-from-trace: sm_count 0 in the environment" 2 "environment.gpus[0].sm_count" -- hardware-from-trace "$W/bad-env.pb"
cp models/hf/llama-3.1-8b.config.json "$W/config.json"
check "9 a config.json given as the scenario" 2 "--model" -- simulate "$W/config.json"

# issue 43: import-profile validates what it reads
# A one-rank Kineto trace of two kernels, the second's fields as given: kineto OUT 'FIELDS' [INFO]
kineto() {
  printf '{"distributedInfo": {%s}, "traceEvents": [\n' "${3:-\"rank\": 0, \"world_size\": 1}" >"$W/$1"
  printf '{"ph": "X", "cat": "kernel", "name": "a", "ts": 10, "dur": 2, "args": {"correlation": 1}},\n' >>"$W/$1"
  printf '{"ph": "X", "cat": "kernel", "name": "b", %s}]}\n' "$2" >>"$W/$1"
}
n=0
for v in -5 '"nan"' '"inf"' 1e300; do
  kineto "dur-$((++n)).json" "\"ts\": 20, \"dur\": $v, \"args\": {\"correlation\": 2}"
  check "43.1 import-profile: kernel dur $v" 0 "dropped 1 kernel events: duration not a finite number" -- \
    import-profile "$W/dur-$n.json"
done
kineto no-ts.json '"dur": 3, "args": {"correlation": 2}'
check "43.2 import-profile: kernel without ts" 0 "dropped 1 kernel events: start time missing (ts)" -- \
  import-profile "$W/no-ts.json"
for v in '"soon"' -1 1e300; do
  kineto "ts-$((++n)).json" "\"ts\": $v, \"dur\": 3, \"args\": {\"correlation\": 2}"
  check "43.2 import-profile: kernel ts $v" 0 "dropped 1 kernel events: start time not a finite number" -- \
    import-profile "$W/ts-$n.json"
done
printf '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "a", "dur": 2, "args": {}}]}\n' >"$W/all-no-ts.json"
check "43.2 import-profile: no kernel has a ts" 2 "all-no-ts.json: 1 events but no GPU kernels (category \"kernel\") kept; all 1 kernel events dropped: start time missing (ts)" -- \
  import-profile "$W/all-no-ts.json"
kineto no-args.json '"ts": 20, "dur": 3'
check "43.3 import-profile: kernel without args" 0 "dropped 1 kernel events: no args" -- import-profile "$W/no-args.json"
kineto nccl-no-grid.json '"name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(x)", "ts": 20, "dur": 3, "args": {"correlation": 2}'
check "43.3 import-profile: NCCL kernel without its grid" 0 "grid x (an NCCL kernel's channels) missing (args.grid)" -- \
  import-profile "$W/nccl-no-grid.json"
kineto world-1e9.json '"ts": 20, "dur": 3, "args": {}' '"rank": 0, "world_size": 1e9'
check "43.4 import-profile: world_size 1e9" 2 "world-1e9.json: distributedInfo.world_size = 1e+09: must be an integer in [1, 65536]" -- \
  import-profile "$W/world-1e9.json"
{ printf '{"traceEvents": ['; head -c 100000000 /dev/zero | tr '\0' ' '; printf ']}'; } | gzip -9 >"$W/bomb.json.gz"
check "43.5 import-profile: gzip bomb (1000x)" 2 "bomb.json.gz: gzip expands" -- import-profile "$W/bomb.json.gz"
truncate -s 1100M "$W/huge.json"
check "43.5 import-profile: a 1.1 GB file" 2 "huge.json: 1153433600 bytes, past the bound of 1073741824 bytes" -- \
  import-profile "$W/huge.json"
PROFILE=$(pwd)/traces/profiles/torch-tp2-h200-fused-2026-11-30/fused-b1
check "43.6 import-profile --nccl-env NCCL_ALGO=bogus" 2 "allowed values of NCCL_ALGO are ring, tree" -- \
  import-profile "$PROFILE" --nccl-env NCCL_ALGO=bogus
check "43.7 import-profile: TP4 scenario, 2-rank profile" 2 "parallelism.tensor_parallel 4, but the profile has 2 rank(s)" -- \
  import-profile "$PROFILE" --scenario "$(pwd)/$LLAMA"

# issue 43: trace items of attention and RMSNorm, a trace of absurd medians
trace_edited "$T1" '0,/    batch: 1$/s//    batch: -1/' attn-batch-neg.pb
check "43 trace attention batch -1" 2 "attention.batch" -- compare "$W/attn-batch-neg.pb"
trace_edited "$T1" '0,/    hidden: 4096$/s//    hidden: -4096/' norm-hidden-neg.pb
check "43 trace rmsnorm hidden -4096" 2 "rmsnorm.hidden" -- compare "$W/norm-hidden-neg.pb"
trace_edited "$T1" '0,/    context: 1024$/s//    context: 0/' attn-context-zero.pb
check "43 trace attention context 0" 2 "attention.context" -- calibrate "$W/attn-context-zero.pb" --output "$W/c.textproto"
trace_edited "$T1" '0,/    q_heads: 32$/s//    q_heads: 0/' attn-qheads-zero.pb
check "43 trace attention q_heads 0" 2 "attention.q_heads" -- compare "$W/attn-qheads-zero.pb"
trace_edited "$T1" '/^  attention {/,/^  }/s/^    head_dim: 128$/    head_dim: -128/' attn-headdim-neg.pb
check "43 trace attention head_dim -128" 2 "attention.head_dim" -- compare "$W/attn-headdim-neg.pb"
trace_edited "$T1" '0,/    head_dim: 128$/s//    head_dim: -128/' model-headdim-neg.pb
check "43 trace model config head_dim -128" 2 "config.head_dim = -128: must be in [1, 65536]" -- compare "$W/model-headdim-neg.pb"
trace_edited "$T1" '0,/    tokens: 1$/s//    tokens: 0/' norm-tokens-zero.pb
check "43 trace rmsnorm tokens 0" 2 "rmsnorm.tokens" -- compare "$W/norm-tokens-zero.pb"
trace_edited "$T2" 's/median_us: [0-9.e+-]*/median_us: 1e300/' medians-1e300.pb
check "43 calibrate: every median 1e300 us" 2 "median_us" -- calibrate "$W/medians-1e300.pb" --output "$W/c.textproto"

# issue 43: bounded work for any input
python3 - "$HW" "$W/gpus-4096.textproto" <<'PY'
import sys
src = open(sys.argv[1]).read()
head = src.split("nodes {")[0]
out = [head, 'nodes { name: "cpu0" kind: CPU_ROOT_COMPLEX socket: 0 forward_latency_ns: 500 }',
       'nodes { name: "mem0" kind: HOST_MEMORY socket: 0 }',
       'links { a: "cpu0" b: "mem0" kind: MEMORY bandwidth_gbps: 460.8 latency_ns: 0 payload_efficiency: 1 }']
model = head.split('gpu_models {')[1].split('name: "')[1].split('"')[0]
for s in range(512):
    out.append(f'nodes {{ name: "sw{s}" kind: PCIE_SWITCH socket: 0 forward_latency_ns: 150 }}')
    out.append(f'links {{ a: "sw{s}" b: "cpu0" kind: PCIE bandwidth_gbps: 63 latency_ns: 275 payload_efficiency: 0.9 pcie_gen: 5 pcie_lanes: 16 }}')
for g in range(4096):
    out.append(f'nodes {{ name: "gpu{g}" kind: GPU socket: 0 gpu_model: "{model}" }}')
    out.append(f'links {{ a: "gpu{g}" b: "sw{g // 8}" kind: PCIE bandwidth_gbps: 63 latency_ns: 275 payload_efficiency: 0.9 pcie_gen: 5 pcie_lanes: 16 }}')
open(sys.argv[2], "w").write("\n".join(out) + "\n")
PY
check "43 a 4096-GPU box used for 2 GPUs loads in proportion (no per-pair search)" 0 "allreduce" -- \
  collective --hardware "$W/gpus-4096.textproto" --gpus 0-1 -b 1M -e 1M
check "43 a model of 10^6 layers" 2 "num_layers" -- simulate --set model.num_layers=1000000
check "43 a 10,000-step draft chain" 2 "speculation.num_steps" -- \
  simulate --set speculation.num_steps=10000 --set speculation.num_draft_tokens=10001
check "43 a 10^8-point sweep with --yes" 2 "1000000" -- sweep --yes \
  --vary "serving.batch_size=$(seq -s, 1 10000)" --vary "serving.context_len=$(seq -s, 1 10000)"

# issue 42: nccl-tests logs read as traces
NT=$(pwd)/traces/nccl-tests/h200-1x-2026-12-01
check "42 compare an nccl-tests log without --hardware" 2 "give the box with --hardware" -- compare "$NT/all_reduce_perf-h200-1gpu.log"
sed -e 's/all_reduce_perf/broadcast_perf/' "$NT/all_reduce_perf-h200-1gpu.log" >"$W/broadcast.log"
check "42 an nccl-tests log of a test specsim does not read" 2 "broadcast_perf: specsim reads all_reduce_perf" -- \
  compare "$W/broadcast.log" --hardware configs/hardware/h200-1x.textproto
sed -e '0,/     7.09 /s//      nan /' "$NT/all_reduce_perf-h200-1gpu.log" >"$W/nan-time.log"
check "42 an nccl-tests row with a time of nan" 2 "nan-time.log:11: a data row whose time columns" -- \
  compare "$W/nan-time.log" --hardware configs/hardware/h200-1x.textproto

# issue 43: two runs writing one path each write their own temporary: the file ends whole (one
# run's table), never a mix or a half. Four sweeps race on one --out.
race=$W/race.csv
for k in 1 2 3 4; do
  (cd "$W" && timeout 60 "$SPECSIM" sweep --vary "serving.batch_size=$k,$((k + 4))" --out "$race" >/dev/null 2>&1) &
done
wait
verdict=clear
if [ "$(wc -l <"$race" 2>/dev/null)" != 3 ] || ! head -1 "$race" | grep -q "^serving.batch_size,baseline_tokens_per_s" ||
  ls "$W" | grep -q "race.csv.tmp"; then verdict=silent; fi
COUNT[$verdict]=$((COUNT[$verdict] + 1))
[ "$verdict" = clear ] || FAILED=1
printf '%-8s %-58s exit %3d (want %d)\n' "$verdict" "43 four sweeps writing one --out leave one whole file" 0 0

# issue 43: a config in the working directory is read only when named, and the header says where
mkdir -p "$W/configs/scenarios"
sed -e 's/batch_size: [0-9]*/batch_size: 3/' configs/scenarios/llama-3.1-8b-eagle3-h200-2x.textproto \
  >"$W/configs/scenarios/llama-3.1-8b-eagle3-h200-2x.textproto"
check "43 the working directory's copy of a bundled config is named as such" 0 "working directory" -- \
  simulate configs/scenarios/llama-3.1-8b-eagle3-h200-2x.textproto

echo
printf 'clear %d, unclear %d, crash %d, hang %d, silent %d\n' \
  "${COUNT[clear]}" "${COUNT[unclear]}" "${COUNT[crash]}" "${COUNT[hang]}" "${COUNT[silent]}"
exit $FAILED
