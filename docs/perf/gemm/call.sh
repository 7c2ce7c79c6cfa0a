#!/bin/bash
# One device call of session 29's gemm helper (FP16 path): S000 timings
# (the defaults, then VARIANTS = "bank:NDCONV_GEMM_SHAPE ..."; a 9th shape
# field of 1 keeps the TF32 path, the in-call baseline), then the CUDA
# tests (TESTS) in the time left, memcheck of MEMCHECK's tests and ncu of
# NCU's workload (optional).
set -u
G=.gpu/gemm
T0=$(date +%s)
gunzip -f $G/*.gz; chmod +x $G/gpu.test $G/ndconv
export NDCONV_CACHE_DIR=/tmp/ndconv-cache PATH=$PATH:/usr/local/cuda/bin NDCONV_GPU_TARGETS=cuda
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader
echo "== bench"
timeout 40 $G/ndconv bench --device cuda --workload seeds --only 'S000-bank(8|16|32)$' --method gemm --json > $OUT/bench.jsonl 2>&1; echo "default rc=$? $(( $(date +%s) - T0 )) s"
for v in ${VARIANTS:-}; do b=${v%%:*}; s=${v#*:}; NDCONV_GEMM_SHAPE=$s timeout 30 $G/ndconv bench --device cuda --workload seeds --only "S000-bank$b\$" --method gemm --json >> $OUT/bench.jsonl 2>&1; echo "variant $v rc=$? $(( $(date +%s) - T0 )) s"; done
left=$(( ${BUDGET:-190} - ($(date +%s) - T0) ))
echo "== tests ($left s left)"
if [ $left -gt 10 ]; then
timeout $left $G/gpu.test -test.run "${TESTS:-TestGemm}" -test.v ${TESTFLAGS:-} > $OUT/tests.log 2>&1; echo "rc=$?"
grep -E '^(--- |ok|FAIL|PASS|panic)|gemm_test.go' $OUT/tests.log | cut -c1-400 | head -40
fi
if [ -n "${MEMCHECK:-}" ]; then
echo "== memcheck ($(( $(date +%s) - T0 )) s)"
timeout ${MEMCHECK_S:-40} compute-sanitizer --tool memcheck --error-exitcode 9 $G/gpu.test -test.run "$MEMCHECK" -test.short > $OUT/memcheck.log 2>&1; echo "rc=$?"; grep -E "ERROR SUMMARY|^(ok|FAIL|PASS|---)" $OUT/memcheck.log | head
fi
if [ -n "${NCU:-}" ]; then
echo "== ncu ($(( $(date +%s) - T0 )) s)"
NDCONV_GEMM_SHAPE=${NCU_SHAPE:-} timeout ${NCU_S:-60} ncu --launch-skip 1 --launch-count 1 -k regex:correlate_gemm --section SpeedOfLight --section LaunchStats --section Occupancy --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats --metrics sm__inst_executed_pipe_tensor_op_hmma.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,smsp__inst_executed_op_shared_ld.sum $G/ndconv bench --device cuda --workload seeds --only "$NCU" --method gemm --repeat 1 > $OUT/ncu.txt 2>&1; echo "rc=$?"; grep -E "Duration|Registers|Throughput|Achieved Occupancy|hmma|bank_conflicts|shared_ld|Block Limit|Theoretical Occ|Issue Slots|Stall|Eligible" $OUT/ncu.txt | head -40
fi
echo "== summary ($(( $(date +%s) - T0 )) s)"
python3 - $OUT/bench.jsonl <<'PY'
import json, sys
peak = None
for f in sys.argv[1:]:
    for line in open(f):
        line = line.strip()
        if not line.startswith("{"):
            if "rror" in line or "nvrtc" in line.lower(): print(line[:600])
            continue
        d = json.loads(line)
        if d.get("kind") == "roofline":
            peak = d.get("fma_gflops")
        elif d.get("kind") == "result":
            ms = d.get("ms_median"); gf = 0
            if ms and d.get("id", "").startswith("S000-bank"):
                gf = 2 * 250**3 * 343 * int(d["id"][9:]) / (ms * 1e6)
            print("%-12s %8s ms %6.1f TFLOP/s sum=%.9g %s %s" % (d.get("id"), "%.3f" % ms if ms else "-", gf/1e3, d.get("checksum", 0), (d.get("impl") or "")[5:140], d.get("note","")[:300]))
PY
