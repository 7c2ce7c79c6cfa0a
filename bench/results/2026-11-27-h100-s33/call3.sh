#!/bin/bash
# Session 33, call 3 (4-GPU host, nvidia-h100-x4): issue 30's 2048³ uint8
# sharded Zarr (v3, zstd 3, 1 MiB chunks in shards of 64, the CLI's default
# layout), 7³, on 1, 2 and 4 GPUs, A = b202679 (session 32's last) against
# B = e0f57a4 (shards written to the directory store as pieces, not laid
# out), interleaved, 2 rounds; the host bound (the same blocks with a
# one-tap kernel on the CPU); GOGC 400 and 16 blocks in flight on B;
# a CPU profile of B on all GPUs.
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s33c; gunzip -f $W/*.gz; chmod +x $W/ndconv-*
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
  echo "$name rc=$rc $(( (b - a) / 1000000 )) ms $(cat $OUT/$name.time) | $(grep -v trace $OUT/$name.log | tail -1 | sed 's/.*ms; //' | cut -c1-220)"; }
for r in 1 2; do
  for v in A B; do
    run bound-$v-$r $W/ndconv-$v correlate -k $d/k1.npy --device cpu $d/in.zarr $d/out.zarr
    for dev in cuda:0 cuda:0,1 cuda:all; do
      run ${dev//[:,]/_}-$v-$r $W/ndconv-$v correlate -k $d/k7.npy --device $dev $d/in.zarr $d/out.zarr
    done
  done
  GOGC=400 run gogc400-cuda_all-B-$r $W/ndconv-B correlate -k $d/k7.npy --device cuda:all $d/in.zarr $d/out.zarr
  GOGC=400 run gogc400-cuda_0-B-$r $W/ndconv-B correlate -k $d/k7.npy --device cuda:0 $d/in.zarr $d/out.zarr
  NDCONV_BLOCKS_IN_FLIGHT=16 run if16-cuda_all-B-$r $W/ndconv-B correlate -k $d/k7.npy --device cuda:all $d/in.zarr $d/out.zarr
  [ $(( $(date +%s) - T0 )) -gt 380 ] && break
done
NDCONV_CPUPROFILE=$OUT/cudaall-B.prof run prof-cuda_all-B $W/ndconv-B correlate -k $d/k7.npy --device cuda:all $d/in.zarr $d/out.zarr
mv $d/out.zarr $d/out-b.zarr
NDCONV_CPUPROFILE=$OUT/bound-B.prof run prof-bound-B $W/ndconv-B correlate -k $d/k1.npy --device cpu $d/in.zarr $d/out.zarr
run check-cuda_0-A $W/ndconv-A correlate -k $d/k7.npy --device cuda:0 $d/in.zarr $d/out.zarr
diff -r -q $d/out.zarr $d/out-b.zarr > /dev/null && echo "B's cuda:all output == A's cuda:0 output, byte for byte" || echo "outputs DIFFER"
echo "done ($(el))"
tar czf $OUT/logs.tgz -C $OUT --exclude logs.tgz --exclude '*.prof' . 2>/dev/null; mkdir -p /tmp/keep; mv $OUT/*.log $OUT/*.time /tmp/keep/ 2>/dev/null; true
