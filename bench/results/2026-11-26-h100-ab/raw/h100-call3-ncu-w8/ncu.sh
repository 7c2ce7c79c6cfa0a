#!/bin/bash
# S001-w8 on HEAD (A, group-major everywhere) and the fix (C): registers,
# opcode counts, and one ncu profile of correlate_tiled each.
set -u
W=.gpu/wt-gpu-ncu
export PATH=$PATH:/usr/local/cuda/bin:$(ls -d /opt/nvidia/nsight-compute/*/ 2>/dev/null | head -1)
for f in $W/*.gz; do gunzip -f $f; done; chmod +x $W/ndconv-*
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for l in A C; do
	c=/tmp/c-$l; rm -rf $c
	NDCONV_CACHE_DIR=$c $W/ndconv-$l bench --workload seeds --only '^S001-w8$' --device cuda --repeat 5 | tail -1
	for f in $(find $c -name '*.cubin'); do
		tail -c +81 $f >/tmp/m.cubin; cuobjdump -sass /tmp/m.cubin >/tmp/s.txt 2>&1
		grep -q 'Function : correlate_' /tmp/s.txt || continue
		cp /tmp/s.txt $OUT/sass-w8-$l.txt
		echo "== $l"; cuobjdump -res-usage /tmp/m.cubin | grep -A1 'Function correlate' | tail -1
		awk '/\/\*[0-9a-f][0-9a-f][0-9a-f][0-9a-f]+\*\//{op=$2; if (op ~ /^@/) op=$3; sub(/\..*/, "", op); sub(/;$/, "", op); n[op]++} END{for (k in n) print n[k], k}' /tmp/s.txt | sort -k1,1nr | head -14 | tr '\n' ' '; echo
	done
	NDCONV_CACHE_DIR=$c timeout 70 ncu --kernel-name regex:correlate_tiled --launch-skip 3 --launch-count 1 --section SpeedOfLight --section Occupancy --section LaunchStats --section SchedulerStats --section WarpStateStats --section InstructionStats \
		$W/ndconv-$l bench --workload seeds --only '^S001-w8$' --device cuda --repeat 3 >$OUT/ncu-w8-$l.txt 2>&1
	grep -E 'Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Executed Instructions  |Issued Warp|No Eligible|Warp Cycles Per Issued|Compute \(SM\) Throughput|Memory Throughput|Block Limit Reg|Stall|stall' $OUT/ncu-w8-$l.txt | head -30
done
