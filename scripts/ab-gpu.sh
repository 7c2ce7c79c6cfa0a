#!/bin/bash
# ab-gpu.sh: the GPU speed guard. Times the bench workloads (anchors and
# seeds) for two or more builds of ndconv interleaved on one card, and
# flags every row where the candidate (the last build) is more than 3%
# slower than a reference (any earlier build), or gives another checksum.
# Run it before any GPU change is called done.
#
# Host part (needs Go; the device has none): build each revision into
# .gpu/ab/ (ignored), references first, the candidate last. A revision is
# a commit (checked out into a temporary git worktree) or "." for this
# working tree as it is, uncommitted edits included.
#
#   bash scripts/ab-gpu.sh build 729bfd7 .          # A = main, B = this tree
#   bash scripts/ab-gpu.sh build 729bfd7 29fe88c .  # A, B references; C candidate
#
# Device part (one device call; carry .gpu): ROUNDS rounds, each running
# every build once over the workloads (A B A B A B), all on the same card,
# with the same tuning cache (TUNING, copied and read by every build; by
# default none, so each build's own default decompositions; its entries
# are keyed by the card's name, so an H100's cache does nothing on an
# H200) and one compiled-kernel cache shared by all builds (kernels whose
# source did not change compile once; keys hold the source, so a changed
# kernel compiles anew for its build). Then the comparison: per workload
# the median of the rounds' medians for each build, the ratios, each
# build's decomposition string (a ratio between different decompositions
# is marked DECOMP), and flags:
#   SLOWER   the candidate is more than THRESHOLD % slower than a
#            reference and its fastest round is slower than the
#            reference's slowest (rows of ~15 µs move a few percent
#            between rounds; STRICT=1 flags on the ratio alone);
#   SUM      same decomposition, another checksum of the output;
#   MISSING  a build has no time for the row (the bench's note says why).
# The exit status is 1 when any row is flagged.
#
#   bash scripts/ab-gpu.sh run
#   ONLY='^(S001-w(5|15|21)|A-rgba-k5)$' TUNING=bench/results/2026-11-25-h100-s25/tuning-after.json bash scripts/ab-gpu.sh run
#   bash scripts/ab-gpu.sh rows rows.txt   # ad-hoc workloads, "name|bench arguments" a line
#
# With the device tool: it sends the session's checkout, so copy
# .gpu/ab and this script into an ignored folder of that checkout, carry
# it, and put them back in place there first (see
# bench/results/2026-11-26-h100-ab/raw/call.sh). A run over 24 workloads
# with three builds took 215 s on an H100 (first round with NVRTC).
#
# Settings: SETS (bench --workload: all, anchors or seeds; default all),
# ONLY (regular expression over workload ids), ROUNDS (3), THRESHOLD
# (percent, 3), STRICT, TUNING (a tuning cache file), DEVICE (cuda),
# AB_OUT (where the logs and table go, default /tmp/ab; packed as
# $OUT/ab.tgz when $OUT is set, since the device tool brings back at
# most 8 files), SASS_ONLY (a regular expression: also compile those
# workloads' kernels into a fresh cache per build and write each
# module's registers and instruction counts by opcode, sass-<label>.txt;
# needs cuobjdump).
#
# Compare again from the logs anywhere with python3:
#
#   bash scripts/ab-gpu.sh compare DIR
#
# DIR/labels.txt names the builds ("A 729bfd7 <subject>"); DIR/<label>-r<N>.jsonl
# are the bench's JSON lines; DIR/table.md is the table.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cmd=${1:-}
shift || true

build() {
	[ $# -ge 2 ] || { echo "usage: $0 build REV REV [REV…] (references first, the candidate last; . is this working tree)" >&2; exit 2; }
	local dir=$here/.gpu/ab labels=(A B C D E F) i=0 rev label src sha subject
	rm -rf "$dir" && mkdir -p "$dir" || exit 1
	: >"$dir/labels.txt"
	for rev in "$@"; do
		label=${labels[$i]}
		i=$((i + 1))
		if [ "$rev" = . ]; then
			src=$here
			sha=$(git -C "$here" rev-parse --short HEAD)
			subject="this working tree (HEAD $sha$(git -C "$here" diff --quiet HEAD || echo ' + uncommitted edits'))"
			sha="$sha+tree"
		else
			sha=$(git -C "$here" rev-parse --short "$rev^{commit}") || exit 1
			subject=$(git -C "$here" log -1 --format=%s "$sha" | cut -c1-100)
			src=$(mktemp -d /tmp/ab-src-XXXXXX)
			git -C "$here" worktree add --detach "$src" "$sha" >/dev/null 2>&1 || { echo "git worktree add $sha failed" >&2; exit 1; }
		fi
		echo "== $label: $sha ($subject)"
		(cd "$src" && CGO_ENABLED=0 go build -o "$dir/ndconv-$label" ./cmd/ndconv) || exit 1
		if [ "$src" != "$here" ]; then
			git -C "$here" worktree remove --force "$src"
		fi
		printf '%s %s %s\n' "$label" "$sha" "$subject" >>"$dir/labels.txt"
	done
	cat "$dir/labels.txt"
}

run() {
	rounds_of bench_sets "sets ${SETS:-all}
only ${ONLY:-.}"
}

# rows FILE: the same rounds over ad-hoc workloads, one a line of FILE,
# "name|bench arguments" ("3d-k3-reflect|--shape 512,512,512 --kernel
# 3x3x3 --border reflect"; # starts a comment): each build runs `bench
# ARGS --json` per line, its result renamed to the line's name, and the
# comparison is run's. For a change that only a border, a mode or a shape
# outside the named sets reaches.
rows() {
	ROWS_FILE=${1:?usage: $0 rows FILE (lines "name|bench arguments")}
	[ -s "$ROWS_FILE" ] || { echo "no rows in $ROWS_FILE" >&2; exit 2; }
	rounds_of bench_rows "rows $ROWS_FILE"
}

# bench_sets BIN OUTFILE DEVICE: the named sets' workloads as JSON lines.
bench_sets() {
	"$1" bench --workload "${SETS:-all}" --only "${ONLY:-.}" --json --device "$3" >"$2"
}

# bench_rows BIN OUTFILE DEVICE: each line of ROWS_FILE's workload, its
# JSON lines' id set to the line's name.
bench_rows() {
	local bin=$1 file=$2 device=$3 name args rc=0
	: >"$file"
	while IFS= read -r line; do
		case $line in '' | '#'*) continue ;; esac
		name=${line%%|*}
		args=${line#*|}
		# shellcheck disable=SC2086 # the arguments are words
		"$bin" bench --device "$device" $args --json </dev/null |
			python3 -c 'import json,sys
for l in sys.stdin:
    r = json.loads(l)
    if r.get("kind") == "result":
        r["id"] = sys.argv[1]
    print(json.dumps(r))' "$name" >>"$file" || rc=1
	done <"$ROWS_FILE"
	return $rc
}

# rounds_of FN WHAT: ROUNDS rounds, each running FN once per build (A B A
# B …), with one compiled-kernel cache and one tuning cache; then compare.
rounds_of() {
	local fn=$1 what=$2
	local dir=$here/.gpu/ab
	[ -s "$dir/labels.txt" ] || { echo "no builds in $dir: run '$0 build' on a host with Go first" >&2; exit 2; }
	local out=${AB_OUT:-/tmp/ab}
	mkdir -p "$out"
	cp "$dir/labels.txt" "$out/labels.txt"
	local rounds=${ROUNDS:-3} device=${DEVICE:-cuda}
	local labels
	labels=$(cut -d' ' -f1 "$dir/labels.txt")
	export NDCONV_CACHE_DIR=${NDCONV_CACHE_DIR:-/tmp/ndconv-ab-cache}
	mkdir -p "$NDCONV_CACHE_DIR"
	# A missing file is an empty tuning cache; bench only reads it.
	export NDCONV_TUNING=/tmp/ab-tuning-none.json
	rm -f "$NDCONV_TUNING"
	if [ -n "${TUNING:-}" ]; then
		cp "$TUNING" /tmp/ab-tuning.json && chmod 444 /tmp/ab-tuning.json || exit 1
		export NDCONV_TUNING=/tmp/ab-tuning.json
	fi
	{
		echo "date $(date -u +%FT%TZ)"
		echo "gpu $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader 2>/dev/null | head -1)"
		echo "$what"
		echo "rounds $rounds"
		echo "device $device"
		echo "tuning ${TUNING:-none}"
	} >"$out/meta.txt"
	cat "$out/meta.txt"
	local r label t0
	for r in $(seq 1 "$rounds"); do
		for label in $labels; do
			t0=$(date +%s)
			"$fn" "$dir/ndconv-$label" "$out/$label-r$r.jsonl" "$device" 2>"$out/$label-r$r.err"
			echo "round $r $label: exit $? in $(($(date +%s) - t0)) s"
		done
	done | tee "$out/rounds.log"
	nvidia-smi --query-gpu=clocks.sm,temperature.gpu --format=csv,noheader >>"$out/meta.txt" 2>/dev/null
	if [ -n "${SASS_ONLY:-}" ]; then
		for label in $labels; do
			sass "$dir/ndconv-$label" "$label" "$out"
		done
	fi
	compare "$out"
	local rc=$?
	[ -n "${OUT:-}" ] && tar czf "$OUT/ab.tgz" -C "$(dirname "$out")" "$(basename "$out")"
	return $rc
}

# sass compiles the kernels of the SASS_ONLY workloads into a fresh cache
# and writes each module's resource use and instruction counts by opcode.
sass() {
	local bin=$1 label=$2 out=$3 id cache f
	export PATH=$PATH:/usr/local/cuda/bin
	for id in $("$bin" bench --workload all --only "$SASS_ONLY" --list | python3 -c 'import json,sys; [print(json.loads(l)["id"]) for l in sys.stdin]'); do
		cache=/tmp/ab-sass-$label-$id
		rm -rf "$cache"
		NDCONV_CACHE_DIR=$cache "$bin" bench --workload all --only "^$id\$" --device "${DEVICE:-cuda}" --repeat 3 >/dev/null 2>&1
		for f in $(find "$cache" -name '*.cubin' 2>/dev/null); do
			# A cache file is an 80-byte header (internal/gpucache) and the CUBIN.
			tail -c +81 "$f" >/tmp/ab-module.cubin
			cuobjdump -sass /tmp/ab-module.cubin >/tmp/ab-sass.txt 2>&1
			grep -q 'Function : correlate_' /tmp/ab-sass.txt || continue
			echo "== $label $id $(basename "$f")"
			cuobjdump -res-usage /tmp/ab-module.cubin 2>&1 | grep -A1 'Function correlate_' | sed 's/^ *//'
			# Opcode counts (predicates and modifiers dropped), most first,
			# and the FFMAs whose weight is a uniform register (URn, loaded
			# once for the warp by ULDC), not a per-thread register (LDC).
			awk '/\/\*[0-9a-f][0-9a-f][0-9a-f][0-9a-f]+\*\//{op=$2; if (op ~ /^@/) op=$3; sub(/\..*/, "", op); sub(/;$/, "", op); n[op]++} END{for (k in n) print n[k], k}' /tmp/ab-sass.txt |
				sort -k1,1nr | head -20 | tr '\n' ' '
			echo
			echo "FFMA with a uniform-register operand: $(grep -E '/\*[0-9a-f]{4,}\*/ +(@!?U?P[0-9T] +)?FFMA[^;]*UR[0-9]' /tmp/ab-sass.txt | grep -c .)"
			echo "instructions $(grep -cE '/\*[0-9a-f]{4,}\*/' /tmp/ab-sass.txt)"
		done
	done >"$out/sass-$label.txt" 2>&1
	cat "$out/sass-$label.txt"
}

compare() {
	local dir=${1:?usage: $0 compare DIR}
	THRESHOLD=${THRESHOLD:-3} STRICT=${STRICT:-0} python3 - "$dir" <<'PY'
import glob, json, os, re, statistics, sys

d = sys.argv[1]
thr = float(os.environ["THRESHOLD"])
strict = os.environ.get("STRICT", "") not in ("", "0")
labels = []  # (label, sha, subject)
for line in open(os.path.join(d, "labels.txt")):
    parts = line.rstrip("\n").split(" ", 2)
    labels.append((parts[0], parts[1], parts[2] if len(parts) > 2 else ""))
names = [l[0] for l in labels]
cand = names[-1]
refs = names[:-1]

# runs[label][id] = list of (ms_median, impl, method, checksum), one per round
runs = {n: {} for n in names}
order = []
rounds = {}
for n in names:
    files = sorted(glob.glob(os.path.join(d, f"{n}-r*.jsonl")), key=lambda p: int(re.search(r"-r(\d+)\.jsonl$", p).group(1)))
    rounds[n] = len(files)
    for p in files:
        for line in open(p):
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if r.get("kind") != "result":
                continue
            if r["id"] not in order:
                order.append(r["id"])
            runs[n].setdefault(r["id"], []).append((r.get("ms_median"), r.get("impl", ""), r.get("method", ""), r.get("checksum"), r.get("note", "")))

def summary(n, wid):
    rs = runs[n].get(wid, [])
    ms = [x[0] for x in rs if x[0] is not None]
    impls = sorted({f"{x[2]}: {x[1]}" for x in rs if x[0] is not None}) or sorted({x[4][:60] for x in rs})
    sums = sorted({x[3] for x in rs if x[0] is not None})
    if not ms:
        return None, None, None, impls, sums
    return statistics.median(ms), min(ms), max(ms), impls, sums

meta = open(os.path.join(d, "meta.txt")).read() if os.path.exists(os.path.join(d, "meta.txt")) else ""
out = []
out.append("# A/B: " + " vs ".join(f"{n} = {sha}" for n, sha, _ in labels) + f" (candidate {cand})")
out.append("")
for n, sha, subj in labels:
    out.append(f"- **{n}** `{sha}`: {subj} ({rounds[n]} rounds)")
out.append("")
out.append("```")
out.append(meta.strip())
out.append("```")
out.append("")
out.append(f"Each figure is the median over rounds of the bench's median (ms); lo–hi is the rounds' spread. "
           f"Flags: SLOWER where {cand} is more than {thr:g}% slower than a reference" +
           ("" if strict else " and its fastest round is slower than the reference's slowest (else slower-within-spread, not counted)") +
           f"; DECOMP where the "
           f"decompositions differ (the ratio compares different kernels); SUM where the checksums differ; MISSING where a build has no time.")
out.append("")
head = "| workload | " + " | ".join(f"{n} ms (lo–hi)" for n in names) + " | " + " | ".join(f"{cand}/{r}" for r in refs) + " | flags |"
out.append(head)
out.append("|" + "---|" * (head.count("|") - 1))
flagged = 0
decomps = []
for wid in order:
    s = {n: summary(n, wid) for n in names}
    cells, ratios, flags = [], [], []
    for n in names:
        med, lo, hi, _, _ = s[n]
        cells.append("—" if med is None else f"{med:.4f} ({lo:.4f}–{hi:.4f})")
    cm = s[cand][0]
    for r in refs:
        rm = s[r][0]
        if cm is None or rm is None:
            ratios.append("—")
            if "MISSING" not in flags:
                flags.append("MISSING")
            continue
        ratio = cm / rm
        ratios.append(f"{ratio:.3f}")
        if ratio > 1 + thr / 100:
            # Over the threshold, and every candidate round slower than
            # every reference round (tiny kernels move a few percent
            # between rounds); STRICT=1 flags on the ratio alone.
            if strict or s[cand][1] > s[r][2]:
                if "SLOWER" not in flags:
                    flags.append("SLOWER")
            elif "slower-within-spread" not in flags:
                flags.append("slower-within-spread")
        if s[r][3] != s[cand][3] and "DECOMP" not in flags:
            flags.append("DECOMP")
        if s[r][3] == s[cand][3] and s[r][4] != s[cand][4] and "SUM" not in flags:
            flags.append("SUM")
    # MISSING in every build (a workload that cannot run anywhere) is no regression.
    if all(s[n][0] is None for n in names):
        flags = ["(runs nowhere)"]
    bad = [f for f in flags if f in ("SLOWER", "SUM", "MISSING")]
    if bad:
        flagged += 1
    out.append(f"| {wid} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " | " + " ".join(flags) + " |")
    decomps.append((wid, {n: " / ".join(s[n][3]) for n in names}))
out.append("")
out.append("Decompositions (method: kernel implementation):")
out.append("")
for wid, per in decomps:
    if len(set(per.values())) == 1:
        out.append(f"- {wid}: {per[names[0]]}")
    else:
        out.append(f"- {wid}: " + "; ".join(f"**{n}** {v}" for n, v in per.items()))
out.append("")
out.append(f"{flagged} of {len(order)} rows flagged (SLOWER, SUM or MISSING).")
text = "\n".join(out) + "\n"
open(os.path.join(d, "table.md"), "w").write(text)
print(text)
sys.exit(1 if flagged else 0)
PY
}

case $cmd in
build) build "$@" ;;
run) run ;;
rows) rows "$@" ;;
compare) compare "$@" ;;
*)
	# The header comment, up to the first line that is not one.
	awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
	exit 2
	;;
esac
