#!/bin/bash
# Prepared in session 34, not run (its device time was spent): issue 27's
# folder run in memory (/dev/shm) with every small file run alone on the
# GPU (NDCONV_MANY_BANK_BYTES=1: up to three plans at once, each file's
# host copies beside another's transfers) against banks (the default:
# 1.1 files a bank in calls 1–9), after a warm-up; 10,000 512² PNGs, 7×7,
# 3 rounds. Build the binary at main's head into .gpu/s35a/ndconv.gz
# (never with the ndconv_testhook tag: its stages sleep 200 ms each).
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s35a; gunzip -f $W/*.gz; chmod +x $W/ndconv
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
  t cuda-banks-$r $W/ndconv correlate $K --device cuda $w/png --out-dir $w/out
  NDCONV_MANY_BANK_BYTES=1 t cuda-alone-$r $W/ndconv correlate $K --device cuda $w/png --out-dir $w/out
done
same=0; for f in $(ls $w/png | awk 'NR==1 || NR%997==0'); do
  $W/ndconv correlate -q $K --device cuda $w/png/$f $w/one.png && cmp -s $w/one.png $w/out/$f && same=$((same+1)); done
echo "alone folder outputs == one-file calls: $same of 11 ($(el))"
tar czf $OUT/logs.tgz -C $OUT --exclude logs.tgz . 2>/dev/null; mkdir -p /tmp/keep; mv $OUT/*.log $OUT/*.time /tmp/keep/ 2>/dev/null; true
