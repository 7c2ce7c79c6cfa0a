#!/bin/bash
# Session 40, call 1 (one H200): issue 29's whole table in one run at 35fa1a5 —
# ndconv bench over every workload with session 39's tuning cache, S000's
# banks by gemm (the ndconv-gemm column), then CuPy, cuDNN FP32/TF32 (5
# timed repeats each, so that every peer finishes inside the call; session
# 39's 11 ran out of time) and NPP 13.0.1, each bounded by a timeout.
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s40a
gunzip -f $W/*.gz 2>/dev/null; chmod +x $W/*
FINAL=$OUT; OUT=/tmp/raw; mkdir -p $OUT
trap 'tar czf $FINAL/raw.tgz -C /tmp raw' EXIT
export PATH=$PATH:/usr/local/cuda/bin NDCONV_CACHE_DIR=/tmp/ndconv-cache
mkdir -p $NDCONV_CACHE_DIR
cp bench/results/2026-11-28-h200-s40/tuning-s39-call1.json /tmp/tuning.json && chmod 444 /tmp/tuning.json
export NDCONV_TUNING=/tmp/tuning.json
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
echo "{\"kind\":\"meta\",\"command\":\"session 40 call1.sh (ndconv bench --workload all --json, tuning-s39-call1.json; S000 banks --method gemm; gpu_peers.py --repeats 5; npp_peer.py)\",\"date\":\"$(date -u +%FT%TZ)\",\"host\":\"$(hostname)\",\"commit\":\"35fa1a5\"}" > $OUT/meta.jsonl
$W/ndconv bench --workload all --list > $OUT/workloads.jsonl
timeout 220 $W/ndconv bench --workload all --json --device cuda > $OUT/ndconv.jsonl 2> $OUT/ndconv.err
echo "ndconv rc=$? $(grep -c '"result"' $OUT/ndconv.jsonl) results ($(el))"
timeout 60 $W/ndconv bench --workload seeds --only '^S000-bank' --method gemm --json --device cuda > $OUT/ndconv-gemm.jsonl 2> $OUT/ndconv-gemm.err
echo "gemm rc=$? $(grep -c '"result"' $OUT/ndconv-gemm.jsonl) results ($(el))"
left=$(( 440 - ($(date +%s) - T0) ))
timeout $left python3 bench/peers/gpu_peers.py $OUT/workloads.jsonl --repeats 5 > $OUT/gpu-peers.jsonl 2> $OUT/gpu-peers.err
echo "gpu peers rc=$? $(wc -l < $OUT/gpu-peers.jsonl) lines ($(el))"
left=$(( 575 - ($(date +%s) - T0) ))
timeout $left python3 bench/peers/npp_peer.py $OUT/workloads.jsonl --build > $OUT/npp.jsonl 2> $OUT/npp.err
echo "npp rc=$? $(wc -l < $OUT/npp.jsonl) lines ($(el))"
tail -2 $OUT/npp.err $OUT/gpu-peers.err | cut -c1-200
