#!/usr/bin/env bash
# Background tasks benchmark.
#
# (a) The task store's lock under 8 parallel callers: rounds of 8 separate
#     processes started together, each doing one Update that changes a
#     running job of a scope of 1,000 jobs (about 640 KB; since schema
#     version 2 most of it is settled jobs in the archive, which these
#     Updates do not touch), the way 8 `slim tasks` calls at once would.
#     Every round of the store is paired with a round of the bare rewrite
#     (the same lock, the document the Update rewrites read and written
#     back whole with a temporary, its fsync, the rename and the
#     directory's fsync, nothing decoded or encoded), in alternating order,
#     so machine noise falls on both. One run is ROUNDS rounds of each (default 20); RUNS runs
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
# ONLY=store or ONLY=status runs one of the two.
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
			if ((b SUBSEP "archive-share") in m)
				printf "     Updates that read the archive: %.0f%%; document written: %.0f KB\n", 100 * m[b, "archive-share"], m[b, "doc-KB"]
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

# status_vs_bare: (b) `slim tasks status` on a scope holding JOBS jobs
# (default 1,000) against a bare exec, interleaved by bench/compare, which
# prints medians and the ratio to the bare binary. The fake OpenCode server
# (fixtures/cmd/fakeopencode) runs the one task asked about, busy, so each
# call does what a real one does: reads the store, reads the live status
# map, records the busy sighting (a transaction that rewrites the live
# document), reads the task's newest message, and answers. Goal: at most
# 2x a bare exec. `slim version` runs beside it as slim's own start-up, and
# the same status call as the OpenCode plugin has it run, by the resident
# slim (`slim hook serve`: no process per call), in the row status-served.
# The scope is seeded as a version 1 document (everything in state.json);
# the first call, made before the measured ones, migrates it, which moves
# the finished jobs to the archive.
status_vs_bare() {
	local jobs=${JOBS:-1000} state="$out/state" proj="$out/proj"
	mkdir -p "$proj"
	go build -o "$out/fakeopencode" ./fixtures/cmd/fakeopencode
	mkfifo "$out/fake.in"
	"$out/fakeopencode" <"$out/fake.in" >"$out/fake.url" 2>"$out/fake.err" &
	local fake=$!
	exec 9>"$out/fake.in" # the fake stops when this closes
	for _ in $(seq 50); do [[ -s "$out/fake.url" ]] && break; sleep 0.1; done
	local url
	url=$(head -1 "$out/fake.url")
	curl -fsS -XPOST "$url/__fake/session" -d '{"id":"ses_bench0000","parentID":"ses_parent","runs":[{"hang":true}]}' >/dev/null
	curl -fsS -XPOST "$url/session/ses_bench0000/prompt_async" -H 'content-type: application/json' \
		-d '{"agent":"explorer","parts":[{"type":"text","text":"work"}]}' >/dev/null
	python3 - "$state" "$proj" "$url" "$jobs" <<'PY'
import hashlib, json, os, sys
state, proj, url, n = sys.argv[1], os.path.realpath(sys.argv[2]), sys.argv[3].rstrip("/"), int(sys.argv[4])
scope = os.path.join(state, "tasks", hashlib.sha256((proj + "\0" + url).encode()).hexdigest()[:16])
os.makedirs(scope, mode=0o700, exist_ok=True)
for d in (state, os.path.join(state, "tasks"), scope):
    os.chmod(d, 0o700)
t = "2026-12-02T00:00:00Z"
jobs = {}
for i in range(n):
    tid = "ses_bench%04d" % i
    done = i > 0
    jobs[tid] = {"taskID": tid, "parentSessionID": "ses_parent", "agent": "explorer",
        "description": "benchmark job %d" % i, "objective": "look at part %d of the code base" % i,
        "alias": "exp-%d" % (i + 1), "state": "reconciled" if done else "running",
        "terminalState": "completed" if done else "", "generation": i + 1, "taskGeneration": 1,
        "background": True, "launchedAt": t, "lastLaunchedAt": t, "runStartedAt": t, "updatedAt": t,
        "resultSummary": ("finding %d: " % i) + "x" * 300 if done else ""}
    if not done:
        del jobs[tid]["terminalState"], jobs[tid]["resultSummary"]
doc = {"meta": {"version": 1, "generationSeq": n, "leaseSeq": 0, "epochSeq": 0, "createdAt": t},
    "jobs": jobs, "aliasCounters": {"ses_parent\u0000exp": n}, "orchestrators": {"ses_parent": {"firstSeenAt": t}},
    "leases": {}, "ops": {}, "tombstones": {}, "deletionEpochs": {}, "waits": {}, "wake": {}, "injections": {}}
with open(os.path.join(scope, "state.json"), "w") as f:
    json.dump(doc, f)
os.chmod(os.path.join(scope, "state.json"), 0o600)
PY
	printf '{"args":{"task_id":"ses_bench0000"},"context":{"sessionID":"ses_parent","agent":"orchestrator","directory":"%s"},"host":{"serverUrl":"%s"}}' \
		"$proj" "$url" >"$out/status.json"
	SLIM_STATE_DIR="$state" "$out/slim" tasks status <"$out/status.json" >"$out/status.out" ||
		{ cat "$out/status.out" >&2; return 1; }
	grep -q '^state: busy$' "$out/status.out" || { echo "tasks.sh: status did not see the task busy:" >&2; cat "$out/status.out" >&2; return 1; }
	go build -o "$out/compare" ./bench/compare
	settle "$out/bare" "$out/slim"
	echo
	local scope
	scope=$(dirname "$(find "$state" -name state.json)")
	echo "== (b) slim tasks status, $jobs jobs (files: $(cd "$scope" && du -k state.json archive-*.json 2>/dev/null | awk '{printf "%s%s %s KB", (NR > 1 ? ", " : ""), $2, $1}')), against a bare exec"
	SLIM_STATE_DIR="$state" "$out/compare" -n "${STATUS_RUNS:-31}" bare="$out/bare" ";;" \
		version="$out/slim" version ";;" status="$out/slim" tasks status "@$out/status.json" ";;" \
		status-served="serve:$out/slim" tasks status "@$out/status.json"
	exec 9>&-
	wait "$fake" 2>/dev/null || true
}

tmp=${STORE_TMPDIR:-${TMPDIR:-/tmp}}
fs=$(df -T "$tmp" | awk 'NR == 2 { print $2 " (" $1 ")" }')
echo "== $(uname -sm), $(nproc) cores, $(go version | cut -d' ' -f3), load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
echo "== $tmp is on $fs"
if [[ ${ONLY:-} != status ]]; then
	measure "$tmp" "$fs" "${bins[@]}"
	if [[ -d /dev/shm && -w /dev/shm && -z ${NO_TMPFS:-} ]]; then
		shm=$(mktemp -d /dev/shm/slim-bench.XXXXXX)
		trap 'rm -rf "$out" "$shm"' EXIT
		measure "$shm" "tmpfs (/dev/shm)" now
	fi
fi
if [[ ${ONLY:-} != store ]]; then
	status_vs_bare
fi
