#!/bin/bash
# Session 38, call 2 (one H100): the FFT's bank groups — fftconv_multiply
# and fftconv_scatter over groups of up to 16 kernels, one inverse
# transform per group (B) — with call 1's lengths (powers of two for
# cuFFT by the values the blocks hold). internal/gpu's FFT tests on CUDA
# and NVIDIA OpenCL, memcheck, ncu per kernel on the Gabor bank, then the
# A/B (A = 48c05e4) over every FFT row, S001's widths and the banks.
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s38b
gunzip -f $W/*.gz; chmod +x $W/*.test
mkdir -p .gpu/ab && for v in A B; do gunzip -c $W/ab/ndconv-$v.gz > .gpu/ab/ndconv-$v; done; cp $W/ab/labels.txt .gpu/ab/; chmod +x .gpu/ab/*
FINAL=$OUT; OUT=/tmp/raw; mkdir -p $OUT
trap 'tar czf $FINAL/raw.tgz -C /tmp raw' EXIT
export PATH=$PATH:/usr/local/cuda/bin NDCONV_CACHE_DIR=/tmp/ndconv-cache
mkdir -p /tmp/icd $NDCONV_CACHE_DIR && echo libnvidia-opencl.so.1 >/tmp/icd/nvidia.icd
summ() { echo "$1: rc=$2 pass=$(grep -c -- '--- PASS' $3) fail=$(grep -c -- '--- FAIL' $3) skip=$(grep -c -- '--- SKIP' $3) ($(el))"; grep -E -- '(--- FAIL|^FAIL|panic|_test.go)' $3 | head -8; }
( cd internal/gpu && NDCONV_GPU_TARGETS=cuda timeout 100 ../../$W/gpu.test -test.count=1 -test.v -test.run 'TestFFT' ) > $OUT/fft-cuda.log 2>&1; summ "TestFFT cuda" $? $OUT/fft-cuda.log
( cd internal/gpu && OCL_ICD_VENDORS=/tmp/icd NDCONV_OPENCL_DEVICE=1:0 NDCONV_GPU_TARGETS=opencl timeout 100 ../../$W/gpu.test -test.count=1 -test.v -test.run 'TestFFT' ) > $OUT/fft-opencl.log 2>&1; summ "TestFFT NVIDIA OpenCL" $? $OUT/fft-opencl.log
( cd internal/gpu && NDCONV_GPU_TARGETS=cuda timeout 100 compute-sanitizer --tool memcheck --print-limit 20 ../../$W/gpu.test -test.count=1 -test.short -test.run 'TestFFTTable|TestFFTBatches' ) > $OUT/memcheck.log 2>&1
echo "memcheck rc=$? ($(el))"; grep -E 'ERROR SUMMARY|^(ok|FAIL|PASS)' $OUT/memcheck.log | head -4
G="--shape 4096,4096 --kernel 31x31 --bank 16 --dtype float32 --device cuda"
timeout 60 ncu --metrics gpu__time_duration.sum --print-summary per-kernel --csv .gpu/ab/ndconv-B bench $G --method fft --repeat 1 > $OUT/ncu-B.csv 2>$OUT/ncu-B.err
echo "ncu rc=$? ($(el))"
python3 - <<'PY'
import csv,io
txt=open("/tmp/raw/ncu-B.csv").read()
rows=list(csv.reader(io.StringIO("\n".join(l for l in txt.splitlines() if l.startswith('"')))))
h=rows[0]; out=[]
for r in rows[1:]:
    d=dict(zip(h,r))
    try: n=int(d["Invocations"]); avg=float(d["Average"].replace(",",""))
    except (KeyError,ValueError): continue
    s={"nsecond":1e-6,"usecond":1e-3,"msecond":1}.get(d.get("Metric Unit",""),1e-6)
    out.append((n*avg*s,n,avg*s,d.get("Kernel Name","")[:70]))
out.sort(reverse=True)
for t,n,a,k in out[:10]: print(f"  {t:8.3f} ms  {n:4d} x {a:.4f}  {k}")
PY
for v in A B; do .gpu/ab/ndconv-$v bench --shape 512,512,512 --kernel 7x7x7 --method fft --device cuda --repeat 5 2>&1 | tail -1; done
left=$(( 560 - ($(date +%s) - T0) ))
ONLY='^(S001-w(1[6-9]|2[0-9]|3[0-2])|S002|S003-full-.*|A-2d-k31|A-1d-k1023|B-.*)$' \
  ROUNDS=3 AB_OUT=$OUT/ab timeout $left bash scripts/ab-gpu.sh run > $OUT/ab.log 2>&1
echo "ab rc=$? ($(el))"; sed -n '/^| workload/,/^$/p' $OUT/ab/table.md | head -40; grep -E 'flag' $OUT/ab/table.md | tail -3
