#!/bin/bash
# Session 33, call 1 (one H100): cuda TestGPU* at 87c7f57 (waits poll for
# 100 µs, then sleep on a blocking-sync event), then issue 27's folder run,
# A = b202679 (waits spin), B = 87c7f57, interleaved, 3 rounds, with each
# run's CPU time (/usr/bin/time): 10,000 512² PNGs, 7×7, ceiling/cpu/cuda.
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s33a
gunzip -f $W/*.gz $W/ab/*.gz; chmod +x $W/*.test $W/ab/ndconv-*
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc
export NDCONV_CACHE_DIR=/tmp/ndconv-cache
( cd cuda && timeout 150 ../$W/cuda.test -test.count=1 -test.v -test.run 'TestGPU' ) > $OUT/cuda.log 2>&1
echo "cuda rc=$? pass=$(grep -c -- '--- PASS' $OUT/cuda.log) fail=$(grep -c -- '--- FAIL' $OUT/cuda.log) ($(el))"; grep -E -- '--- FAIL|panic' $OUT/cuda.log | head; grep -A3 'TestGPUWaitSleeps' $OUT/cuda.log | grep -E 'waited|short' 
w=/tmp/mf; mkdir -p $w; py=python3; /usr/bin/python3 -c 'import cv2' 2>/dev/null && py=/usr/bin/python3
$py scripts/many_files.py gen-png $w/png 10000 --procs 16 >/dev/null && $py scripts/many_files.py kernel $w/k7.npy --shape 7x7
echo "files made ($(el))"
t() { local name=$1; shift; rm -rf $w/out; local a=$(date +%s%N)
  /usr/bin/time -f "%U+%S cpu-s" -o $OUT/$name.time "$@" > $OUT/$name.log 2>&1; local rc=$?; local b=$(date +%s%N)
  echo "$name rc=$rc wall $(( (b - a) / 1000000 )) ms $(cat $OUT/$name.time) | $(grep -hE 'files/s|GPU exec|cv2 pool' $OUT/$name.log | tr '\n' ' ' | cut -c1-330)"; }
for r in 1 2 3; do
  for v in A B; do
    t ceiling-$v-$r $W/ab/ndconv-$v correlate --ceiling $w/png --out-dir $w/out
    t cpu-$v-$r $W/ab/ndconv-$v correlate -k $w/k7.npy --border mirror --device cpu $w/png --out-dir $w/out
    t cuda-$v-$r $W/ab/ndconv-$v correlate -k $w/k7.npy --border mirror --device cuda $w/png --out-dir $w/out
  done
  [ $r = 1 ] && t cv2-pool16 $py scripts/many_files.py cv2-pool $w/png $w/out $w/k7.npy --procs 16
  [ $(( $(date +%s) - T0 )) -gt 500 ] && break
done
same=0; for f in $(ls $w/png | awk 'NR==1 || NR%997==0'); do
  $W/ab/ndconv-B correlate -q -k $w/k7.npy --border mirror --device cuda $w/png/$f $w/one.png && $W/ab/ndconv-A correlate -q -k $w/k7.npy --border mirror --device cuda $w/png/$f $w/one-a.png && cmp -s $w/one.png $w/one-a.png && same=$((same+1)); done
echo "one-file cuda B == A: $same of 11 ($(el))"
tar czf $OUT/logs.tgz -C $OUT --exclude logs.tgz . 2>/dev/null; mkdir -p /tmp/keep; mv $OUT/*.log $OUT/*.time /tmp/keep/ 2>/dev/null; true
