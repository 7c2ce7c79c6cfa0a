#!/bin/bash
# profile-gpu.sh: ncu profiles of ndconv's kernels on bench workloads — the
# evidence docs/perf/gpu-kernels.md cites for each miss (achieved DRAM GB/s, SM
# throughput, occupancy, registers, spills, warp stalls). Run on the device
# from a binary built here (CGO_ENABLED=0 go build -o .gpu/ndconv ./cmd/ndconv):
#
#   PROFILE_ONLY='^(A-2d-k3|S000-bank1)$' bash scripts/profile-gpu.sh
#
# For each workload id it profiles the first LAUNCHES (default 2) kernel
# launches after bench's warm-up and writes $OUT/ncu-<id>.csv (every metric of
# the sections below) and one summary line per kernel to $OUT/profile.txt.
set -u
out=${OUT:-/tmp/gpu-profile}
mkdir -p "$out"
export PATH=$PATH:/usr/local/cuda/bin
export NDCONV_TUNING=${NDCONV_TUNING:-/tmp/ndconv-tuning.json}
ids=$(.gpu/ndconv bench --workload all --list | python3 -c '
import json, re, sys
pat = re.compile(sys.argv[1])
for l in sys.stdin:
    d = json.loads(l)
    if pat.search(d["id"]):
        print(d["id"])' "${PROFILE_ONLY:-.}")
metrics=smsp__sass_inst_executed_op_local_ld.sum,smsp__sass_inst_executed_op_local_st.sum,smsp__inst_executed.sum,smsp__sass_inst_executed_op_shared_ld.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,smsp__sass_thread_inst_executed_op_conversion_pred_on.sum,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,dram__bytes_read.sum,dram__bytes_write.sum
for s in barrier long_scoreboard short_scoreboard math_pipe_throttle mio_throttle wait not_selected no_instruction lg_throttle selected dispatch_stall branch_resolving; do metrics+=,smsp__average_warps_issue_stalled_${s}_per_issue_active.ratio; done
for id in $ids; do
	# Skip bench's warm-up launch (and the roofline kernels, by name).
	ncu --clock-control none --kernel-name regex:"${KERNELS:-correlate}" --launch-skip "${SKIP:-2}" --launch-count "${LAUNCHES:-2}" \
		--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
		--section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --metrics "$metrics" \
		--csv --page details \
		.gpu/ndconv bench --workload all --only "^$id\$" --device cuda --repeat 3 ${BENCH_ARGS:-} >"$out/ncu-$id.csv" 2>"$out/ncu-$id.err"
	python3 - "$id" "$out/ncu-$id.csv" >>"$out/profile.txt" <<'PY'
import csv, sys
wid, path = sys.argv[1], sys.argv[2]
rows = [r for r in csv.reader(l for l in open(path) if l.startswith('"'))]
if not rows:
    print(f"{wid}: no kernel profiled"); sys.exit()
head, rows = rows[0], rows[1:]
col = {h: i for i, h in enumerate(head)}
want = {
    "Duration": "us", "DRAM Throughput": "dram%", "Memory Throughput": "mem%",
    "Compute (SM) Throughput": "sm%", "Achieved Occupancy": "occ%",
    "Theoretical Occupancy": "theo%", "Registers Per Thread": "regs",
    "Warp Cycles Per Issued Instruction": "cpi", "Dynamic Shared Memory Per Block": "dsmem",
    "Static Shared Memory Per Block": "smem", "L1/TEX Hit Rate": "l1hit", "L2 Hit Rate": "l2hit",
    "Executed Ipc Active": "ipc", "Issue Slots Busy": "issue%",
    "smsp__sass_inst_executed_op_local_ld.sum": "spill_ld", "smsp__sass_inst_executed_op_local_st.sum": "spill_st",
    "smsp__inst_executed.sum": "warp_inst", "smsp__sass_inst_executed_op_shared_ld.sum": "lds",
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": "ffma_thr",
    "smsp__sass_thread_inst_executed_op_conversion_pred_on.sum": "cvt_thr",
    "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active": "fma_pipe%",
    "dram__bytes_read.sum": "dram_rd", "dram__bytes_write.sum": "dram_wr",
}
for s in ["barrier", "long_scoreboard", "short_scoreboard", "math_pipe_throttle", "mio_throttle", "wait",
          "not_selected", "no_instruction", "lg_throttle", "selected", "dispatch_stall", "branch_resolving"]:
    want[f"smsp__average_warps_issue_stalled_{s}_per_issue_active.ratio"] = "st_" + s
kernels = {}
for r in rows:
    key = (r[col["ID"]], r[col["Kernel Name"]][:40])
    name, val, unit = r[col["Metric Name"]], r[col["Metric Value"]], r[col["Metric Unit"]]
    if name in want:
        m = kernels.setdefault(key, {"block": r[col["Block Size"]], "grid": r[col["Grid Size"]]})
        m[want[name]] = val + ("" if unit in ("", "%", "register/thread") else unit)
for (kid, kname), m in kernels.items():
    print(f"{wid} #{kid} {kname}: " + " ".join(f"{k}={m[k]}" for k in ["block", "grid", *want.values()] if k in m))
PY
done
cat "$out/profile.txt"
