#!/bin/bash
# Session 32, call 1 (one H100): the device tests of session 31's mechanical
# folds (FreeList.Get/Alloc: cuda TestGPU*, opencl TestGPU* on NVIDIA; call 2
# runs internal/gpu's), and the A/B
# guard A = 1a0c883 (last A/B'd), B = e093f6a, 28 rows x 3 rounds, untuned.
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s32a
gunzip -f $W/*.gz; chmod +x $W/*.test
mkdir -p .gpu/ab && for v in A B; do gunzip -c $W/ab/ndconv-$v.gz > .gpu/ab/ndconv-$v; done; cp $W/ab/labels.txt .gpu/ab/; chmod +x .gpu/ab/*
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 >/tmp/icd/nvidia.icd
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc
export NDCONV_CACHE_DIR=/tmp/ndconv-cache
( cd cuda && timeout 90 ../$W/cuda.test -test.count=1 -test.v -test.run 'TestGPU' ) > $OUT/cuda.log 2>&1
echo "cuda rc=$? pass=$(grep -c -- '--- PASS' $OUT/cuda.log) fail=$(grep -c -- '--- FAIL' $OUT/cuda.log) ($(el))"; grep -E -- '--- FAIL|panic' $OUT/cuda.log | head
( cd opencl && OCL_ICD_VENDORS=/tmp/icd NDCONV_OPENCL_DEVICE=1:0 timeout 60 ../$W/opencl.test -test.count=1 -test.v -test.run 'TestGPU' ) > $OUT/opencl.log 2>&1
echo "opencl rc=$? pass=$(grep -c -- '--- PASS' $OUT/opencl.log) fail=$(grep -c -- '--- FAIL' $OUT/opencl.log) ($(el))"; grep -E -- '--- FAIL|panic' $OUT/opencl.log | head
left=$(( 585 - ($(date +%s) - T0) ))
AB_OUT=/tmp/ab ONLY='^(S000-bank(1|8|16|32)|S001-w(3|5|15|21)|S002.*|A-2d-k(3|5|7|9|15)|A-2d-sep-k(7|31)|A-2d-u8-k(3|7|15)|A-rgba-k5|A-3d-k(3|7)|A-3d-sep-k7|A-1d-k(7|63)|S003-sep-c4-(float32|uint8)|S003-full-c(1|4)-float32)$' \
  timeout $left bash scripts/ab-gpu.sh run > /tmp/ab.log 2>&1
echo "ab rc=$? ($(el))"; cp /tmp/ab.log /tmp/ab/run.log
sed -n '/^| workload/,/^$/p' /tmp/ab/table.md | head -40; grep 'rows flagged' /tmp/ab/table.md
tar czf $OUT/ab.tgz -C /tmp ab
