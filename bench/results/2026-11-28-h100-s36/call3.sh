#!/bin/bash
# Session 36, call 3: outer_plane in idx_t (32-bit where every index
# fits: a 64-bit division is a subroutine, called once per outer tap by
# the re-staging kernels). Every LocalWeights candidate on S000's banks
# again; the SASS instruction mix of the best LocalWeights shape and of
# the old default; bench S000 rows and the 3-D bank, A = a8bb6b0 (main)
# and B = the tree alternated twice.
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s36c
gunzip -f $W/*.gz; chmod +x $W/*
FINAL=$OUT; OUT=/tmp/raw; mkdir -p $OUT
trap 'tar czf $FINAL/raw.tgz -C /tmp raw' EXIT
export NDCONV_CACHE_DIR=/tmp/ndconv-cache PATH=$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
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
            d[r['id']].setdefault(v, []).append((round(r['ms_median'], 3), r.get('checksum'), r.get('pct_roofline')))
for k, v in d.items():
    print(k, 'A', v.get('A'), 'B', v.get('B'))
PY
( cd internal/gpu && NDCONV_GPU_TARGETS=cuda NDCONV_TIMING=1 NDCONV_LW_TIMING=0,1,2 timeout 200 ../../$W/gpu.test -test.count=1 -test.v -test.run 'TestLocalWeightsTiming' ) > $OUT/lwtime.log 2>&1
echo "timing rc=$? ($(el))"
grep -oE 'LWTIME .*' $OUT/lwtime.log | sed -E 's/LWTIME //; s/, weights in local memory/ LW/; s/work-groups per multiprocessor/wg\/SM/' | awk -F'|' '{split($3,a,"median "); split(a[2],b,","); print $1 "|" $2 "|" b[1] "," b[3]}' | sort -t'|' -k1,1 -s | awk -F'|' '{print}' 
for shape in '32x4 threads, 4x1 outputs each, banks of 8 kernels, weights in local memory' '32x4 threads, 2x2 outputs each, banks of 8 kernels'; do
  rm -rf /tmp/sass-cache
  ( cd internal/gpu && NDCONV_CACHE_DIR=/tmp/sass-cache NDCONV_GPU_TARGETS=cuda NDCONV_TIMING=1 NDCONV_LW_TIMING=2 NDCONV_LW_SHAPE="$shape" timeout 60 ../../$W/gpu.test -test.count=1 -test.v -test.run 'TestLocalWeightsTiming' ) > /dev/null 2>&1
  tag=$(echo "$shape" | tr -cd '[:alnum:]' | cut -c1-40)
  python3 - /tmp/sass-cache $OUT/sass-$tag.txt <<'PY'
import sys, os, subprocess, collections, re
best = None
for root, _, files in os.walk(sys.argv[1]):
    for f in files:
        b = open(os.path.join(root, f), 'rb').read()
        i = b.find(b'\x7fELF')
        if i < 0: continue
        open('/tmp/k.cubin', 'wb').write(b[i:])
        out = subprocess.run(['cuobjdump', '-sass', '/tmp/k.cubin'], capture_output=True, text=True).stdout
        if 'correlate_tiled' in out and (best is None or len(out) > len(best)):
            best = out
open(sys.argv[2], 'w').write(best or 'no sass')
ops = collections.Counter()
for line in (best or '').splitlines():
    m = re.match(r'\s*/\*[0-9a-f]+\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)', line)
    if m: ops[m.group(2).split('.')[0]] += 1
tot = sum(ops.values())
print(sys.argv[2].split('/')[-1], 'static instructions', tot, ' '.join(f'{k}:{v}' for k, v in ops.most_common(14)))
PY
done
echo "done ($(el))"
