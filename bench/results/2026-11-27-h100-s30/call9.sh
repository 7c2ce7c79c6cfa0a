#!/bin/bash
# Session 30, call 9: volumes too large to bank run alone, their outputs
# allocated before the device is taken (alone) against banks with views
# (views, 9aa3d5b-era build) and one 200×128³ array; then the PNG folder
# once each (unchanged path: files of 256 KiB still bank).
set -u
W=.gpu/s30d
gunzip -f $W/*.gz; chmod +x $W/ndconv-alone $W/ndconv-new
export PATH=$PATH:/usr/local/cuda/bin NDCONV_CACHE_DIR=/tmp/ndconv-cache
python3 $W/many_files.py gen-npy /tmp/mf/vol 200 --procs 16 >/dev/null && python3 $W/many_files.py stack /tmp/mf/vol /tmp/mf/stack.npy >/dev/null && python3 $W/many_files.py kernel /tmp/mf/k5.npy --shape 5x5x5 >/dev/null
run() { local name=$1 out=$2; shift 2; rm -rf $out; /usr/bin/time -f "$name %e s wall %U user %S sys" "$@" 2>&1 | grep -E "wall|files/s|->" | sed 's/(each summed.*//' | tr '\n' ' '; echo; }
run warmup /tmp/mf/v1 $W/ndconv-alone correlate -k /tmp/mf/k5.npy --device cuda /tmp/mf/vol --out-dir /tmp/mf/v1
for r in 1 2 3; do
  run "vol-views-$r" /tmp/mf/v1 $W/ndconv-new correlate -k /tmp/mf/k5.npy --device cuda /tmp/mf/vol --out-dir /tmp/mf/v1
  run "vol-alone-$r" /tmp/mf/v2 $W/ndconv-alone correlate -k /tmp/mf/k5.npy --device cuda /tmp/mf/vol --out-dir /tmp/mf/v2
  run "array-$r    " /tmp/mf/s.npy $W/ndconv-alone correlate -k /tmp/mf/k5.npy --axes 1,2,3 --device cuda /tmp/mf/stack.npy /tmp/mf/s.npy
done
echo "views vs alone: $(diff -rq /tmp/mf/v1 /tmp/mf/v2 | wc -l) differ of $(ls /tmp/mf/v2 | wc -l)"
