#!/bin/bash
# Session 36, call 7 (one H100): stage_edge moved into common.cl (a row
# pitch and skew as arguments) and taken by tiled.cl's staging where C = 1
# (correlate_tiled, correlate_rolling) under the mapped borders — session
# 35's call 11 without the interleaved channels it lost on. A = 5c5b18e (HEAD,
# the LocalWeights commits), B = the tree. Device tests (-short); A B ×3
# over rows under reflect, wrap and mirror, and constant rows.
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s36g
gunzip -f $W/*.gz; chmod +x $W/*
FINAL=$OUT; OUT=/tmp/raw; mkdir -p $OUT
trap 'tar czf $FINAL/raw.tgz -C /tmp raw' EXIT
export NDCONV_CACHE_DIR=/tmp/ndconv-cache NDCONV_TUNING=/tmp/none.json PATH=$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
( cd internal/gpu && NDCONV_GPU_TARGETS=cuda timeout 100 ../../$W/gpu.test -test.count=1 -test.short -test.v -test.run 'TestEngineTable$|TestEngineRolling|TestEngineBank$|TestEngineLocalWeights' ) > $OUT/tests.log 2>&1
echo "tests -short rc=$? ($(el))"; grep -E -- '^--- |^(ok|FAIL|PASS)|panic' $OUT/tests.log | head
rows=(
 "3d-k3-reflect|--shape 512,512,512 --kernel 3x3x3 --border reflect"
 "3d-k3-wrap|--shape 512,512,512 --kernel 3x3x3 --border wrap"
 "3d-k3-mirror|--shape 512,512,512 --kernel 3x3x3 --border mirror"
 "3d-k3-constant|--shape 512,512,512 --kernel 3x3x3 --border constant"
 "3d-k7-reflect|--shape 256,256,256 --kernel 7x7x7 --border reflect"
 "2d-k7-2048-reflect|--shape 2048,2048 --kernel 7x7 --border reflect"
 "2d-k3-8192-reflect|--shape 8192,8192 --kernel 3x3 --border reflect"
 "rgba-k5-4096-mirror|--shape 4096,4096 --channels 4 --kernel 5x5 --border mirror"
 "s000-bank8-same-reflect|--shape 256,256,256 --kernel 7x7x7 --bank 8 --dtype uint8 --out-dtype float32 --border reflect"
 "bank16-3d-reflect|--shape 256,256,256 --kernel 3x3x3 --bank 16 --border reflect"
 "bank16-3d-constant|--shape 256,256,256 --kernel 3x3x3 --bank 16 --border constant"
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
