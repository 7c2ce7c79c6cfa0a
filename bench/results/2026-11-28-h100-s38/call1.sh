#!/bin/bash
# Session 38, call 1 (one H100): the GPU FFT's transform lengths — powers
# of two of at most 8192 along an axis where cuFFT transforms
# (kernels.FFTGeometry) — A/B over the rows auto runs by FFT (A = 48c05e4,
# B = the tree); then where the Gabor bank's time goes (ncu per kernel,
# both builds) and the tuned lengths for it.
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s38a
mkdir -p .gpu/ab && for v in A B; do gunzip -c $W/ab/ndconv-$v.gz > .gpu/ab/ndconv-$v; done; cp $W/ab/labels.txt .gpu/ab/; chmod +x .gpu/ab/*
FINAL=$OUT; OUT=/tmp/raw; mkdir -p $OUT
trap 'tar czf $FINAL/raw.tgz -C /tmp raw' EXIT
export PATH=$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
export NDCONV_CACHE_DIR=/tmp/t-cache
G="--shape 4096,4096 --kernel 31x31 --bank 16 --dtype float32 --device cuda"
for v in A B; do
  timeout 60 ncu --metrics gpu__time_duration.sum --print-summary per-kernel --csv .gpu/ab/ndconv-$v bench $G --method fft --repeat 1 > $OUT/ncu-$v.csv 2>$OUT/ncu-$v.err
  echo "ncu $v rc=$? ($(el))"
done
python3 - <<'PY'
import csv,io,re
for v in "AB":
    txt=open(f"/tmp/raw/ncu-{v}.csv").read()
    lines=[l for l in txt.splitlines() if l.startswith('"')]
    rows=list(csv.reader(io.StringIO("\n".join(lines))))
    if not rows: print(v,"no ncu rows"); continue
    h=rows[0]; tot=0; out=[]
    for r in rows[1:]:
        d=dict(zip(h,r))
        try:
            n=int(d.get("Invocations","0")); avg=float(d.get("Average","0").replace(",",""))
        except ValueError: continue
        unit=d.get("Metric Unit","")
        s={"nsecond":1e-6,"usecond":1e-3,"msecond":1}.get(unit,1e-6)
        out.append((n*avg*s, n, avg*s, d.get("Kernel Name","")[:70])); tot+=n*avg*s
    out.sort(reverse=True)
    print(f"== {v}: total {tot:.3f} ms over the run (spectra, warm-up and one timed repeat)")
    for t,n,a,k in out[:12]: print(f"  {t:8.3f} ms  {n:4d} x {a:.4f}  {k}")
PY
echo "($(el))"
timeout 120 .gpu/ab/ndconv-B tune $G --method fft --cache $OUT/tune-gabor.json > $OUT/tune.log 2>&1; echo "tune rc=$? ($(el))"; tail -4 $OUT/tune.log
left=$(( 560 - ($(date +%s) - T0) ))
ONLY='^(S001-w(2[5-9]|3[0-2])|S002|S003-full-.*|A-2d-k31|A-3d-k7|A-1d-k1023|B-2d-k31-bank16)$' \
  ROUNDS=3 AB_OUT=$OUT/ab timeout $left bash scripts/ab-gpu.sh run > $OUT/ab.log 2>&1
echo "ab rc=$? ($(el))"; sed -n '/^| workload/,/^$/p' $OUT/ab/table.md | head -30; grep -E 'flag' $OUT/ab/table.md | tail -3
