#!/usr/bin/env bash
# The project's test command (README, .ci/run): every test, then each fuzz
# target for a short while. FUZZTIME=0 skips fuzzing.
set -euo pipefail
cd "$(dirname "$0")/.."
# Every module of both graphs (the library's and beam/'s), other
# platforms' too: the layering tests list the import graph for several
# GOOS with the network off, and a fresh module cache lacked the
# Windows-only mousetrap and go-winio (TestLayers failed in both).
go mod download
(cd beam && go mod download)
# -timeout 15m: go test's default 10 minutes per package binary is a thin
# margin on a loaded 2-core machine; the OpenCL package's PoCL builds take
# about 3 minutes alone with cold caches, up to 6 while the other packages
# build and run beside them (docs/perf/ci-time.md).
go test -timeout 15m ./...
# The Beam pipeline (beam/, a module of its own so that the library does
# not carry Beam's dependencies; `./...` above does not reach it), on the
# in-process Prism runner: ~1 s of tests with a fake block runner, plus
# TestJobOnPrism's real job (~20 s on a loaded machine, most of it building
# the ndconv CLI that plans it). Cold, building Beam's SDK and Prism costs
# ~150 CPU-s beyond the packages the library's tests built (5.5 min on a
# loaded 2-core machine); warm, ~15 s more, mostly the link.
(cd beam && go test ./...)
# The concurrency tests under the race detector (it needs cgo and a C
# compiler, which CI has): one plan shared by 16 goroutines, a device's
# plans and arrays, concurrent one-shot calls, an Executable's turns, the
# blocks' pool of executables, the JPEG codec's pipelined decode and
# encode (and their workers' panics), the Zarr chunk cache.
# About 85 s on a cold 2-core cache (building the race-instrumented
# packages), 10 s warm.
CGO_ENABLED=1 go test -race -run 'TestSharedPlan|TestConcurrentCalls|TestDeviceConcurrent|TestEnginePool' .
CGO_ENABLED=1 go test -race -run 'TestExecutableTurns' ./plan
CGO_ENABLED=1 go test -race -run 'TestConcurrentExecuteAndFree' ./capi
CGO_ENABLED=1 go test -race -run 'TestParallelSame|TestWorkerPanic' ./imageio/jpeg
CGO_ENABLED=1 go test -race -run 'TestBlockCacheConcurrent|TestBlockCacheDecodesOnce|TestRunDecodesEachChunkOnce' ./job
# The pure-Go twins of the SIMD loops (the CPU engine's and the JPEG
# codec's), which other architectures run.
# kernels' decomposition tests (every tuning candidate emulated, 34 s) check
# the launches, not the CPU engine they are compared with: they run once,
# above; the canonical-form test compares with the twins here.
go test -tags noasm ./cpu/... ./internal/fft ./imageio/jpeg ./zarr .
go test -tags noasm -skip 'TestTuningCandidates|TestBankGroups' ./kernels
# Each instruction set of the CPU engine's loops, whichever CPU CI got:
# NDCONV_SIMD caps the loops' dispatch (cpu/doc.go), so an AVX-512 machine
# runs the AVX2 path and the pure-Go one too, the same build as above.
# The FFT's tests are skipped (internal/fft chooses its own passes); of the
# root package, the CPU tests of banks, complex data and scipy's fixtures.
# -count=1: the variable is read at init, before go test's cache records
# what a test binary reads, so a cached result of another value could be
# reused. About 8 s for cpu/... and 6 s for the root package per value on
# a loaded 2-core machine.
for isa in avx2 go; do
	NDCONV_SIMD=$isa go test -count=1 -skip 'FFT' ./cpu/...
	NDCONV_SIMD=$isa go test -count=1 -run 'TestBankEqualsSeparateCalls|TestFilterBank|TestComplexAgainstReference|TestComplexSameBitsAsRealParts|TestScipyFixtures$' .
done
# The arm64 build under qemu-user (.ci/run installs qemu-user-static):
# the NEON loops and the pure-Go twins as arm64 compiles them (it fuses
# a·b + c where Go allows), against the reference loops and the digests
# the amd64 build recorded (cpu.TestSameBitsEverywhere). -short thins the
# loop tests' lengths; qemu emulates each instruction, so this is about a
# minute on a loaded 2-core machine, most of it building. Skipped where no
# qemu-aarch64 is installed.
qemu=$(command -v qemu-aarch64-static || command -v qemu-aarch64 || true)
if [ -n "$qemu" ]; then
	for isa in neon go; do
		NDCONV_SIMD=$isa GOARCH=arm64 go test -count=1 -short -exec "$qemu" ./cpu/internal/simd
	done
	GOARCH=arm64 go test -count=1 -short -exec "$qemu" -run 'TestSameBitsEverywhere|TestTable$|TestBankSameBits|TestSegmentsSameBits|TestInPlaceSameBits|TestReusedPlanAllocatesNothing' ./cpu
	NDCONV_SIMD=go GOARCH=arm64 go test -count=1 -short -exec "$qemu" -run 'TestSameBitsEverywhere' ./cpu
else
	echo "scripts/test.sh: no qemu-aarch64 (Debian: qemu-user-static); skipping the arm64 tests" >&2
fi
fuzztime=${FUZZTIME:-10s}
if [ "$fuzztime" != "0" ]; then
	# Every func FuzzXxx in a _test.go file, run in its package.
	grep -rHo --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*' . | sort |
		while IFS=: read -r file fn; do
			target=${fn#func }
			pkg="./$(dirname "${file#./}")"
			log=$(mktemp)
			if ! go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg" 2>&1 | tee "$log"; then
				# Go's fuzzer can fail a run whose time ran out while a worker
				# was busy ("context deadline exceeded", no failing input
				# written), seen on a loaded 2-core machine: run it once more.
				# A real failure writes its input and fails again.
				if grep -q 'context deadline exceeded' "$log" && ! grep -q 'Failing input written' "$log"; then
					echo "$target: the fuzzer's deadline passed mid-run; running it again" >&2
					go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg"
				else
					rm -f "$log"
					exit 1
				fi
			fi
			rm -f "$log"
		done
fi
