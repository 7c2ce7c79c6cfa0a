#!/bin/bash
# Session 31, call 5 (one H100): new default decompositions (rows.cl for
# 8192² float32 5×5/7×7, 16-row tiles for 9-23 taps, rolling 1×4 / 2×2,
# banks of 8 at 2×2). A/B guard A = 313e88f, B = the new defaults, untuned;
# then B untuned (U) against B with session 25's H100 cache (T).
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s31e
mkdir -p .gpu/ab && for v in A B; do gunzip -c $W/ab/ndconv-$v.gz > .gpu/ab/ndconv-$v; done; cp $W/ab/labels.txt .gpu/ab/; chmod +x .gpu/ab/*
export NDCONV_CACHE_DIR=/tmp/ndconv-cache
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
AB_OUT=/tmp/ab ONLY='^(S000-bank(1|8|16|32)|S001-w(3|5|15|21)|S002.*|A-2d-k(3|5|7|9|15)|A-2d-sep-k(7|31)|A-2d-u8-k(3|7|15)|A-rgba-k5|A-3d-k(3|7)|A-3d-sep-k7|A-1d-k(7|63)|S003-sep-c4-float32|S003-full-c(1|4)-float32)$' \
  timeout 330 bash scripts/ab-gpu.sh run > /tmp/ab.log 2>&1
echo "ab rc=$? ($(el))"; cp /tmp/ab.log /tmp/ab/run.log
sed -n '/^| workload/,/^$/p' /tmp/ab/table.md | head -40; grep 'rows flagged' /tmp/ab/table.md
mkdir -p /tmp/ut && printf 'U new defaults, no tuning cache\nT new defaults, session 25 H100 cache\n' > /tmp/ut/labels.txt
cp $W/tuned.json /tmp/tuned.json; chmod 444 /tmp/tuned.json
for r in 1 2; do
  for l in U T; do
    t=/tmp/none.json; [ $l = T ] && t=/tmp/tuned.json
    NDCONV_TUNING=$t timeout 100 .gpu/ab/ndconv-B bench --workload all --only '^(S000-bank(1|8|16|32)|S003.*|A-.*)$' --json --device cuda > /tmp/ut/$l-r$r.jsonl 2>/tmp/ut/$l-r$r.err
    echo "round $r $l rc=$? ($(el))"
  done
done
bash scripts/ab-gpu.sh compare /tmp/ut > /tmp/ut/compare.log 2>&1
sed -n '/^| workload/,/^$/p' /tmp/ut/table.md | head -40
tar czf $OUT/runs.tgz -C /tmp ab ut
