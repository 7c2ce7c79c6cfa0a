#!/bin/bash
# Session 31, call 7 (one H100): septile's CUDA default, 1024 work-items for
# 8-bit images with channels, 512 for wider (1a0c883), against b3e2e8e (A)
# and c3a3e53 (B, 512 for all), 5 rounds, untuned.
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s31g
mkdir -p .gpu/ab && for v in A B C; do gunzip -c $W/ab/ndconv-$v.gz > .gpu/ab/ndconv-$v; done; cp $W/ab/labels.txt .gpu/ab/; chmod +x .gpu/ab/*
export NDCONV_CACHE_DIR=/tmp/ndconv-cache
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
AB_OUT=/tmp/ab ROUNDS=5 ONLY='^(S003.*|A-2d-sep-k(7|31)|A-3d-sep-k7)$' timeout 250 bash scripts/ab-gpu.sh run > /tmp/ab.log 2>&1
echo "ab rc=$? ($(el))"; cp /tmp/ab.log /tmp/ab/run.log
sed -n '/^| workload/,/^$/p' /tmp/ab/table.md | head -20; grep 'rows flagged' /tmp/ab/table.md
tar czf $OUT/runs.tgz -C /tmp ab
