#!/bin/bash
# Session 30, call 1: the GPU suites on main (internal/gpu, cuda -short,
# plan, the root package's device tests), the Python device checks with the
# named filters on CuPy/torch, then CuPy's whole test_filters.py with every
# ndconv filter swapped in (8 shards).
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s30c
gunzip -f $W/*.gz; chmod +x $W/*.test
export PATH=$PATH:/usr/local/cuda/bin NDCONV_CACHE_DIR=/tmp/ndconv-cache PYTHONUNBUFFERED=1
mkdir -p /tmp/icd $NDCONV_CACHE_DIR && echo libnvidia-opencl.so.1 >/tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd NDCONV_OPENCL_DEVICE=1:0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
summ() { echo "$1: rc=$2 pass=$(grep -c '^--- PASS' $3) fail=$(grep -c '^--- FAIL' $3) skip=$(grep -c '^--- SKIP' $3) ($(el))"; grep -E '^(--- FAIL|FAIL|panic)' $3 | head -10; }
( cd internal/gpu && timeout 150 ../../$W/gpu.test -test.count=1 -test.v ) > $OUT/gpu.log 2>&1; summ internal/gpu $? $OUT/gpu.log
( cd cuda && timeout 70 ../$W/cuda.test -test.count=1 -test.short -test.v ) > $OUT/cuda.log 2>&1; summ cuda-short $? $OUT/cuda.log
( cd plan && timeout 40 ../$W/plan.test -test.count=1 -test.v ) > $OUT/plan.log 2>&1; summ plan $? $OUT/plan.log
timeout 60 $W/ndconv.test -test.count=1 -test.run 'TestDevice|ExampleOpenDevice|TestExecuteChunks|TestBlocksDevices' -test.v > $OUT/root.log 2>&1; summ root-device $? $OUT/root.log
export NDCONV_LIBRARY=$PWD/$W/libndconv.so PYTHONPATH=$PWD/python
timeout 120 python3 python/tests/gpu_arrays_device.py $OUT/gpu-arrays.json > $OUT/gpu-arrays.log 2>&1; echo "gpu arrays rc=$? ($(el))"
grep -E '^FAIL|checks,' $OUT/gpu-arrays.log | head -30; grep -E 'gaussian|sobel|ndconv.correlate\(cupy\)|cupyx.scipy' $OUT/gpu-arrays.log | head -12
left=$(( 540 - ($(date +%s) - T0) ))
echo "== CuPy suite, $left s left"
timeout $((left + 15)) python3 python/scipy_suite/run.py --shards 8 --time-limit $left --cupy $W/cupy_tests/test_filters.py --json $OUT/cupy-suite.json > $OUT/cupy-suite.log 2>&1
echo "cupy suite rc=$? ($(el))"; head -c 2500 $OUT/cupy-suite.log; gzip -f $OUT/cupy-suite.json
