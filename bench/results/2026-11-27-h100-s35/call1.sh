#!/bin/bash
# Session 35, call 1 (one H100): bank.cl, the output-bound banks' family.
# A = a38fcf2 (main), B = the tree (bank.cl reachable by tuning only;
# load_sample folded from direct.cl, tiled.cl, gemm.cl into common.cl).
#  1. device tests: bank.cl on CUDA (every case), the families whose
#     staging now calls load_sample (bank groups, rolling, window, gemm),
#     memcheck on bank.cl (-short); cuda's device list (2620ce8, a38fcf2).
#  2. every direct decomposition of five output-bound banks, timed on
#     device arrays (TestBankTiming).
#  3. cuDNN FP32/TF32 on issue 29's three banks; ndconv bench B on them.
#  4. A/B guard of the fold, interleaved A B A B A B.
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s35a
gunzip -f $W/*.gz; chmod +x $W/*
FINAL=$OUT; OUT=/tmp/raw; mkdir -p $OUT
trap 'tar czf $FINAL/raw.tgz -C /tmp raw' EXIT
export NDCONV_CACHE_DIR=/tmp/ndconv-cache PATH=$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc
$W/ndconv-B devices 2>&1 | head -4
( cd cuda && timeout 60 ../$W/cuda.test -test.count=1 -test.v -test.run 'TestGPU|TestAvailable|TestUnavailable' ) > $OUT/cuda.log 2>&1
echo "cuda rc=$? pass=$(grep -c -- '--- PASS' $OUT/cuda.log) fail=$(grep -c -- '--- FAIL' $OUT/cuda.log) ($(el))"; grep -E -- '--- FAIL|panic' $OUT/cuda.log | head
( cd internal/gpu && NDCONV_GPU_TARGETS=cuda timeout 150 ../../$W/gpu.test -test.count=1 -test.v -test.run 'TestEngineBank$|TestEngineBankGroups|TestEngineRolling|TestEngineWindow|TestGemm' ) > $OUT/gpu-cuda.log 2>&1
echo "internal/gpu bank, groups, rolling, window, gemm on cuda rc=$? pass=$(grep -c '^    --- PASS\|^--- PASS' $OUT/gpu-cuda.log) fail=$(grep -c -- '--- FAIL' $OUT/gpu-cuda.log) ($(el))"; grep -E -- '--- FAIL|^FAIL|panic|checked' $OUT/gpu-cuda.log | head
( cd internal/gpu && NDCONV_GPU_TARGETS=cuda timeout 120 compute-sanitizer --tool memcheck --print-limit 5 ../../$W/gpu.test -test.count=1 -test.short -test.run 'TestEngineBank$' ) > $OUT/memcheck.log 2>&1
echo "memcheck bank.cl rc=$? ($(el))"; grep -E 'ERROR SUMMARY|^ok|^FAIL|--- FAIL' $OUT/memcheck.log | head -4
( cd internal/gpu && NDCONV_GPU_TARGETS=cuda NDCONV_TIMING=1 timeout 240 ../../$W/gpu.test -test.count=1 -test.v -test.run 'TestBankTiming' ) > $OUT/banktime.log 2>&1
echo "bank timing rc=$? ($(el))"
python3 - $OUT/banktime.log <<'PY'
import re, sys, collections
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    m = re.search(r'BANKTIME (.*?) \| (.*?) \| .*median ([0-9.]+) ms.*?([0-9]+) GB/s', line)
    if m:
        rows[m.group(1)].append((float(m.group(3)), m.group(2), m.group(4)))
for w, rs in rows.items():
    print(w, "default:", rs[0][1], rs[0][0], "ms", rs[0][2], "GB/s;", len(rs) - 1, "candidates")
    best = {}
    for ms, impl, gbs in rs[1:]:
        fam = impl.split()[0]
        if fam not in best or ms < best[fam][0]:
            best[fam] = (ms, impl, gbs)
    for fam, (ms, impl, gbs) in sorted(best.items(), key=lambda kv: kv[1][0]):
        print("   best", fam, ms, "ms", gbs, "GB/s |", impl)
PY
d=/tmp/wl; mkdir -p $d
for w in "2048,2048 3x3 64" "2048,2048 5x5 32" "256,256,256 3x3x3 16"; do set -- $w
  $W/ndconv-B bench --shape $1 --kernel $2 --bank $3 --list >> $d/banks.jsonl
done
timeout 120 python3 bench/peers/gpu_peers.py $d/banks.jsonl --systems cudnn,cudnn-tf32 > $OUT/cudnn.jsonl 2> $OUT/cudnn.err
echo "cudnn rc=$? ($(el))"; python3 -c "
import json
for l in open('$OUT/cudnn.jsonl'):
    r=json.loads(l); print(r.get('workload',{}).get('id', r.get('id')), r.get('system'), r.get('ms'), r.get('note','')[:60])"
for w in "2048,2048 3x3 64" "2048,2048 5x5 32" "256,256,256 3x3x3 16"; do set -- $w
  $W/ndconv-B bench --device cuda --shape $1 --kernel $2 --bank $3 2>&1 | tail -2
done
echo "($(el))"
only='S000-bank(1|8|32)|S001-w(3|5|7|15)|S003-full'
for r in 1 2 3; do for v in A B; do
  $W/ndconv-$v bench --device cuda --workload seeds --only "$only" --json > $OUT/ab-$v-$r.jsonl 2>$OUT/ab-$v-$r.err
  $W/ndconv-$v bench --device cuda --method gemm --workload seeds --only 'S000-bank(8|32)' --json > $OUT/ab-gemm-$v-$r.jsonl 2>>$OUT/ab-$v-$r.err
  echo "ab $v-$r rc=$? ($(el))"
done; done
