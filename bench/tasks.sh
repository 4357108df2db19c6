#!/usr/bin/env bash
# Background tasks benchmark.
#
# (a) The task store's lock under 8 parallel callers: rounds of 8 separate
#     processes started together, each doing one Update on a document of
#     1,000 jobs (about 640 KB), the way 8 `slim tasks` calls at once would.
#     Every round of the store is paired with a round of the bare rewrite
#     (the same lock, the document read and written back whole with a
#     temporary, its fsync, the rename and the directory's fsync, nothing
#     decoded or encoded), in alternating order, so machine noise falls on
#     both. One run is ROUNDS rounds of each (default 20); RUNS runs
#     (default 3) are made and each figure is the median of the runs'.
#     Prints p50/p90/p99 of the lock's hold time and of the wait for it,
#     pooled over the callers of a run, for both, with the ratio store /
#     bare rewrite, then where the store's hold went. Goal: hold p99 under
#     5 ms. With BASE=<commit>, the store's test binary of that commit runs
#     too, interleaved run by run, and the ratios now / BASE are printed.
#     The document lives in the temporary directory (STORE_TMPDIR, else
#     TMPDIR, else /tmp), whose file system is printed; when /dev/shm exists
#     the current store is measured there too (NO_TMPFS=1 skips it), which
#     shows how much of the hold is the disk.
# (b) `slim tasks status` against a bare exec: see status_vs_bare.
#
# The processes are the store's test binary run as helpers
# (BenchmarkUpdate8Processes in tasks/internal/store/hold_bench_test.go).
source "$(dirname "$0")/lib.sh"

rounds="${ROUNDS:-20}"
runs="${RUNS:-3}"
go test -c -o "$out/now.test" ./tasks/internal/store
bins=(now)
if [[ -n ${BASE:-} ]]; then
	mkdir -p "$out/base"
	git archive "$BASE" | tar -x -C "$out/base"
	(cd "$out/base" && go test -c -o "$out/base.test" ./tasks/internal/store)
	bins=(base now)
fi

# measure DIR LABEL BIN...: RUNS runs of each binary's benchmark, the
# binaries interleaved, with the store under DIR; prints the table.
measure() {
	local dir=$1 label=$2
	shift 2
	: >"$out/runs.txt"
	for ((r = 0; r < runs; r++)); do
		for b in "$@"; do
			TMPDIR="$dir" "$out/$b.test" -test.run '^$' -test.bench '^BenchmarkUpdate8Processes$' \
				-test.benchtime "${rounds}x" >"$out/one.txt" || { cat "$out/one.txt" >&2; return 1; }
			awk -v b="$b" '/^BenchmarkUpdate8Processes/ {
				for (i = 5; i < NF; i += 2) print b, $(i+1), $i
			}' "$out/one.txt" >>"$out/runs.txt"
		done
	done
	echo
	echo "== (a) lock hold, 8 processes at once, 1,000 jobs; store on $label;" \
		"$runs runs of $rounds rounds per binary, medians of the runs"
	sort -k1,1 -k2,2 -k3,3g "$out/runs.txt" | awk '
	{ k = $1 SUBSEP $2; v[k, ++n[k]] = $3 }
	END {
		for (k in n) m[k] = v[k, int((n[k] + 1) / 2)]
		if (!(("now" SUBSEP "hold-p50-ms") in m)) { print "tasks.sh: no benchmark result" > "/dev/stderr"; exit 1 }
		base = ("base" SUBSEP "hold-p50-ms") in m
		printf "%-36s %9s %9s %9s   (ms; %d callers a run)\n", "", "p50", "p90", "p99", m["now", "callers"]
		if (base) {
			row("base", "hold", "hold, store Update at BASE")
			row("now", "hold", "hold, store Update now")
			ratio("now", "hold", "base", "hold", "hold, now / BASE")
		} else
			row("now", "hold", "hold, store Update")
		row("now", "ref-hold", "hold, bare rewrite")
		ratio("now", "hold", "now", "ref-hold", "hold, store / bare rewrite")
		if (base) {
			row("base", "wait", "wait, store Update at BASE")
			row("now", "wait", "wait, store Update now")
		} else
			row("now", "wait", "wait, store Update")
		row("now", "ref-wait", "wait, bare rewrite")
		for (i = 1; i <= 2; i++) {
			b = i == 1 ? "base" : "now"
			if (!((b SUBSEP "hold-p50-ms") in m)) continue
			printf "%s: the hold (p50 / p99 ms): read+decode %.2f / %.2f, encode %.2f / %.2f, write %.2f / %.2f\n",
				b == "now" ? "now" : "BASE", m[b, "read-p50-ms"], m[b, "read-p99-ms"], m[b, "encode-p50-ms"],
				m[b, "encode-p99-ms"], m[b, "write-p50-ms"], m[b, "write-p99-ms"]
			if ((b SUBSEP "sync-p50-ms") in m)
				printf "     after the lock (p50 / p99 ms): directory fsync %.2f / %.2f\n", m[b, "sync-p50-ms"], m[b, "sync-p99-ms"]
			if ((b SUBSEP "gc-share") in m)
				printf "     Updates with a garbage collection in them: %.0f%%\n", 100 * m[b, "gc-share"]
		}
		printf "goal: hold p99 < 5 ms: %s\n", m["now", "hold-p99-ms"] < 5 ? "met" : "missed"
	}
	function row(b, what, name) {
		printf "%-36s %9.2f %9.2f %9.2f\n", name, m[b, what "-p50-ms"], m[b, what "-p90-ms"], m[b, what "-p99-ms"]
	}
	function ratio(b1, w1, b2, w2, name,   p, i) {
		printf "%-36s", name
		split("p50 p90 p99", p, " ")
		for (i = 1; i <= 3; i++)
			printf " %8.2fx", m[b1, w1 "-" p[i] "-ms"] / m[b2, w2 "-" p[i] "-ms"]
		printf "\n"
	}'
}

# status_vs_bare: (b) `slim tasks status` on a scope holding 1,000 jobs,
# against a bare exec. The place for that measurement, still to write: seed
# a state directory through the store (SLIM_STATE_DIR), then run them
# interleaved with bench/compare, which prints medians and the ratio to
# the bare binary:
#   go build -o "$out/compare" ./bench/compare
#   "$out/compare" -n "${RUNS:-31}" bare="$out/bare" ";;" status="$out/slim" tasks status ...
status_vs_bare() {
	echo
	echo "== (b) slim tasks status, 1,000 jobs, against a bare exec: not measured yet (status_vs_bare in bench/tasks.sh)"
}

tmp=${STORE_TMPDIR:-${TMPDIR:-/tmp}}
fs=$(df -T "$tmp" | awk 'NR == 2 { print $2 " (" $1 ")" }')
echo "== $(uname -sm), $(nproc) cores, $(go version | cut -d' ' -f3), load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
echo "== $tmp is on $fs"
measure "$tmp" "$fs" "${bins[@]}"
if [[ -d /dev/shm && -w /dev/shm && -z ${NO_TMPFS:-} ]]; then
	shm=$(mktemp -d /dev/shm/slim-bench.XXXXXX)
	trap 'rm -rf "$out" "$shm"' EXIT
	measure "$shm" "tmpfs (/dev/shm)" now
fi
status_vs_bare
