#!/bin/bash
# Session 41, call 5 (one H200): issue 27's folder run (10,000 512² PNGs,
# 7×7, /dev/shm) with the CUDA primary context's scheduling set by
# NDCONV_CUDA_SCHED (default auto = spin with one context on 16 cores;
# blocking; yield) against cpu and the ceiling, 2 rounds after a warm-up.
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s41f; gunzip -f $W/*.gz; chmod +x $W/ndconv
FINAL=$OUT; OUT=/tmp/raw5; mkdir -p $OUT; trap 'tar czf $FINAL/raw.tgz -C /tmp raw5' EXIT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc
export NDCONV_CACHE_DIR=/tmp/ndconv-cache
w=/dev/shm/mf; mkdir -p $w; py=python3; /usr/bin/python3 -c 'import cv2' 2>/dev/null && py=/usr/bin/python3
[ -d $w/png ] || $py scripts/many_files.py gen-png $w/png 10000 --procs 16 >/dev/null; $py scripts/many_files.py kernel $w/k7.npy --shape 7x7
echo "files made ($(el))"
t() { local name=$1; shift; rm -rf $w/out; local a=$(date +%s%N)
  /usr/bin/time -f "%U+%S cpu-s" -o $OUT/$name.time "$@" > $OUT/$name.log 2>&1; local rc=$?; local b=$(date +%s%N)
  echo "$name rc=$rc wall $(( (b - a) / 1000000 )) ms $(cat $OUT/$name.time) | $(grep -hE 'files/s|GPU exec' $OUT/$name.log | sed 's/.*skipped, //; s/, [0-9.]* MB.s in.*//' | tr '\n' ' ' | cut -c1-200)"; }
K="-k $w/k7.npy --border mirror"
t warm-cuda $W/ndconv correlate $K --device cuda $w/png --out-dir $w/out
for r in 1 2 3; do
  t ceiling-$r $W/ndconv correlate --ceiling $w/png --out-dir $w/out
  t cpu-$r $W/ndconv correlate $K --device cpu $w/png --out-dir $w/out
  t cuda-auto-$r $W/ndconv correlate $K --device cuda $w/png --out-dir $w/out
  NDCONV_CUDA_SCHED=blocking t cuda-blocking-$r $W/ndconv correlate $K --device cuda $w/png --out-dir $w/out
  NDCONV_CUDA_SCHED=yield t cuda-yield-$r $W/ndconv correlate $K --device cuda $w/png --out-dir $w/out
  [ $(( $(date +%s) - T0 )) -gt 200 ] && break
done
cp -r $w/out $w/out-yield; NDCONV_CUDA_SCHED=blocking $W/ndconv correlate -q $K --device cuda $w/png --out-dir $w/out-b >/dev/null 2>&1; $W/ndconv correlate -q $K --device cpu $w/png --out-dir $w/out-c >/dev/null 2>&1
diff -r -q $w/out-b $w/out-c >/dev/null && echo "blocking cuda folder == cpu folder, byte for byte" || echo "blocking cuda folder DIFFERS from cpu"
echo "done ($(el))"
