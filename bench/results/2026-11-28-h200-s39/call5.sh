#!/bin/bash
# Session 39, call 5 (one H200): ndconv tune compiling its candidates
# several at once (new: 3e77628 + compileAhead) against one at a time
# (old: 3e77628), each with a cold kernel cache of its own, every
# candidate of two workloads (no time limit).
set -u
W=.gpu/s39e
gunzip -f $W/*.gz; chmod +x $W/*
FINAL=$OUT; OUT=/tmp/raw; mkdir -p $OUT
trap 'tar czf $FINAL/raw.tgz -C /tmp raw' EXIT
export PATH=$PATH:/usr/local/cuda/bin
for b in new old; do
  s=$(date +%s.%N)
  NDCONV_CACHE_DIR=/tmp/kc-$b timeout 110 $W/ndconv-$b tune --workload all --only '^(A-2d-k7|S000-bank8)$' --repeat 5 --cache $OUT/tc-$b.json > $OUT/tune-$b.log 2>&1
  echo "$b rc=$? $(echo "$(date +%s.%N) - $s" | bc) s"; grep -E 'A-2d-k7|S000-bank8' $OUT/tune-$b.log
done
