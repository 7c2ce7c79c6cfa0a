#!/bin/bash
# Session 36, call 2 (one H100): LocalWeights bank groups now walk
# plane-major (each work-group stages its own group's weights), and valid
# problems stage with the constant border (no output reads outside). Every
# LocalWeights candidate timed on S000's banks (TestLocalWeightsTiming,
# now under the constant border like the bench); ncu of the best-known
# LocalWeights shape and of the old default on S000's bank of 32;
# LocalWeights device tests (-short).
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s36b
gunzip -f $W/*.gz; chmod +x $W/*
FINAL=$OUT; OUT=/tmp/raw; mkdir -p $OUT
trap 'tar czf $FINAL/raw.tgz -C /tmp raw' EXIT
export NDCONV_CACHE_DIR=/tmp/ndconv-cache PATH=$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
( cd internal/gpu && NDCONV_GPU_TARGETS=cuda timeout 60 ../../$W/gpu.test -test.count=1 -test.short -test.v -test.run 'TestEngineLocalWeights' ) > $OUT/lw-short.log 2>&1
echo "LocalWeights -short rc=$? ($(el))"; grep -E -- '^--- |^(ok|FAIL|PASS)|panic|checked' $OUT/lw-short.log | head -4
( cd internal/gpu && NDCONV_GPU_TARGETS=cuda NDCONV_TIMING=1 NDCONV_LW_TIMING=0,1,2 timeout 200 ../../$W/gpu.test -test.count=1 -test.v -test.run 'TestLocalWeightsTiming' ) > $OUT/lwtime.log 2>&1
echo "timing rc=$? ($(el))"
grep -oE 'LWTIME .*' $OUT/lwtime.log | sed -E 's/LWTIME //; s/, weights in local memory/ LW/; s/work-groups per multiprocessor/wg\/SM/' | awk -F'|' '{split($3,a,"median "); split(a[2],b,","); print $1 "|" $2 "|" b[1] "," b[3]}'
for shape in '32x4 threads, 4x1 outputs each, banks of 8 kernels, weights in local memory' '32x4 threads, 2x2 outputs each, banks of 8 kernels'; do
  tag=$(echo "$shape" | tr -cd '[:alnum:]' | cut -c1-40)
  ( cd internal/gpu && NDCONV_GPU_TARGETS=cuda NDCONV_TIMING=1 NDCONV_LW_TIMING=2 NDCONV_LW_SHAPE="$shape" timeout 100 ncu --kernel-name correlate_tiled --launch-count 1 --launch-skip 2 --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section ComputeWorkloadAnalysis --section InstructionStats --section MemoryWorkloadAnalysis --section SchedulerStats ../../$W/gpu.test -test.count=1 -test.v -test.run 'TestLocalWeightsTiming' ) > $OUT/ncu-$tag.txt 2>&1
  echo "ncu $shape rc=$? ($(el))"
  grep -E 'Duration|Registers Per|Achieved Occupancy|Executed Ipc A|Issue Slots Busy|No Eligible|Stall|Executed Instructions  |Bank Conflicts|L1/TEX Hit|L2 Hit|DRAM Throughput|highest-utilized' $OUT/ncu-$tag.txt | head -24
done
