#!/usr/bin/env bash
# Issue 27's many-file targets, measured: a folder of PNGs through
# `ndconv correlate --out-dir` beside its decode+encode ceiling (--ceiling:
# the same pipeline, reading and writing every file, filtering none) and
# beside OpenCV (cv2.imread + cv2.filter2D + cv2.imwrite in a process pool);
# then a folder of .npy volumes beside one array holding them all. Every
# run is repeated; the table gives each run's wall time, files/s and CPU
# seconds (user+sys: on a shared machine the wall time also measures the
# others' load), and checks that a few folder outputs equal one-file calls'
# byte for byte.
#
#   scripts/many-files.sh [options] WORKDIR
#     --ndconv BIN      the ndconv binary (default: go build into WORKDIR)
#     --n N             PNGs (default 2000), 512² uint8, seed 27
#     --procs P         the OpenCV pool's processes (default: all cores)
#     --devices LIST    ndconv devices, e.g. "cpu cuda" (default cpu)
#     --reps R          repeats (default 3)
#     --vols V          .npy volumes, 128³ float32, 5³ kernel (default 0: none)
#     --python PY       python with numpy and cv2 (default /usr/bin/python3 if it has cv2, else python3)
#     --bank B          (GPU) also time one B×512×512 array with the 7×7 kernel beside one 512² image
# BASELINE_NDCONV=BIN runs another build beside ndconv on each GPU device (A/B).
# Files are made once, with a fixed seed (scripts/many_files.py), and kept.
set -u
here=$(cd "$(dirname "$0")" && pwd)
ndconv="" n=2000 procs=$(nproc) devices=cpu reps=3 vols=0 py="" bank=0
while [ $# -gt 1 ]; do
	case $1 in
	--ndconv) ndconv=$2 ;;
	--n) n=$2 ;;
	--procs) procs=$2 ;;
	--devices) devices=$2 ;;
	--reps) reps=$2 ;;
	--vols) vols=$2 ;;
	--python) py=$2 ;;
	--bank) bank=$2 ;;
	*) echo "many-files.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift 2
done
[ $# -eq 1 ] || { sed -n 2,22p "$0" >&2; exit 2; }
w=$1
mkdir -p "$w"
w=$(cd "$w" && pwd)
if [ -z "$py" ]; then
	py=python3
	/usr/bin/python3 -c 'import cv2, numpy' 2>/dev/null && py=/usr/bin/python3
fi
if [ -z "$ndconv" ]; then
	(cd "$here/.." && go build -o "$w/ndconv" ./cmd/ndconv) || exit 1
	ndconv=$w/ndconv
fi
gen="$py $here/many_files.py"
table=${MANY_TABLE:-$w/table.txt} # MANY_TABLE: elsewhere
: >"$table"
echo "# $(date -u +%FT%TZ) $(uname -n), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $("$ndconv" version 2>/dev/null | head -1)" | tee -a "$table"

# timed NAME OUTDIR CMD...: runs CMD, keeps its output in WORKDIR/NAME.log,
# and adds a row: wall s, CPU s (user+sys, children included), files/s.
timed() {
	local name=$1 out=$2 files=$3
	shift 3
	rm -rf "$out"
	local t0 t1 c0 c1
	c0=$(awk '{print $14+$15+$16+$17}' /proc/$$/stat)
	t0=$(date +%s.%N)
	"$@" >"$w/$name.log" 2>&1
	local rc=$?
	t1=$(date +%s.%N)
	# CPU of the finished children, in clock ticks (fields 16, 17: cutime, cstime).
	c1=$(awk '{print $14+$15+$16+$17}' /proc/$$/stat)
	awk -v n="$name" -v a="$t0" -v b="$t1" -v c0="$c0" -v c1="$c1" -v hz="$(getconf CLK_TCK)" -v f="$files" -v rc="$rc" -v l="$(cut -d' ' -f1 /proc/loadavg)" \
		'BEGIN { printf "%-28s wall %7.2f s  %8.1f files/s  cpu %7.1f s  load %5s%s\n", n, b-a, f/(b-a), (c1-c0)/hz, l, (rc ? "  EXIT " rc : "") }' | tee -a "$table"
	grep -hE "files, [0-9]+ failed|cv2 pool|rror" "$w/$name.log" | head -5 | sed 's/^/    /' | tee -a "$table"
}

# The PNGs and the kernels.
if [ "$(ls "$w/png" 2>/dev/null | wc -l)" -ne "$n" ]; then
	rm -rf "$w/png"
	$gen gen-png "$w/png" "$n" --procs "$procs" || exit 1
fi
$gen kernel "$w/k7.npy" --shape 7x7
$gen kernel "$w/k5.npy" --shape 5x5x5
echo "$n PNGs: $(du -sh "$w/png" | cut -f1)" | tee -a "$table"

for r in $(seq "$reps"); do
	timed "ceiling-$r" "$w/out-ceiling" "$n" "$ndconv" correlate --ceiling "$w/png" --out-dir "$w/out-ceiling"
	for d in $devices; do
		timed "ndconv-$d-$r" "$w/out-$d" "$n" "$ndconv" correlate -k "$w/k7.npy" --border mirror --device "$d" "$w/png" --out-dir "$w/out-$d"
		if [ -n "${BASELINE_NDCONV:-}" ] && [ "$d" != cpu ]; then # another build beside it (A/B)
			timed "baseline-$d-$r" "$w/out-base" "$n" "$BASELINE_NDCONV" correlate -k "$w/k7.npy" --border mirror --device "$d" "$w/png" --out-dir "$w/out-base"
		fi
	done
	timed "cv2-pool$procs-$r" "$w/out-cv2" "$n" $gen cv2-pool "$w/png" "$w/out-cv2" "$w/k7.npy" --procs "$procs"
done
# A few outputs against one-file calls, byte for byte.
for d in $devices; do
	same=0 checked=0
	for f in $(ls "$w/png" | awk 'NR==1 || NR%997==0'); do
		"$ndconv" correlate -q -k "$w/k7.npy" --border mirror --device "$d" "$w/png/$f" "$w/one-$d.png" &&
			cmp -s "$w/one-$d.png" "$w/out-$d/$f" && same=$((same + 1))
		checked=$((checked + 1))
	done
	echo "ndconv $d: $same of $checked folder outputs equal one-file calls' byte for byte" | tee -a "$table"
done
rm -rf "$w/out-ceiling" "$w/out-cv2" "$w/out-base"

if [ "$bank" -gt 0 ]; then
	# One B×512×512 array with the 7×7 kernel on axes 1,2 beside one 512²
	# image: what a bank of images in one launch would save per file.
	$py - "$w/png" "$w/bank.npy" "$w/one.npy" "$bank" <<'PY'
import os, sys, cv2, numpy as np
d, bank, one, b = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
names = sorted(os.listdir(d))[:b]
a = np.stack([cv2.imread(os.path.join(d, n), cv2.IMREAD_UNCHANGED) for n in names])
np.save(bank, a); np.save(one, a[0])
PY
	for d in $devices; do
		for r in 1 2; do
			echo "one 512² on $d: $("$ndconv" correlate -k "$w/k7.npy" --border mirror --device "$d" "$w/one.npy" "$w/one-out.npy" 2>&1)" | tee -a "$table"
			echo "bank ${bank}×512² on $d: $("$ndconv" correlate -k "$w/k7.npy" --axes 1,2 --border mirror --device "$d" "$w/bank.npy" "$w/bank-out.npy" 2>&1)" | tee -a "$table"
		done
	done
fi

if [ "$vols" -gt 0 ]; then
	if [ "$(ls "$w/vol" 2>/dev/null | wc -l)" -ne "$vols" ]; then
		rm -rf "$w/vol"
		$gen gen-npy "$w/vol" "$vols" --procs "$procs" || exit 1
	fi
	[ -f "$w/stack.npy" ] || $gen stack "$w/vol" "$w/stack.npy" || exit 1
	echo "$vols volumes: $(du -sh "$w/vol" | cut -f1)" | tee -a "$table"
	for r in $(seq "$reps"); do
		for d in $devices; do
			timed "vol-folder-$d-$r" "$w/out-vol" "$vols" "$ndconv" correlate -k "$w/k5.npy" --device "$d" "$w/vol" --out-dir "$w/out-vol"
			timed "vol-array-$d-$r" "$w/out-stack.npy" "$vols" "$ndconv" correlate -k "$w/k5.npy" --axes 1,2,3 --device "$d" "$w/stack.npy" "$w/out-stack.npy"
			sed 's/^/    /' "$w/vol-array-$d-$r.log" | tail -2 | tee -a "$table"
		done
	done
	rm -rf "$w/out-vol" "$w/out-stack.npy"
fi
echo "table: $table"
