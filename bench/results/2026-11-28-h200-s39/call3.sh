#!/bin/bash
# Session 39, call 3 (one H200): cuDNN FP32/TF32 on the banks set (call 2's
# peers ran out of time before it); every workload untuned (no tuning
# cache) with C, against call 2's tuned table; the A/B guard A = aab6e20
# (main before the device-planar merge), B = f77bcd1 (the merge), C = B +
# rows.cl's RGBA default; then ncu of item 4's misses (untuned, C).
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s39c
mkdir -p .gpu/ab && for v in A B C; do gunzip -c $W/ab/ndconv-$v.gz > .gpu/ab/ndconv-$v; done; cp $W/ab/labels.txt .gpu/ab/; chmod +x .gpu/ab/*
cp .gpu/ab/ndconv-C .gpu/ndconv
FINAL=$OUT; OUT=/tmp/raw; mkdir -p $OUT
trap 'tar czf $FINAL/raw.tgz -C /tmp raw' EXIT
export PATH=$PATH:/usr/local/cuda/bin NDCONV_CACHE_DIR=/tmp/ndconv-cache
mkdir -p $NDCONV_CACHE_DIR
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
.gpu/ndconv bench --workload banks --list > $OUT/banks.jsonl
timeout 100 python3 bench/peers/gpu_peers.py $OUT/banks.jsonl --systems cudnn,cudnn-tf32 > $OUT/cudnn-banks.jsonl 2> $OUT/cudnn-banks.err
echo "cudnn banks rc=$? $(wc -l < $OUT/cudnn-banks.jsonl) lines ($(el))"
NDCONV_TUNING=/tmp/none.json timeout 130 .gpu/ndconv bench --workload all --json --device cuda > $OUT/untuned.jsonl 2> $OUT/untuned.err
echo "untuned rc=$? $(grep -c '"result"' $OUT/untuned.jsonl) results ($(el))"
ONLY='^(A-rgba-k5|A-2d-k(3|5|15)|A-2d-u8-k3|S001-w(5|24)|S003-(full|sep)-c4-float32|B-2d-k3-bank64|A-3d-k3)$' \
  ROUNDS=3 AB_OUT=$OUT/ab timeout 170 bash scripts/ab-gpu.sh run > $OUT/ab.log 2>&1
echo "ab rc=$? ($(el))"; sed -n '/^| workload/,/^$/p' $OUT/ab/table.md | head -20; grep -E 'flag' $OUT/ab/table.md | tail -3
left=$(( 560 - ($(date +%s) - T0) ))
PROFILE_ONLY='^(A-2d-k15|A-2d-sep-k31|A-2d-u8-k3|A-1d-k63|S003-sep-c4-float32|S001-w8)$' OUT=$OUT/ncu timeout $left bash scripts/profile-gpu.sh > $OUT/ncu.log 2>&1
echo "ncu rc=$? ($(el))"; cat $OUT/ncu/profile.txt 2>/dev/null | cut -c1-400
