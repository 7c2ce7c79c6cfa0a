#!/bin/bash
# One device call for the Winograd method (not run yet: written for the
# next session's device time). Build internal/gpu's test binary and ndconv
# into .gpu/winograd/ gzipped, as docs/perf/gemm/run.sh's are:
#   CGO_ENABLED=0 go test -c -o .gpu/winograd/gpu.test ./internal/gpu
#   CGO_ENABLED=0 go build -tags ndconv_nogcs,ndconv_noazure -o .gpu/winograd/ndconv ./cmd/ndconv
#   gzip .gpu/winograd/*
# carry .gpu/winograd and run `bash .gpu/winograd/run.sh` (NCU=1 adds a
# profile of each store variant on the 3³ bank).
# It runs the Winograd tests on CUDA, then the issue's three bank
# workloads by the direct method, by winograd with staged and with direct
# stores, and the other tile, with cuDNN FP32 and TF32 as peers, in one run.
set -u
G=.gpu/winograd
gunzip -f $G/*.gz; chmod +x $G/gpu.test $G/ndconv
export NDCONV_CACHE_DIR=/tmp/ndconv-cache PATH=$PATH:/usr/local/cuda/bin NDCONV_GPU_TARGETS=cuda
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader
T0=$(date +%s)
echo "== tests"
timeout ${TEST_S:-200} $G/gpu.test -test.run "${TESTS:-TestWinograd}" -test.v > $OUT/tests.log 2>&1; echo "rc=$?"
grep -E '^(--- |ok|FAIL|PASS)|winograd_test.go' $OUT/tests.log | cut -c1-300 | head -40
echo "== bench ($(( $(date +%s) - T0 )) s)"
# shape kernel bank other-tile
WORK="2048,2048:3x3:64:2 2048,2048:5x5:32:4 256,256,256:3x3x3:16:0"
for w in $WORK; do
  IFS=: read -r shape k bank tile <<< "$w"
  run() { timeout 90 $G/ndconv bench --device cuda --shape $shape --dtype float32 --kernel $k --bank $bank --json "$@"; }
  run --method direct > $OUT/bench-$k-direct.jsonl 2>&1; echo "$k direct rc=$?"
  run --method winograd > $OUT/bench-$k-winograd.jsonl 2>&1; echo "$k winograd (staged) rc=$?"
  NDCONV_WINOGRAD_STAGE=-1 run --method winograd > $OUT/bench-$k-winograd-direct-stores.jsonl 2>&1; echo "$k winograd (direct stores) rc=$?"
  if [ "$tile" != 0 ]; then NDCONV_WINOGRAD_TILE=$tile run --method winograd > $OUT/bench-$k-winograd-tile$tile.jsonl 2>&1; echo "$k winograd tile $tile rc=$?"; fi
  $G/ndconv bench --shape $shape --dtype float32 --kernel $k --bank $bank --list | grep '"workload"' >> /tmp/w.jsonl
done
echo "== peers ($(( $(date +%s) - T0 )) s)"
timeout 200 python3 bench/peers/gpu_peers.py /tmp/w.jsonl --systems cudnn,cudnn-tf32 --repeats 11 > $OUT/peers.jsonl 2> /tmp/peers.err; echo "peers rc=$?"; tail -3 /tmp/peers.err
if [ -n "${MEMCHECK-1}" ]; then
echo "== memcheck ($(( $(date +%s) - T0 )) s)"
timeout ${MEMCHECK_S:-120} compute-sanitizer --tool memcheck $G/gpu.test -test.run "TestWinogradNonFinite|TestWinogradStores|TestWinogradRandom" -test.short > $OUT/memcheck.log 2>&1; echo "rc=$?"; grep -E "ERROR SUMMARY|^(ok|FAIL|PASS)" $OUT/memcheck.log | head
fi
if [ -n "${NCU:-}" ]; then
echo "== ncu ($(( $(date +%s) - T0 )) s)"
for s in 0 -1; do
  NDCONV_WINOGRAD_STAGE=$s timeout 120 ncu --launch-skip 1 --launch-count 1 -k regex:correlate_winograd --section SpeedOfLight --section LaunchStats --section Occupancy --section MemoryWorkloadAnalysis --metrics lts__t_sectors_op_write.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,local_load_bytes,local_store_bytes,smsp__inst_executed.sum $G/ndconv bench --device cuda --shape 256,256,256 --dtype float32 --kernel 3x3x3 --bank 16 --method winograd --repeat 1 > $OUT/ncu-stage$s.txt 2>&1; echo "stage $s rc=$?"
  grep -E "Duration|Registers|Throughput|Achieved Occupancy|sectors|requests|local_|inst_executed" $OUT/ncu-stage$s.txt | head -20
done
fi
echo "== summary ($(( $(date +%s) - T0 )) s)"
python3 - $OUT/bench-*.jsonl $OUT/peers.jsonl <<'PY'
import json, sys
for f in sys.argv[1:]:
    for line in open(f):
        line = line.strip()
        if not line.startswith("{"):
            if "rror" in line: print(f.split("/")[-1], line[:300])
            continue
        d = json.loads(line)
        if d.get("kind") == "roofline":
            print("roofline", f.split("/")[-1], "FMA peak %.1f TFLOP/s copy %.0f GB/s" % (d.get("fma_gflops", 0)/1e3, d.get("copy_gbps", 0)))
        elif d.get("kind") == "result":
            ms = d.get("ms_median")
            print("%-44s %-16s %-10s bank %-3s %-18s %8s ms %5.1f%% roofline sum=%.9g %s" % (f.split("/")[-1][:44], d.get("shape"), d.get("kernel"), d.get("bank"), d.get("system","")+":"+d.get("method",""), "%.3f" % ms if ms else "-", d.get("pct_roofline") or 0, d.get("checksum", 0), (d.get("impl") or "")[:90]))
PY
