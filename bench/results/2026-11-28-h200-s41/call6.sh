#!/bin/bash
# Session 41, call 6 (one H200): the tuner's cost a candidate since 76dd8b7
# (TimesOnly: no checksum, the output kept across candidates), against
# session 40's ~1.03 s (176 s for 171 candidates, NVRTC 0.61 s each).
# Three anchors, a fresh kernel cache (every candidate compiles), then the
# same again with the cache warm (the candidates' timing alone).
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s41g; gunzip -f $W/*.gz; chmod +x $W/ndconv
FINAL=$OUT; OUT=/tmp/raw6; mkdir -p $OUT; trap 'tar czf $FINAL/raw.tgz -C /tmp raw6' EXIT
export NDCONV_CACHE_DIR=/tmp/ndconv-cache; mkdir -p $NDCONV_CACHE_DIR
for pass in cold warm; do
  a=$(date +%s%N)
  timeout 100 $W/ndconv tune --workload anchors --only '^A-2d-(k3|k7|u8-k3)$' --cache /tmp/tune-$pass.json > $OUT/tune-$pass.log 2>&1; rc=$?
  b=$(date +%s%N)
  echo "$pass rc=$rc $(( (b - a) / 1000000 )) ms, $(ls $NDCONV_CACHE_DIR/cuda 2>/dev/null | wc -l) modules in the cache ($(el))"
  grep -v '^$' $OUT/tune-$pass.log | tail -6 | cut -c1-250
done
