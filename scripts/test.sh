#!/usr/bin/env bash
# The project's test command (README, .ci/run): every test, then each fuzz
# target for a short while. FUZZTIME=0 skips fuzzing.
set -euo pipefail
cd "$(dirname "$0")/.."
go test ./...
# The pure-Go twins of the SIMD loops, which other architectures run.
go test -tags noasm ./cpu/... ./kernels .
fuzztime=${FUZZTIME:-10s}
if [ "$fuzztime" != "0" ]; then
	# Every func FuzzXxx in a _test.go file, run in its package.
	grep -rHo --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*' . | sort |
		while IFS=: read -r file fn; do
			target=${fn#func }
			go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "./$(dirname "${file#./}")"
		done
fi
