#!/usr/bin/env bash
# Hook start-up benchmark. Builds slim as it ships (CGO_ENABLED=0) and the
# bare reference binary (prints one line), then runs them interleaved RUNS
# times each (default 41) and prints medians and ratios:
#   (a) `slim hook before` for a tool no guard touches (the exempt `task`)
#       against one bare run; goal <= 1.5x;
#   (b) a before+after pair for `read` in a session that already holds 1,000
#       completed calls, against one bare run and against a pair of bare
#       runs; goal <= 2x. The state directory is on the disk of the temporary
#       directory; when /dev/shm exists the pair is also measured with the
#       state on tmpfs, which shows how much of (b) is the file system.
# Wall time of whole processes, measured by a small Go driver so no shell
# start-up is counted.
source "$(dirname "$0")/lib.sh"

go build -o "$out/drive" ./bench/hookpair
export SLIM_STATE_DIR="$out/state"
shm=""
if [[ -d /dev/shm && -w /dev/shm ]]; then
	shm=$(mktemp -d /dev/shm/slim-bench.XXXXXX)
	trap 'rm -rf "$out" "$shm"' EXIT
fi
h=$(printf '%s' bench | sha256sum | cut -c1-32)
"$out/drive" "$out/bare" "$out/slim" "${RUNS:-41}" "$SLIM_STATE_DIR/loop/v1/${h:0:2}/$h.json" "$shm"
