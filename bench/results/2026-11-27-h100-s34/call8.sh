#!/bin/bash
# Session 34, call 8 (one H100): the folder run in memory (/dev/shm) at
# c7de449 again, cuda with fewer files in each codec stage
# (NDCONV_MANY_CODECS 16 = default, 14, 12): call 7's cuda runs used 5
# CPU-s less than cpu's but kept ~14 of 16 cores busy against ~15 —
# files wait for the device one at a time, and the goroutine holding it
# competes for a core with 32 codec goroutines. 3 rounds.
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s34g; gunzip -f $W/*.gz; chmod +x $W/ndconv
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; df -h /dev/shm | tail -1
export NDCONV_CACHE_DIR=/tmp/ndconv-cache
w=/dev/shm/mf; mkdir -p $w; py=python3; /usr/bin/python3 -c 'import cv2' 2>/dev/null && py=/usr/bin/python3
$py scripts/many_files.py gen-png $w/png 10000 --procs 16 >/dev/null && $py scripts/many_files.py kernel $w/k7.npy --shape 7x7
echo "files made ($(el))"
t() { local name=$1; shift; rm -rf $w/out; local a=$(date +%s%N)
  /usr/bin/time -f "%U+%S cpu-s" -o $OUT/$name.time "$@" > $OUT/$name.log 2>&1; local rc=$?; local b=$(date +%s%N)
  echo "$name rc=$rc wall $(( (b - a) / 1000000 )) ms $(cat $OUT/$name.time) | $(grep -hE 'files/s|GPU exec|cv2 pool' $OUT/$name.log | sed 's/.*skipped, //; s/, [0-9.]* MB.s in.*//' | tr '\n' ' ' | cut -c1-200)"; }
K="-k $w/k7.npy --border mirror"
t warm-cuda $W/ndconv correlate $K --device cuda $w/png --out-dir $w/out  # the kernels' disk cache
for r in 1 2 3; do
  t ceiling-$r $W/ndconv correlate --ceiling $w/png --out-dir $w/out
  t cpu-$r $W/ndconv correlate $K --device cpu $w/png --out-dir $w/out
  for c in 16 14 12; do
    NDCONV_MANY_CODECS=$c t cuda-c$c-$r $W/ndconv correlate $K --device cuda $w/png --out-dir $w/out
  done
done
same=0; for f in $(ls $w/png | awk 'NR==1 || NR%997==0'); do
  $W/ndconv correlate -q $K --device cuda $w/png/$f $w/one.png && cmp -s $w/one.png $w/out/$f && same=$((same+1)); done
echo "folder cuda outputs == one-file calls: $same of 11 ($(el))"
echo "done ($(el))"
tar czf $OUT/logs.tgz -C $OUT --exclude logs.tgz . 2>/dev/null; mkdir -p /tmp/keep; mv $OUT/*.log $OUT/*.time /tmp/keep/ 2>/dev/null; true
