#!/usr/bin/env bash
# Overhead of the otel middleware, as CPU time per call (user + sys of the
# whole test process: client, server, SDK goroutines, GC), which a busy
# machine disturbs less than wall time. Each variant runs N calls; a run of
# one call is subtracted (setup). Prints one line per variant and round;
# take the medians. Usage: otel/overhead.sh [N] [rounds]
set -euo pipefail
cd "$(dirname "$0")"
N=${1:-30000}
R=${2:-5}
bin=$(mktemp)
trap 'rm -f "$bin"' EXIT
go test -c -o "$bin" .
cpu() { { /usr/bin/time -f "%U %S" "$bin" -test.run '^$' -test.bench "^Benchmark$1\$" -test.benchtime="$2x" >/dev/null; } 2>&1 | tail -1 | awk '{print $1+$2}'; }
for _ in $(seq "$R"); do
	for b in OverheadInProcess/otel={off,noop,sdk} Overhead/transport=tcp/otel={off,noop,sdk} Overhead/transport=http/otel={off,noop,sdk}; do
		one=$(cpu "$b" 1)
		all=$(cpu "$b" "$N")
		awk -v b="$b" -v a="$all" -v o="$one" -v n="$N" 'BEGIN { printf "%-40s %6.1f µs/call\n", b, (a - o) * 1e6 / n }'
	done
done
