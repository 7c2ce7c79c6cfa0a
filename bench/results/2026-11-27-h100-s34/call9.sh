#!/bin/bash
# Session 34, call 9 (one H100): the folder run in memory, A = c7de449
# against B = A + a banked file's output allocated before it takes the
# device (call 1's profile: zeroing the 512² outputs was 0.6 s of the
# 2.0 s the device was held, one file after another), and H = B built
# with the test hooks, once as B (its overhead) and once with every
# small file run alone (NDCONV_TESTHOOK_BANK_FILE_MAX=0: up to 3 plans
# at once, each file's host copies beside another's transfers, instead
# of banks of 1.1 files). 10,000 512² PNGs, 7×7; 3 rounds after a warm-up.
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s34h; gunzip -f $W/*.gz; chmod +x $W/ndconv-*
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc
export NDCONV_CACHE_DIR=/tmp/ndconv-cache
w=/dev/shm/mf; mkdir -p $w; py=python3; /usr/bin/python3 -c 'import cv2' 2>/dev/null && py=/usr/bin/python3
[ -d $w/png ] || $py scripts/many_files.py gen-png $w/png 10000 --procs 16 >/dev/null; $py scripts/many_files.py kernel $w/k7.npy --shape 7x7
echo "files made ($(el))"
t() { local name=$1; shift; rm -rf $w/out; local a=$(date +%s%N)
  /usr/bin/time -f "%U+%S cpu-s" -o $OUT/$name.time "$@" > $OUT/$name.log 2>&1; local rc=$?; local b=$(date +%s%N)
  echo "$name rc=$rc wall $(( (b - a) / 1000000 )) ms $(cat $OUT/$name.time) | $(grep -hE 'files/s|GPU exec' $OUT/$name.log | sed 's/.*skipped, //; s/, [0-9.]* MB.s in.*//' | tr '\n' ' ' | cut -c1-200)"; }
K="-k $w/k7.npy --border mirror"
t warm-cuda $W/ndconv-A correlate $K --device cuda $w/png --out-dir $w/out
for r in 1 2 3; do
  t ceiling-$r $W/ndconv-B correlate --ceiling $w/png --out-dir $w/out
  t cpu-$r $W/ndconv-B correlate $K --device cpu $w/png --out-dir $w/out
  t cuda-A-$r $W/ndconv-A correlate $K --device cuda $w/png --out-dir $w/out
  t cuda-B-$r $W/ndconv-B correlate $K --device cuda $w/png --out-dir $w/out
  t cuda-H-$r $W/ndconv-H correlate $K --device cuda $w/png --out-dir $w/out
  NDCONV_TESTHOOK_BANK_FILE_MAX=0 t cuda-Halone-$r $W/ndconv-H correlate $K --device cuda $w/png --out-dir $w/out
done
same=0; for f in $(ls $w/png | awk 'NR==1 || NR%997==0'); do
  $W/ndconv-A correlate -q $K --device cuda $w/png/$f $w/one.png && cmp -s $w/one.png $w/out/$f && same=$((same+1)); done
echo "H-alone folder outputs == A's one-file calls: $same of 11 ($(el))"
rm -rf $w/out; $W/ndconv-B correlate $K --device cuda $w/png --out-dir $w/out >/dev/null 2>&1
same=0; for f in $(ls $w/png | awk 'NR==1 || NR%997==0'); do
  $W/ndconv-A correlate -q $K --device cuda $w/png/$f $w/one.png && cmp -s $w/one.png $w/out/$f && same=$((same+1)); done
echo "B folder outputs == A's one-file calls: $same of 11 ($(el))"
echo "done ($(el))"
tar czf $OUT/logs.tgz -C $OUT --exclude logs.tgz . 2>/dev/null; mkdir -p /tmp/keep; mv $OUT/*.log $OUT/*.time /tmp/keep/ 2>/dev/null; true
