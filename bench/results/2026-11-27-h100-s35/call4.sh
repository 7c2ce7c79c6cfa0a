#!/bin/bash
# Session 35, call 4 (one H100): DIRECT_PARAMS/DIRECT_SIZES (21815ab, B)
# against cd8eecb (A): the direct kernels' device tests (-short) and the
# A/B guard over rows.cl, tiled.cl, rolling and bank.cl rows, A B ×3;
# then session 34's unrun checks (2620ce8, a38fcf2): a device list
# (cuda:all) resolved by Describe, a Zarr volume on it, the block tests.
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s35d
gunzip -f $W/*.gz; chmod +x $W/*
FINAL=$OUT; OUT=/tmp/raw; mkdir -p $OUT
trap 'tar czf $FINAL/raw.tgz -C /tmp raw' EXIT
export NDCONV_CACHE_DIR=/tmp/ndconv-cache PATH=$PATH:/usr/local/cuda/bin NDCONV_TUNING=/tmp/none.json
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
( cd internal/gpu && NDCONV_GPU_TARGETS=cuda timeout 150 ../../$W/gpu.test -test.count=1 -test.short -test.v -test.run 'TestEngineRolling|TestEngineWindow|TestEngineBank|TestEngineTable' ) > $OUT/direct.log 2>&1
echo "direct families -short rc=$? ($(el))"; grep -E -- '^--- |^(ok|FAIL|PASS)|panic' $OUT/direct.log | head
only='^(B-2d-k3-bank64|B-2d-k5-bank32|B-3d-k3-bank16|S000-bank(1|8|32)|S001-w(3|7|15)|A-2d-k(3|5)|A-3d-k3|A-rgba-k5|A-2d-u8-k3)$'
for r in 1 2 3; do for v in A B; do
  $W/ndconv-$v bench --device cuda --workload all --only "$only" --json > $OUT/$v-r$r.jsonl 2>$OUT/$v-r$r.err
  echo "round $r $v rc=$? ($(el))"
done; done
d=/tmp/z; mkdir -p $d
python3 -c "
import numpy as np
np.save('$d/in.npy', np.random.default_rng(1).integers(0,255,(128,128,128),dtype=np.uint8))
np.save('$d/k3.npy', np.full((3,3,3),1/27,np.float32))
np.save('$d/k1.npy', np.ones((1,1,1),np.float32))"
$W/ndconv-B correlate -q -k $d/k3.npy --device cpu $d/in.npy $d/in.zarr
$W/ndconv-B correlate -q -k $d/k3.npy --device cpu $d/in.zarr $d/cpu.npy
NDCONV_TRACE=1 $W/ndconv-B correlate -k $d/k3.npy --device cuda:all $d/in.zarr $d/out.zarr > $OUT/all.log 2>&1; echo "cuda:all rc=$? ($(el))"
grep -E 'prewarm started|planned|blocks done$' $OUT/all.log | head -4
$W/ndconv-B correlate -q -k $d/k1.npy --device cpu $d/out.zarr $d/id.npy
cmp $d/cpu.npy $d/id.npy && echo "cuda:all output equals cpu's"
timeout 90 $W/root.test -test.count=1 -test.v -test.run 'TestBlocksOnDevices|TestEnginePool' > $OUT/blocks.log 2>&1
echo "blocks rc=$? ($(el))"; grep -E -- '^--- |^(ok|FAIL|PASS)|panic' $OUT/blocks.log | head
