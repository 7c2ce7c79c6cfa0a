#!/bin/bash
# Session 38, call 6 (one H100): 03b9945's fft.cl change (a group's
# inverse transforms up to its last slot) on NVIDIA OpenCL — TestFFT*
# -short — and the Gabor bank through fft.cl; then whether lengths
# 2^a·3 (weighted 1.1 a value) smooth S001's step at w30 (C, branch
# s38-odd3) against main's powers of two (B), on the rows where they
# choose differently (rows-call6.txt), three rounds interleaved.
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s38f
gunzip -f $W/*.gz; chmod +x $W/*.test
mkdir -p .gpu/ab && rm -f .gpu/ab/*; for v in B C; do gunzip -c $W/ab/ndconv-$v.gz > .gpu/ab/ndconv-$v; done; cp $W/ab/labels.txt .gpu/ab/; chmod +x .gpu/ab/*
FINAL=$OUT; OUT=/tmp/raw; mkdir -p $OUT
trap 'tar czf $FINAL/raw.tgz -C /tmp raw' EXIT
export PATH=$PATH:/usr/local/cuda/bin NDCONV_CACHE_DIR=/tmp/ndconv-cache
mkdir -p /tmp/icd $NDCONV_CACHE_DIR && echo libnvidia-opencl.so.1 >/tmp/icd/nvidia.icd
summ() { echo "$1: rc=$2 pass=$(grep -c -- '--- PASS' $3) fail=$(grep -c -- '--- FAIL' $3) skip=$(grep -c -- '--- SKIP' $3) ($(el))"; grep -E -- '(--- FAIL|^FAIL|panic|_test.go)' $3 | head -8; }
( cd internal/gpu && OCL_ICD_VENDORS=/tmp/icd NDCONV_OPENCL_DEVICE=1:0 NDCONV_GPU_TARGETS=opencl timeout 100 ../../$W/gpu.test -test.count=1 -test.short -test.v -test.run 'TestFFT' ) > $OUT/fft-opencl.log 2>&1; summ "TestFFT NVIDIA OpenCL" $? $OUT/fft-opencl.log
OCL_ICD_VENDORS=/tmp/icd timeout 60 .gpu/ab/ndconv-B bench --device opencl:1:0 --shape 4096,4096 --kernel 31x31 --bank 16 --method fft --repeat 5 > $OUT/gabor-opencl.txt 2>&1; echo "gabor opencl rc=$? ($(el))"; tail -2 $OUT/gabor-opencl.txt
ROUNDS=3 AB_OUT=$OUT/ab timeout 300 bash scripts/ab-gpu.sh rows $W/rows.txt > $OUT/ab.log 2>&1
echo "ab rc=$? ($(el))"; sed -n '/^| workload/,/^$/p' $OUT/ab/table.md | head -20
for v in B C; do grep -h '"kind": *"result"' $OUT/ab/$v-r1.jsonl | python3 -c "
import sys,json
for l in sys.stdin:
    d=json.loads(l); print('$v', d['id'], d.get('method'), d.get('impl','')[:60])"; done
