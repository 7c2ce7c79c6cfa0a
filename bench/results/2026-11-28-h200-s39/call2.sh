#!/bin/bash
# Session 39, call 2 (one H200): the whole table at f77bcd1 in one run —
# ndconv bench over every workload with call 1's tuning cache, then CuPy,
# cuDNN (FP32 and TF32) and NPP on the same workloads (bench/run-gpu.sh's
# steps, each bounded by a timeout so that what ran comes back).
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s39a
gunzip -f $W/*.gz 2>/dev/null; chmod +x $W/*
FINAL=$OUT; OUT=/tmp/raw; mkdir -p $OUT
trap 'tar czf $FINAL/raw.tgz -C /tmp raw' EXIT
export PATH=$PATH:/usr/local/cuda/bin NDCONV_CACHE_DIR=/tmp/ndconv-cache
mkdir -p $NDCONV_CACHE_DIR
cp bench/results/2026-11-28-h200-s39/tuning-call1.json /tmp/tuning.json && chmod 444 /tmp/tuning.json
export NDCONV_TUNING=/tmp/tuning.json
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
echo "{\"kind\":\"meta\",\"command\":\"session 39 call2.sh (ndconv bench --workload all --json, tuning-call1.json; gpu_peers.py; npp_peer.py)\",\"date\":\"$(date -u +%FT%TZ)\",\"host\":\"$(hostname)\",\"commit\":\"f77bcd1\"}" > $OUT/meta.jsonl
$W/ndconv bench --workload all --list > $OUT/workloads.jsonl
timeout 200 $W/ndconv bench --workload all --json --device cuda > $OUT/ndconv.jsonl 2> $OUT/ndconv.err
echo "ndconv rc=$? $(grep -c '"result"' $OUT/ndconv.jsonl) results ($(el))"
timeout 250 python3 bench/peers/gpu_peers.py $OUT/workloads.jsonl > $OUT/gpu-peers.jsonl 2> $OUT/gpu-peers.err
echo "gpu peers rc=$? $(wc -l < $OUT/gpu-peers.jsonl) lines ($(el))"
left=$(( 570 - ($(date +%s) - T0) ))
timeout $left python3 bench/peers/npp_peer.py $OUT/workloads.jsonl --build > $OUT/npp.jsonl 2> $OUT/npp.err
echo "npp rc=$? $(wc -l < $OUT/npp.jsonl) lines ($(el))"
tail -3 $OUT/npp.err $OUT/gpu-peers.err
