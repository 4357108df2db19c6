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

# settle FILE...: puts each binary in the page cache the way PAGECACHE says.
# How a binary's pages got into the page cache changes how fast it starts
# (on Linux 6.18 with ext4, by up to a quarter; docs/performance.md, "The
# page-cache state of the binary"):
#   disk (default)  dropped from the cache, so the first run reads it back
#                   from disk, as exec finds an installed binary after a
#                   reboot; the same from build to build
#   copy            as cp writes it (large folios), as a release archive
#                   unpacks; the fastest
#   linked          as the linker wrote it, through a memory map; varies
#                   from build to build by 5% or more
settle() {
	local f
	for f in "$@"; do
		case ${PAGECACHE:-disk} in
		disk)
			sync "$f"
			dd if="$f" iflag=nocache count=0 status=none 2>/dev/null ||
				echo "bench: could not drop $f from the page cache; measuring it as linked" >&2
			;;
		copy) cp "$f" "$f.copy" && mv "$f.copy" "$f" ;;
		linked) ;;
		*)
			echo "bench: PAGECACHE is disk, copy or linked, not $PAGECACHE" >&2
			return 1
			;;
		esac
	done
}
settle "$out/bare" "$out/slim"

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
