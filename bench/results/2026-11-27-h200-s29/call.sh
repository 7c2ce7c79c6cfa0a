#!/bin/bash
# Session 29, call 4: the A/B guard (A = 27f1ef2, session start; B =
# c7b701d: the stream-ordered engine entry and FFT's guarded fold), then
# CuPy's test_filters.py classes of the swapped functions with ndconv in.
set -u
t0=$(date +%s)
export PATH=$PATH:/usr/local/cuda/bin NDCONV_CACHE_DIR=/tmp/ndconv-cache PYTHONUNBUFFERED=1
mkdir -p .gpu/ab && for v in A B; do gunzip -c .gpu/s29ab/ndconv-$v.gz > .gpu/ab/ndconv-$v; done
cp .gpu/s29ab/labels.txt .gpu/ab/; chmod +x .gpu/ab/*
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
AB_OUT=/tmp/ab ONLY='^(S000-bank(1|8|32)|S001-w(3|5|15|21)|S002.*|A-2d-k(3|7|15)|A-2d-sep-k31|A-2d-u8-k(3|15)|A-rgba-k5|A-3d-k3|A-3d-sep-k7|A-1d-k(7|63)|S003-sep-c4-float32)$' \
  TUNING=bench/results/2026-11-25-h100-s25/tuning-after.json timeout 190 bash scripts/ab-gpu.sh run >/tmp/ab.log 2>&1
echo "ab exit $? after $(($(date +%s) - t0)) s"
cp /tmp/ab.log /tmp/ab/run.log 2>/dev/null; tar czf $OUT/ab.tgz -C /tmp ab
sed -n '/^| workload/,/^$/p' /tmp/ab/table.md 2>/dev/null; grep 'rows flagged' /tmp/ab/table.md
W=.gpu/s29; gunzip -f $W/libndconv.so.gz
export NDCONV_LIBRARY=$PWD/$W/libndconv.so PYTHONPATH=$PWD/python
timeout 120 python3 python/scipy_suite/run.py --time-limit 90 --cupy $W/cupy_tests/test_filters.py --json $OUT/cupy-suite.json \
  -k "(convolve or correlate or gaussian_filter1d) and not minimum and not median and not maximum and not percentile and not rank and not generic and not uniform and not laplace and not magnitude and not sobel and not prewitt " >$OUT/cupy-suite.log 2>&1
echo "cupy suite exit $? after $(($(date +%s)-t0)) s"; head -c 3000 $OUT/cupy-suite.log
