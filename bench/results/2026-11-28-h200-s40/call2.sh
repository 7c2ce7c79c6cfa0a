#!/bin/bash
# Session 40, call 2 (one H200) at 35fa1a5: the tensor-core and Winograd tests on
# CUDA with their measured errors against the bounds (-v logs them), the
# same under compute-sanitizer memcheck (-short); planar banks through
# ExecuteBlocks and device arrays on CUDA; ncu of the banks of small
# kernels (issue 29's ≥ 75% of copy); then ndconv tune's time over every
# candidate of A-2d-k7 and S000-bank8 with a cold kernel cache (session
# 39 call 5: ~97 s at 3e77628, before the bench kept its input).
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s40a
gunzip -f $W/*.gz 2>/dev/null; chmod +x $W/*; cp $W/ndconv .gpu/ndconv
FINAL=$OUT; OUT=/tmp/raw; mkdir -p $OUT
trap 'tar czf $FINAL/raw.tgz -C /tmp raw' EXIT
export PATH=$PATH:/usr/local/cuda/bin NDCONV_CACHE_DIR=/tmp/ndconv-cache
mkdir -p $NDCONV_CACHE_DIR
summ() { echo "$1: rc=$2 pass=$(grep -c -- '--- PASS' $3) fail=$(grep -c -- '--- FAIL' $3) skip=$(grep -c -- '--- SKIP' $3) ($(el))"; grep -E -- '(--- FAIL|^FAIL|panic|_test.go:[0-9]+: [A-Z]|ERROR SUMMARY)' $3 | head -8; }
( cd internal/gpu && NDCONV_GPU_TARGETS=cuda timeout 150 ../../$W/gpu.test -test.count=1 -test.v -test.run 'TestGemm|TestWinograd' ) > $OUT/gemm-winograd.log 2>&1; summ "gemm+winograd tests (CUDA)" $? $OUT/gemm-winograd.log
grep -E 'of its bound|of the bound' $OUT/gemm-winograd.log | sort -t'(' -k2 | tail -4 | cut -c1-300
( cd internal/gpu && NDCONV_GPU_TARGETS=cuda timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 ../../$W/gpu.test -test.count=1 -test.short -test.run 'TestGemmBank|TestWinogradTiles|TestWinogradStores' ) > $OUT/memcheck.log 2>&1; summ "memcheck gemm bank + winograd (-short)" $? $OUT/memcheck.log
timeout 90 $W/ndconv.test -test.count=1 -test.v -test.run 'TestPlanarBlocksGPU|TestPlanarDeviceArrays|TestPlanarGPUHost' > $OUT/planar.log 2>&1; summ "planar on CUDA" $? $OUT/planar.log; grep -E 'on \[' $OUT/planar.log
cp bench/results/2026-11-28-h200-s40/tuning-s39-call1.json /tmp/ndconv-tuning.json
PROFILE_ONLY='^(B-2d-k5-bank32|B-3d-k3-bank16|B-2d-k3-bank64)$' OUT=$OUT/ncu timeout 150 bash scripts/profile-gpu.sh > $OUT/ncu.log 2>&1
echo "ncu rc=$? ($(el))"; cut -c1-600 $OUT/ncu/profile.txt
left=$(( 575 - ($(date +%s) - T0) ))
s=$(date +%s%N)
NDCONV_CACHE_DIR=/tmp/kc-tune timeout $left $W/ndconv tune --workload all --only '^(A-2d-k7|S000-bank8)$' --repeat 5 --cache $OUT/tc.json > $OUT/tune.log 2>&1
echo "tune rc=$? $(( ($(date +%s%N) - s) / 1000000 )) ms ($(el))"; grep -E 'A-2d-k7|S000-bank8' $OUT/tune.log | tail -4
