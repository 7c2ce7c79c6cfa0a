#!/bin/bash
# Session 37, call 4 (one H100): what call 3 left: TestHalfOnEveryDevice
# comparing NaN payloads aside (d8d3a87), and internal/gpu's tests after
# TestEngineDeviceAfter (FFT, gemm, Winograd, the pipeline, registered
# host memory) on CUDA, then on NVIDIA's OpenCL with what time is left;
# memcheck of the engine paths issue 31's folds changed.
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s37d
gunzip -f $W/*.gz; chmod +x $W/*.test
FINAL=$OUT; OUT=/tmp/raw; mkdir -p $OUT
trap 'tar czf $FINAL/raw.tgz -C /tmp raw' EXIT
export PATH=$PATH:/usr/local/cuda/bin NDCONV_CACHE_DIR=/tmp/ndconv-cache
mkdir -p /tmp/icd $NDCONV_CACHE_DIR && echo libnvidia-opencl.so.1 >/tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd NDCONV_OPENCL_DEVICE=1:0
summ() { echo "$1: rc=$2 pass=$(grep -c -- '--- PASS' $3) fail=$(grep -c -- '--- FAIL' $3) skip=$(grep -c -- '--- SKIP' $3) ($(el))"; grep -E -- '(--- FAIL|^FAIL|panic|_test.go)' $3 | head -8; }
timeout 30 $W/ndconv.test -test.count=1 -test.run 'TestHalfOnEveryDevice' -test.v > $OUT/half.log 2>&1; summ half $? $OUT/half.log
REST='TestFFT|TestGemm|TestWinograd|TestEnginePipelined|TestEnginePipelineOverlap|TestEngineRegistered'
( cd internal/gpu && NDCONV_GPU_TARGETS=cuda timeout 90 ../../$W/gpu.test -test.count=1 -test.short -test.v -test.run "$REST" ) > $OUT/gpu-cuda.log 2>&1; summ "internal/gpu rest, cuda" $? $OUT/gpu-cuda.log
( cd internal/gpu && NDCONV_GPU_TARGETS=cuda timeout 70 compute-sanitizer --tool memcheck --print-limit 20 ../../$W/gpu.test -test.count=1 -test.short -test.run 'TestEngineDeviceAfter|TestEngineRegistered$|TestEnginePipelined$|TestGemmTable' ) > $OUT/memcheck.log 2>&1
echo "memcheck rc=$? ($(el))"; grep -E 'ERROR SUMMARY|^(ok|FAIL|PASS)' $OUT/memcheck.log | head -4
( cd internal/gpu && NDCONV_GPU_TARGETS=opencl timeout 100 ../../$W/gpu.test -test.count=1 -test.short -test.v -test.run "$REST" ) > $OUT/gpu-opencl.log 2>&1; summ "internal/gpu rest, NVIDIA OpenCL" $? $OUT/gpu-opencl.log
