#!/bin/bash
# Session 34, call 2 (one H100): the folder run's depth. Call 1's cuda run
# used as much CPU as the cpu run's (it saves the convolution's ~6 CPU-s)
# but left cores idle (74 CPU-s in 6.2 s on 16 cores, against 73 in 5.3
# for cpu): files wait for the device one bank at a time, and the read and
# write stages hold 16 files each. Sweep the files in flight
# (NDCONV_MANY_CODECS: each codec stage; NDCONV_MANY_SLOTS: compute), 2 rounds.
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s34b; gunzip -f $W/*.gz; chmod +x $W/ndconv
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc
export NDCONV_CACHE_DIR=/tmp/ndconv-cache
w=/tmp/mf; mkdir -p $w; py=python3; /usr/bin/python3 -c 'import cv2' 2>/dev/null && py=/usr/bin/python3
$py scripts/many_files.py gen-png $w/png 10000 --procs 16 >/dev/null && $py scripts/many_files.py kernel $w/k7.npy --shape 7x7
echo "files made ($(el))"
t() { local name=$1; shift; rm -rf $w/out; sync; local a=$(date +%s%N)
  /usr/bin/time -f "%U+%S cpu-s" -o $OUT/$name.time "$@" > $OUT/$name.log 2>&1; local rc=$?; local b=$(date +%s%N)
  echo "$name rc=$rc wall $(( (b - a) / 1000000 )) ms $(cat $OUT/$name.time) | $(grep -hE 'files/s|GPU exec' $OUT/$name.log | sed 's/.*skipped, //; s/, [0-9.]* MB.s in.*//' | tr '\n' ' ' | cut -c1-200)"; }
K="-k $w/k7.npy --border mirror"
for r in 1 2 3; do
  t ceiling-$r $W/ndconv correlate --ceiling $w/png --out-dir $w/out
  t cpu-$r $W/ndconv correlate $K --device cpu $w/png --out-dir $w/out
  NDCONV_MANY_CODECS=32 t cpu-c32-$r $W/ndconv correlate $K --device cpu $w/png --out-dir $w/out
  t cuda-$r $W/ndconv correlate $K --device cuda $w/png --out-dir $w/out
  NDCONV_MANY_CODECS=32 t cuda-c32-$r $W/ndconv correlate $K --device cuda $w/png --out-dir $w/out
  NDCONV_MANY_CODECS=32 NDCONV_MANY_SLOTS=32 t cuda-c32s32-$r $W/ndconv correlate $K --device cuda $w/png --out-dir $w/out
  NDCONV_MANY_CODECS=64 NDCONV_MANY_SLOTS=64 t cuda-c64s64-$r $W/ndconv correlate $K --device cuda $w/png --out-dir $w/out
  [ $(( $(date +%s) - T0 )) -gt 240 ] && break
done
echo "done ($(el))"
tar czf $OUT/logs.tgz -C $OUT --exclude logs.tgz . 2>/dev/null; mkdir -p /tmp/keep; mv $OUT/*.log $OUT/*.time /tmp/keep/ 2>/dev/null; true
