#!/bin/bash
# Session 39, call 1 (one H200): the machine (ncu, OpenCL), branch
# s38-device-planar's device tests (planar banks into device arrays, on
# CUDA and NVIDIA's OpenCL), a short engine check on the new card, then
# `ndconv tune` over every bench workload into a tuning cache for this
# card (the H100's caches do not apply: keyed by the card's name).
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s39a
gunzip -f $W/*.gz; chmod +x $W/*
FINAL=$OUT; OUT=/tmp/raw; mkdir -p $OUT
trap 'cp $OUT/tuning.json $FINAL/ 2>/dev/null; tar czf $FINAL/raw.tgz -C /tmp raw' EXIT
export PATH=$PATH:/usr/local/cuda/bin NDCONV_CACHE_DIR=/tmp/ndconv-cache
mkdir -p /tmp/icd $NDCONV_CACHE_DIR && echo libnvidia-opencl.so.1 >/tmp/icd/nvidia.icd
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader; uname -r; nproc
ncu --version | tail -1; ldconfig -p | grep -c libnvidia-opencl
summ() { echo "$1: rc=$2 pass=$(grep -c -- '--- PASS' $3) fail=$(grep -c -- '--- FAIL' $3) skip=$(grep -c -- '--- SKIP' $3) ($(el))"; grep -E -- '(--- FAIL|^FAIL|panic|_test.go)' $3 | head -8; }
timeout 120 $W/ndconv.test -test.count=1 -test.v -test.run 'TestPlanarDeviceArrays|TestPlanarGPUHost|TestDevice|TestPlanExecuteDeviceArguments' > $OUT/root-cuda.log 2>&1; summ "root planar+device tests (CUDA)" $? $OUT/root-cuda.log
OCL_ICD_VENDORS=/tmp/icd NDCONV_OPENCL_DEVICE=1:0 timeout 90 $W/ndconv.test -test.count=1 -test.v -test.run 'TestPlanarDeviceArrays|TestPlanarGPUHost' > $OUT/root-opencl.log 2>&1; summ "planar tests with NVIDIA OpenCL" $? $OUT/root-opencl.log
grep -E -- '--- (PASS|SKIP).*Planar' $OUT/root-*.log | head -12
( cd internal/gpu && NDCONV_GPU_TARGETS=cuda timeout 90 ../../$W/gpu.test -test.count=1 -test.short -test.v -test.run 'TestEngineTable|TestEngineBank$' ) > $OUT/engine-cuda.log 2>&1; summ "TestEngineTable|TestEngineBank -short (CUDA, H200)" $? $OUT/engine-cuda.log
left=$(( 575 - ($(date +%s) - T0) ))
echo "tune: $left s left"
timeout $left $W/ndconv tune --workload all --time-limit 4s --repeat 5 --cache $OUT/tuning.json > $OUT/tune.log 2>&1
echo "tune rc=$? ($(el)); $(grep -c . $OUT/tune.log) lines"; tail -4 $OUT/tune.log
