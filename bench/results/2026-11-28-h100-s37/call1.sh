#!/bin/bash
# Session 37, call 1 (one H100): tiled.cl's staging — a moved-back last
# tile (TILES_INSIDE) read by 4-vectors from a run-time lead instead of
# element by element, put4's guards as one unsigned comparison and SKEW
# an unsigned division; common.cl's outer_plane without a division on the
# first outer axis. Device tests (CUDA), memcheck of the bank cases, then
# the A/B guard A = 3e18bc4 (main), B = the tree, over every direct row.
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s37a
gunzip -f $W/*.gz; chmod +x $W/*.test
mkdir -p .gpu/ab && for v in A B; do gunzip -c $W/ab/ndconv-$v.gz > .gpu/ab/ndconv-$v; done; cp $W/ab/labels.txt .gpu/ab/; chmod +x .gpu/ab/*
FINAL=$OUT; OUT=/tmp/raw; mkdir -p $OUT
trap 'tar czf $FINAL/raw.tgz -C /tmp raw' EXIT
export PATH=$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
export NDCONV_CACHE_DIR=/tmp/t-cache
( cd internal/gpu && NDCONV_GPU_TARGETS=cuda timeout 150 ../../$W/gpu.test -test.count=1 -test.short -test.v -test.run 'TestEngineLocalWeights|TestEngineTable|TestEngineBankGroups|TestEngineRolling|TestEngineWindow|TestEngineBank$' ) > $OUT/tests.log 2>&1
echo "tests -short rc=$? ($(el))"; grep -E -- '^--- |^(ok|FAIL|PASS)|panic' $OUT/tests.log | head -12
( cd internal/gpu && NDCONV_GPU_TARGETS=cuda timeout 110 compute-sanitizer --tool memcheck --print-limit 20 ../../$W/gpu.test -test.count=1 -test.short -test.run 'TestEngineBank$|TestEngineLocalWeights' ) > $OUT/memcheck.log 2>&1
echo "memcheck rc=$? ($(el))"; grep -E 'ERROR SUMMARY|^(ok|FAIL|PASS)|Invalid' $OUT/memcheck.log | head -6
left=$(( 570 - ($(date +%s) - T0) ))
ONLY='^(S000-bank(1|2|4|8|16|32)|S001-w(3|5|7|15|21|31)|S003-full-.*|A-2d-k(3|5|7|9|15)|A-2d-u8-k(3|7|15)|A-rgba-k5|A-3d-k(3|7)|A-1d-k(7|63)|B-.*)$' \
  ROUNDS=3 AB_OUT=$OUT/ab timeout $left bash scripts/ab-gpu.sh run > $OUT/ab.log 2>&1
echo "ab rc=$? ($(el))"; sed -n '/^| workload/,/^$/p' $OUT/ab/table.md | head -45; grep -E 'flag' $OUT/ab/table.md | tail -3
