#!/bin/bash
# Session 41 draft: the device suites for branch s40-gpu-lines (helper's
# comment trimming + cString→dynlib.CString etc.). Build on the branch:
#   go test -c -ldflags=-s for ./cuda (cuda.test), ./internal/gpu (gpu.test), . (ndconv.test);
#   go build ndconv (for an A/B against main: only comments and mechanical code, so a short A/B).
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s41c; gunzip -f $W/*.gz; chmod +x $W/*
FINAL=$OUT; OUT=/tmp/raw; mkdir -p $OUT; trap 'tar czf $FINAL/raw.tgz -C /tmp raw' EXIT
export PATH=$PATH:/usr/local/cuda/bin NDCONV_CACHE_DIR=/tmp/ndconv-cache; mkdir -p $NDCONV_CACHE_DIR /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
summ() { echo "$1: rc=$2 pass=$(grep -c -- '--- PASS' $3) fail=$(grep -c -- '--- FAIL' $3) skip=$(grep -c -- '--- SKIP' $3) ($(el))"; grep -E -- '(--- FAIL|^FAIL|panic)' $3 | head -5; }
( cd cuda && timeout 90 ../$W/cuda.test -test.count=1 -test.v ) > $OUT/cuda.log 2>&1; summ cuda $? $OUT/cuda.log
( cd internal/gpu && NDCONV_GPU_TARGETS=cuda timeout 170 ../../$W/gpu.test -test.count=1 -test.short -test.v ) > $OUT/gpu-cuda.log 2>&1; summ "internal/gpu -short CUDA" $? $OUT/gpu-cuda.log
( cd internal/gpu && OCL_ICD_VENDORS=/tmp/icd NDCONV_OPENCL_DEVICE=1:0 NDCONV_GPU_TARGETS=opencl timeout 100 ../../$W/gpu.test -test.count=1 -test.short -test.v ) > $OUT/gpu-ocl.log 2>&1; summ "internal/gpu -short NVIDIA OpenCL" $? $OUT/gpu-ocl.log
timeout 100 $W/ndconv.test -test.count=1 -test.v -test.run 'Device|GPU|Planar' > $OUT/root.log 2>&1; summ "root device tests" $? $OUT/root.log
[ $(( $(date +%s) - T0 )) -lt 420 ] && { ( cd internal/gpu && NDCONV_GPU_TARGETS=cuda timeout 120 ../../$W/gpu.test -test.count=1 -test.v -test.run 'TestEngineBank$' ) > $OUT/bank-cuda.log 2>&1; summ "TestEngineBank CUDA" $? $OUT/bank-cuda.log; }
grep -E -- '--- (PASS|SKIP)' $OUT/gpu-cuda.log | awk '{print $3, $4}' | sort -t'(' -k2 -rn | head -8
