#!/bin/bash
# Session 30, call 10: the rest of internal/gpu's engine tests (call 1
# stopped at its cap after TestEngineTable), on CUDA and NVIDIA OpenCL.
set -u
W=.gpu/s30d
gunzip -f $W/gpu.test.gz; chmod +x $W/gpu.test
export PATH=$PATH:/usr/local/cuda/bin NDCONV_CACHE_DIR=/tmp/ndconv-cache
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 >/tmp/icd/nvidia.icd
( cd internal/gpu && OCL_ICD_VENDORS=/tmp/icd NDCONV_OPENCL_DEVICE=1:0 timeout 270 ../../$W/gpu.test -test.count=1 -test.short -test.v \
  -test.run 'TestEngine(Separable|Slabs|DeviceArrays|Concurrent|Checks|Timing|Rolling|Window|BankGroups|SepRing|Sep3|SepTile|Pipelined|PipelinedCancel|PipelineOverlap|Registered|RegisteredTransfers)$|TestRegistry|TestLife' ) > $OUT/gpu.log 2>&1
echo "rc=$? pass=$(grep -c '^--- PASS' $OUT/gpu.log) fail=$(grep -c '^--- FAIL' $OUT/gpu.log)"; grep -E '^(--- |FAIL|panic)' $OUT/gpu.log | head -30
