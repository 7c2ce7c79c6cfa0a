#!/bin/bash
# Session 34, call 1 (one H100): issue 27's folder run at 9ba897c —
# 10,000 512² PNGs, 7×7 — ceiling / cpu / cuda, 2 rounds, then one cpu and
# one cuda run under NDCONV_CPUPROFILE, to find the CPU the GPU path
# spends beyond the CPU path's (session 33: cuda 74–81 CPU-s, cpu 67–77).
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s34a; gunzip -f $W/*.gz; chmod +x $W/ndconv
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc
export NDCONV_CACHE_DIR=/tmp/ndconv-cache
w=/tmp/mf; mkdir -p $w; py=python3; /usr/bin/python3 -c 'import cv2' 2>/dev/null && py=/usr/bin/python3
$py scripts/many_files.py gen-png $w/png 10000 --procs 16 >/dev/null && $py scripts/many_files.py kernel $w/k7.npy --shape 7x7
echo "files made ($(el))"
t() { local name=$1; shift; rm -rf $w/out; local a=$(date +%s%N)
  /usr/bin/time -f "%U+%S cpu-s" -o $OUT/$name.time "$@" > $OUT/$name.log 2>&1; local rc=$?; local b=$(date +%s%N)
  echo "$name rc=$rc wall $(( (b - a) / 1000000 )) ms $(cat $OUT/$name.time) | $(grep -hE 'files/s|GPU exec' $OUT/$name.log | tr '\n' ' ' | cut -c1-330)"; }
for r in 1 2; do
  t ceiling-$r $W/ndconv correlate --ceiling $w/png --out-dir $w/out
  t cpu-$r $W/ndconv correlate -k $w/k7.npy --border mirror --device cpu $w/png --out-dir $w/out
  t cuda-$r $W/ndconv correlate -k $w/k7.npy --border mirror --device cuda $w/png --out-dir $w/out
done
NDCONV_CPUPROFILE=$OUT/cpu.prof t cpu-prof $W/ndconv correlate -k $w/k7.npy --border mirror --device cpu $w/png --out-dir $w/out
NDCONV_CPUPROFILE=$OUT/cuda.prof t cuda-prof $W/ndconv correlate -k $w/k7.npy --border mirror --device cuda $w/png --out-dir $w/out
NDCONV_EXECTRACE=/tmp/cuda.trace t cuda-trace $W/ndconv correlate -k $w/k7.npy --border mirror --device cuda $w/png --out-dir $w/out
ls -la /tmp/cuda.trace; gzip -c /tmp/cuda.trace > $OUT/cuda.trace.gz; ls -la $OUT
echo "done ($(el))"
tar czf $OUT/logs.tgz -C $OUT --exclude logs.tgz --exclude '*.prof' --exclude '*.gz' . 2>/dev/null; mkdir -p /tmp/keep; mv $OUT/*.log $OUT/*.time /tmp/keep/ 2>/dev/null; true
