#!/bin/bash
# The fold's device call: the A/B guard (A = main before the fold, B = the
# fold), then the engine's suites (internal/gpu: CUDA and NVIDIA's OpenCL
# in one binary), the bindings' own tests, the root's and plan's device
# tests, memcheck, and a bench smoke run over OpenCL. From the repo root.
set -u
t0=$(date +%s)
W=.gpu/final
export PATH=$PATH:/usr/local/cuda/bin
for f in $W/bin/*.gz; do [ -f "$f" ] && gunzip -f "$f"; done
chmod +x $W/bin/* 2>/dev/null
mkdir -p .gpu/ab /tmp/t
cp $W/bin/ndconv-A $W/bin/ndconv-B $W/labels.txt .gpu/ab/
export NDCONV_CACHE_DIR=/tmp/ndconv-cache
mkdir -p $NDCONV_CACHE_DIR
[ -f $W/modcache.tgz ] && tar xzf $W/modcache.tgz -C $NDCONV_CACHE_DIR
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,temperature.gpu --format=csv
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 >/tmp/icd/nvidia.icd
if [ "${SKIP_AB:-0}" != 1 ]; then
AB_OUT=/tmp/ab ONLY="${ONLY:-^(S000-bank(1|2|8|16|32)|S001-w(3|5|8|12|15|21|24)|S002.*|A-2d-k(3|7|9|15)|A-2d-sep-k31|A-2d-u8-k(3|7|15)|A-rgba-k5|A-3d-k3|A-3d-sep-k7|A-1d-k(7|63)|S003-sep-c4-float32)$}" \
	TUNING=bench/results/2026-11-25-h100-s25/tuning-after.json timeout ${AB_TIMEOUT:-230} bash scripts/ab-gpu.sh run >/tmp/ab.log 2>&1
echo "ab exit $? after $(($(date +%s) - t0)) s"
cp /tmp/ab.log /tmp/ab/run.log 2>/dev/null
tar czf $OUT/ab.tgz -C /tmp ab
sed -n '/^| workload/,$p' /tmp/ab/table.md 2>/dev/null
fi
tl=$(( ${BUDGET:-560} - ($(date +%s) - t0) ))
echo "suites get $tl s"
G="OCL_ICD_VENDORS=/tmp/icd NDCONV_OPENCL_DEVICE=1:0"
(env OCL_ICD_VENDORS=/tmp/icd NDCONV_OPENCL_DEVICE=1:0 NDCONV_REQUIRE_CUDA=1 NDCONV_REQUIRE_OPENCL=1 timeout $tl $W/bin/gpu.test -test.count=1 -test.run 'TestEngineTable$' -test.v >/tmp/t/gpu-table.log 2>&1; echo "exit $?" >>/tmp/t/gpu-table.log) &
(env OCL_ICD_VENDORS=/tmp/icd NDCONV_OPENCL_DEVICE=1:0 NDCONV_REQUIRE_CUDA=1 NDCONV_REQUIRE_OPENCL=1 timeout $tl $W/bin/gpu.test -test.count=1 -test.skip 'TestEngineTable$' -test.v >/tmp/t/gpu-rest.log 2>&1; echo "exit $?" >>/tmp/t/gpu-rest.log) &
(cd cuda && timeout $tl ../$W/bin/cuda.test -test.count=1 -test.v >/tmp/t/cuda.log 2>&1; echo "exit $?" >>/tmp/t/cuda.log) &
(cd opencl && env OCL_ICD_VENDORS=/tmp/icd NDCONV_OPENCL_DEVICE=1:0 timeout $tl ../$W/bin/opencl.test -test.count=1 -test.v >/tmp/t/opencl.log 2>&1; echo "exit $?" >>/tmp/t/opencl.log) &
(env OCL_ICD_VENDORS=/tmp/nonexistent timeout $tl compute-sanitizer --tool memcheck --error-exitcode 9 $W/bin/gpu.test -test.short -test.count=1 -test.run 'TestEngineChecks|TestEnginePipelined$|TestFFTBatches|TestEngineDeviceArrays|TestEngineSlabs' >/tmp/t/memcheck-gpu.log 2>&1; echo "exit $?" >>/tmp/t/memcheck-gpu.log) &
(env OCL_ICD_VENDORS=/tmp/nonexistent timeout $tl compute-sanitizer --tool memcheck --error-exitcode 9 $W/bin/ndconv.test -test.count=1 -test.run 'TestDeviceExecute|TestNonFiniteCVal|TestOverlappingOutput|TestDeviceConcurrent' >/tmp/t/memcheck-root.log 2>&1; echo "exit $?" >>/tmp/t/memcheck-root.log) &
(env OCL_ICD_VENDORS=/tmp/icd timeout $tl $W/bin/ndconv.test -test.count=1 -test.run 'TestDevice|TestNonFiniteCVal|TestEmptyArrays|TestOverlappingOutput|TestSharedPlan|TestScipyFixturesOnDevices|TestExecuteChunks|TestZeroValues|TestFFT' -test.v >/tmp/t/root.log 2>&1; echo "exit $?" >>/tmp/t/root.log) &
(cd plan && env OCL_ICD_VENDORS=/tmp/icd timeout $tl ../$W/bin/plan.test -test.count=1 -test.v >/tmp/t/plan.log 2>&1; echo "exit $?" >>/tmp/t/plan.log) &
(env OCL_ICD_VENDORS=/tmp/icd timeout $tl $W/bin/ndconv-B bench --device opencl:1:0 --workload all --only '^(A-2d-k7|S001-w21|A-2d-sep-k31|S000-bank8)$' --repeat 5 >/tmp/t/bench-opencl.log 2>&1; echo "exit $?" >>/tmp/t/bench-opencl.log) &
wait
for f in /tmp/t/*.log; do
	echo "== $f: $(grep -c -- '--- PASS' $f) pass, $(grep -c -- '--- FAIL' $f) fail, $(grep -c -- '--- SKIP' $f) skip, $(tail -1 $f)"
	grep -E -- '--- FAIL|^FAIL|panic|ERROR SUMMARY' $f | head -12
done
cat /tmp/t/bench-opencl.log | tail -12
tar czf $OUT/tests.tgz -C /tmp t
tar czf $OUT/modcache.tgz -C $NDCONV_CACHE_DIR . && ls -la $OUT/modcache.tgz
echo "done after $(($(date +%s) - t0)) s"
