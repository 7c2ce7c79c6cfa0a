#!/bin/bash
# Session 31, call 3 (2-GPU host): blocks on every GPU with the devices
# held (313e88f): TestBlocksOnDevices, TestBlocksDeviceScaling A (89c84d1) /
# B (313e88f) interleaved with the split of the workers' time; then the A/B
# guard over the bench rows (A = 89c84d1, B = 313e88f: free lists, held
# devices) on one of the cards.
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s31c
gunzip -f $W/*.gz; chmod +x $W/*.test
mkdir -p .gpu/ab && for v in A B; do gunzip -c $W/ab/ndconv-$v.gz > .gpu/ab/ndconv-$v; done; cp $W/ab/labels.txt .gpu/ab/; chmod +x .gpu/ab/*
export NDCONV_CACHE_DIR=/tmp/ndconv-cache
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc
timeout 60 $W/root-B.test -test.count=1 -test.v -test.run 'TestBlocksOnDevices' > $OUT/blocks.log 2>&1
echo "blocks on devices rc=$? ($(el))"; grep -E -- '^(--- |ok|FAIL)|_test.go' $OUT/blocks.log | head -6
for v in B B; do
  NDCONV_SCALING=1 NDCONV_SCALING_INFLIGHT=0,8 NDCONV_SCALING_DEVICES='cuda:1;cuda:all' timeout 100 $W/root-$v.test -test.count=1 -test.v -test.run 'TestBlocksDeviceScaling' > $OUT/scaling-$v.log 2>&1
  echo "== scaling $v rc=$? ($(el))"; grep -E 'GB/s|×|FAIL|differs' $OUT/scaling-$v.log | sed 's/^ *blocks_devices_test.go:[0-9]*: //' | cut -c1-150
done
AB_OUT=/tmp/ab ONLY='^(S000-bank(1|8|32)|S001-w(3|5|15|21)|S002.*|A-2d-k(3|7|15)|A-2d-sep-k31|A-2d-u8-k(3|15)|A-rgba-k5|A-3d-k3|A-3d-sep-k7|A-1d-k(7|63)|S003-sep-c4-float32)$' \
  timeout 300 bash scripts/ab-gpu.sh run >/tmp/ab.log 2>&1
echo "ab rc=$? ($(el))"; cp /tmp/ab.log /tmp/ab/run.log 2>/dev/null; tar czf $OUT/ab.tgz -C /tmp ab
sed -n '/^| workload/,/^$/p' /tmp/ab/table.md 2>/dev/null | head -30; grep 'rows flagged' /tmp/ab/table.md
