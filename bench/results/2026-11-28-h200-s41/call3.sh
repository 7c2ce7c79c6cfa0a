#!/bin/bash
# Session 41, call 3 (4-GPU host): branch s41-gpu-fold (s40-gpu-lines + the
# loader/error/pooled folds, on main) — every device suite, each lane on its
# own GPU at once, and the speed guard against main on the fourth.
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s41d; gunzip -f $W/*.gz; chmod +x $W/*
mkdir -p .gpu/ab && cp $W/ndconv-A $W/ndconv-B $W/labels.txt .gpu/ab/
FINAL=$OUT; OUT=/tmp/raw; mkdir -p $OUT; trap 'cp -r /tmp/ab $OUT/ 2>/dev/null; tar czf $FINAL/raw.tgz -C /tmp raw' EXIT
export PATH=$PATH:/usr/local/cuda/bin; mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader; nproc
OCL="OCL_ICD_VENDORS=/tmp/icd NDCONV_OPENCL_DEVICE=1:0"
summ() { echo "$1: $(tail -1 $2) pass=$(grep -c -- '--- PASS' $2) fail=$(grep -c -- '--- FAIL' $2) skip=$(grep -c -- '--- SKIP' $2)"; grep -E -- '(--- FAIL|^FAIL|panic|ERROR SUMMARY)' $2 | head -6; }
( cd internal/gpu && CUDA_VISIBLE_DEVICES=0 NDCONV_GPU_TARGETS=cuda timeout 500 ../../$W/gpu.test -test.count=1 -test.short -test.v > $OUT/gpu-cuda.log 2>&1; echo "rc=$? at $(el)" >> $OUT/gpu-cuda.log ) &
( cd internal/gpu && env CUDA_VISIBLE_DEVICES=1 $OCL NDCONV_GPU_TARGETS=opencl timeout 500 ../../$W/gpu.test -test.count=1 -test.short -test.v > $OUT/gpu-ocl.log 2>&1; echo "rc=$? at $(el)" >> $OUT/gpu-ocl.log ) &
( export CUDA_VISIBLE_DEVICES=2
  timeout 220 $W/ndconv.test -test.count=1 -test.v -test.run 'Device|GPU|Planar|Blocks' > $OUT/root.log 2>&1; echo "rc=$? at $(el)" >> $OUT/root.log
  ( cd cuda && timeout 60 ../$W/cuda.test -test.count=1 -test.v > $OUT/cuda.log 2>&1; echo "rc=$? at $(el)" >> $OUT/cuda.log )
  ( cd opencl && env $OCL timeout 60 ../$W/opencl.test -test.count=1 -test.v > $OUT/opencl.log 2>&1; echo "rc=$? at $(el)" >> $OUT/opencl.log )
  ( cd internal/gpu && NDCONV_GPU_TARGETS=cuda timeout 180 compute-sanitizer --tool memcheck ../../$W/gpu.test -test.count=1 -test.short -test.v -test.run 'TestEngineDeviceAfter|TestEngineRegistered|TestEnginePipelined$|TestEngineBank$' > $OUT/memcheck.log 2>&1; echo "rc=$? at $(el)" >> $OUT/memcheck.log )
) &
( CUDA_VISIBLE_DEVICES=3 AB_OUT=/tmp/ab timeout 420 bash scripts/ab-gpu.sh run > $OUT/ab.log 2>&1; echo "rc=$? at $(el)" >> $OUT/ab.log ) &
wait
for f in gpu-cuda gpu-ocl root cuda opencl memcheck; do summ $f $OUT/$f.log; done
grep -E "SLOWER|SUM|MISSING|flagged|rows" $OUT/ab.log | head -20; tail -3 $OUT/ab.log
grep -E -- '--- (PASS|FAIL)' $OUT/gpu-cuda.log | grep -v '    ' | sort -t'(' -k2 -rn | head -5
