#!/bin/bash
# Session 32, call 3 (one H100): the rest of internal/gpu's TestEngine* on
# CUDA (call 2's ran out of its 120 s at TestEngineWindow, cold NVRTC), then
# the many-file pipeline A/B: old = e093f6a (stages of GOMAXPROCS/2 workers,
# files too large to bank one at a time on the GPU), new = read and write
# stages of GOMAXPROCS workers, 16 compute slots on a GPU, up to 3 large
# files at once on the GPU with plans of their own, the GPU's use reported.
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s32b
gunzip -f $W/*.gz; chmod +x $W/*
export NDCONV_CACHE_DIR=/tmp/ndconv-cache
( cd internal/gpu && NDCONV_GPU_TARGETS=cuda timeout 230 ../../$W/gpu.test -test.count=1 -test.short -test.v -test.run 'TestEngine(Window|BankGroups|SepRing|Sep3|SepTile|DeviceAfter|Pipelined|PipelinedCancel|PipelineOverlap|Registered|RegisteredTransfers)$' ) > $OUT/gpu-cuda-rest.log 2>&1
echo "internal/gpu TestEngine* (rest) cuda rc=$? pass=$(grep -c '^--- PASS' $OUT/gpu-cuda-rest.log) skip=$(grep -c '^--- SKIP' $OUT/gpu-cuda-rest.log) fail=$(grep -c '^--- FAIL' $OUT/gpu-cuda-rest.log) ($(el))"; grep -E '^(--- FAIL|FAIL|panic)' $OUT/gpu-cuda-rest.log | head
w=/tmp/mf; mkdir -p $w; py=python3; /usr/bin/python3 -c 'import cv2' 2>/dev/null && py=/usr/bin/python3
$py scripts/many_files.py gen-png $w/png 10000 --procs 16 >/dev/null && $py scripts/many_files.py kernel $w/k7.npy --shape 7x7 && $py scripts/many_files.py kernel $w/k5.npy --shape 5x5x5
$py scripts/many_files.py gen-npy $w/vol 200 --procs 16 >/dev/null && $py scripts/many_files.py stack $w/vol $w/stack.npy
echo "files made ($(el))"
t() { local name=$1; shift; rm -rf $w/out; local a=$(date +%s.%N); "$@" > $OUT/$name.log 2>&1; local rc=$?; local b=$(date +%s.%N)
  echo "$name rc=$rc wall $(echo "$b - $a" | bc) s | $(grep -hE 'files/s|GPU exec|cv2 pool|streamed' $OUT/$name.log | tr '\n' ' ' | cut -c1-330)"; }
for r in 1 2 3; do
  for v in old new; do
    t ceiling-$v-$r $W/ndconv-$v correlate --ceiling $w/png --out-dir $w/out
    t cpu-$v-$r $W/ndconv-$v correlate -k $w/k7.npy --border mirror --device cpu $w/png --out-dir $w/out
    t cuda-$v-$r $W/ndconv-$v correlate -k $w/k7.npy --border mirror --device cuda $w/png --out-dir $w/out
  done
  [ $r = 1 ] && t cv2-pool16 $py scripts/many_files.py cv2-pool $w/png $w/out $w/k7.npy --procs 16
  for v in old new; do
    t vol-cuda-$v-$r $W/ndconv-$v correlate -k $w/k5.npy --device cuda $w/vol --out-dir $w/out
  done
  t vol-array-cuda-$r $W/ndconv-new correlate -k $w/k5.npy --axes 1,2,3 --device cuda $w/stack.npy $w/out.npy
  rm -f $w/out.npy
  [ $(( $(date +%s) - T0 )) -gt 480 ] && break
done
same=0; for f in $(ls $w/png | awk 'NR==1 || NR%997==0'); do
  $W/ndconv-new correlate -q -k $w/k7.npy --border mirror --device cuda $w/png/$f $w/one.png && $W/ndconv-new correlate -q -k $w/k7.npy --border mirror --device cpu $w/png/$f $w/one-cpu.png && cmp -s $w/one.png $w/one-cpu.png && same=$((same+1)); done
echo "one-file cuda == cpu: $same of 11"
rm -rf $w/out; $W/ndconv-new correlate -q -k $w/k5.npy --device cuda $w/vol --out-dir $w/out-new; $W/ndconv-old correlate -q -k $w/k5.npy --device cuda $w/vol --out-dir $w/out-old
echo "volume folder outputs new == old: $(cd $w/out-new && for f in *; do cmp -s $f ../out-old/$f && echo y; done | wc -l) of 200 ($(el))"
