#!/bin/bash
# Session 35, call 8 (one H100): border_near — the one-period forms in
# load_sample only (the direct families' staging), border_index unchanged
# elsewhere. A = c2c7123, B = the tree. A B ×3 under mapped and constant
# borders (sepring.cl under mirror as the control call 7 flagged); ncu of
# the 3-D bank under constant and reflect (B); the direct families' device
# tests (-short).
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s35h
gunzip -f $W/*.gz; chmod +x $W/*
FINAL=$OUT; OUT=/tmp/raw; mkdir -p $OUT
trap 'tar czf $FINAL/raw.tgz -C /tmp raw' EXIT
export NDCONV_CACHE_DIR=/tmp/ndconv-cache NDCONV_TUNING=/tmp/none.json PATH=$PATH:/usr/local/cuda/bin
rows=(
 "bank16-3d-reflect|--shape 256,256,256 --kernel 3x3x3 --bank 16 --border reflect"
 "bank16-3d-wrap|--shape 256,256,256 --kernel 3x3x3 --bank 16 --border wrap"
 "bank16-3d-constant|--shape 256,256,256 --kernel 3x3x3 --bank 16 --border constant"
 "3d-k3-reflect|--shape 512,512,512 --kernel 3x3x3 --border reflect"
 "2d-k7-2048-reflect|--shape 2048,2048 --kernel 7x7 --border reflect"
 "2d-k15-2048-mirror|--shape 2048,2048 --kernel 15x15 --border mirror"
 "2d-sep31-8192-mirror|--shape 8192,8192 --kernel 31x31 --separable --border mirror"
 "bank64-2d-reflect|--shape 2048,2048 --kernel 3x3 --bank 64 --border reflect"
 "s000-bank8-reflect|--shape 256,256,256 --kernel 7x7x7 --bank 8 --dtype uint8 --out-dtype float32 --border reflect"
)
for r in 1 2 3; do for v in A B; do for row in "${rows[@]}"; do
  name=${row%%|*}; args=${row#*|}
  echo "$v $r $name $($W/ndconv-$v bench --device cuda $args 2>&1 | tail -1 | awk '{print $(NF-4), $NF}')"
done; echo "round $r $v ($(el))" >&2; done; done > $OUT/ab.txt
python3 - $OUT/ab.txt <<'PY'
import sys, collections, statistics as st
d = collections.defaultdict(list)
for l in open(sys.argv[1]):
    v, r, name, ms, pct = l.split()
    d[(name, v)].append(float(ms))
names = []
for (n, v) in d:
    if n not in names: names.append(n)
for n in names:
    a, b = d[(n, 'A')], d[(n, 'B')]
    flag = "SLOWER" if st.median(b) > 1.03 * st.median(a) and min(b) > max(a) else ""
    print(f"| {n} | {st.median(a):.4f} ({min(a):.4f}–{max(a):.4f}) | {st.median(b):.4f} ({min(b):.4f}–{max(b):.4f}) | {st.median(b)/st.median(a):.3f} | {flag} |")
PY
for b in constant reflect; do
  timeout 90 ncu --kernel-name correlate_bank --launch-count 1 --launch-skip 2 --section SpeedOfLight --section WarpStateStats --section InstructionStats --section LaunchStats --section Occupancy \
    $W/ndconv-B bench --device cuda --shape 256,256,256 --kernel 3x3x3 --bank 16 --border $b --repeat 3 > $OUT/ncu-$b.txt 2>&1
  echo "ncu $b rc=$? ($(el))"
  grep -E 'Duration|DRAM Throughput|Issue Slots Busy|Executed Instructions  |Registers Per|Achieved Occupancy|Stall (Long|Short|Wait|Barrier|MIO|LG|Math|Not Sel|Selected|Branch|No Inst|Tex|Dispatch)|Warp Cycles Per Issued' $OUT/ncu-$b.txt | head -20
done
( cd internal/gpu && NDCONV_GPU_TARGETS=cuda timeout 150 ../../$W/gpu.test -test.count=1 -test.short -test.v -test.run 'TestEngineTable|TestEngineRolling|TestEngineBank|TestEngineWindow|TestGemmTable' ) > $OUT/tests.log 2>&1
echo "tests -short rc=$? ($(el))"; grep -E -- '^--- |^(ok|FAIL|PASS)|panic' $OUT/tests.log | head -12
