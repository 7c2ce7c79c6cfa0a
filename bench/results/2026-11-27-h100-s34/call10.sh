#!/bin/bash
# Session 34, call 10 (one H100): a device list (cuda:all) resolved from
# the devices' static attributes (cuda.Describe) instead of cuda.Devices,
# which opened each device for its free memory and released it — each
# context made twice. A = c7de449, B = the tree; a 128³ uint8 Zarr, 3³,
# 3 runs each alternated, traced ("prewarm started" comes after the
# list); `ndconv devices` still shows free memory; B's block tests on
# the GPU.
set -u
W=.gpu/s34i; gunzip -f $W/*.gz; chmod +x $W/*
export NDCONV_CACHE_DIR=/tmp/ndconv-cache
d=/tmp/z; mkdir -p $d
python3 -c "
import numpy as np
np.save('$d/in.npy', np.random.default_rng(1).integers(0,255,(128,128,128),dtype=np.uint8))
np.save('$d/k3.npy', np.full((3,3,3),1/27,np.float32))"
$W/ndconv-A correlate -q -k $d/k3.npy --device cpu $d/in.npy $d/in.zarr
$W/ndconv-B devices 2>&1 | head -4
for r in 1 2 3; do for v in A B; do rm -rf $d/out.zarr; a=$(date +%s%N)
  NDCONV_TRACE=1 $W/ndconv-$v correlate -k $d/k3.npy --device cuda:all $d/in.zarr $d/out.zarr > $OUT/$v-$r.log 2>&1; rc=$?; b=$(date +%s%N)
  echo "$v-$r rc=$rc $(( (b - a) / 1000000 )) ms | $(grep -E 'prewarm started|planned|blocks done$' $OUT/$v-$r.log | sed 's/ndconv: trace //' | tr '\n' ' ')"
done; done
timeout 60 $W/root.test -test.count=1 -test.v -test.run 'TestBlocksOnDevices|TestEnginePool' 2>&1 | grep -E -- '--- |^ok|FAIL|panic' | head
