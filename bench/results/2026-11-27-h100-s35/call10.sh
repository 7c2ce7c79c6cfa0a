#!/bin/bash
# Session 35, call 10 (one H100): call 9 again, the constant border keeping
# its old staging (call 9 made it 2.4% slower) and stage_edge reading
# whole rows (a constant divisor). A = 56369dc, B = the tree. Device
# tests (-short); A B ×3 under mapped and constant borders.
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s35j
gunzip -f $W/*.gz; chmod +x $W/*
FINAL=$OUT; OUT=/tmp/raw; mkdir -p $OUT
trap 'tar czf $FINAL/raw.tgz -C /tmp raw' EXIT
export NDCONV_CACHE_DIR=/tmp/ndconv-cache NDCONV_TUNING=/tmp/none.json PATH=$PATH:/usr/local/cuda/bin
( cd internal/gpu && NDCONV_GPU_TARGETS=cuda timeout 100 ../../$W/gpu.test -test.count=1 -test.short -test.v -test.run 'TestEngineBank$|TestEngineTable' ) > $OUT/tests.log 2>&1
echo "tests -short rc=$? ($(el))"; grep -E -- '^--- |^(ok|FAIL|PASS)|panic' $OUT/tests.log | head
rows=(
 "bank16-3d-reflect|--shape 256,256,256 --kernel 3x3x3 --bank 16 --border reflect"
 "bank16-3d-wrap|--shape 256,256,256 --kernel 3x3x3 --bank 16 --border wrap"
 "bank16-3d-mirror|--shape 256,256,256 --kernel 3x3x3 --bank 16 --border mirror"
 "bank16-3d-constant|--shape 256,256,256 --kernel 3x3x3 --bank 16 --border constant"
 "bank64-2d-reflect|--shape 2048,2048 --kernel 3x3 --bank 64 --border reflect"
 "bank64-2d-constant|--shape 2048,2048 --kernel 3x3 --bank 64 --border constant"
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
