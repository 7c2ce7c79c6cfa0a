#!/bin/bash
# Session 30, call 7: the GPU banks with their outputs as views and the
# bank input reused (new) against e186828 (old): 10,000 512² PNGs, 7×7,
# --device cuda alternated (a warm-up run first compiles the kernels),
# cpu and the ceiling beside them; outputs compared byte for byte.
set -u
W=.gpu/s30d
gunzip -f $W/*.gz; chmod +x $W/ndconv-new $W/ndconv-old
export PATH=$PATH:/usr/local/cuda/bin NDCONV_CACHE_DIR=/tmp/ndconv-cache
nproc
python3 $W/many_files.py gen-png /tmp/mf/png 10000 --procs 16 >/dev/null && python3 $W/many_files.py kernel /tmp/mf/k7.npy --shape 7x7 >/dev/null
run() { local name=$1 out=$2; shift 2; rm -rf $out; /usr/bin/time -f "$name %e s wall %U user %S sys" "$@" 2>&1 | grep -E "wall|files/s" | sed 's/(each summed.*//' | tr '\n' ' '; echo; }
run warmup /tmp/mf/o1 $W/ndconv-new correlate -k /tmp/mf/k7.npy --border mirror --device cuda /tmp/mf/png --out-dir /tmp/mf/o1
for r in 1 2 3; do
  run "cuda-old-$r" /tmp/mf/o1 $W/ndconv-old correlate -k /tmp/mf/k7.npy --border mirror --device cuda /tmp/mf/png --out-dir /tmp/mf/o1
  run "cuda-new-$r" /tmp/mf/o2 $W/ndconv-new correlate -k /tmp/mf/k7.npy --border mirror --device cuda /tmp/mf/png --out-dir /tmp/mf/o2
  run "cpu-new-$r " /tmp/mf/o3 $W/ndconv-new correlate -k /tmp/mf/k7.npy --border mirror --device cpu /tmp/mf/png --out-dir /tmp/mf/o3
done
run "ceiling" /tmp/mf/o4 $W/ndconv-new correlate --ceiling /tmp/mf/png --out-dir /tmp/mf/o4
echo "old vs new cuda: $(diff -rq /tmp/mf/o1 /tmp/mf/o2 | wc -l) files differ; new cuda vs cpu: $(diff -rq /tmp/mf/o2 /tmp/mf/o3 | wc -l) differ; $(ls /tmp/mf/o2 | wc -l) outputs"
