#!/bin/bash
# Session 35, call 5 (one H100): bank.cl's tap classes (TZ, TN bitmaps:
# a tap zero in every kernel left out, one nonzero in every kernel a plain
# fma, the rest tested as they run). A = 67c81dc, B = the tree. Device
# tests (-short) with the new zero-taps bank over NaN and ±Inf; the three
# treatments timed (TestBankZerosTiming); the A/B guard over the banks
# set (dense: the same code), A B ×3.
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s35e
gunzip -f $W/*.gz; chmod +x $W/*
FINAL=$OUT; OUT=/tmp/raw; mkdir -p $OUT
trap 'tar czf $FINAL/raw.tgz -C /tmp raw' EXIT
export NDCONV_CACHE_DIR=/tmp/ndconv-cache PATH=$PATH:/usr/local/cuda/bin NDCONV_TUNING=/tmp/none.json
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
( cd internal/gpu && NDCONV_GPU_TARGETS=cuda timeout 120 ../../$W/gpu.test -test.count=1 -test.short -test.v -test.run 'TestEngineBank$|TestEngineTable|TestEngineBankGroups' ) > $OUT/tests.log 2>&1
echo "tests -short rc=$? ($(el))"; grep -E -- '^--- |^(ok|FAIL|PASS)|panic|zero-taps' $OUT/tests.log | head
( cd internal/gpu && NDCONV_GPU_TARGETS=cuda NDCONV_TIMING=1 timeout 60 ../../$W/gpu.test -test.count=1 -test.v -test.run 'TestBankZerosTiming' ) > $OUT/zeros.log 2>&1
echo "zeros timing rc=$? ($(el))"; grep BANKZEROS $OUT/zeros.log | sed 's/.*BANKZEROS //'
for r in 1 2 3; do for v in A B; do
  $W/ndconv-$v bench --device cuda --workload banks --only '^B-(2d|3d)-k[35]-' --json > $OUT/$v-r$r.jsonl 2>$OUT/$v-r$r.err
  echo "round $r $v rc=$? ($(el))"
done; done
