#!/bin/bash
# Session 39, call 4 (one H200): auto's FFT margin once the scale is
# calibrated. A = call 3's C (f77bcd1 + rows.cl's RGBA default), B = A +
# calibratedFastMargin (1.2 where FFTScaleN >= 3). First with call 1's
# tuning cache (FFT scale 0.802 over 16 workloads): the rows near auto's
# direct/FFT boundary; then untuned, where B must change nothing.
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s39d
mkdir -p .gpu/ab && for v in A B; do gunzip -c $W/ab/ndconv-$v.gz > .gpu/ab/ndconv-$v; done; cp $W/ab/labels.txt .gpu/ab/; chmod +x .gpu/ab/*
FINAL=$OUT; OUT=/tmp/raw; mkdir -p $OUT
trap 'tar czf $FINAL/raw.tgz -C /tmp raw' EXIT
export PATH=$PATH:/usr/local/cuda/bin NDCONV_CACHE_DIR=/tmp/ndconv-cache
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
ONLY='^(S001-w(2[0-9]|3[0-2])|A-2d-k(15|31)|A-3d-k7|A-1d-k(63|1023)|S003-(full|sep)-c1-.*|B-2d-k31-bank16)$' \
  TUNING=bench/results/2026-11-28-h200-s39/tuning-call1.json ROUNDS=3 AB_OUT=$OUT/ab-tuned timeout 260 bash scripts/ab-gpu.sh run > $OUT/ab-tuned.log 2>&1
echo "ab tuned rc=$? ($(el))"; sed -n '/^| workload/,/^$/p' $OUT/ab-tuned/table.md | head -30; grep -E 'flag' $OUT/ab-tuned/table.md | tail -2
ONLY='^(S001-w(2[2-6])|S003-.*|A-2d-k31)$' ROUNDS=3 AB_OUT=$OUT/ab-untuned timeout 150 bash scripts/ab-gpu.sh run > $OUT/ab-untuned.log 2>&1
echo "ab untuned rc=$? ($(el))"; sed -n '/^| workload/,/^$/p' $OUT/ab-untuned/table.md | head -20; grep -E 'flag' $OUT/ab-untuned/table.md | tail -2
