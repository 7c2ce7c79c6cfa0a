#!/bin/bash
# Session 31, call 1: TestEngineConcurrent on NVIDIA OpenCL, cold caches,
# with concurrent builds (as shipped) and with NDCONV_OPENCL_SERIAL_BUILDS=1;
# then a failing run's cache reused warm; then the Python GPU-array checks.
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s31a
gunzip -f $W/gpu.test.gz $W/libndconv.so.gz; chmod +x $W/gpu.test
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 >/tmp/icd/nvidia.icd
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { # name, extra env...
  local name=$1; shift
  ( cd internal/gpu && env OCL_ICD_VENDORS=/tmp/icd NDCONV_OPENCL_DEVICE=1:0 NDCONV_GPU_TARGETS=opencl "$@" timeout 60 ../../$W/gpu.test -test.count=1 -test.short -test.v -test.run 'TestEngineConcurrent$' ) > $OUT/$name.log 2>&1
  echo "$name rc=$? fails=$(grep -c 'engine_test.go' $OUT/$name.log) ($(el))"; grep -E 'engine_test.go' $OUT/$name.log | cut -c1-220 | head -4
}
for i in 1 2 3; do run plain$i NDCONV_CACHE_DIR=/tmp/cc$i; done
for i in 1 2 3; do run serial$i NDCONV_CACHE_DIR=/tmp/cs$i NDCONV_OPENCL_SERIAL_BUILDS=1; done
for i in 1 2 3; do run warm$i NDCONV_CACHE_DIR=/tmp/cc$i NDCONV_OPENCL_SERIAL_BUILDS=1; done
export NDCONV_CACHE_DIR=/tmp/ndconv-cache PYTHONUNBUFFERED=1 NDCONV_LIBRARY=$PWD/$W/libndconv.so PYTHONPATH=$PWD/python
timeout 120 python3 python/tests/gpu_arrays_device.py $OUT/gpu-arrays.json > $OUT/gpu-arrays.log 2>&1; echo "gpu arrays rc=$? ($(el))"
grep -E '^FAIL|checks,' $OUT/gpu-arrays.log | cut -c1-300 | head -20; grep -E '^(ndconv|cupyx)\.' $OUT/gpu-arrays.log | head -6
