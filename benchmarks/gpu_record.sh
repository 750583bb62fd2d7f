#!/usr/bin/env bash
# Record Runs on a lent GPU in one call, each step bounded so that what finished comes back:
#   1. the environment (nvidia-smi, torch, the device's datasheet row);
#   2. a quick Run in the book's GPU dtype, a check that every CUDA path runs (short);
#   3. the full Run in bfloat16, then, while time is left, the full Run in tf32;
#   4. the CUDA tests of the suite.
# Usage, from the repository root (no install needed; python3 must have torch with CUDA):
#   OUT=/some/folder BUDGET=500 bash benchmarks/gpu_record.sh
# QUICK=0 leaves out the quick Run; REPEATS=N records the full bfloat16 Run N times (a check
# of how stable the verdicts are on that machine: `gpuconcepts compare` lists them side by side).
# Runs land in $OUT as <gpu>-<dtype>[-quick].json, to be copied into docs/runs/ when full;
# everything printed goes to $OUT/log.txt too. DEVICE=cpu tries the script on a machine
# without a GPU. Nothing here asserts a time.
set -u
OUT=${OUT:-.bench}
DEVICE=${DEVICE:-cuda}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
deadline=$((SECONDS + ${BUDGET:-500}))
log="$OUT/log.txt"

say() { echo "=== $* (t = ${SECONDS} s)" | tee -a "$log"; }
# step SECONDS_AT_LEAST COMMAND...: run it under the time that is left, or say it was skipped
step() {
  local need=$1
  shift
  local left=$((deadline - SECONDS))
  if [ "$left" -lt "$need" ]; then
    say "skipped (only ${left} s left): $*"
    return 1
  fi
  say "$* (at most ${left} s)"
  timeout --signal=TERM --kill-after=10 "$left" "$@" 2>&1 | tee -a "$log"
  local status=${PIPESTATUS[0]}
  say "exit ${status}"
  return "$status"
}

say "environment"
{ nvidia-smi 2>&1 | head -20; python3 -c '
import platform, torch
print("python", platform.python_version(), "torch", torch.__version__, "cuda", torch.version.cuda)
if torch.cuda.is_available():
    p = torch.cuda.get_device_properties(0)
    print(p.name, p.multi_processor_count, "SMs", p.total_memory, "bytes", p.L2_cache_size, "L2 bytes")
from gpuconcepts.hardware import current_gpu
print("datasheet row:", current_gpu())'; } 2>&1 | tee -a "$log"

name=$(python3 -c '
from gpuconcepts.hardware import current_gpu
g = current_gpu()
print((g.name if g else "gpu").lower().replace(" ", "-"))' 2>/dev/null || echo gpu)
[ "$DEVICE" = cpu ] && name=cpu

full() {
  local ok=0 i suffix
  for i in $(seq 1 "${REPEATS:-1}"); do
    suffix=$([ "$i" = 1 ] || echo "-$i")
    step 120 python3 -m gpuconcepts profile --device "$DEVICE" \
      --save "$OUT/$name-bfloat16$suffix.json" || ok=1
  done
  step 120 python3 -m gpuconcepts profile --device "$DEVICE" --dtype tf32 \
    --save "$OUT/$name-tf32.json" || ok=1
  return $ok
}
if [ "${QUICK:-1}" = 0 ]; then
  full
elif step 60 python3 -m gpuconcepts profile --device "$DEVICE" --quick \
  --save "$OUT/$name-quick.json"; then
  full
fi
[ "$DEVICE" = cuda ] && step 30 python3 -m pytest -q -p no:cacheprovider -k cuda \
  tests/test_measure.py tests/test_kernels.py tests/test_hardware.py tests/test_wholemodel.py
say "done"
