#!/bin/bash
# Session 30, call 3: the Python device checks and CuPy's suite again
# (axes, zero-size weights), issue 27's many files with GPU banks (H100
# host, 10,000 PNGs, 200 volumes), then internal/gpu's FFT, gemm and
# Winograd tests on CUDA and NVIDIA's OpenCL.
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s30c
gunzip -f $W/gpu.test.gz $W/libndconv.so.gz; chmod +x $W/gpu.test
export PATH=$PATH:/usr/local/cuda/bin NDCONV_CACHE_DIR=/tmp/ndconv-cache PYTHONUNBUFFERED=1
mkdir -p /tmp/icd $NDCONV_CACHE_DIR && echo libnvidia-opencl.so.1 >/tmp/icd/nvidia.icd
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
export NDCONV_LIBRARY=$PWD/$W/libndconv.so PYTHONPATH=$PWD/python
timeout 100 python3 python/tests/gpu_arrays_device.py $OUT/gpu-arrays.json > $OUT/gpu-arrays.log 2>&1; echo "gpu arrays rc=$? ($(el))"
grep -E '^FAIL|checks,' $OUT/gpu-arrays.log | cut -c1-300 | head -20; grep -E '^(ndconv|cupyx)\.' $OUT/gpu-arrays.log | head -6
timeout 150 python3 python/scipy_suite/run.py --shards 12 --time-limit 135 --cupy $W/cupy_tests/test_filters.py --json $OUT/cupy-suite.json \
  -k "not minimum and not maximum and not median and not percentile and not rank and not generic_filter" > $OUT/cupy-suite.log 2>&1
echo "cupy suite rc=$? ($(el))"; head -c 1200 $OUT/cupy-suite.log; gzip -f $OUT/cupy-suite.json
mkdir -p .gpu/ab && gunzip -c $W/ab/ndconv-B.gz > /tmp/ndconv && chmod +x /tmp/ndconv
{ nproc; nvidia-smi -L; python3 -c 'import cv2; print("cv2", cv2.__version__)'; /tmp/ndconv version; } > $OUT/mf-env.txt 2>&1
MANY_TABLE=$OUT/mf-table.txt timeout 230 bash scripts/many-files.sh --ndconv /tmp/ndconv --python python3 --n 10000 --devices "cpu cuda" \
  --reps 2 --vols 200 --bank 64 /tmp/mf > $OUT/mf-run.log 2>&1
echo "many files rc=$? ($(el))"; cat $OUT/mf-table.txt 2>/dev/null | head -40
left=$(( 585 - ($(date +%s) - T0) ))
( cd internal/gpu && OCL_ICD_VENDORS=/tmp/icd NDCONV_OPENCL_DEVICE=1:0 timeout $left ../../$W/gpu.test -test.count=1 -test.short -test.v -test.run 'TestGemm|TestFFT|TestWinograd' ) > $OUT/gpu.log 2>&1
echo "internal/gpu subset rc=$? pass=$(grep -c '^--- PASS' $OUT/gpu.log) fail=$(grep -c '^--- FAIL' $OUT/gpu.log) ($(el))"; grep -E '^(--- |FAIL|panic)' $OUT/gpu.log | head -20
