#!/bin/bash
# Session 36, call 6 (one H100): LocalWeights candidates with 8 outputs a
# work-item on 16 work-items a row (tiles of 128, which the last-tiles-
# inside rule serves; on 32 the tile of 256 overhung S000's 250 outputs),
# timed beside the committed default on S000's banks of 16 and 32.
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s36f
gunzip -f $W/*.gz; chmod +x $W/*
FINAL=$OUT; OUT=/tmp/raw; mkdir -p $OUT
trap 'tar czf $FINAL/raw.tgz -C /tmp raw' EXIT
export NDCONV_CACHE_DIR=/tmp/ndconv-cache PATH=$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
( cd internal/gpu && NDCONV_GPU_TARGETS=cuda NDCONV_TIMING=1 NDCONV_LW_TIMING=2,1 timeout 240 ../../$W/gpu.test -test.count=1 -test.v -test.run 'TestLocalWeightsTiming' ) > $OUT/lwtime.log 2>&1
echo "timing rc=$? ($(el))"
grep -oE 'LWTIME .*' $OUT/lwtime.log | sed -E 's/LWTIME //; s/, weights in local memory/ LW/; s/work-groups per multiprocessor/wg\/SM/' | awk -F'|' '{split($3,a,"median "); split(a[2],b,","); print $1 "|" $2 "|" b[1] "," b[3]}' | sort -t'|' -k3,3n | head -40
