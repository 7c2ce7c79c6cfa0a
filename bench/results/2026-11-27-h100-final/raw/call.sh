#!/bin/bash
# Session 27's final device call, from the repo root: the A/B guard (A =
# main at the session's start, B = final main), then every GPU suite of
# final main split over processes (the engine's on CUDA and NVIDIA's
# OpenCL, the bindings', the root's and plan's device tests), memcheck,
# two OpenCL processes at once on the same cold caches (the one failure
# seen this session), and a folder of PNGs through both builds on the CPU
# and on CUDA.
set -u
t0=$(date +%s)
W=.gpu/final
export PATH=$PATH:/usr/local/cuda/bin
for f in $W/bin/*.gz; do [ -f "$f" ] && gunzip -f "$f"; done
chmod +x $W/bin/* 2>/dev/null
mkdir -p .gpu/ab /tmp/t
cp $W/bin/ndconv-A $W/bin/ndconv-B $W/labels.txt .gpu/ab/
export NDCONV_CACHE_DIR=/tmp/ndconv-cache
mkdir -p $NDCONV_CACHE_DIR /tmp/icd && echo libnvidia-opencl.so.1 >/tmp/icd/nvidia.icd
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,temperature.gpu --format=csv
AB_OUT=/tmp/ab ONLY="${ONLY:-^(S000-bank(1|2|8|16|32)|S001-w(3|5|8|12|15|21|24)|S002.*|A-2d-k(3|7|9|15)|A-2d-sep-k31|A-2d-u8-k(3|7|15)|A-rgba-k5|A-3d-k3|A-3d-sep-k7|A-1d-k(7|63)|S003-sep-c4-float32)$}" \
	TUNING=bench/results/2026-11-25-h100-s25/tuning-after.json timeout ${AB_TIMEOUT:-200} bash scripts/ab-gpu.sh run >/tmp/ab.log 2>&1
echo "ab exit $? after $(($(date +%s) - t0)) s"
cp /tmp/ab.log /tmp/ab/run.log 2>/dev/null
tar czf $OUT/ab.tgz -C /tmp ab
sed -n '/^| workload/,/^$/p' /tmp/ab/table.md 2>/dev/null
grep 'rows flagged' /tmp/ab/table.md
tl=$(( ${BUDGET:-540} - ($(date +%s) - t0) ))
echo "suites get $tl s"
G=$W/bin/gpu.test
export OCL_ICD_VENDORS=/tmp/icd NDCONV_OPENCL_DEVICE=1:0
run() { local name=$1; shift; (timeout $tl "$@" >/tmp/t/$name.log 2>&1; echo "exit $?" >>/tmp/t/$name.log) & }
run c-table env NDCONV_GPU_TARGETS=cuda $G -test.count=1 -test.v -test.run 'TestEngineTable$|TestEngineSeparable|TestEngineSlabs|TestEngineDeviceArrays|TestEngineChecks|TestEngineEmpty|TestEngineConcurrent'
run c-win env NDCONV_GPU_TARGETS=cuda $G -test.count=1 -test.v -test.run 'TestEngineWindow|TestEngineBankGroups|TestEngineRolling'
run c-sep env NDCONV_GPU_TARGETS=cuda $G -test.count=1 -test.v -test.run 'TestEngineSepRing|TestEngineSep3|TestEngineSepTile'
run c-fft env NDCONV_GPU_TARGETS=cuda $G -test.count=1 -test.v -test.run 'TestFFT|TestEnginePipelin|TestEngineRegistered'
run o-all env NDCONV_GPU_TARGETS=opencl NDCONV_CACHE_DIR=/tmp/ocl1 $G -test.count=1 -test.v
run o-twin env NDCONV_GPU_TARGETS=opencl NDCONV_CACHE_DIR=/tmp/ocl1 $G -test.count=1 -test.v -test.run 'TestEngineTable$|TestEngineConcurrent'
run cuda env -C cuda ../$W/bin/cuda.test -test.count=1 -test.v
run opencl env -C opencl ../$W/bin/opencl.test -test.count=1 -test.v
run root $W/bin/ndconv.test -test.count=1 -test.v -test.run 'TestDevice|TestNonFiniteCVal|TestEmptyArrays|TestOverlappingOutput|TestSharedPlan|TestScipyFixturesOnDevices|TestExecuteChunks|TestZeroValues|TestFFT|TestBlocksOnDevices|TestPlanExecuteDevice'
run plan env -C plan ../$W/bin/plan.test -test.count=1 -test.v
run cpu-avx512 env -C cpu ../$W/bin/cpu.test -test.count=1 -test.v
run simd-avx512 env -C cpu/internal/simd ../../../$W/bin/simd.test -test.count=1 -test.v
run memcheck env OCL_ICD_VENDORS=/tmp/nonexistent NDCONV_GPU_TARGETS=cuda compute-sanitizer --tool memcheck --error-exitcode 9 $G -test.short -test.count=1 -test.run 'TestEngineChecks|TestEnginePipelined$|TestFFTBatches|TestEngineDeviceArrays|TestEngineSlabs'
run memcheck-root env OCL_ICD_VENDORS=/tmp/nonexistent compute-sanitizer --tool memcheck --error-exitcode 9 $W/bin/ndconv.test -test.count=1 -test.run 'TestDeviceExecute|TestNonFiniteCVal|TestOverlappingOutput|TestDeviceConcurrent|TestBlocksOnDevices'
wait
for f in /tmp/t/*.log; do
	echo "== $(basename $f): $(grep -c -- '--- PASS' $f) pass, $(grep -c -- '--- FAIL' $f) fail, $(grep -c -- '--- SKIP' $f) skip, $(tail -1 $f)"
	grep -E -- '--- FAIL|^FAIL|panic|ERROR SUMMARY' $f | head -8
done
grep -h 'GB/s in and out\|a round' /tmp/t/*.log | head -8
tar czf $OUT/tests.tgz -C /tmp t
# A folder of 512² uint8 PNGs, 7×7, through both builds: CPU and CUDA.
if [ $(( $(date +%s) - t0 )) -lt 480 ]; then
	mkdir -p /tmp/mf/in && python3 -c "
import numpy as np
from PIL import Image
rng=np.random.default_rng(0)
for i in range(${NFILES:-1000}):
    a=np.cumsum((rng.random((512,512))*255).astype(np.uint8),axis=1).astype(np.uint8)
    Image.fromarray(a).save('/tmp/mf/in/f%04d.png'%i)
np.save('/tmp/mf/k7.npy', np.ones((7,7))/49)"
	for dev in cpu cuda; do for b in A B; do
		rm -rf /tmp/mf/out-$b-$dev; s=$(date +%s.%N)
		$W/bin/ndconv-$b correlate -k /tmp/mf/k7.npy /tmp/mf/in --out-dir /tmp/mf/out-$b-$dev --device $dev 2>&1 | tail -1
		echo "$b $dev $(echo "$(date +%s.%N) - $s" | bc) s"
	done; done
	for dev in cpu cuda; do cmp <(cat /tmp/mf/out-A-$dev/*.png | sha256sum) <(cat /tmp/mf/out-B-$dev/*.png | sha256sum) && echo "$dev: same bytes"; done
fi
echo "done after $(($(date +%s) - t0)) s"
