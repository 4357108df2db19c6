#!/usr/bin/env bash
# Hook start-up benchmark. Builds slim as it ships (CGO_ENABLED=0, tag
# urfave_cli_no_docs) and the bare reference binary (prints one line), then
# runs them interleaved RUNS times each (default 41) and prints medians and
# ratios:
#   (a) `slim hook before` for a tool no guard touches (the exempt `task`)
#       against one bare run; goal <= 1.5x;
#   (b) a before+after pair for `read` in a session that already holds 1,000
#       completed calls, against one bare run and against a pair of bare
#       runs; goal <= 2x. The state directory is on the disk of the temporary
#       directory; when /dev/shm exists the pair is also measured with the
#       state on tmpfs, which shows how much of (b) is the file system.
# Wall time of whole processes, measured by a small Go driver so no shell
# start-up is counted.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export CGO_ENABLED=0
go build -o "$out/bare" ./bench/bare
go build -tags urfave_cli_no_docs -trimpath -o "$out/slim" ./cmd/slim

mkdir -p "$out/driver"
cat > "$out/driver/main.go" <<'GO'
package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"time"
)

func run(bin string, stdin []byte, args ...string) time.Duration {
	return runIn("", bin, stdin, args...)
}

func runIn(state, bin string, stdin []byte, args ...string) time.Duration {
	cmd := exec.Command(bin, args...)
	if state != "" {
		cmd.Env = append(os.Environ(), "SLIM_STATE_DIR="+state)
	}
	cmd.Stdin = bytes.NewReader(stdin)
	var o bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &o
	t := time.Now()
	if err := cmd.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "%s %v: %v\n%s", bin, args, err, o.String())
		os.Exit(1)
	}
	if len(args) > 1 && !bytes.Contains(o.Bytes(), []byte(`"action":"pass"`)) {
		fmt.Fprintf(os.Stderr, "unexpected answer: %s", o.String())
		os.Exit(1)
	}
	return time.Since(t)
}

func before(tool, id, path string) []byte {
	return []byte(fmt.Sprintf(`{"v":1,"phase":"before","host":{"flavor":"v1","platform":"linux","directory":"/tmp"},"tool":%q,"sessionID":"bench","callID":%q,"args":{"filePath":%q}}`, tool, id, path))
}

func after(tool, id, out string) []byte {
	return []byte(fmt.Sprintf(`{"v":1,"phase":"after","tool":%q,"sessionID":"bench","callID":%q,"output":%q}`, tool, id, out))
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func main() {
	bare, slim := os.Args[1], os.Args[2]
	n, _ := strconv.Atoi(os.Args[3])
	shm := os.Args[5] // "" when there is no tmpfs
	// A session with 1,000 earlier completed calls.
	for i := 0; i < 1000; i++ {
		id := fmt.Sprint("warm", i)
		b, a := before("read", id, fmt.Sprint("src/f", i%50, ".go")), after("read", id, fmt.Sprint("content ", i))
		run(slim, b, "hook", "before")
		run(slim, a, "hook", "after")
		if shm != "" {
			runIn(shm, slim, b, "hook", "before")
			runIn(shm, slim, a, "hook", "after")
		}
	}
	if fi, err := os.Stat(os.Args[4]); err == nil {
		fmt.Printf("session state after 1,000 calls: %d bytes\n", fi.Size())
	}
	var tBare, tBare2, tA, tB, tS []time.Duration
	untouched := before("task", "t", "x")
	for i := 0; i < n+3; i++ {
		b := run(bare, nil)
		b2 := run(bare, nil) + run(bare, nil)
		a := run(slim, untouched, "hook", "before")
		id := fmt.Sprint("m", i)
		p := run(slim, before("read", id, fmt.Sprint("src/m", i, ".go")), "hook", "before") +
			run(slim, after("read", id, fmt.Sprint("out ", i)), "hook", "after")
		var ps time.Duration
		if shm != "" {
			ps = runIn(shm, slim, before("read", id, fmt.Sprint("src/m", i, ".go")), "hook", "before") +
				runIn(shm, slim, after("read", id, fmt.Sprint("out ", i)), "hook", "after")
		}
		if i < 3 {
			continue // warm-up
		}
		tBare, tBare2, tA, tB, tS = append(tBare, b), append(tBare2, b2), append(tA, a), append(tB, p), append(tS, ps)
	}
	mb, mb2, ma, mp := median(tBare), median(tBare2), median(tA), median(tB)
	r := func(x, y time.Duration) string { return fmt.Sprintf("%.2fx", float64(x)/float64(y)) }
	fmt.Printf("%-46s %5s %10s %8s\n", "command", "runs", "median", "ratio")
	fmt.Printf("%-46s %5d %10s %8s\n", "bare (one line)", n, mb.Round(time.Microsecond), "1.00x")
	fmt.Printf("%-46s %5d %10s %8s\n", "bare pair (two runs)", n, mb2.Round(time.Microsecond), r(mb2, mb))
	fmt.Printf("%-46s %5d %10s %8s   goal <= 1.5x\n", "(a) slim hook before, untouched tool", n, ma.Round(time.Microsecond), r(ma, mb))
	fmt.Printf("%-46s %5d %10s %8s   vs bare pair: %s (goal <= 2x)\n", "(b) slim hook before+after read, 1,000 calls", n, mp.Round(time.Microsecond), r(mp, mb), r(mp, mb2))
	if shm != "" {
		ms := median(tS)
		fmt.Printf("%-46s %5d %10s %8s   vs bare pair: %s\n", "(b) the same, state on tmpfs", n, ms.Round(time.Microsecond), r(ms, mb), r(ms, mb2))
	}
}
GO
(cd "$out/driver" && cat > go.mod <<'MOD'
module driver

go 1.22
MOD
go build -o "$out/drive" .)
export SLIM_STATE_DIR="$out/state"
shm=""
if [[ -d /dev/shm && -w /dev/shm ]]; then
	shm=$(mktemp -d /dev/shm/slim-bench.XXXXXX)
	trap 'rm -rf "$out" "$shm"' EXIT
fi
h=$(printf '%s' bench | sha256sum | cut -c1-32)
"$out/drive" "$out/bare" "$out/slim" "${RUNS:-41}" "$SLIM_STATE_DIR/loop/v1/${h:0:2}/$h.json" "$shm"
