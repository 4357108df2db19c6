#!/usr/bin/env bash
# Hook start-up benchmark. Builds slim as it ships (CGO_ENABLED=0) and the
# bare reference binary (prints one line), then runs them interleaved RUNS
# times each (default 41) and prints medians and ratios:
#   (a) `slim hook before` for a tool no guard touches (the exempt `task`;
#       with slim's phase table the plugin no longer runs it at all), and
#       for a tracked tool, `read`, whose before reads the loop guard's
#       record of a session that already holds 1,000 completed calls,
#       against one bare run; goal <= 1.5x;
#   (b) a before+after pair for `read` in that session, against one bare
#       run and against a pair of bare runs; goal <= 2x. The state
#       directory is on the disk of the temporary directory; when /dev/shm
#       exists the pair is also measured with the state on tmpfs, which
#       shows how much of (b) is the file system.
# With BASE=<commit>, slim of that commit is built too and measured in the
# same rounds (with state of its own), and the ratios now / BASE printed.
# Wall time of whole processes, measured by a small Go driver so no shell
# start-up is counted. Then, when node is there, the plugin itself: the hooks
# of a session of 60 mixed tool calls through the resident slim (slim hook
# serve), with a process per call (SLIM_SERVE=0), and with the phase table
# ignored too (every call runs both phases), also in front of BASE when it
# is given (bench/hooksession/main.mjs).
source "$(dirname "$0")/lib.sh"

base_bin=""
if [[ -n ${BASE:-} ]]; then
	mkdir -p "$out/base"
	git archive "$BASE" | tar -x -C "$out/base"
	(cd "$out/base" && go build -trimpath -o "$out/slim-base" ./cmd/slim)
	settle "$out/slim-base"
	base_bin="$out/slim-base"
fi
go build -o "$out/drive" ./bench/hookpair
export SLIM_STATE_DIR="$out/state"
shm=""
if [[ -d /dev/shm && -w /dev/shm ]]; then
	shm=$(mktemp -d /dev/shm/slim-bench.XXXXXX)
	trap 'rm -rf "$out" "$shm" "$shm-base"' EXIT
fi
h=$(printf '%s' bench | sha256sum | cut -c1-32)
"$out/drive" "$out/bare" "$out/slim" "${RUNS:-41}" "$SLIM_STATE_DIR/loop/v1/${h:0:2}/$h.json" "$shm" "$base_bin"

# Through the plugin: a session of 60 mixed tool calls, resident slim, a
# process per call, and without the phase table (SESSIONS sessions each,
# default 9; needs node).
if command -v node >/dev/null; then
	echo
	node bench/hooksession/main.mjs hooks/opencode/slim.js "$out/slim" "${SESSIONS:-9}" "$base_bin"
fi
