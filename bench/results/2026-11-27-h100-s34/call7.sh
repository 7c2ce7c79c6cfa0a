#!/bin/bash
# Session 34, call 7 (one H100): issue 27's folder run at c7de449 with the
# files in memory (/dev/shm): calls 1–2 on the disk spread the ceiling
# 1,781–2,655 files/s within one call (each run writes 2.6 GB; the
# writeback of one run's pages lands in the next, sys time 4 → 14 s).
# 10,000 512² PNGs, 7×7; ceiling / cpu / cuda interleaved, 4 rounds; the
# OpenCV pool of 16 once.
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
for r in 1 2 3 4; do
  t ceiling-$r $W/ndconv correlate --ceiling $w/png --out-dir $w/out
  t cpu-$r $W/ndconv correlate $K --device cpu $w/png --out-dir $w/out
  t cuda-$r $W/ndconv correlate $K --device cuda $w/png --out-dir $w/out
  [ $r = 2 ] && t cv2-pool16 $py scripts/many_files.py cv2-pool $w/png $w/out $w/k7.npy --procs 16
done
same=0; for f in $(ls $w/png | awk 'NR==1 || NR%997==0'); do
  $W/ndconv correlate -q $K --device cuda $w/png/$f $w/one.png && cmp -s $w/one.png $w/out/$f && same=$((same+1)); done
echo "folder cuda outputs == one-file calls: $same of 11 ($(el))"
echo "done ($(el))"
tar czf $OUT/logs.tgz -C $OUT --exclude logs.tgz . 2>/dev/null; mkdir -p /tmp/keep; mv $OUT/*.log $OUT/*.time /tmp/keep/ 2>/dev/null; true
