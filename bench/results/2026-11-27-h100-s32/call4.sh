#!/bin/bash
# Session 32, call 4 (2-GPU host): issue 30's multi-GPU target on a 2048³
# uint8 volume in sharded Zarr (v3, zstd, the CLI's default layout), a 7³
# kernel: cuda:0 against cuda:all (both GPUs held by the plan, session 31),
# interleaved, each run's read+decode / compute / encode+write split, the
# outputs compared byte for byte; the bounds: the same blocks with a
# one-tap kernel on the CPU (read+decode+encode+write, no filter).
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s32c; gunzip -f $W/*.gz; chmod +x $W/ndconv-new; N=$PWD/$W/ndconv-new
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; free -g | head -2; df -h /tmp | tail -1
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
$N correlate -k $d/k1.npy --device cpu $d/in.npy $d/in.zarr > $OUT/convert.log 2>&1; echo "convert rc=$? ($(el)): $(tail -1 $OUT/convert.log | cut -c1-400)"
du -sh $d/in.zarr; rm -f $d/in.npy
run() { local name=$1; shift; rm -rf $d/out.zarr; sync; local a=$(date +%s%N)
  "$@" > $OUT/$name.log 2>&1; local rc=$?; local b=$(date +%s%N)
  echo "$name rc=$rc $(( (b - a) / 1000000 )) ms | $(tail -1 $OUT/$name.log | cut -c1-420)"; }
for r in 1 2; do
  run ceiling-cpu-$r $N correlate -k $d/k1.npy --device cpu $d/in.zarr $d/out.zarr
  run cuda0-$r $N correlate -k $d/k7.npy --device cuda:0 $d/in.zarr $d/out.zarr
  [ $r = 1 ] && mv $d/out.zarr $d/out-cuda0.zarr
  run cudaall-$r $N correlate -k $d/k7.npy --device cuda:all $d/in.zarr $d/out.zarr
  [ $r = 1 ] && { diff -r -q $d/out.zarr $d/out-cuda0.zarr > /dev/null && echo "cuda:all == cuda:0 byte for byte" || echo "cuda:all DIFFERS from cuda:0"; }
  [ $(( $(date +%s) - T0 )) -gt 420 ] && break
done
NDCONV_BLOCKS_IN_FLIGHT=16 run cudaall-if16 $N correlate -k $d/k7.npy --device cuda:all $d/in.zarr $d/out.zarr
echo "done ($(el))"
tar czf $OUT/logs.tgz -C $OUT --exclude logs.tgz . 2>/dev/null
