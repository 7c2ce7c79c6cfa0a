#!/bin/bash
# Session 37, call 2 (one H100): the device suites of issue 31's folds
# (cuda/ and opencl/ thin bindings, internal/gpu folded) merged with
# call 1's kernel change (kept only for moved-back tiles): internal/gpu on
# CUDA and NVIDIA's OpenCL, the FFT layouts, cuda and opencl package tests,
# plan, the root package's and capi's device tests, memcheck.
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s37b
gunzip -f $W/*.gz; chmod +x $W/*.test
FINAL=$OUT; OUT=/tmp/raw; mkdir -p $OUT
trap 'tar czf $FINAL/raw.tgz -C /tmp raw' EXIT
export PATH=$PATH:/usr/local/cuda/bin NDCONV_CACHE_DIR=/tmp/ndconv-cache
mkdir -p /tmp/icd $NDCONV_CACHE_DIR && echo libnvidia-opencl.so.1 >/tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd NDCONV_OPENCL_DEVICE=1:0 # as sessions 30-32: NVIDIA is platform 1
ls /etc/OpenCL/vendors 2>/dev/null | tr "\n" " "; echo
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
summ() { echo "$1: rc=$2 pass=$(grep -c -- '--- PASS' $3) fail=$(grep -c -- '--- FAIL' $3) skip=$(grep -c -- '--- SKIP' $3) ($(el))"; grep -E -- '(--- FAIL|^FAIL|panic)' $3 | head -10; }
( cd internal/gpu && timeout 200 ../../$W/gpu.test -test.count=1 -test.short -test.v ) > $OUT/gpu.log 2>&1; summ "internal/gpu -short (cuda, opencl)" $? $OUT/gpu.log
grep -E -- '--- (PASS|FAIL|SKIP): Test[A-Za-z]+ ' $OUT/gpu.log | awk '{print $2, $3}' | sort | uniq -c | sort -rn | head -5
if grep -q -- '--- FAIL: TestEngineConcurrent' $OUT/gpu.log; then
  ( cd internal/gpu && timeout 60 ../../$W/gpu-A.test -test.count=1 -test.short -test.v -test.run TestEngineConcurrent ) > $OUT/gpu-A-concurrent.log 2>&1; summ "3e18bc4's TestEngineConcurrent" $? $OUT/gpu-A-concurrent.log
fi
( cd internal/gpu && NDCONV_GPU_TARGETS=cuda NDCONV_CUDA_FFT_LAYOUT=real timeout 40 ../../$W/gpu.test -test.count=1 -test.short -test.v -test.run 'TestFFT' ) > $OUT/fft-real.log 2>&1; summ "FFT layout real" $? $OUT/fft-real.log
( cd cuda && timeout 80 ../$W/cuda.test -test.count=1 -test.short -test.v ) > $OUT/cuda.log 2>&1; summ cuda-short $? $OUT/cuda.log
grep -E 'library|libcuda|libnvrtc' $OUT/cuda.log | head -3
( cd opencl && timeout 50 ../$W/opencl.test -test.count=1 -test.v ) > $OUT/opencl.log 2>&1; summ "opencl (NVIDIA)" $? $OUT/opencl.log
( cd plan && timeout 50 ../$W/plan.test -test.count=1 -test.v ) > $OUT/plan.log 2>&1; summ plan $? $OUT/plan.log
timeout 70 $W/ndconv.test -test.count=1 -test.run 'TestDevice|ExampleOpenDevice|TestExecuteChunks|TestBlocksOnDevices|TestHalfOnEveryDevice|TestPlanExecuteDeviceArguments' -test.v > $OUT/root.log 2>&1; summ root-device $? $OUT/root.log
( cd capi && timeout 40 ../$W/capi.test -test.count=1 -test.run 'Device' -test.v ) > $OUT/capi.log 2>&1; summ capi-device $? $OUT/capi.log
left=$(( 585 - ($(date +%s) - T0) ))
( cd cuda && timeout $((left / 2)) compute-sanitizer --tool memcheck --print-limit 20 ../$W/cuda.test -test.count=1 -test.short ) > $OUT/memcheck-cuda.log 2>&1
echo "memcheck cuda rc=$? ($(el))"; grep -E 'ERROR SUMMARY|^(ok|FAIL|PASS)|Invalid' $OUT/memcheck-cuda.log | head -4
left=$(( 585 - ($(date +%s) - T0) ))
( cd internal/gpu && NDCONV_GPU_TARGETS=cuda timeout $left compute-sanitizer --tool memcheck --print-limit 20 ../../$W/gpu.test -test.count=1 -test.short -test.run 'TestEngineTable|TestFFTLayouts|TestEngineDeviceAfter|TestEngineRegistered|TestEnginePipelined$|TestGemm' ) > $OUT/memcheck-gpu.log 2>&1
echo "memcheck internal/gpu rc=$? ($(el))"; grep -E 'ERROR SUMMARY|^(ok|FAIL|PASS)|Invalid' $OUT/memcheck-gpu.log | head -4
