#!/bin/bash
# Session 41 draft: interleaved A/B/C of bank.cl two rows a step, untuned.
# A = main, B = s40-bank-rows (candidates only; RS=1 code restructured: must
# flag nothing), C = s40-bank-rows-default (two rows by default).
# Build here: for v in A B C: checkout, CGO_ENABLED=0 GOFLAGS="-tags=ndconv_nogcs,ndconv_noazure"
#   go build -ldflags=-s -o .gpu/s41b/ab/ndconv-$v ./cmd/ndconv; gzip; and C's
#   go test -c -ldflags=-s -o .gpu/s41b/gpu.test ./internal/gpu (gzip). Carry .gpu/s41b.
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s41b
mkdir -p .gpu/ab && for v in A B C; do gunzip -c $W/ab/ndconv-$v.gz > .gpu/ab/ndconv-$v; done; chmod +x .gpu/ab/*
gunzip -f $W/gpu.test.gz; chmod +x $W/gpu.test
FINAL=$OUT; OUT=/tmp/raw; mkdir -p $OUT
trap 'tar czf $FINAL/raw.tgz -C /tmp raw' EXIT
export PATH=$PATH:/usr/local/cuda/bin NDCONV_CACHE_DIR=/tmp/ndconv-cache NDCONV_TUNING=/tmp/none.json
mkdir -p $NDCONV_CACHE_DIR /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
rows=("--workload banks --only ^B-(2d-k3-bank64|2d-k5-bank32|3d-k3-bank16)$"
  "--workload seeds --only ^S000-bank(16|32)$"
  "--shape 2048,2048 --kernel 3x3 --bank 16" "--shape 2048,2048 --kernel 5x5 --bank 16"
  "--shape 1024,1024 --kernel 5x5 --bank 64" "--shape 2048,2048 --kernel 3x3 --bank 4")
for r in 1 2 3; do for v in A B C; do
  [ $(( $(date +%s) - T0 )) -gt 300 ] && break 2
  for i in "${!rows[@]}"; do timeout 60 .gpu/ab/ndconv-$v bench ${rows[$i]} --json --device cuda | sed "s/\"id\":\"custom\"/\"id\":\"custom$i\"/" >> $OUT/$v-$r.jsonl; done
  echo "$v round $r ($(el))"
done; done
python3 - <<'PY'
import json, glob, collections
t = collections.defaultdict(lambda: collections.defaultdict(list)); ck = collections.defaultdict(set)
for f in sorted(glob.glob('/tmp/raw/[ABC]-*.jsonl')):
    v = f.split('/')[-1][0]
    for l in open(f):
        try: d = json.loads(l)
        except Exception: continue
        if d.get('kind') == 'result': t[d['id']][v].append(d['ms_median']); ck[d['id']].add(d.get('checksum'))
print("| workload | A | B | C | B÷A | C÷A | checksums |\n|---|---|---|---|--:|--:|---|")
for w, m in t.items():
    a, b, c = (m.get(k, []) for k in "ABC")
    f = lambda x: ' '.join(f'{y:.4f}' for y in x)
    rb = min(b)/min(a) if a and b else 0; rc = min(c)/min(a) if a and c else 0
    print(f"| {w} | {f(a)} | {f(b)} | {f(c)} | {rb:.3f}{' FLAG' if rb > 1.03 else ''} | {rc:.3f}{' FLAG' if rc > 1.03 else ''} | {'same' if len(ck[w]) == 1 else 'DIFFER'} |")
PY
( cd internal/gpu && NDCONV_GPU_TARGETS=cuda timeout 100 ../../$W/gpu.test -test.count=1 -test.run 'TestEngineBank$|TestEngineTable$' ) > $OUT/bank-cuda.log 2>&1; echo "C's bank tests on CUDA rc=$? ($(el))"; tail -2 $OUT/bank-cuda.log
( cd internal/gpu && OCL_ICD_VENDORS=/tmp/icd NDCONV_OPENCL_DEVICE=1:0 NDCONV_GPU_TARGETS=opencl timeout 100 ../../$W/gpu.test -test.count=1 -test.run 'TestEngineBank$' ) > $OUT/bank-ocl.log 2>&1; echo "C's bank tests on NVIDIA OpenCL rc=$? ($(el))"; tail -2 $OUT/bank-ocl.log
cp .gpu/ab/ndconv-C .gpu/ndconv; echo "profile? ($(el))"
[ $(( $(date +%s) - T0 )) -lt 470 ] && PROFILE_ONLY='^(B-2d-k5-bank32|B-3d-k3-bank16)$' OUT=$OUT/ncu timeout 120 bash scripts/profile-gpu.sh > $OUT/ncu.log 2>&1; cut -c1-500 $OUT/ncu/profile.txt
