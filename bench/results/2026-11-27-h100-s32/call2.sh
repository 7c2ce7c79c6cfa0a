#!/bin/bash
# Session 32, call 2 (one H100, after call 1): internal/gpu TestEngine* on
# CUDA and NVIDIA OpenCL (-short), then issue 27's many-file targets:
# 10,000 512² PNGs, 7×7, cpu and cuda beside the decode+encode ceiling and
# an OpenCV pool of 16; 200 .npy volumes 128³ float32 5³ beside one array.
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s32a
gunzip -f $W/*.gz 2>/dev/null; gunzip -c $W/ab/ndconv-B.gz > $W/ndconv; chmod +x $W/*.test $W/ndconv
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 >/tmp/icd/nvidia.icd
export NDCONV_CACHE_DIR=/tmp/ndconv-cache
( cd internal/gpu && NDCONV_GPU_TARGETS=cuda timeout 120 ../../$W/gpu.test -test.count=1 -test.short -test.v -test.run 'TestEngine' ) > $OUT/gpu-cuda.log 2>&1
echo "internal/gpu TestEngine* cuda rc=$? pass=$(grep -c '^--- PASS' $OUT/gpu-cuda.log) fail=$(grep -c '^--- FAIL' $OUT/gpu-cuda.log) ($(el))"; grep -E '^(--- FAIL|FAIL|panic)' $OUT/gpu-cuda.log | head
( cd internal/gpu && OCL_ICD_VENDORS=/tmp/icd NDCONV_OPENCL_DEVICE=1:0 NDCONV_GPU_TARGETS=opencl timeout 100 ../../$W/gpu.test -test.count=1 -test.short -test.v -test.run 'TestEngine' ) > $OUT/gpu-opencl.log 2>&1
echo "internal/gpu TestEngine* opencl rc=$? pass=$(grep -c '^--- PASS' $OUT/gpu-opencl.log) fail=$(grep -c '^--- FAIL' $OUT/gpu-opencl.log) ($(el))"; grep -E '^(--- FAIL|FAIL|panic)' $OUT/gpu-opencl.log | head
mkdir -p .gpu/ab && for v in A B; do gunzip -c $W/ab/ndconv-$v.gz > .gpu/ab/ndconv-$v; done; cp $W/ab/labels.txt .gpu/ab/; chmod +x .gpu/ab/*
AB_OUT=/tmp/ab2 ROUNDS=7 ONLY='^(S003-full-c(1|4)-float32|S003-sep-c4-float32)$' timeout 120 bash scripts/ab-gpu.sh run > /tmp/ab2.log 2>&1
echo "ab recheck rc=$? ($(el))"; sed -n '/^| workload/,/^$/p' /tmp/ab2/table.md; cp /tmp/ab2/table.md $OUT/ab-recheck.md
left=$(( 590 - ($(date +%s) - T0) ))
MANY_TABLE=$OUT/many-files.txt timeout $left bash scripts/many-files.sh --ndconv $PWD/$W/ndconv --n 10000 --procs 16 --devices "cpu cuda" --reps 2 --vols 200 /tmp/mf > $OUT/many-files.log 2>&1
echo "many-files rc=$? ($(el))"; cat $OUT/many-files.txt
