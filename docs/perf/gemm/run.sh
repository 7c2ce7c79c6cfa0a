#!/bin/bash
# One device call for the gemm method: tests, memcheck, S000 timings (gemm
# variants, the exact path, cuDNN TF32) in the same run.
set -u
G=.gpu/gemm
gunzip -f $G/*.gz; chmod +x $G/gpu.test $G/ndconv
export NDCONV_CACHE_DIR=/tmp/ndconv-cache PATH=$PATH:/usr/local/cuda/bin NDCONV_GPU_TARGETS=cuda
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader
T0=$(date +%s)
echo "== tests"
timeout ${TEST_S:-200} $G/gpu.test -test.run "${TESTS:-TestGemm}" -test.v > $OUT/tests.log 2>&1; echo "rc=$?"
grep -E '^(--- |ok|FAIL|PASS)|gemm_test.go' $OUT/tests.log | cut -c1-400 | head -60
echo "== bench ($(( $(date +%s) - T0 )) s)"
W='S000-bank(8|16|32)$'
for m in gemm direct; do timeout 150 $G/ndconv bench --device cuda --workload seeds --only "$W" --method $m --json > $OUT/bench-$m.jsonl 2>&1; echo "$m rc=$?"; done
for v in ${VARIANTS:-}; do b=${v%%:*}; s=${v#*:}; NDCONV_GEMM_SHAPE=$s timeout 60 $G/ndconv bench --device cuda --workload seeds --only "S000-bank$b\$" --method gemm --json >> $OUT/bench-variants.jsonl 2>&1; echo "variant $v rc=$?"; done
echo "== peers ($(( $(date +%s) - T0 )) s)"
$G/ndconv bench --workload seeds --only "$W" --list > /tmp/w.jsonl
if [ -n "${GABOR:-}" ]; then
  for m in gemm auto; do timeout 60 $G/ndconv bench --device cuda --shape 4096,4096 --dtype float32 --kernel 31x31 --bank 16 --method $m --json >> $OUT/bench-gabor.jsonl 2>&1; echo "gabor $m rc=$?"; done
  $G/ndconv bench --shape 4096,4096 --dtype float32 --kernel 31x31 --bank 16 --list | grep '"workload"' >> /tmp/w.jsonl
fi
timeout 200 python3 bench/peers/gpu_peers.py /tmp/w.jsonl --systems cudnn-tf32 --repeats 11 > $OUT/peers.jsonl 2> /tmp/peers.err; echo "peers rc=$?"; tail -3 /tmp/peers.err
if [ -n "${MEMCHECK-1}" ]; then
echo "== memcheck ($(( $(date +%s) - T0 )) s)"
timeout ${MEMCHECK_S:-120} compute-sanitizer --tool memcheck $G/gpu.test -test.run "${MEMCHECK_TESTS:-TestGemmNonFinite|TestGemmTable}" -test.short > $OUT/memcheck.log 2>&1; echo "rc=$?"; grep -E "ERROR SUMMARY|^(ok|FAIL|PASS)" $OUT/memcheck.log | head
fi
if [ -n "${NCU:-}" ]; then
echo "== ncu ($(( $(date +%s) - T0 )) s)"
timeout 150 ncu --launch-skip 1 --launch-count 1 -k regex:correlate_gemm --section SpeedOfLight --section LaunchStats --section Occupancy --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --metrics sm__inst_executed_pipe_tensor_op_hmma.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,smsp__inst_executed_op_shared_ld.sum $G/ndconv bench --device cuda --workload seeds --only "$NCU" --method gemm --repeat 1 > $OUT/ncu.txt 2>&1; echo "rc=$?"; grep -E "Duration|Registers|Throughput|Achieved Occupancy|hmma|bank_conflicts|shared_ld|Block Limit|Theoretical Occ" $OUT/ncu.txt | head -30
fi
echo "== summary ($(( $(date +%s) - T0 )) s)"
python3 - $OUT/bench-*.jsonl $OUT/peers.jsonl <<'PY'
import json, sys
peak = None
for f in sys.argv[1:]:
    for line in open(f):
        line = line.strip()
        if not line.startswith("{"):
            if "rror" in line: print(f.split("/")[-1], line[:300])
            continue
        d = json.loads(line)
        if d.get("kind") == "roofline":
            peak = d.get("fma_gflops"); print("roofline", f.split("/")[-1], "FMA peak %.1f TFLOP/s copy %.0f GB/s" % (peak/1e3, d.get("copy_gbps")))
        elif d.get("kind") == "result":
            ms = d.get("ms_median"); gf = d.get("gflops") or 0
            if not gf and ms and d.get("id", "").startswith("S000-bank"):
                gf = 2 * 250**3 * 343 * int(d["id"][9:]) / (ms * 1e6)
            if not gf and ms and d.get("id") == "custom":
                gf = 2 * 257966473216 / (ms * 1e6)
            print("%-14s %-12s %-10s %8s ms %7.1f TFLOP/s %5.1f%%peak sum=%.9g %s %s" % (f.split("/")[-1][:14], d.get("id"), d.get("system","")+":"+d.get("method",""), "%.3f" % ms if ms else "-", gf/1e3, 100*gf/peak if peak and gf else 0, d.get("checksum", 0), (d.get("impl") or "")[27:110], d.get("note","")[:200]))
PY
