#!/bin/bash
# Session 31, call 2 (2-GPU host): the OpenCL keep-alive fix (cold
# TestEngineConcurrent on NVIDIA OpenCL x3), the free lists' device tests
# (cuda, opencl, internal/gpu engine tests on CUDA, blocks on cuda:all),
# then TestBlocksDeviceScaling A (89c84d1) / B (free lists) interleaved.
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s31b
gunzip -f $W/*.gz; chmod +x $W/*.test
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 >/tmp/icd/nvidia.icd
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc
for i in 1 2 3; do
  ( cd internal/gpu && OCL_ICD_VENDORS=/tmp/icd NDCONV_OPENCL_DEVICE=1:0 NDCONV_GPU_TARGETS=opencl NDCONV_CACHE_DIR=/tmp/cc$i timeout 60 ../../$W/gpu.test -test.count=1 -test.short -test.v -test.run 'TestEngineConcurrent$' ) > $OUT/ocl$i.log 2>&1
  echo "opencl concurrent cold $i rc=$? ($(el))"; grep -E 'engine_test.go:3' $OUT/ocl$i.log | cut -c1-200 | head -3
done
export NDCONV_CACHE_DIR=/tmp/ndconv-cache
( cd cuda && timeout 90 ../$W/cuda.test -test.count=1 -test.v -test.run 'TestGPU' ) > $OUT/cuda.log 2>&1
echo "cuda rc=$? pass=$(grep -c -- '--- PASS' $OUT/cuda.log) fail=$(grep -c -- '--- FAIL' $OUT/cuda.log) ($(el))"; grep -E -- '--- FAIL|panic' $OUT/cuda.log | head
( cd opencl && OCL_ICD_VENDORS=/tmp/icd NDCONV_OPENCL_DEVICE=1:0 timeout 60 ../$W/opencl.test -test.count=1 -test.v -test.run 'TestGPU' ) > $OUT/opencl.log 2>&1
echo "opencl rc=$? pass=$(grep -c -- '--- PASS' $OUT/opencl.log) fail=$(grep -c -- '--- FAIL' $OUT/opencl.log) ($(el))"; grep -E -- '--- FAIL|panic' $OUT/opencl.log | head
timeout 60 $W/root-B.test -test.count=1 -test.v -test.run 'TestBlocksOnDevices' > $OUT/blocks.log 2>&1
echo "blocks on devices rc=$? ($(el))"; grep -E -- '^(--- |ok|FAIL)' $OUT/blocks.log | head -4
for v in A B A B; do
  NDCONV_SCALING=1 NDCONV_SCALING_INFLIGHT=0,8 timeout 100 $W/root-$v.test -test.count=1 -test.v -test.run 'TestBlocksDeviceScaling' > $OUT/scaling-$v.log 2>&1
  echo "== scaling $v rc=$? ($(el))"; grep -E 'GB/s|×|GPUs|FAIL|differs' $OUT/scaling-$v.log | sed 's/^ *//' | cut -c1-120
  cat $OUT/scaling-$v.log >> $OUT/scaling-all-$v.log
done
left=$(( 570 - ($(date +%s) - T0) ))
( cd internal/gpu && NDCONV_GPU_TARGETS=cuda timeout $left ../../$W/gpu.test -test.count=1 -test.short -test.v -test.run 'TestEngine' ) > $OUT/gpu-cuda.log 2>&1
echo "internal/gpu TestEngine* on cuda rc=$? pass=$(grep -c '^--- PASS' $OUT/gpu-cuda.log) fail=$(grep -c '^--- FAIL' $OUT/gpu-cuda.log) ($(el))"; grep -E '^(--- FAIL|FAIL|panic)' $OUT/gpu-cuda.log | head
