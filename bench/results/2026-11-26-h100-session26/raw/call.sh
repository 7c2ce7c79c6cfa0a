#!/bin/bash
# The session's final device call: the A/B guard (A = the tiled fix's merge,
# B = final main), then the GPU suites of final main on CUDA and NVIDIA's
# OpenCL, then memcheck on the root package's device tests. From the repo root.
set -u
t0=$(date +%s)
W=.gpu/final
export PATH=$PATH:/usr/local/cuda/bin
for f in $W/bin/*.gz; do gunzip -f "$f"; done
chmod +x $W/bin/* 2>/dev/null
mkdir -p .gpu/ab /tmp/t
cp $W/bin/ndconv-A $W/bin/ndconv-B $W/labels.txt .gpu/ab/
export NDCONV_CACHE_DIR=/tmp/ndconv-cache
mkdir -p $NDCONV_CACHE_DIR
[ -f $W/modcache.tgz ] && tar xzf $W/modcache.tgz -C $NDCONV_CACHE_DIR
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,temperature.gpu --format=csv
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 >/tmp/icd/nvidia.icd
# 1. A/B, alone on the card.
AB_OUT=/tmp/ab ONLY="${ONLY:-^(S000-bank(1|2|8|16|32)|S001-w(3|5|8|12|15|21|24)|A-2d-k(3|7|9|15)|A-2d-sep-k31|A-2d-u8-k(3|7|15)|A-rgba-k5|A-3d-k3|A-3d-sep-k7|A-1d-k(7|63)|S003-sep-c4-float32)$}" \
	TUNING=bench/results/2026-11-25-h100-s25/tuning-after.json timeout ${AB_TIMEOUT:-240} bash scripts/ab-gpu.sh run >/tmp/ab.log 2>&1
echo "ab exit $? after $(($(date +%s) - t0)) s"
cp /tmp/ab.log /tmp/ab/run.log 2>/dev/null
tar czf $OUT/ab.tgz -C /tmp ab
sed -n '/^| workload/,$p' /tmp/ab/table.md 2>/dev/null
# 2. Suites, in parallel.
tl=$(( ${BUDGET:-540} - ($(date +%s) - t0) ))
echo "suites get $tl s"
(cd cuda && timeout $tl ../$W/bin/cuda.test -test.count=1 -test.run 'TestEngineTable$' -test.v >/tmp/t/cuda-table.log 2>&1; echo "exit $?" >>/tmp/t/cuda-table.log) &
(cd cuda && timeout $tl ../$W/bin/cuda.test -test.count=1 -test.skip 'TestEngineTable$' -test.v >/tmp/t/cuda-rest.log 2>&1; echo "exit $?" >>/tmp/t/cuda-rest.log) &
(timeout $tl compute-sanitizer --tool memcheck --error-exitcode 9 $W/bin/ndconv.test -test.count=1 -test.run 'TestDeviceExecute|TestNonFiniteCVal|TestOverlappingOutput|TestDeviceConcurrent' >/tmp/t/memcheck.log 2>&1; echo "exit $?" >>/tmp/t/memcheck.log) &
(cd opencl && OCL_ICD_VENDORS=/tmp/icd NDCONV_OPENCL_DEVICE=1:0 timeout $tl ../$W/bin/opencl.test -test.count=1 -test.v >/tmp/t/opencl.log 2>&1; echo "exit $?" >>/tmp/t/opencl.log) &
(OCL_ICD_VENDORS=/tmp/icd timeout $tl $W/bin/ndconv.test -test.count=1 -test.run 'TestDevice|TestNonFiniteCVal|TestEmptyArrays|TestOverlappingOutput|TestSharedPlan|TestScipyFixturesOnDevices|TestExecuteChunks|TestZeroValues' -test.v >/tmp/t/root.log 2>&1; echo "exit $?" >>/tmp/t/root.log) &
wait
for f in /tmp/t/*.log; do
	echo "== $f: $(grep -c '^--- PASS' $f) pass, $(grep -c '^--- FAIL' $f) fail, $(grep -c '^--- SKIP' $f) skip, $(tail -1 $f)"
	grep -E '^(--- FAIL|FAIL|panic)|ERROR SUMMARY' $f | head -12
done
tar czf $OUT/tests.tgz -C /tmp t
tar czf $OUT/modcache.tgz -C $NDCONV_CACHE_DIR . && ls -la $OUT/modcache.tgz
echo "done after $(($(date +%s) - t0)) s"
