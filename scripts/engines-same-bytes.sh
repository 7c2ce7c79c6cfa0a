#!/bin/bash
# engines-same-bytes.sh: issue 28's check that every engine writes the same
# bytes. One job — an N³ float32 volume, a random 5³ kernel, reflect, a Zarr
# output of 64 blocks (N/4 per axis) — run (a) by ndconv's in-process pool
# (`ndconv worker --count 1`), (b) as 8 worker processes with two of them
# killed (SIGKILL) and re-run, (c) as an Apache Beam pipeline on Prism
# (beam/cmd/ndconv-beam), (d) by ndconv.dask on a dask.distributed
# LocalCluster of 4 worker processes (to_zarr through ndconv's Zarr
# writer, in the plan output's layout). Prints each run's wall time and the
# sha256 of its stored shards (the metadata differs: the plan outputs
# record their plan's hash), the CPU seconds (user+sys, from /usr/bin/time,
# all of a run's processes: on a shared 2-core machine the total CPU is
# what decides, and the wall time swings with the load), and exits 1 if
# any differs. Python runs with this tree's python/ first on its path (the
# install's .pth names whichever tree installed last).
#
#   bash scripts/engines-same-bytes.sh        # N=256 (64 blocks of 64³)
#   N=512 bash scripts/engines-same-bytes.sh  # issue 28's overhead figures
set -euo pipefail
[ -n "${TRACE:-}" ] && set -x
N=${N:-256}
here=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$here"
go build -o "$T/ndconv" ./cmd/ndconv
(cd beam && go build -o "$T/ndconv-beam" ./cmd/ndconv-beam)
PYTHON=/usr/bin/python3 bash python/install.sh >/dev/null
export PYTHONPATH="$here/python${PYTHONPATH:+:$PYTHONPATH}"
nd=$T/ndconv
B=$((N / 4))
# The input: a Zarr array in shards of B³ (chunks of (B/2)³), which the
# outputs take as their layout, so that a block is one shard.
/usr/bin/python3 -c "
import numpy as np, dask.array as da, ndconv.dask as ndd
rng = np.random.default_rng(28)
x = rng.random(($N, $N, $N), dtype=np.float32)
np.save('$T/in.npy', x)
ndd.to_zarr(da.from_array(x, chunks=$B), '$T/in.zarr', shards=($B,) * 3, chunks=($B // 2,) * 3)
np.save('$T/k.npy', rng.standard_normal((5, 5, 5)).astype(np.float32))"
secs() { python3 -c "import time; print(f'{time.time() - $1:.2f}')"; }
# timed NAME CMD…: runs CMD under /usr/bin/time; cpu NAME: its user+sys.
timed() { local n=$1; shift; /usr/bin/time -o "$T/$n.cpu" -f "%U %S" "$@"; }
cpu() { awk '{printf "%.2f", $1 + $2}' "$T/$1.cpu"; }
# The stored shards (c/…), not temporary files (.KEY-PID@HOST-N beside
# them): a worker killed mid-write leaves one, which its re-run removes.
sums() { (cd "$1" && find . -type f -path './c/*' ! -name '.*' | sort | xargs cat | sha256sum | cut -c1-16); }
plan() { "$nd" plan -q -k "$T/k.npy" --border reflect --blocks $B,$B,$B "$T/in.zarr" "$T/$1.zarr" -o "$T/$1.json"; }

plan a
s=$(date +%s.%N); timed a "$nd" worker -q --plan "$T/a.json" --index 0 --count 1; ta=$(secs "$s")

# 8 processes that run to the end, for the time (its bytes are checked too)
plan e
s=$(date +%s.%N)
timed e bash -c 'for i in $(seq 0 7); do "$0" worker -q --plan "$1" --index "$i" --count 8 & done; wait' "$nd" "$T/e.json"
te=$(secs "$s")

plan b
s=$(date +%s.%N)
pids=()
for i in $(seq 0 7); do "$nd" worker -q --plan "$T/b.json" --index "$i" --count 8 & pids+=($!); done
sleep "${KILL_AFTER:-0.5}"
kill -9 "${pids[2]}" "${pids[5]}" 2>/dev/null || true
wait || true
before=$("$nd" status --plan "$T/b.json")
"$nd" worker -q --plan "$T/b.json" --index 2 --count 8 & "$nd" worker -q --plan "$T/b.json" --index 5 --count 8 & wait
tb=$(secs "$s")

plan c
s=$(date +%s.%N); timed c "$T/ndconv-beam" --plan "$T/c.json" >"$T/beam.log" 2>&1 || { tail -5 "$T/beam.log"; exit 1; }; tc=$(secs "$s")

# (a script file with a main guard: the cluster's worker processes are
# spawned and import the main module again)
cat >"$T/dask_run.py" <<'EOF'
import json, logging, sys, time
import numpy as np, dask.array as da, distributed, psutil
import ndconv.dask as ndd

def cpu():
    """The CPU seconds of this process and its cluster's (its children)."""
    t = 0.0
    for p in [psutil.Process()] + psutil.Process().children(recursive=True):
        try:
            c = p.cpu_times()
            t += c.user + c.system
        except psutil.Error:
            pass
    return t

def main(T):
    meta = json.load(open(f"{T}/a.zarr/zarr.json"))
    shard = meta["chunk_grid"]["configuration"]["chunk_shape"]
    inner = next(c for c in meta["codecs"] if c["name"] == "sharding_indexed")["configuration"]["chunk_shape"]
    with distributed.LocalCluster(n_workers=4, threads_per_worker=1, processes=True, silence_logs=logging.ERROR) as cl, distributed.Client(cl) as client:
        client.wait_for_workers(4)
        t, c = time.time(), cpu()
        x = ndd.from_zarr(f"{T}/in.zarr")
        y = ndd.correlate(x, np.load(f"{T}/k.npy"), mode="reflect", workers=1)
        ndd.to_zarr(y, f"{T}/d.zarr", shards=shard, chunks=inner)
        open(f"{T}/dask.secs", "w").write(f"{time.time() - t:.2f}")
        open(f"{T}/d.cpu", "w").write(f"{cpu() - c:.2f} 0")

if __name__ == "__main__":
    main(sys.argv[1])
EOF
s=$(date +%s.%N)
/usr/bin/python3 "$T/dask_run.py" "$T"
td="$(secs "$s"), $(cat "$T/dask.secs") with the cluster up"

echo "8 workers, two killed: $before before the re-run; $(find "$T/b.zarr" -name '.*-*' -type f | wc -l) temporary files left beside the shards after it"
bad=0
ref=$(sums "$T/a.zarr")
for r in "a in-process|$ta" "e 8 workers|$te" "b 8, 2 killed|$tb" "c Prism|$tc" "d dask|$td"; do
	name=${r%%|*}
	key=${name%% *}
	sum=$(sums "$T/$key.zarr")
	c=""
	[ -f "$T/$key.cpu" ] && c="  cpu $(cpu "$key") s"
	printf '%-15s %s s%s  shards %s\n' "$name" "${r##*|}" "$c" "$sum"
	[ "$sum" = "$ref" ] || bad=1
done
if [ $bad != 0 ]; then
	echo "the engines' bytes differ; the files that do:"
	for d in b c d e; do (cd "$T/a.zarr" && find . -type f ! -name '.*' | sort | xargs sha256sum) | diff - <(cd "$T/$d.zarr" && find . -type f ! -name '.*' | sort | xargs sha256sum) | grep '^[<>]' | grep -v zarr.json | head -5 | sed "s/^/$d: /"; done
	exit 1
fi
echo "same bytes from every engine (dask's cpu: its processes' with the cluster up; load: $(cut -d' ' -f1-3 /proc/loadavg))"
