#!/usr/bin/env bash
# Runs the benchmark passes interleaved and prints the table of medians.
#
#   bench/run.sh                 5 passes, 1s per benchmark, 2000 idle connections
#   bench/run.sh -quick          2 short passes (under a minute once built)
#   bench/run.sh -passes 9       more passes
#   bench/run.sh -bench TCPSeq   only some scenarios (a regexp on the names)
#   bench/run.sh -profile        also CPU and memory profiles of ours on
#                                TCPSeq and Batch100 (files in the output folder)
#
# Each pass runs every scenario once (go test -count=1); odd passes take the
# implementations in one order, even passes in the reverse order, so that
# drift on a shared machine does not favour one of them. The raw output
# (bench.txt), the table (table.md) and any profiles go to bench/results/DATE/
# unless -out says otherwise.
set -euo pipefail
cd "$(dirname "$0")"

passes=5 benchtime=1s idle=2000x filter='.' profile=0 out=""
while [ $# -gt 0 ]; do
	case "$1" in
	-quick) passes=2 benchtime=100ms idle=300x ;;
	-passes) passes="$2"; shift ;;
	-benchtime) benchtime="$2"; shift ;;
	-idle) idle="$2x"; shift ;;
	-bench) filter="$2"; shift ;;
	-profile) profile=1 ;;
	-out) out="$2"; shift ;;
	*) echo "usage: $0 [-quick] [-passes N] [-benchtime D] [-idle N] [-bench REGEXP] [-profile] [-out DIR]" >&2; exit 2 ;;
	esac
	shift
done
out="${out:-results/$(date -u +%Y%m%d-%H%M%S)}"
mkdir -p "$out"
bin="$out/bench.test"
go test -c -o "$bin" .

# The scenarios that -bench selects, in two groups: throughput (timed by
# -benchtime) and idle memory (b.N is the number of connections).
pick() { for s in "$@"; do if echo "$s" | grep -Eq -- "$filter"; then printf '%s|' "$s"; fi; done; }
throughput=$(pick TCPSeq TCPPar64 HTTPSeq HTTPPar64 WSSeq WSPar64 StdioSeq StdioPar64 Batch100 Echo1MiB MCPSeq MCPPar8 MCPPar64 MCP100KiBSeq MCP100KiBPar8)
idlers=$(pick IdleTCP IdleWS)
openloop=$(pick OpenLoopTCP OpenLoopHTTP)
{
	echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $(go version) passes=$passes benchtime=$benchtime idle=$idle"
	echo "# cpu: $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//') nproc=$(nproc 2>/dev/null || echo ?)"
} > "$out/bench.txt"

run() { # run REGEXP BENCHTIME REVERSE
	"$bin" -test.run '^$' -test.bench "^Benchmark(${1%|})\$" -test.benchtime "$2" -test.count 1 \
		-test.timeout 30m -bench.reverse="$3" 2>&1 | tee -a "$out/bench.txt" >&2
}

for pass in $(seq 1 "$passes"); do
	reverse=false
	if [ $((pass % 2)) -eq 0 ]; then reverse=true; fi
	echo "== pass $pass/$passes (reverse=$reverse)" >&2
	if [ -n "$throughput" ]; then run "$throughput" "$benchtime" "$reverse"; fi
	if [ -n "$idlers" ]; then run "$idlers" "$idle" "$reverse"; fi
	# Open loop: each load level lasts -benchtime (the closed-loop peak measured as
	# long, then up to 5 probes of half as long for the sustained peak).
	if [ -n "$openloop" ]; then run "$openloop" "$benchtime" "$reverse"; fi
done

if [ "$profile" = 1 ]; then
	# CPU and memory profiles in separate runs: sampling every allocation's
	# stack (memprofilerate) would distort the CPU profile.
	for b in TCPSeq Batch100; do
		echo "== profiling ours on $b" >&2
		(cd "$out" && ./bench.test -test.run '^$' -test.bench "^Benchmark$b\$/^ours\$" -test.benchtime 3s \
			-test.cpuprofile "$b.cpu" >&2)
		(cd "$out" && ./bench.test -test.run '^$' -test.bench "^Benchmark$b\$/^ours\$" -test.benchtime 1s \
			-test.memprofile "$b.mem" -test.memprofilerate 1 >&2)
		go tool pprof -top -nodecount 40 "$bin" "$out/$b.cpu" > "$out/$b.cpu.txt" 2>/dev/null || true
		go tool pprof -top -nodecount 40 -sample_index alloc_objects "$bin" "$out/$b.mem" > "$out/$b.allocs.txt" 2>/dev/null || true
	done
fi

if ! grep -q '^Benchmark' "$out/bench.txt"; then
	echo "no benchmark results (passes=$passes)" >&2
	exit 0
fi
go run ./cmd/table "$out/bench.txt" | tee "$out/table.md"
echo "results in $out (relative to bench/ unless absolute)" >&2
