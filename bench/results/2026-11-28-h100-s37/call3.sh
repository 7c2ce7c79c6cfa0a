#!/bin/bash
# Session 37, call 3 (one H100): call 2 again after its one fault (a
# missing #endif in tiled.cl's stage_tile, which failed every tiled.cl
# build and the tests above it): the device suites on s37-int2 (issue 31's
# folds + the tiled.cl staging change), then the A/B guard A = 3e18bc4
# (main), B = s37-int2, 33 direct rows × 3 rounds, untuned. Tests that
# passed in call 2 on the same folds and touch no tiled.cl launch (the
# separable families, bank.cl, capi) are not repeated.
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s37c
gunzip -f $W/*.gz; chmod +x $W/*.test
mkdir -p .gpu/ab && for v in A B; do gunzip -c $W/ab/ndconv-$v.gz > .gpu/ab/ndconv-$v; done; cp $W/ab/labels.txt .gpu/ab/; chmod +x .gpu/ab/*
FINAL=$OUT; OUT=/tmp/raw; mkdir -p $OUT
trap 'tar czf $FINAL/raw.tgz -C /tmp raw' EXIT
export PATH=$PATH:/usr/local/cuda/bin NDCONV_CACHE_DIR=/tmp/ndconv-cache
mkdir -p /tmp/icd $NDCONV_CACHE_DIR && echo libnvidia-opencl.so.1 >/tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd NDCONV_OPENCL_DEVICE=1:0 # as sessions 30-32: NVIDIA is platform 1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
summ() { echo "$1: rc=$2 pass=$(grep -c -- '--- PASS' $3) fail=$(grep -c -- '--- FAIL' $3) skip=$(grep -c -- '--- SKIP' $3) ($(el))"; grep -E -- '(--- FAIL|^FAIL|panic)' $3 | head -10; }
( cd internal/gpu && timeout 230 ../../$W/gpu.test -test.count=1 -test.short -test.v -test.skip 'TestEngineSeparable|TestEngineSep3|TestEngineSepTile|TestEngineSepRing|TestEngineBank$' ) > $OUT/gpu.log 2>&1; summ "internal/gpu -short (cuda, opencl)" $? $OUT/gpu.log
grep -E -- '^--- (PASS|FAIL)' $OUT/gpu.log | awk '{printf "%s %s ", $3, $2} END {print ""}' | cut -c1-900
( cd cuda && timeout 40 ../$W/cuda.test -test.count=1 -test.short -test.v ) > $OUT/cuda.log 2>&1; summ cuda-short $? $OUT/cuda.log
( cd opencl && timeout 30 ../$W/opencl.test -test.count=1 -test.v ) > $OUT/opencl.log 2>&1; summ "opencl (NVIDIA)" $? $OUT/opencl.log
( cd plan && timeout 30 ../$W/plan.test -test.count=1 ) > $OUT/plan.log 2>&1; echo "plan rc=$? ($(el))"; tail -2 $OUT/plan.log
timeout 40 $W/ndconv.test -test.count=1 -test.run 'TestDevice|ExampleOpenDevice|TestExecuteChunks|TestBlocksOnDevices|TestHalfOnEveryDevice|TestPlanExecuteDeviceArguments' -test.v > $OUT/root.log 2>&1; summ root-device $? $OUT/root.log
( cd internal/gpu && NDCONV_GPU_TARGETS=cuda timeout 50 compute-sanitizer --tool memcheck --print-limit 20 ../../$W/gpu.test -test.count=1 -test.short -test.run 'TestEngineLocalWeights|TestEngineDeviceAfter|TestEngineRegistered$|TestFFTLayouts' ) > $OUT/memcheck-gpu.log 2>&1
echo "memcheck internal/gpu rc=$? ($(el))"; grep -E 'ERROR SUMMARY|^(ok|FAIL|PASS)|Invalid' $OUT/memcheck-gpu.log | head -4
left=$(( 585 - ($(date +%s) - T0) ))
ONLY='^(S000-bank(1|2|4|8|16|32)|S001-w(3|5|7|15|21|31)|S003-full-.*|A-2d-k(3|5|7|9|15)|A-2d-u8-k(3|7|15)|A-rgba-k5|A-3d-k(3|7)|A-1d-k(7|63)|B-.*)$' \
  ROUNDS=3 AB_OUT=$OUT/ab timeout $left bash scripts/ab-gpu.sh run > $OUT/ab.log 2>&1
echo "ab rc=$? ($(el))"; sed -n '/^| workload/,/^$/p' $OUT/ab/table.md | head -40; grep -E 'flag' $OUT/ab/table.md | tail -2
