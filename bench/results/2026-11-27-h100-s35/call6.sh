#!/bin/bash
# Session 35, call 6 (one H100): does the border rule cost the volumes'
# banks? (TestBankTiming's 256³ bank of 16 under reflect took 0.647 ms,
# the bench's under constant 0.495; tiled.cl's default 1.488 against
# 1.200.) a7bf048, bench medians, each border 3 rounds alternated.
set -u
W=.gpu/s35f
gunzip -f $W/*.gz; chmod +x $W/*
export NDCONV_CACHE_DIR=/tmp/ndconv-cache NDCONV_TUNING=/tmp/none.json
for r in 1 2 3; do for b in constant reflect wrap; do
  for w in "256,256,256 3x3x3 16" "2048,2048 3x3 64" "512,512,512 3x3x3 1"; do set -- $w
    echo "$r $b $1 $2 $3 $($W/ndconv bench --device cuda --shape $1 --kernel $2 --bank $3 --border $b 2>&1 | tail -1 | awk '{print $(NF-4), $NF}')"
  done
done; done
