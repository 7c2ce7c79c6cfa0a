#!/bin/bash
# Session 31, call 6 (one H100): septile's default at 512 work-items on CUDA
# for images with channels. A/B guard A = b3e2e8e, B = c3a3e53, 5 rounds; then B
# untuned (U) against B with session 25's H100 cache (T).
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s31f
mkdir -p .gpu/ab && for v in A B; do gunzip -c $W/ab/ndconv-$v.gz > .gpu/ab/ndconv-$v; done; cp $W/ab/labels.txt .gpu/ab/; chmod +x .gpu/ab/*
export NDCONV_CACHE_DIR=/tmp/ndconv-cache
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
AB_OUT=/tmp/ab ROUNDS=5 ONLY='^(S003.*|A-2d-sep-k(7|15|31)|A-3d-sep-k7)$' \
  timeout 330 bash scripts/ab-gpu.sh run > /tmp/ab.log 2>&1
echo "ab rc=$? ($(el))"; cp /tmp/ab.log /tmp/ab/run.log
sed -n '/^| workload/,/^$/p' /tmp/ab/table.md | head -40; grep 'rows flagged' /tmp/ab/table.md
mkdir -p /tmp/ut && printf 'U new defaults, no tuning cache\nT new defaults, session 25 H100 cache\n' > /tmp/ut/labels.txt
cp $W/tuned.json /tmp/tuned.json; chmod 444 /tmp/tuned.json
for r in 1 2; do
  for l in U T; do
    t=/tmp/none.json; [ $l = T ] && t=/tmp/tuned.json
    NDCONV_TUNING=$t timeout 100 .gpu/ab/ndconv-B bench --workload all --only '^(S003.*|A-2d-sep.*|A-3d-sep-k7)$' --json --device cuda > /tmp/ut/$l-r$r.jsonl 2>/tmp/ut/$l-r$r.err
    echo "round $r $l rc=$? ($(el))"
  done
done
bash scripts/ab-gpu.sh compare /tmp/ut > /tmp/ut/compare.log 2>&1
sed -n '/^| workload/,/^$/p' /tmp/ut/table.md | head -40
tar czf $OUT/runs.tgz -C /tmp ab ut
