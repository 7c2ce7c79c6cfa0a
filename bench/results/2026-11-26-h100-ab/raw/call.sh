#!/bin/bash
# One device call for helper wt-gpu (issue 31, first part): unpack the
# carried builds, run the A/B (STEP ab), the tests (STEP tests), save the
# compiled-kernel cache. Runs from the repository root on the device.
set -u
t0=$(date +%s)
left() { echo $((${BUDGET:-570} - ($(date +%s) - t0))); }
W=.gpu/wt-gpu
export PATH=$PATH:/usr/local/cuda/bin
echo "tree: $(git log -1 --oneline 2>/dev/null || echo no-git) $(ls | tr '\n' ' ' | cut -c1-80)"
for f in $W/*.gz; do gunzip -f "$f"; done
chmod +x $W/ndconv-* $W/*.test
mkdir -p .gpu/ab scripts /tmp/t
cp $W/ndconv-[A-F] $W/labels.txt .gpu/ab/ && cp $W/ab-gpu.sh scripts/ab-gpu.sh
export NDCONV_CACHE_DIR=/tmp/ndconv-cache
mkdir -p $NDCONV_CACHE_DIR
[ -f $W/modcache.tgz ] && tar xzf $W/modcache.tgz -C $NDCONV_CACHE_DIR
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,utilization.gpu --format=csv
steps=${STEPS:-ab tests}
if [[ " $steps " == *" ab "* ]]; then
	AB_OUT=/tmp/ab timeout ${AB_TIMEOUT:-330} bash scripts/ab-gpu.sh run >/tmp/ab.log 2>&1
	echo "ab exit $? after $(($(date +%s) - t0)) s"
	cp /tmp/ab.log /tmp/ab/run.log
	tar czf $OUT/ab.tgz -C /tmp ab
fi
if [[ " $steps " == *" tests "* ]]; then
	mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 >/tmp/icd/nvidia.icd
	tl=$(left)
	echo "tests get $tl s"
	(cd cuda && timeout $tl ../$W/cuda.test -test.count=1 -test.run "${CUDA_A:-TestEngineTable\$}" -test.v >/tmp/t/cuda-a.log 2>&1; echo "exit $?" >>/tmp/t/cuda-a.log) &
	(cd cuda && timeout $tl ../$W/cuda.test -test.count=1 -test.run "${CUDA_B:-TestEngineBankGroups\$}" -test.v >/tmp/t/cuda-b.log 2>&1; echo "exit $?" >>/tmp/t/cuda-b.log) &
	(cd opencl && OCL_ICD_VENDORS=/tmp/icd NDCONV_OPENCL_DEVICE=1:0 timeout $tl ../$W/opencl.test -test.count=1 -test.run "${OCL_RUN:-TestEngineTable\$|TestEngineBankGroups\$|TestEngineWindow\$}" -test.v >/tmp/t/opencl.log 2>&1; echo "exit $?" >>/tmp/t/opencl.log) &
	(OCL_ICD_VENDORS=/tmp/icd timeout $tl $W/ndconv.test -test.count=1 -test.run "${ROOT_RUN:-TestScipyFixturesOnDevices}" -test.v >/tmp/t/root.log 2>&1; echo "exit $?" >>/tmp/t/root.log) &
	wait
	for f in /tmp/t/*.log; do
		echo "== $f: $(grep -c '^--- PASS' $f) pass, $(grep -c '^--- FAIL' $f) fail, $(tail -1 $f)"
		grep -E '^(--- |FAIL|ok|PASS|panic)|_test.go:[0-9]+: [0-9]+ (cases|runs|of)|cases on|runs on' $f | head -12
	done
	tar czf $OUT/tests.tgz -C /tmp t
fi
tar czf $OUT/modcache.tgz -C $NDCONV_CACHE_DIR . && ls -la $OUT/modcache.tgz
[ -f /tmp/ab/table.md ] && sed -n '/^| workload/,$p' /tmp/ab/table.md
[ -f /tmp/ab/sass-A.txt ] && for l in A B C; do echo "--- sass $l"; cat /tmp/ab/sass-$l.txt | cut -c1-400; done
echo "done after $(($(date +%s) - t0)) s"
