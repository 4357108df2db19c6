# Sourced by the bench scripts: moves to the repository root and builds,
# into a temporary directory $out removed on exit, slim as it ships
# (static, CGO_ENABLED=0) and the bare reference binary that prints one
# line.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export CGO_ENABLED=0
go build -o "$out/bare" ./bench/bare
go build -trimpath -o "$out/slim" ./cmd/slim

# peak_kib COMMAND...: prints "peak-RSS-KiB cpu-seconds" of one run (GNU
# time, else /proc VmHWM polling and no CPU time).
peak_kib() {
	if /usr/bin/time -v true >/dev/null 2>&1; then
		/usr/bin/time -v "$@" 2>"$out/time.txt" >/dev/null || { cat "$out/time.txt" >&2; return 1; }
		awk -F: '/Maximum resident set size/ { gsub(/ /, "", $2); rss = $2 }
			/User time|System time/ { cpu += $2 }
			END { print rss, cpu }' "$out/time.txt"
	else
		"$@" >/dev/null &
		local pid=$! hwm=0 v
		while v=$(awk '/VmHWM/ { print $2 }' "/proc/$pid/status" 2>/dev/null) && [ -n "$v" ]; do
			hwm=$v
		done
		wait "$pid"
		echo "$hwm -"
	fi
}
