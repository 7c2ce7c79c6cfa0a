#!/bin/bash
# Session 40, call 4 (one H200): interleaved A/B, untuned (no tuning
# cache), A = main, B = A + bank.cl's default for images with two kernels
# a work-item (banks of 16 or more): work-groups of 128 over 32×32 tiles
# instead of 256 over 32×16 (call 3's tuner: 2048² 5×5 bank of 32 0.215 →
# 0.194 ms). Rows: the bench's image and volume banks and three more image
# banks of 16 and 64; 3 rounds, A and B alternated; checksums compared.
# Then TestEngineBank on CUDA with B's engine (every case's bits).
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s40d
mkdir -p .gpu/ab && for v in A B; do gunzip -c $W/ab/ndconv-$v.gz > .gpu/ab/ndconv-$v; done; chmod +x .gpu/ab/*; gunzip -f $W/gpu.test.gz; chmod +x $W/gpu.test
FINAL=$OUT; OUT=/tmp/raw; mkdir -p $OUT
trap 'tar czf $FINAL/raw.tgz -C /tmp raw' EXIT
export PATH=$PATH:/usr/local/cuda/bin NDCONV_CACHE_DIR=/tmp/ndconv-cache NDCONV_TUNING=/tmp/none.json
mkdir -p $NDCONV_CACHE_DIR
rows=("--workload banks --only ^B-(2d-k3-bank64|2d-k5-bank32|3d-k3-bank16)$"
  "--shape 2048,2048 --kernel 3x3 --bank 16" "--shape 2048,2048 --kernel 5x5 --bank 16"
  "--shape 1024,1024 --kernel 5x5 --bank 64")
for r in 1 2 3; do
  for v in A B; do
    [ $(( $(date +%s) - T0 )) -gt 230 ] && break 2
    for i in "${!rows[@]}"; do
      timeout 60 .gpu/ab/ndconv-$v bench ${rows[$i]} --json --device cuda >> $OUT/$v-$r.jsonl 2>> $OUT/$v.err
    done
    echo "$v round $r ($(el))"
  done
done
python3 - <<'PY'
import json, glob, collections
t = collections.defaultdict(lambda: collections.defaultdict(list)); ck = collections.defaultdict(set)
for f in sorted(glob.glob('/tmp/raw/[AB]-*.jsonl')):
    v = f.split('/')[-1][0]
    for l in open(f):
        try: d = json.loads(l)
        except Exception: continue
        if d.get('kind') == 'result':
            t[d['id']][v].append(d['ms_median']); ck[d['id']].add(round(d.get('checksum', 0), 3))
print("| workload | A ms | B ms | B÷A (best) | checksums |")
print("|---|---|---|---|---|")
for w, m in t.items():
    a, b = m.get('A', []), m.get('B', [])
    r = min(b) / min(a) if a and b else 0
    print(f"| {w} | {' '.join(f'{x:.4f}' for x in a)} | {' '.join(f'{x:.4f}' for x in b)} | {r:.3f}{' FLAG' if r > 1.03 else ''} | {'same' if len(ck[w]) == 1 else 'DIFFER'} |")
PY
( cd internal/gpu && NDCONV_GPU_TARGETS=cuda timeout 90 ../../$W/gpu.test -test.count=1 -test.v -test.run 'TestEngineBank$|TestDefaultBank' ) > $OUT/bank-test.log 2>&1
echo "TestEngineBank rc=$? pass=$(grep -c -- '--- PASS' $OUT/bank-test.log) fail=$(grep -c -- '--- FAIL' $OUT/bank-test.log) ($(el))"; grep -E -- '--- FAIL|panic' $OUT/bank-test.log | head -5
