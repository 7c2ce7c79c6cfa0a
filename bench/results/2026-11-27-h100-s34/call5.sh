#!/bin/bash
# Session 34, call 5 (4-GPU host): the 2048³ uint8 Zarr case, B =
# 61f23ed against C = B + a block reads the chunks its box holds whole
# before those its edges cut (call 4: with a halo, reading a block took
# 4× as long as without at 8 in flight and 10× at 24 — neighbours in
# flight waiting for each other's decodes). Interleaved, 2 rounds,
# traced: bound2, cuda:0 and cuda:all at 8 in flight, C's cuda:0 at 16.
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s34e; gunzip -f $W/*.gz; chmod +x $W/ndconv-*
nvidia-smi --query-gpu=name --format=csv,noheader | sort | uniq -c; nproc; free -g | head -2
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
NDCONV_BLOCKS_IN_FLIGHT=32 $W/ndconv-B correlate -k $d/k1.npy --device cpu $d/in.npy $d/in.zarr > $OUT/convert.log 2>&1; echo "convert rc=$? ($(el)): $(tail -1 $OUT/convert.log | cut -c1-300)"
rm -f $d/in.npy
run() { local name=$1; shift; rm -rf $d/out.zarr; local a=$(date +%s%N)
  /usr/bin/time -f "%U+%S cpu-s %M KB" -o $OUT/$name.time "$@" > $OUT/$name.log 2>&1; local rc=$?; local b=$(date +%s%N)
  echo "$name rc=$rc $(( (b - a) / 1000000 )) ms $(cat $OUT/$name.time) | $(grep -E 'planned|1 blocks done|chunks decoded' $OUT/$name.log | sed 's/ndconv: trace //; s/reads from the cache/cache reads/' | tr '\n' ' ')"; }
run make-smooth $W/ndconv-B correlate -k $d/k7.npy --device cuda:all $d/in.zarr $d/out.zarr; mv $d/out.zarr $d/smooth.zarr
export NDCONV_TRACE=1
for r in 1 2; do
  run bound2-$r $W/ndconv-C correlate -k $d/k1.npy --device cpu $d/smooth.zarr $d/out.zarr
  for v in B C; do
    run cuda_0-$v-$r $W/ndconv-$v correlate -k $d/k7.npy --device cuda:0 $d/in.zarr $d/out.zarr
    run cuda_all-$v-$r $W/ndconv-$v correlate -k $d/k7.npy --device cuda:all $d/in.zarr $d/out.zarr
    [ $v = C ] && { diff -r -q $d/out.zarr $d/smooth.zarr > /dev/null && echo "  C cuda:all == B's, byte for byte" || echo "  C cuda:all output DIFFERS"; }
  done
  NDCONV_BLOCKS_IN_FLIGHT=16 run cuda_0-C16-$r $W/ndconv-C correlate -k $d/k7.npy --device cuda:0 $d/in.zarr $d/out.zarr
  [ $(( $(date +%s) - T0 )) -gt 380 ] && break
done
echo "done ($(el))"
tar czf $OUT/logs.tgz -C $OUT --exclude logs.tgz --exclude '*.gz' . 2>/dev/null; mkdir -p /tmp/keep; mv $OUT/*.log $OUT/*.time /tmp/keep/ 2>/dev/null; true
