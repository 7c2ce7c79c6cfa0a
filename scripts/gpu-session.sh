#!/bin/bash
# gpu-session.sh: one device call's work — the GPU suites, memcheck and the
# bench on selected workloads — from binaries built here beforehand:
#
#   CGO_ENABLED=0 go test -c -o .gpu/cuda.test ./cuda
#   CGO_ENABLED=0 go test -c -o .gpu/opencl.test ./opencl
#   CGO_ENABLED=0 go build -o .gpu/ndconv ./cmd/ndconv
#   CGO_ENABLED=0 go test -c -o .gpu/ndconv.test .     # the device API (step devapi)
#   CGO_ENABLED=0 go test -c -o .gpu/cli.test ./cmd/ndconv   # the CLI on GPUs (step cli)
#   CGO_ENABLED=0 go build -tags ndconv_testhook -o .gpu/ndconv-hook ./cmd/ndconv
#
#   STEPS="cuda opencl cli memcheck compare tune bench results savecache" ONLY='A-2d' bash scripts/gpu-session.sh
#
# tune writes the tuning cache $NDCONV_TUNING (default /tmp/ndconv-tuning.json)
# for the workloads TUNE_ONLY names, which bench and results then read;
# results runs bench/run-gpu.sh (ndconv and the peers; STEPS_RESULTS, default
# "ndconv gpu") into /tmp/results and packs it as $OUT/results.tgz.
#
# Logs go to $OUT (the device tool brings them back); a short summary is
# printed last.
set -u
out=${OUT:-/tmp/gpu-session}
mkdir -p "$out"
steps=${STEPS:-cuda bench}
only=${ONLY:-.}
sets=${SETS:-all}
step() { [[ " $steps " == *" $1 "* ]]; }
export NDCONV_TUNING=${NDCONV_TUNING:-/tmp/ndconv-tuning.json}
# The compiled-kernel cache: a fresh machine compiles every specialisation
# with NVRTC (the CUDA case table: 272 s of its call). A cache an earlier
# call brought back ($OUT/modcache.tgz, copied to .gpu/) starts warm; the
# step savecache packs this call's for the next (if under the 16 MiB a file
# may bring back). Its keys hold the source, options, GPU and driver, so a
# kernel that changed since compiles anew.
export NDCONV_CACHE_DIR=${NDCONV_CACHE_DIR:-/tmp/ndconv-cache}
mkdir -p "$NDCONV_CACHE_DIR"
[ -f .gpu/modcache.tgz ] && tar xzf .gpu/modcache.tgz -C "$NDCONV_CACHE_DIR"
# NVIDIA's OpenCL driver is installed but not registered with the ICD loader.
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 >/tmp/icd/nvidia.icd
export PATH=$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
summary=()
if step cuda; then
	( cd cuda && ../.gpu/cuda.test -test.count=1 ${CUDA_RUN:+-test.run "$CUDA_RUN"} ${SHORT:+-test.short} -test.v ) >"$out/cuda.log" 2>&1
	summary+=("cuda suite: exit $? — $(grep -c '^--- PASS' "$out/cuda.log") pass, $(grep -c '^--- FAIL' "$out/cuda.log") fail")
	grep -E '^(--- FAIL|FAIL|ok|PASS)|engine_test' "$out/cuda.log" | head -20
fi
if step opencl; then
	( cd opencl && OCL_ICD_VENDORS=/tmp/icd NDCONV_OPENCL_DEVICE=${OPENCL_DEVICE:-1:0} NDCONV_OPENCL_ALL=${OPENCL_ALL:-0} ../.gpu/opencl.test -test.count=1 -test.v ) >"$out/opencl.log" 2>&1
	summary+=("opencl suite: exit $? — $(grep -c '^--- PASS' "$out/opencl.log") pass, $(grep -c '^--- FAIL' "$out/opencl.log") fail")
	grep -E '^(--- FAIL|FAIL|ok|PASS)' "$out/opencl.log" | head -20
fi
if step devapi; then
	OCL_ICD_VENDORS=/tmp/icd .gpu/ndconv.test -test.count=1 -test.run 'TestDevice|ExampleOpenDevice' -test.v >"$out/devapi.log" 2>&1
	summary+=("device API: exit $? — $(grep -c '^--- PASS' "$out/devapi.log") pass, $(grep -c '^--- FAIL' "$out/devapi.log") fail")
	grep -E '^(--- FAIL|FAIL|ok|PASS)|device_test' "$out/devapi.log" | head -20
fi
if step cli; then
	# The CLI tests that run GPUs (--device-memory, prewarm, streaming), on
	# the prebuilt binaries: the device has no Go to build them.
	( cd cmd/ndconv && OCL_ICD_VENDORS=/tmp/icd NDCONV_CLI_BINARY=../../.gpu/ndconv NDCONV_CLI_HOOK_BINARY=../../.gpu/ndconv-hook \
		../../.gpu/cli.test -test.count=1 -test.run "${CLI_RUN:-TestDeviceMemory|TestPrewarm|TestStreamed|TestTrace}" -test.v ) >"$out/cli.log" 2>&1
	summary+=("cli: exit $? — $(grep -c '^--- PASS' "$out/cli.log") pass, $(grep -c '^--- FAIL' "$out/cli.log") fail")
	grep -E '^(--- FAIL|FAIL|ok|PASS)' "$out/cli.log" | head -20
fi
if step memcheck; then
	( cd cuda && compute-sanitizer --tool memcheck --print-limit 5 ../.gpu/cuda.test -test.short -test.count=1 -test.run "${MEMCHECK_RUN:-EngineTable|EngineSlabs|EngineDeviceArrays|EnginePipelined}" ) >"$out/memcheck.log" 2>&1
	summary+=("memcheck: exit $? — $(grep 'ERROR SUMMARY' "$out/memcheck.log" | tail -1)")
	# The streamed path above the backends: ExecuteChunks on CUDA.
	if [ -x .gpu/ndconv.test ]; then
		compute-sanitizer --tool memcheck --print-limit 5 .gpu/ndconv.test -test.count=1 -test.run 'TestExecuteChunks$' >"$out/memcheck-stream.log" 2>&1
		summary+=("memcheck ExecuteChunks: exit $? — $(grep 'ERROR SUMMARY' "$out/memcheck-stream.log" | tail -1)")
	fi
fi
if step compare; then
	for dev in cuda opencl:1:0; do
		OCL_ICD_VENDORS=/tmp/icd NDCONV=$PWD/.gpu/ndconv bash scripts/compare-devices.sh $dev >"$out/compare-${dev%%:*}.log" 2>&1
		summary+=("README examples cpu vs $dev: exit $? — $(grep -c 'same file' "$out/compare-${dev%%:*}.log") same")
	done
fi
if step tune; then
	.gpu/ndconv tune --device cuda --workload all --only "${TUNE_ONLY:-^A-2d-k3$}" --repeat 5 >"$out/tune.log" 2>&1
	summary+=("tune: exit $?")
	cat "$out/tune.log"
	cp "$NDCONV_TUNING" "$out/tuning.json" 2>/dev/null
fi
if step bench; then
	.gpu/ndconv bench --workload "$sets" --only "$only" --json --device cuda ${BENCH_ARGS:-} >"$out/bench.jsonl" 2>"$out/bench.err"
	summary+=("bench: exit $?")
	python3 - "$out/bench.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    d = json.loads(line)
    if d.get("kind") == "roofline":
        print("roofline", {k: d[k] for k in d if k not in ("kind",)})
    if d.get("kind") == "result":
        print(f"{d['id']:24s} {d.get('method',''):10s} {d['ms_median'] or -1:9.4f} ms  {d.get('pct_roofline',0):6.1f}%  {d.get('impl','')} {d.get('note','')[:200]}")
        if d.get("pct_pcie") or d.get("chunks"):
            print(f"{'':24s} {d.get('pct_pcie',0):.1f}% of pinned PCIe, {d.get('chunks',0)} chunks, copies and kernels overlapping {d.get('overlap_ms',0):.3f} ms")
    if d.get("kind") == "span" and d["chunk"] < 4:
        print(f"{'':24s} chunk {d['chunk']} {d['stage']:8s} {d['start_ms']:9.3f}-{d['end_ms']:9.3f} ms")
PY
fi
if step results; then
	mkdir -p /tmp/results
	STEPS="${STEPS_RESULTS:-ndconv gpu}" bash bench/run-gpu.sh .gpu/ndconv .gpu/report /tmp/results >"$out/results.log" 2>&1
	summary+=("results: exit $?")
	tail -5 "$out/results.log"
	tar czf "$out/results.tgz" -C /tmp results
fi
if step savecache; then
	tar czf /tmp/modcache.tgz -C "$NDCONV_CACHE_DIR" .
	if [ "$(stat -c %s /tmp/modcache.tgz)" -lt $((16 << 20)) ]; then
		cp /tmp/modcache.tgz "$out/modcache.tgz"
		summary+=("savecache: $(du -h /tmp/modcache.tgz | cut -f1) in \$OUT/modcache.tgz (copy it to .gpu/)")
	else
		summary+=("savecache: $(du -h /tmp/modcache.tgz | cut -f1), over the 16 MiB a file may bring back: not saved")
	fi
fi
printf '%s\n' "${summary[@]}"
