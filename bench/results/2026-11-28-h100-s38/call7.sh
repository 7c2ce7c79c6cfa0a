#!/bin/bash
# Session 38, call 7 (one H100): main after the planar bank layout's merge
# (s38-planar) with the FFT bank groups: the root package's device tests
# on CUDA — the planar bank from host arrays on the GPU (direct,
# separable, FFT), device execution, chunks, blocks, complex and half on
# every device — then the same planar test on NVIDIA's OpenCL.
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s38g
gunzip -f $W/*.gz; chmod +x $W/*.test
FINAL=$OUT; OUT=/tmp/raw; mkdir -p $OUT
trap 'tar czf $FINAL/raw.tgz -C /tmp raw' EXIT
export PATH=$PATH:/usr/local/cuda/bin NDCONV_CACHE_DIR=/tmp/ndconv-cache
mkdir -p /tmp/icd $NDCONV_CACHE_DIR && echo libnvidia-opencl.so.1 >/tmp/icd/nvidia.icd
summ() { echo "$1: rc=$2 pass=$(grep -c -- '--- PASS' $3) fail=$(grep -c -- '--- FAIL' $3) skip=$(grep -c -- '--- SKIP' $3) ($(el))"; grep -E -- '(--- FAIL|^FAIL|panic|_test.go)' $3 | head -8; }
timeout 150 $W/ndconv.test -test.count=1 -test.v -test.run 'TestPlanarGPUHost|TestDevice|TestExecuteChunks|TestBlocksOnDevices|TestHalfOnEveryDevice|TestComplexOnEveryDevice|TestPlanExecuteDeviceArguments' > $OUT/root-cuda.log 2>&1; summ "root device tests (CUDA; OpenCL absent without the ICD)" $? $OUT/root-cuda.log
OCL_ICD_VENDORS=/tmp/icd NDCONV_OPENCL_DEVICE=1:0 timeout 90 $W/ndconv.test -test.count=1 -test.v -test.run 'TestPlanarGPUHost' > $OUT/root-opencl.log 2>&1; summ "TestPlanarGPUHost with NVIDIA OpenCL and CUDA" $? $OUT/root-opencl.log
