#!/bin/bash
# Session 41, call 4 (4-GPU host): the 2048³ uint8 Zarr case of sessions
# 32–34 (v3 sharded, zstd 3, 7³, 128 blocks, 8 in flight), A = 0e3c3f6
# (before 2620ce8: cuda:all listed by opening each device) against B =
# main (the list from static attributes). Interleaved, traced: bound2 (one
# tap on the CPU over the smoothed output), cuda:0, cuda:0,cuda:1, cuda:all.
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s41e; gunzip -f $W/*.gz; chmod +x $W/ndconv-*
FINAL=$OUT; OUT=/tmp/raw4; mkdir -p $OUT; trap 'tar czf $FINAL/raw.tgz -C /tmp raw4' EXIT
nvidia-smi --query-gpu=name --format=csv,noheader | sort | uniq -c; nproc; free -g | head -2; df -h /tmp | tail -1
export NDCONV_CACHE_DIR=/tmp/ndconv-cache
d=/tmp/z; mkdir -p $d
python3 - <<'PY'
import numpy as np
n = 2048
a = np.lib.format.open_memmap('/tmp/z/in.npy', mode='w+', dtype=np.uint8, shape=(n, n, n))
rng = np.random.default_rng(30)
y, x = np.mgrid[0:n, 0:n]
base = ((np.sin(x / 37.0) + np.cos(y / 53.0)) * 40 + 100).astype(np.uint8)
del y, x
for z in range(0, n, 64):
    a[z:z+64] = rng.integers(0, 24, size=(64, n, n), dtype=np.uint8) + base[None] + np.uint8(z // 64)
a.flush()
np.save('/tmp/z/k7.npy', (np.random.default_rng(7).random((7, 7, 7)) / 343).astype(np.float32))
np.save('/tmp/z/k1.npy', np.ones((1, 1, 1), np.float32))
PY
echo "npy made ($(el))"
NDCONV_BLOCKS_IN_FLIGHT=32 $W/ndconv-B correlate -k $d/k1.npy --device cpu $d/in.npy $d/in.zarr > $OUT/convert.log 2>&1; echo "convert rc=$? ($(el))"
rm -f $d/in.npy
run() { local name=$1; shift; rm -rf $d/out.zarr; local a=$(date +%s%N)
  /usr/bin/time -f "%U+%S cpu-s %M KB" -o $OUT/$name.time "$@" > $OUT/$name.log 2>&1; local rc=$?; local b=$(date +%s%N)
  echo "$name rc=$rc $(( (b - a) / 1000000 )) ms $(cat $OUT/$name.time) | $(grep -E 'prewarm started|planned|1 blocks done|128 blocks done' $OUT/$name.log | sed 's/ndconv: trace //' | tr '\n' ' ')"; }
run make-smooth $W/ndconv-B correlate -k $d/k7.npy --device cuda:all $d/in.zarr $d/out.zarr; mv $d/out.zarr $d/smooth.zarr
echo "smooth made ($(el))"
export NDCONV_TRACE=1
for r in 1 2 3; do
  run bound2-$r $W/ndconv-B correlate -k $d/k1.npy --device cpu $d/smooth.zarr $d/out.zarr
  for v in A B; do
    for dev in cuda:all cuda:0,cuda:1 cuda:0; do
      run ${dev//[:,]/_}-$v-$r $W/ndconv-$v correlate -k $d/k7.npy --device $dev $d/in.zarr $d/out.zarr
    done
    diff -r -q $d/out.zarr $d/smooth.zarr > /dev/null && echo "  $v cuda:0 == smooth (cuda:all), byte for byte" || echo "  $v cuda:0 output DIFFERS"
  done
  [ $(( $(date +%s) - T0 )) -gt 330 ] && break
done
echo "done ($(el))"
