#!/bin/bash
# Session 33, call 2 (the same H100, warm): the A/B guard, A = b202679,
# B = 87c7f57 (waits poll, then sleep), 29 rows x 3 rounds, untuned.
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s33a
[ -x $W/ab/ndconv-B ] || { gunzip -f $W/ab/*.gz; chmod +x $W/ab/ndconv-*; }
mkdir -p .gpu/ab && cp $W/ab/ndconv-A $W/ab/ndconv-B $W/ab/labels.txt .gpu/ab/
export NDCONV_CACHE_DIR=/tmp/ndconv-cache
AB_OUT=/tmp/ab ONLY='^(S000-bank(1|8|16|32)|S001-w(3|5|15|21)|S002.*|A-2d-k(3|5|7|9|15)|A-2d-sep-k(7|31)|A-2d-u8-k(3|7|15)|A-rgba-k5|A-3d-k(3|7)|A-3d-sep-k7|A-1d-k(7|63)|S003-sep-c4-(float32|uint8)|S003-full-c(1|4)-float32)$' \
  timeout 560 bash scripts/ab-gpu.sh run > /tmp/ab.log 2>&1
echo "ab rc=$? ($(el))"; cp /tmp/ab.log /tmp/ab/run.log
sed -n '/^| workload/,/^$/p' /tmp/ab/table.md | head -40; grep 'rows flagged' /tmp/ab/table.md
tar czf $OUT/ab.tgz -C /tmp ab
