#!/bin/bash
# Session 38, call 4 (one H100): which lengths for cuFFT — B: powers of
# two by the values the paired transforms hold; C: every fast length, odd
# ones weighted 1.25 (calls 2–3's model, now counting paired transforms)
# — against A = 48c05e4, on the rows where B and C choose differently
# (rows.txt), three rounds interleaved. Both carry call 3's bank groups.
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s38d
mkdir -p .gpu/ab && for v in A B C; do gunzip -c $W/ab/ndconv-$v.gz > .gpu/ab/ndconv-$v; done; cp $W/ab/labels.txt .gpu/ab/; chmod +x .gpu/ab/*
FINAL=$OUT; OUT=/tmp/raw; mkdir -p $OUT
trap 'tar czf $FINAL/raw.tgz -C /tmp raw' EXIT
export PATH=$PATH:/usr/local/cuda/bin
ROUNDS=3 AB_OUT=$OUT/ab timeout 520 bash scripts/ab-gpu.sh rows $W/rows.txt > $OUT/ab.log 2>&1
echo "ab rc=$? ($(el))"; sed -n '/^| workload/,/^$/p' $OUT/ab/table.md | head -30
for v in A B C; do grep -h '"kind":"result"' $OUT/ab/$v-r1.jsonl | python3 -c "
import sys,json
for l in sys.stdin:
    d=json.loads(l); print('$v', d['id'], d.get('method'), d.get('impl','')[:70])"; done
