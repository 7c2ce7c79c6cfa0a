#!/bin/bash
# Session 36, call 5 (one H100): the A/B guard of the session's GPU
# change, A = a8bb6b0 (main) against B = the tree (tiled.cl: a bank's
# weights in local memory, the default for volumes' banks of a multiple
# of 8 kernels of ≥ 125 taps; the last tiles moved inside the input for
# valid problems; valid problems staged under the constant border), 3
# rounds over every direct-method row of the bench (anchors, seeds,
# banks; untuned). Device tests first; cuDNN FP32/TF32 on S000's banks
# in the same call; the LocalWeights candidates on 5³ banks.
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
gunzip -f .gpu/ab/*.gz; chmod +x .gpu/ab/*
W=.gpu/ab
FINAL=$OUT; OUT=/tmp/raw; mkdir -p $OUT
trap 'tar czf $FINAL/raw.tgz -C /tmp raw' EXIT
export PATH=$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
( cd internal/gpu && NDCONV_CACHE_DIR=/tmp/t-cache NDCONV_GPU_TARGETS=cuda timeout 100 ../../$W/gpu.test -test.count=1 -test.short -test.v -test.run 'TestEngineLocalWeights|TestEngineTable|TestEngineBankGroups' ) > $OUT/tests.log 2>&1
echo "tests -short rc=$? ($(el))"; grep -E -- '^--- |^(ok|FAIL|PASS)|panic|checked' $OUT/tests.log | head -8
ONLY='^(S000-bank(1|2|4|8|16|32)|S001-w(3|5|7|15|21|31)|S003-full-.*|A-2d-k(3|5|7|9|15)|A-2d-u8-k(3|7|15)|A-rgba-k5|A-3d-k(3|7)|A-1d-k(7|63)|B-.*)$' \
  ROUNDS=3 AB_OUT=$OUT/ab timeout 380 bash scripts/ab-gpu.sh run > $OUT/ab.log 2>&1
echo "ab rc=$? ($(el))"; grep -E '^\| |flag' $OUT/ab/table.md | head -60
$W/ndconv-B bench --workload seeds --only '^S000-bank(8|16|32)$' --list > $OUT/s000.jsonl
timeout 120 python3 bench/peers/gpu_peers.py $OUT/s000.jsonl --systems cudnn,cudnn-tf32 > $OUT/cudnn.jsonl 2> $OUT/cudnn.err
echo "cudnn rc=$? ($(el))"; python3 -c "
import json
for l in open('$OUT/cudnn.jsonl'):
    r=json.loads(l); print(r['id'], r['system'], r.get('ms_median'), r.get('note','')[:60])"
( cd internal/gpu && NDCONV_CACHE_DIR=/tmp/t-cache NDCONV_GPU_TARGETS=cuda NDCONV_TIMING=1 NDCONV_LW_TIMING=4,5 timeout 90 ../../$W/gpu.test -test.count=1 -test.v -test.run 'TestLocalWeightsTiming' ) > $OUT/lwtime.log 2>&1
echo "timing 5³ rc=$? ($(el))"
grep -oE 'LWTIME .*' $OUT/lwtime.log | sed -E 's/LWTIME //; s/, weights in local memory/ LW/; s/work-groups per multiprocessor/wg\/SM/' | awk -F'|' '{split($3,a,"median "); split(a[2],b,","); print $1 "|" $2 "|" b[1] "," b[3]}'
