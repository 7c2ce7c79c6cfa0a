#!/bin/bash
# Session 32, call 5 (2-GPU host): call 4's 2048³ uint8 Zarr case, A/B:
# old = e093f6a, new = the chunk cache's LRU lists (83f1333): cuda:0 and
# cuda:all interleaved, then the one-tap CPU run (decode+encode bound),
# a CPU profile and the cache's counts of a new cuda:all run.
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s32d; gunzip -f $W/*.gz; chmod +x $W/ndconv-*
nvidia-smi --query-gpu=name --format=csv,noheader | head -1; nproc
export NDCONV_CACHE_DIR=/tmp/ndconv-cache
d=/tmp/z; mkdir -p $d
python3 - <<'PY'
import numpy as np
n = 2048
a = np.lib.format.open_memmap('/tmp/z/in.npy', mode='w+', dtype=np.uint8, shape=(n, n, n))
rng = np.random.default_rng(30)
y, x = np.mgrid[0:n, 0:n]
base = ((np.sin(x / 37.0) + np.cos(y / 53.0)) * 40 + 100).astype(np.uint8)  # 20..180
del y, x
for z in range(0, n, 64):
    a[z:z+64] = rng.integers(0, 24, size=(64, n, n), dtype=np.uint8) + base[None] + np.uint8(z // 64)
a.flush()
np.save('/tmp/z/k7.npy', (np.random.default_rng(7).random((7, 7, 7)) / 343).astype(np.float32))
np.save('/tmp/z/k1.npy', np.ones((1, 1, 1), np.float32))
PY
echo "npy made ($(el))"
NDCONV_BLOCKS_IN_FLIGHT=32 $W/ndconv-new correlate -k $d/k1.npy --device cpu $d/in.npy $d/in.zarr > $OUT/convert.log 2>&1; echo "convert rc=$? ($(el)): $(tail -1 $OUT/convert.log | cut -c1-300)"
rm -f $d/in.npy
run() { local name=$1; shift; rm -rf $d/out.zarr; local a=$(date +%s%N)
  /usr/bin/time -f "%U+%S cpu-s %M KB" -o $OUT/$name.time "$@" > $OUT/$name.log 2>&1; local rc=$?; local b=$(date +%s%N)
  echo "$name rc=$rc $(( (b - a) / 1000000 )) ms $(cat $OUT/$name.time) | $(grep -v trace $OUT/$name.log | tail -1 | sed 's/.*ms; //' | cut -c1-200)"; }
for r in 1 2; do
  for v in old new; do
    run cuda0-$v-$r $W/ndconv-$v correlate -k $d/k7.npy --device cuda:0 $d/in.zarr $d/out.zarr
    run cudaall-$v-$r $W/ndconv-$v correlate -k $d/k7.npy --device cuda:all $d/in.zarr $d/out.zarr
  done
  [ $(( $(date +%s) - T0 )) -gt 330 ] && break
done
run ceiling-new $W/ndconv-new correlate -k $d/k1.npy --device cpu $d/in.zarr $d/out.zarr
NDCONV_TRACE=1 NDCONV_CPUPROFILE=$OUT/cudaall.prof run cudaall-new-prof $W/ndconv-new correlate -k $d/k7.npy --device cuda:all $d/in.zarr $d/out.zarr
grep -E "decoded|blocks done" $OUT/cudaall-new-prof.log
NDCONV_BLOCKS_IN_FLIGHT=16 run cudaall-new-if16 $W/ndconv-new correlate -k $d/k7.npy --device cuda:all $d/in.zarr $d/out.zarr
echo "done ($(el))"
tar czf $OUT/logs.tgz -C $OUT --exclude logs.tgz --exclude cudaall.prof . 2>/dev/null; mkdir -p /tmp/keep; mv $OUT/*.log $OUT/*.time /tmp/keep/ 2>/dev/null; true
