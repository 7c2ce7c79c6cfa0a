#!/bin/bash
# Session 30, call 2: the Python device checks (named filters, fixed),
# CuPy's test_filters.py on the classes that call ndconv, the A/B guard
# (A = c7b701d, last guarded; B = e186828), the internal/gpu tests of the
# folded methods, gemm's S000 on the H100.
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s30c
gunzip -f $W/gpu.test.gz $W/libndconv.so.gz; chmod +x $W/gpu.test
export PATH=$PATH:/usr/local/cuda/bin NDCONV_CACHE_DIR=/tmp/ndconv-cache PYTHONUNBUFFERED=1
mkdir -p /tmp/icd $NDCONV_CACHE_DIR && echo libnvidia-opencl.so.1 >/tmp/icd/nvidia.icd
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
export NDCONV_LIBRARY=$PWD/$W/libndconv.so PYTHONPATH=$PWD/python
timeout 100 python3 python/tests/gpu_arrays_device.py $OUT/gpu-arrays.json > $OUT/gpu-arrays.log 2>&1; echo "gpu arrays rc=$? ($(el))"
grep -E '^FAIL|checks,' $OUT/gpu-arrays.log | cut -c1-300 | head -20; grep -E '^(ndconv|cupyx)\.' $OUT/gpu-arrays.log | head -12
timeout 175 python3 python/scipy_suite/run.py --shards 12 --time-limit 160 --cupy $W/cupy_tests/test_filters.py --json $OUT/cupy-suite.json \
  -k "not minimum and not maximum and not median and not percentile and not rank and not generic_filter" > $OUT/cupy-suite.log 2>&1
echo "cupy suite rc=$? ($(el))"; head -c 1500 $OUT/cupy-suite.log; gzip -f $OUT/cupy-suite.json
mkdir -p .gpu/ab && for v in A B; do gunzip -c $W/ab/ndconv-$v.gz > .gpu/ab/ndconv-$v; done; cp $W/ab/labels.txt .gpu/ab/; chmod +x .gpu/ab/*
AB_OUT=/tmp/ab ONLY='^(S000-bank(1|8|32)|S001-w(3|5|15|21)|S002.*|A-2d-k(3|7|15)|A-2d-sep-k31|A-2d-u8-k(3|15)|A-rgba-k5|A-3d-k3|A-3d-sep-k7|A-1d-k(7|63)|S003-sep-c4-float32)$' \
  TUNING=bench/results/2026-11-25-h100-s25/tuning-after.json timeout 190 bash scripts/ab-gpu.sh run >/tmp/ab.log 2>&1
echo "ab rc=$? ($(el))"; cp /tmp/ab.log /tmp/ab/run.log 2>/dev/null; tar czf $OUT/ab.tgz -C /tmp ab
sed -n '/^| workload/,/^$/p' /tmp/ab/table.md 2>/dev/null | head -30; grep 'rows flagged' /tmp/ab/table.md
left=$(( 560 - ($(date +%s) - T0) ))
( cd internal/gpu && timeout $((left - 35)) ../../$W/gpu.test -test.count=1 -test.short -test.v -test.run 'TestEngineDeviceAfter|TestGemm|TestFFT|TestWinograd|TestEngineEmpty' ) > $OUT/gpu.log 2>&1
echo "internal/gpu subset rc=$? pass=$(grep -c '^--- PASS' $OUT/gpu.log) fail=$(grep -c '^--- FAIL' $OUT/gpu.log) ($(el))"; grep -E '^(--- |FAIL|panic)' $OUT/gpu.log | head -20
left=$(( 590 - ($(date +%s) - T0) ))
[ $left -gt 8 ] && timeout $left .gpu/ab/ndconv-B bench --device cuda --workload seeds --only 'S000-bank(8|32)$' --method gemm --json > $OUT/gemm.jsonl 2>&1; echo "gemm rc=$? ($(el))"; grep -o '"id":"[^"]*"\|"ms_median":[0-9.]*' $OUT/gemm.jsonl | paste - - | head
