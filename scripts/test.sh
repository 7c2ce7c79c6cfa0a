#!/usr/bin/env bash
# The project's test command (README, .ci/run): every test, then each fuzz
# target for a short while. FUZZTIME=0 skips fuzzing.
set -euo pipefail
cd "$(dirname "$0")/.."
go test ./...
fuzztime=${FUZZTIME:-10s}
if [ "$fuzztime" != "0" ]; then
	go test -run '^$' -fuzz '^FuzzReadNPY$' -fuzztime "$fuzztime" ./imageio
	go test -run '^$' -fuzz '^FuzzCommandLine$' -fuzztime "$fuzztime" ./cmd/ndconv
fi
