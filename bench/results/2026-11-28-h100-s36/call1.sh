#!/bin/bash
# Session 36, call 1 (one H100): tiled.cl with a bank's weights in local
# memory (TiledShape.LocalWeights), tuning candidates only (no default
# changed). Device tests of it on CUDA, every candidate timed on S000's
# banks and a 2-D 7×7 bank (TestLocalWeightsTiming), the bench's S000 rows
# with their FMA peak, ncu of one candidate on S000's bank of 32,
# memcheck. A = a8bb6b0 (main), B = the tree.
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s36a
gunzip -f $W/*.gz; chmod +x $W/*
FINAL=$OUT; OUT=/tmp/raw; mkdir -p $OUT
trap 'tar czf $FINAL/raw.tgz -C /tmp raw' EXIT
export NDCONV_CACHE_DIR=/tmp/ndconv-cache PATH=$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
( cd internal/gpu && NDCONV_GPU_TARGETS=cuda timeout 120 ../../$W/gpu.test -test.count=1 -test.v -test.run 'TestEngineLocalWeights' ) > $OUT/lw-full.log 2>&1
echo "LocalWeights every case rc=$? ($(el))"; grep -E -- '^--- |^(ok|FAIL|PASS)|panic|checked' $OUT/lw-full.log | head
( cd internal/gpu && NDCONV_GPU_TARGETS=cuda timeout 90 ../../$W/gpu.test -test.count=1 -test.short -test.v -test.run 'TestEngineTable|TestEngineBankGroups' ) > $OUT/short.log 2>&1
echo "table, bank groups -short rc=$? ($(el))"; grep -E -- '^--- |^(ok|FAIL|PASS)|panic' $OUT/short.log | head
( cd internal/gpu && NDCONV_GPU_TARGETS=cuda NDCONV_TIMING=1 timeout 240 ../../$W/gpu.test -test.count=1 -test.v -test.run 'TestLocalWeightsTiming' ) > $OUT/lwtime.log 2>&1
echo "timing rc=$? ($(el))"
grep -oE 'LWTIME .*' $OUT/lwtime.log | sed -E 's/LWTIME //; s/float32→float32 |uint8→float32 //; s/\[256 256 256\]//2' | awk -F'|' '{print $1 "|" $2 "|" $3}' | cut -c1-230
$W/ndconv-B bench --device cuda --workload seeds --only '^S000-bank(8|16|32)$' > $OUT/bench-s000.txt 2>&1
echo "bench rc=$? ($(el))"; cat $OUT/bench-s000.txt | head -20
shape='32x4 threads, 8x1 outputs each, 2 work-groups per multiprocessor, banks of 8 kernels, weights in local memory'
( cd internal/gpu && NDCONV_GPU_TARGETS=cuda NDCONV_TIMING=1 NDCONV_LW_TIMING=2 NDCONV_LW_SHAPE="$shape" timeout 120 ncu --kernel-name correlate_tiled --launch-count 1 --launch-skip 2 --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section ComputeWorkloadAnalysis --section InstructionStats ../../$W/gpu.test -test.count=1 -test.v -test.run 'TestLocalWeightsTiming' ) > $OUT/ncu-lw.txt 2>&1
echo "ncu rc=$? ($(el))"
grep -E 'Duration|Compute \(SM\) Throughput|Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Limit|Executed Ipc A|Issue Slots Busy|Stall|Shared Memory Configuration|Dynamic Shared|Static Shared|Executed Instructions|FMA|Pipe' $OUT/ncu-lw.txt | head -40
( cd internal/gpu && NDCONV_GPU_TARGETS=cuda timeout 150 compute-sanitizer --tool memcheck ../../$W/gpu.test -test.count=1 -test.short -test.run 'TestEngineLocalWeights' ) > $OUT/memcheck.log 2>&1
echo "memcheck rc=$? ($(el))"; tail -3 $OUT/memcheck.log
