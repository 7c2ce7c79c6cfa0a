#!/bin/bash
# Session 31, call 4 (one H100): the A/B guard's flagged row again with 5
# rounds (A = 89c84d1, B = 313e88f), then the untuned user: B's bench with
# no tuning cache (U) against session 25's H100 cache (T), two rounds
# interleaved, with each row's decomposition.
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s31d
mkdir -p .gpu/ab && for v in A B; do gunzip -c $W/ab/ndconv-$v.gz > .gpu/ab/ndconv-$v; done; cp $W/ab/labels.txt .gpu/ab/; chmod +x .gpu/ab/*
export NDCONV_CACHE_DIR=/tmp/ndconv-cache
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
AB_OUT=/tmp/ab1 ROUNDS=5 ONLY='^(S003-sep-c4-float32|S003-sep-c4-uint8|S003-sep-c1-float32|S001-w(3|5)|A-2d-u8-k3)$' timeout 200 bash scripts/ab-gpu.sh run > /tmp/ab1.log 2>&1
echo "ab rc=$? ($(el))"; cp /tmp/ab1.log /tmp/ab1/run.log
sed -n '/^| workload/,/^$/p' /tmp/ab1/table.md | head -12; grep 'rows flagged' /tmp/ab1/table.md
mkdir -p /tmp/ut && printf 'U 313e88f no tuning cache\nT 313e88f session 25 H100 cache\n' > /tmp/ut/labels.txt
cp $W/tuned.json /tmp/tuned.json; chmod 444 /tmp/tuned.json
for r in 1 2; do
  for l in U T; do
    t=/tmp/none.json; [ $l = T ] && t=/tmp/tuned.json
    NDCONV_TUNING=$t timeout 150 .gpu/ab/ndconv-B bench --workload all --only '^(S000-bank(1|8|16|32)|S003.*|A-.*)$' --json --device cuda > /tmp/ut/$l-r$r.jsonl 2>/tmp/ut/$l-r$r.err
    echo "round $r $l rc=$? ($(el))"
  done
done
bash scripts/ab-gpu.sh compare /tmp/ut > /tmp/ut/compare.log 2>&1
sed -n '/^| workload/,/^$/p' /tmp/ut/table.md | head -40
tar czf $OUT/runs.tgz -C /tmp ab1 ut
