#!/bin/bash
# Session 36, call 4: correlate_tiled moves the last tiles back inside
# the input where no output reads outside it (TILES_INSIDE, valid
# problems); outer_plane back as it was (call 3: no gain). Device tests;
# bench S000 rows and the 3-D bank, A = a8bb6b0 and B = the tree
# alternated twice; every LocalWeights candidate on S000's banks; ncu of
# the best LocalWeights shape on the bank of 32.
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s36d
gunzip -f $W/*.gz; chmod +x $W/*
FINAL=$OUT; OUT=/tmp/raw; mkdir -p $OUT
trap 'tar czf $FINAL/raw.tgz -C /tmp raw' EXIT
export NDCONV_CACHE_DIR=/tmp/ndconv-cache PATH=$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
( cd internal/gpu && NDCONV_GPU_TARGETS=cuda timeout 100 ../../$W/gpu.test -test.count=1 -test.v -test.run 'TestEngineLocalWeights' ) > $OUT/lw-full.log 2>&1
echo "LocalWeights every case rc=$? ($(el))"; grep -E -- '^--- |^(ok|FAIL|PASS)|panic|checked' $OUT/lw-full.log | head -4
( cd internal/gpu && NDCONV_GPU_TARGETS=cuda timeout 100 ../../$W/gpu.test -test.count=1 -test.short -test.v -test.run 'TestEngineTable|TestEngineBankGroups' ) > $OUT/short.log 2>&1
echo "table, bank groups -short rc=$? ($(el))"; grep -E -- '^--- |^(ok|FAIL|PASS)|panic' $OUT/short.log | head -6
only='^(S000-bank(1|8|16|32)|B-3d-k3-bank16)$'
for r in 1 2; do for v in A B; do
  $W/ndconv-$v bench --device cuda --workload all --only "$only" --json > $OUT/$v-r$r.jsonl 2>$OUT/$v-r$r.err
  echo "round $r $v rc=$? ($(el))"
done; done
python3 - $OUT <<'PY'
import json, sys, glob, collections
d = collections.defaultdict(dict)
for f in sorted(glob.glob(sys.argv[1] + '/[AB]-r*.jsonl')):
    v = f.split('/')[-1][0]
    for l in open(f):
        r = json.loads(l)
        if r.get('ms_median'):
            d[r['id']].setdefault(v, []).append((round(r['ms_median'], 3), r.get('checksum'), round(r.get('pct_roofline'), 1)))
for k, v in d.items():
    print(k, 'A', v.get('A'), 'B', v.get('B'))
PY
( cd internal/gpu && NDCONV_GPU_TARGETS=cuda NDCONV_TIMING=1 NDCONV_LW_TIMING=0,1,2 timeout 200 ../../$W/gpu.test -test.count=1 -test.v -test.run 'TestLocalWeightsTiming' ) > $OUT/lwtime.log 2>&1
echo "timing rc=$? ($(el))"
grep -oE 'LWTIME .*' $OUT/lwtime.log | sed -E 's/LWTIME //; s/, weights in local memory/ LW/; s/work-groups per multiprocessor/wg\/SM/' | awk -F'|' '{split($3,a,"median "); split(a[2],b,","); print $1 "|" $2 "|" b[1] "," b[3]}'
shape='32x4 threads, 4x1 outputs each, banks of 8 kernels, weights in local memory'
( cd internal/gpu && NDCONV_GPU_TARGETS=cuda NDCONV_TIMING=1 NDCONV_LW_TIMING=2 NDCONV_LW_SHAPE="$shape" timeout 100 ncu --kernel-name correlate_tiled --launch-count 1 --launch-skip 2 --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section ComputeWorkloadAnalysis --section InstructionStats --section SchedulerStats ../../$W/gpu.test -test.count=1 -test.v -test.run 'TestLocalWeightsTiming' ) > $OUT/ncu-lw.txt 2>&1
echo "ncu rc=$? ($(el))"
grep -E 'Duration|Registers Per|Achieved Occupancy|Executed Ipc A|Issue Slots Busy|No Eligible|Executed Instructions  |highest-utilized|cycles being stalled' $OUT/ncu-lw.txt | head -20
