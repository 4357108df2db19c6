// Command hookpair is bench/hook.sh's driver: it times `slim hook before`
// for an untouched tool and before+after pairs for read in a session with
// 1,000 earlier calls, interleaved with a bare binary, and prints medians
// and ratios.
//
// Usage: hookpair BARE SLIM RUNS STATEFILE SHMDIR
package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/slimgate/slim/bench/internal/timing"
)

func run(bin string, stdin []byte, args ...string) time.Duration {
	return runIn("", bin, stdin, args...)
}

// runIn runs one process (with SLIM_STATE_DIR=state when state is set) and
// checks that a hook call answered pass.
func runIn(state, bin string, stdin []byte, args ...string) time.Duration {
	var env []string
	if state != "" {
		env = append(env, "SLIM_STATE_DIR="+state)
	}
	d, out, err := timing.Run(append([]string{bin}, args...), stdin, env...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if len(args) > 1 && !bytes.Contains(out, []byte(`"action":"pass"`)) {
		fmt.Fprintf(os.Stderr, "unexpected answer: %s", out)
		os.Exit(1)
	}
	return d
}

func before(tool, id, path string) []byte {
	return []byte(fmt.Sprintf(`{"v":1,"phase":"before","host":{"flavor":"v1","platform":"linux","directory":"/tmp"},"tool":%q,"sessionID":"bench","callID":%q,"args":{"filePath":%q}}`, tool, id, path))
}

func after(tool, id, out string) []byte {
	return []byte(fmt.Sprintf(`{"v":1,"phase":"after","tool":%q,"sessionID":"bench","callID":%q,"output":%q}`, tool, id, out))
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
	mb, mb2, ma, mp := timing.Median(tBare), timing.Median(tBare2), timing.Median(tA), timing.Median(tB)
	r := func(x, y time.Duration) string { return fmt.Sprintf("%.2fx", float64(x)/float64(y)) }
	fmt.Printf("%-46s %5s %10s %8s\n", "command", "runs", "median", "ratio")
	fmt.Printf("%-46s %5d %10s %8s\n", "bare (one line)", n, mb.Round(time.Microsecond), "1.00x")
	fmt.Printf("%-46s %5d %10s %8s\n", "bare pair (two runs)", n, mb2.Round(time.Microsecond), r(mb2, mb))
	fmt.Printf("%-46s %5d %10s %8s   goal <= 1.5x\n", "(a) slim hook before, untouched tool", n, ma.Round(time.Microsecond), r(ma, mb))
	fmt.Printf("%-46s %5d %10s %8s   vs bare pair: %s (goal <= 2x)\n", "(b) slim hook before+after read, 1,000 calls", n, mp.Round(time.Microsecond), r(mp, mb), r(mp, mb2))
	if shm != "" {
		ms := timing.Median(tS)
		fmt.Printf("%-46s %5d %10s %8s   vs bare pair: %s\n", "(b) the same, state on tmpfs", n, ms.Round(time.Microsecond), r(ms, mb), r(ms, mb2))
	}
}
