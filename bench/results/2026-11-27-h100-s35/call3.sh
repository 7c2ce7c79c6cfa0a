#!/bin/bash
# Session 35, call 3 (one H100): bank.cl the default for banks of small
# kernels (images ≥ 4 kernels, volumes ≥ 16). A = a38fcf2 (main), B = the
# tree. The A/B guard interleaved A B ×3 over the new banks set and the
# seed/anchor rows whose kernels bank.cl could take or whose staging
# changed; cuDNN FP32/TF32 on the banks set in the same call; ncu of
# bank.cl on the 3-D bank (its miss) and the 2-D bank of 64.
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s35c
gunzip -f $W/*.gz; chmod +x $W/*
FINAL=$OUT; OUT=/tmp/raw; mkdir -p $OUT
trap 'tar czf $FINAL/raw.tgz -C /tmp raw' EXIT
export NDCONV_CACHE_DIR=/tmp/ndconv-cache PATH=$PATH:/usr/local/cuda/bin NDCONV_TUNING=/tmp/none.json
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
only='^(B-|S000-bank(1|8|32)$|S001-w(3|5|7)$|A-2d-k(3|5)$|A-3d-k3$|A-rgba-k5$|A-2d-u8-k3$)'
for r in 1 2 3; do for v in A B; do
  $W/ndconv-$v bench --device cuda --workload all --only "$only" --json > $OUT/$v-r$r.jsonl 2>$OUT/$v-r$r.err
  echo "round $r $v rc=$? ($(el))"
done; done
$W/ndconv-B bench --workload banks --list > $OUT/banks.jsonl
timeout 150 python3 bench/peers/gpu_peers.py $OUT/banks.jsonl --systems cudnn,cudnn-tf32 > $OUT/cudnn.jsonl 2> $OUT/cudnn.err
echo "cudnn rc=$? ($(el))"; python3 -c "
import json
for l in open('$OUT/cudnn.jsonl'):
    r=json.loads(l); print(r['id'], r['system'], r.get('ms_median'), r.get('note','')[:50])"
for w in "256,256,256 3x3x3 16" "2048,2048 3x3 64"; do set -- $w
  timeout 120 ncu --kernel-name correlate_bank --launch-count 1 --launch-skip 2 --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis \
    $W/ndconv-B bench --device cuda --shape $1 --kernel $2 --bank $3 --repeat 3 > $OUT/ncu-$2-$3.txt 2>&1
  echo "ncu $2 bank $3 rc=$? ($(el))"
  grep -E 'Duration|Memory Throughput|DRAM Throughput|Compute \(SM\) Throughput|Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Limit Reg|Executed Ipc A|Issue Slots Busy|Stall|L1/TEX Hit|Mem Pipes' $OUT/ncu-$2-$3.txt | head -24
done
