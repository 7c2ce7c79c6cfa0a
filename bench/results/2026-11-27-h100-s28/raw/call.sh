#!/bin/bash
# Session 28's final device call, from the repo root: the A/B guard (A =
# bfe5f75, main at the session's start; B = final main), then the GPU
# suites of final main split over processes (the engine's on CUDA and
# NVIDIA's OpenCL including gemm's, the bindings', the root's, plan's and
# bench's device tests) and memcheck.
set -u
t0=$(date +%s)
W=.gpu/final28
export PATH=$PATH:/usr/local/cuda/bin
for f in $W/bin/*.gz; do [ -f "$f" ] && gunzip -f "$f"; done
chmod +x $W/bin/* 2>/dev/null
mkdir -p .gpu/ab /tmp/t
cp $W/bin/ndconv-A $W/bin/ndconv-B $W/bin/labels.txt .gpu/ab/
export NDCONV_CACHE_DIR=/tmp/ndconv-cache
mkdir -p $NDCONV_CACHE_DIR /tmp/icd && echo libnvidia-opencl.so.1 >/tmp/icd/nvidia.icd
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,temperature.gpu --format=csv
AB_OUT=/tmp/ab ONLY="${ONLY:-^(S000-bank(1|2|8|16|32)|S001-w(3|5|8|12|15|21|24)|S002.*|A-2d-k(3|7|9|15)|A-2d-sep-k31|A-2d-u8-k(3|7|15)|A-rgba-k5|A-3d-k3|A-3d-sep-k7|A-1d-k(7|63)|S003-sep-c4-float32)$}" \
	TUNING=bench/results/2026-11-25-h100-s25/tuning-after.json timeout ${AB_TIMEOUT:-210} bash scripts/ab-gpu.sh run >/tmp/ab.log 2>&1
echo "ab exit $? after $(($(date +%s) - t0)) s"
cp /tmp/ab.log /tmp/ab/run.log 2>/dev/null
tar czf $OUT/ab.tgz -C /tmp ab
sed -n '/^| workload/,/^$/p' /tmp/ab/table.md 2>/dev/null
grep 'rows flagged' /tmp/ab/table.md
# The fast family's new methods, timed alone on the card before the suites:
# gemm's final form on S000's banks, winograd (never run on CUDA before)
# against the direct method on the issue's three banks.
B=$W/bin/ndconv-B
summ() { python3 -c "
import json,sys
for l in sys.stdin:
    l=l.strip()
    if not l.startswith('{'): continue
    d=json.loads(l)
    if d.get('kind')=='roofline': print('  roofline FMA %.1f TFLOP/s copy %.0f GB/s'%(d.get('fma_gflops',0)/1e3,d.get('copy_gbps',0)))
    elif d.get('kind')=='result': print('  %-10s %-14s bank %-3s %-10s %s ms %.1f%% roofline sum=%.9g %s'%(d.get('id',''),d.get('kernel'),d.get('bank'),d.get('method'),('%.4f'%d['ms_median']) if d.get('ms_median') else '-',d.get('pct_roofline') or 0,d.get('checksum',0),(d.get('impl') or d.get('note') or '')[:80]))
"; }
for m in gemm direct; do echo "S000 $m"; timeout 60 $B bench --device cuda --workload seeds --only 'S000-bank(8|16|32)' --method $m --json 2>&1 | summ; done
for w in 2048,2048:3x3:64 2048,2048:5x5:32 256,256,256:3x3x3:16; do
	IFS=: read -r shape k bank <<< "$w"
	for m in direct winograd; do echo "$shape $k bank $bank $m"; timeout 60 $B bench --device cuda --shape $shape --dtype float32 --kernel $k --bank $bank --method $m --json 2>&1 | summ; done
done
echo "timings done after $(($(date +%s) - t0)) s"
tl=$(( ${BUDGET:-560} - ($(date +%s) - t0) ))
echo "suites get $tl s"
G=$W/bin/gpu.test
export OCL_ICD_VENDORS=/tmp/icd NDCONV_OPENCL_DEVICE=1:0
run() { local name=$1; shift; (timeout $tl "$@" >/tmp/t/$name.log 2>&1; echo "exit $?" >>/tmp/t/$name.log) & }
run c-table env NDCONV_GPU_TARGETS=cuda $G -test.count=1 -test.v -test.run 'TestEngineTable$|TestEngineSeparable|TestEngineSlabs|TestEngineDeviceArrays|TestEngineChecks|TestEngineEmpty|TestEngineConcurrent'
run c-gemm env NDCONV_GPU_TARGETS=cuda $G -test.count=1 -test.v -test.run 'TestGemm'
run c-sep env NDCONV_GPU_TARGETS=cuda $G -test.count=1 -test.v -test.run 'TestEngineSepRing|TestEngineSep3|TestEngineSepTile'
run c-fft env NDCONV_GPU_TARGETS=cuda $G -test.count=1 -test.v -test.run 'TestFFT|TestEnginePipelin|TestEngineRegistered'
run c-win env NDCONV_GPU_TARGETS=cuda $G -test.count=1 -test.v -test.run 'TestEngineWindow|TestEngineBankGroups|TestEngineRolling'
run c-wino env NDCONV_GPU_TARGETS=cuda $G -test.count=1 -test.v -test.run 'TestWinograd'
run o-all env NDCONV_GPU_TARGETS=opencl NDCONV_CACHE_DIR=/tmp/ocl1 $G -test.count=1 -test.v
run cuda env -C cuda ../$W/bin/cuda.test -test.count=1 -test.v
run opencl env -C opencl ../$W/bin/opencl.test -test.count=1 -test.v
run root $W/bin/ndconv.test -test.count=1 -test.v -test.run 'TestDevice|TestNonFiniteCVal|TestEmptyArrays|TestOverlappingOutput|TestSharedPlan|TestScipyFixturesOnDevices|TestExecuteChunks|TestZeroValues|TestFFT|TestBlocksOnDevices|TestPlanExecuteDevice|TestBenchPlan|TestMeasureRoofline|TestWarm|TestParseDevice'
run plan env -C plan ../$W/bin/plan.test -test.count=1 -test.v
run bench env -C bench ../$W/bin/bench.test -test.count=1 -test.v
run memcheck env OCL_ICD_VENDORS=/tmp/nonexistent NDCONV_GPU_TARGETS=cuda compute-sanitizer --tool memcheck --error-exitcode 9 $G -test.short -test.count=1 -test.run 'TestEngineChecks|TestEnginePipelined$|TestFFTBatches|TestEngineDeviceArrays|TestEngineSlabs|TestGemmTable|TestWinogradStores|TestWinogradNonFinite'
run memcheck-root env OCL_ICD_VENDORS=/tmp/nonexistent compute-sanitizer --tool memcheck --error-exitcode 9 $W/bin/ndconv.test -test.count=1 -test.run 'TestDeviceExecute|TestNonFiniteCVal|TestOverlappingOutput|TestDeviceConcurrent|TestBlocksOnDevices|TestBenchPlan'
wait
for f in /tmp/t/*.log; do
	echo "== $(basename $f): $(grep -c -- '--- PASS' $f) pass, $(grep -c -- '--- FAIL' $f) fail, $(grep -c -- '--- SKIP' $f) skip, $(tail -1 $f)"
	grep -E -- '--- FAIL|^FAIL|panic|ERROR SUMMARY' $f | head -8
done
tar czf $OUT/tests.tgz -C /tmp t
echo "done after $(($(date +%s) - t0)) s"
