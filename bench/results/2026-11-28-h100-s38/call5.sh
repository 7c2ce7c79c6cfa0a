#!/bin/bash
# Session 38, call 5 (one H100): the committed form (cfbcca8): internal/gpu's
# FFT tests on CUDA with its lengths, memcheck, cuDNN on the Gabor bank,
# and the guard A/B against A = 48c05e4 over every direct row and every
# row auto runs by FFT, three rounds interleaved, untuned.
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s38e
gunzip -f $W/*.gz; chmod +x $W/*.test
mkdir -p .gpu/ab && for v in A B; do gunzip -c $W/ab/ndconv-$v.gz > .gpu/ab/ndconv-$v; done; cp $W/ab/labels.txt .gpu/ab/; chmod +x .gpu/ab/*
FINAL=$OUT; OUT=/tmp/raw; mkdir -p $OUT
trap 'tar czf $FINAL/raw.tgz -C /tmp raw' EXIT
export PATH=$PATH:/usr/local/cuda/bin NDCONV_CACHE_DIR=/tmp/ndconv-cache
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
summ() { echo "$1: rc=$2 pass=$(grep -c -- '--- PASS' $3) fail=$(grep -c -- '--- FAIL' $3) skip=$(grep -c -- '--- SKIP' $3) ($(el))"; grep -E -- '(--- FAIL|^FAIL|panic|_test.go)' $3 | head -8; }
( cd internal/gpu && NDCONV_GPU_TARGETS=cuda timeout 100 ../../$W/gpu.test -test.count=1 -test.short -test.v -test.run 'TestFFT' ) > $OUT/fft-cuda.log 2>&1; summ "TestFFT cuda" $? $OUT/fft-cuda.log
( cd internal/gpu && NDCONV_GPU_TARGETS=cuda timeout 80 compute-sanitizer --tool memcheck --print-limit 20 ../../$W/gpu.test -test.count=1 -test.short -test.run 'TestFFTBatches|TestFFTLayouts' ) > $OUT/memcheck.log 2>&1
echo "memcheck rc=$? ($(el))"; grep -E 'ERROR SUMMARY|^(ok|FAIL|PASS)' $OUT/memcheck.log | head -4
.gpu/ab/ndconv-B bench --workload banks --only 'B-2d-k31' --list > $OUT/gabor.jsonl
timeout 100 python3 bench/peers/gpu_peers.py $OUT/gabor.jsonl --systems cudnn,cudnn-tf32 > $OUT/cudnn.jsonl 2> $OUT/cudnn.err
echo "cudnn rc=$? ($(el))"; python3 -c "
import json
for l in open('$OUT/cudnn.jsonl'):
    r=json.loads(l); print(r['id'], r['system'], r.get('ms_median'), r.get('note','')[:50])"
left=$(( 560 - ($(date +%s) - T0) ))
ONLY='^(S000-bank(1|8)|S001-w(3|15|2[1-9]|3[0-2])|S003-full-.*|A-2d-k(3|15|31)|A-2d-u8-k15|A-3d-k7|A-1d-k(63|1023)|B-2d-k(3|31)-.*)$' \
  ROUNDS=3 AB_OUT=$OUT/ab timeout $left bash scripts/ab-gpu.sh run > $OUT/ab.log 2>&1
echo "ab rc=$? ($(el))"; sed -n '/^| workload/,/^$/p' $OUT/ab/table.md | head -60; grep -E 'flag' $OUT/ab/table.md | tail -3
