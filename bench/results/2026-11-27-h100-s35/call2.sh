#!/bin/bash
# Session 35, call 2 (one H100): where bank.cl wins. Every direct
# decomposition (bank.cl's with two kernels a lane now among them) of 13
# banks timed on device arrays (TestBankTiming), then the device tests:
# the families whose staging now calls load_sample (-short) and bank.cl on
# every case of the table.
set -u
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
W=.gpu/s35b
gunzip -f $W/*.gz; chmod +x $W/*
FINAL=$OUT; OUT=/tmp/raw; mkdir -p $OUT
trap 'tar czf $FINAL/raw.tgz -C /tmp raw' EXIT
export NDCONV_CACHE_DIR=/tmp/ndconv-cache PATH=$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
( cd internal/gpu && NDCONV_GPU_TARGETS=cuda NDCONV_TIMING=1 timeout 330 ../../$W/gpu.test -test.count=1 -test.v -test.run 'TestBankTiming' ) > $OUT/banktime.log 2>&1
echo "bank timing rc=$? ($(el))"
python3 - $OUT/banktime.log <<'PY'
import re, sys, collections
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    m = re.search(r'BANKTIME (.*?) \| (.*?) \| .*median ([0-9.]+) ms.*?([0-9]+) GB/s', line)
    if m:
        rows[m.group(1)].append((float(m.group(3)), m.group(2), m.group(4)))
for w, rs in rows.items():
    print(w, "default:", rs[0][1], rs[0][0], "ms", rs[0][2], "GB/s;", len(rs) - 1, "candidates")
    best = {}
    for ms, impl, gbs in rs[1:]:
        fam = impl.split()[0]
        best.setdefault(fam, []).append((ms, impl, gbs))
    for fam, lst in sorted(best.items(), key=lambda kv: min(kv[1])[0]):
        for ms, impl, gbs in sorted(lst)[:3 if fam == "bank" else 1]:
            print("   ", ms, "ms", gbs, "GB/s |", impl)
PY
( cd internal/gpu && NDCONV_GPU_TARGETS=cuda timeout 150 ../../$W/gpu.test -test.count=1 -test.short -test.v -test.run 'TestEngineRolling|TestEngineWindow|TestEngineBankGroups|TestGemm' ) > $OUT/fold.log 2>&1
echo "fold families -short rc=$? ($(el))"; grep -E -- '^--- |^(ok|FAIL|PASS)|panic' $OUT/fold.log | head
left=$(( 560 - ($(date +%s) - T0) ))
( cd internal/gpu && NDCONV_GPU_TARGETS=cuda timeout $left ../../$W/gpu.test -test.count=1 -test.v -test.run 'TestEngineBank$' ) > $OUT/bank-full.log 2>&1
echo "bank.cl every case rc=$? ($(el))"; grep -E -- '^--- |^(ok|FAIL|PASS)|panic|checked' $OUT/bank-full.log | head
