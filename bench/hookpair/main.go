// Command hookpair is bench/hook.sh's driver: it times `slim hook before`
// for an untouched tool and for a tracked one (read, whose before reads the
// loop guard's record), and before+after pairs for read, in a session with
// 1,000 earlier calls, interleaved with a bare binary, and prints medians
// and ratios. Given a second slim (BASE), it measures that one in the same
// rounds, with state of its own, and prints the ratios of the two. It then
// times the same read before and pair through one resident `slim hook
// serve`, the way the plugin now sends them: one request line written, one
// answer line read, no process started.
//
// Usage: hookpair BARE SLIM RUNS STATEFILE SHMDIR [BASESLIM]
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/slimgate/slim/bench/internal/timing"
)

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

// after is the after request the plugin sends: the host hands it the
// call's arguments.
func after(tool, id, path, out string) []byte {
	return []byte(fmt.Sprintf(`{"v":1,"phase":"after","tool":%q,"sessionID":"bench","callID":%q,"args":{"filePath":%q},"output":%q}`, tool, id, path, out))
}

// subject is one slim binary with its state directories and its figures.
type subject struct {
	name, bin                         string
	disk, shm                         string // state directories; shm "" without tmpfs
	untouched, tracked, pair, pairShm []time.Duration
}

// warm fills the session with 1,000 completed calls.
func (s *subject) warm() {
	for i := 0; i < 1000; i++ {
		id, p := fmt.Sprint("warm", i), fmt.Sprint("src/f", i%50, ".go")
		for _, dir := range []string{s.disk, s.shm} {
			if dir == "" {
				continue
			}
			runIn(dir, s.bin, before("read", id, p), "hook", "before")
			runIn(dir, s.bin, after("read", id, p, fmt.Sprint("content ", i)), "hook", "after")
		}
	}
}

// round measures each figure once; keep is false for the warm-up rounds.
func (s *subject) round(i int, keep bool) {
	u := runIn(s.disk, s.bin, before("task", "t", "x"), "hook", "before")
	id, p := fmt.Sprint("m", i), fmt.Sprint("src/m", i, ".go")
	tr := runIn(s.disk, s.bin, before("read", id+"t", p), "hook", "before")
	pr := runIn(s.disk, s.bin, before("read", id, p), "hook", "before") +
		runIn(s.disk, s.bin, after("read", id, p, fmt.Sprint("out ", i)), "hook", "after")
	var ps time.Duration
	if s.shm != "" {
		ps = runIn(s.shm, s.bin, before("read", id, p), "hook", "before") +
			runIn(s.shm, s.bin, after("read", id, p, fmt.Sprint("out ", i)), "hook", "after")
	}
	if keep {
		s.untouched, s.tracked, s.pair, s.pairShm = append(s.untouched, u), append(s.tracked, tr), append(s.pair, pr), append(s.pairShm, ps)
	}
}

func main() {
	bare, slim := os.Args[1], os.Args[2]
	n, _ := strconv.Atoi(os.Args[3])
	stateFile, shm := os.Args[4], os.Args[5] // shm is "" when there is no tmpfs
	disk := os.Getenv("SLIM_STATE_DIR")
	subjects := []*subject{{name: "", bin: slim, disk: disk, shm: shm}}
	if len(os.Args) > 6 && os.Args[6] != "" {
		base := &subject{name: "BASE ", bin: os.Args[6], disk: disk + "-base"}
		if shm != "" {
			base.shm = shm + "-base"
		}
		subjects = append(subjects, base)
	}
	for _, s := range subjects {
		s.warm()
	}
	if fi, err := os.Stat(stateFile); err == nil {
		fmt.Printf("session state after 1,000 calls: %d bytes\n", fi.Size())
	}
	if len(subjects) > 1 {
		rel, _ := filepath.Rel(disk, stateFile)
		if fi, err := os.Stat(filepath.Join(disk+"-base", rel)); err == nil {
			fmt.Printf("session state after 1,000 calls at BASE: %d bytes\n", fi.Size())
		}
	}
	srv := startServe(slim, disk)
	var tBare, tBare2, sTracked, sPair []time.Duration
	for i := 0; i < n+3; i++ {
		b := runIn("", bare, nil)
		b2 := runIn("", bare, nil) + runIn("", bare, nil)
		for _, s := range subjects {
			s.round(i, i >= 3)
		}
		id, p := fmt.Sprint("s", i), fmt.Sprint("src/s", i, ".go")
		st := srv.call("before", before("read", id+"t", p))
		sp := srv.call("before", before("read", id, p)) + srv.call("after", after("read", id, p, fmt.Sprint("out ", i)))
		if i >= 3 {
			sTracked, sPair = append(sTracked, st), append(sPair, sp)
		}
		if i >= 3 { // the first three are warm-up
			tBare, tBare2 = append(tBare, b), append(tBare2, b2)
		}
	}
	mb, mb2 := timing.Median(tBare), timing.Median(tBare2)
	r := func(x, y time.Duration) string { return fmt.Sprintf("%.2fx", float64(x)/float64(y)) }
	row := func(name string, m time.Duration, note string) {
		fmt.Printf("%-52s %5d %10s %8s   %s\n", name, n, m.Round(time.Microsecond), r(m, mb), note)
	}
	fmt.Printf("%-52s %5s %10s %8s\n", "command", "runs", "median", "ratio")
	row("bare (one line)", mb, "")
	row("bare pair (two runs)", mb2, "")
	for _, s := range subjects {
		row("(a) "+s.name+"slim hook before, untouched tool", timing.Median(s.untouched), "goal <= 1.5x")
		row("(a) "+s.name+"slim hook before, read, 1,000 calls", timing.Median(s.tracked), "goal <= 1.5x")
		mp := timing.Median(s.pair)
		row("(b) "+s.name+"slim hook before+after read, 1,000 calls", mp, "vs bare pair: "+r(mp, mb2)+" (goal <= 2x)")
		if s.shm != "" {
			ms := timing.Median(s.pairShm)
			row("(b) "+s.name+"the same, state on tmpfs", ms, "vs bare pair: "+r(ms, mb2))
		}
	}
	st, sp := timing.Median(sTracked), timing.Median(sPair)
	row("(c) slim hook serve: before, read, 1,000 calls", st, "one request line and its answer, no process")
	row("(c) slim hook serve: before+after read", sp, "vs bare pair: "+r(sp, mb2))
	if len(subjects) > 1 {
		now, base := subjects[0], subjects[1]
		fmt.Printf("now / BASE: untouched before %s, read before %s, read pair %s\n",
			r(timing.Median(now.untouched), timing.Median(base.untouched)),
			r(timing.Median(now.tracked), timing.Median(base.tracked)),
			r(timing.Median(now.pair), timing.Median(base.pair)))
	}
}

// server is one resident `slim hook serve`.
type server struct {
	in  io.WriteCloser
	out *bufio.Reader
	seq int
}

func startServe(slim, state string) *server {
	cmd := exec.Command(slim, "hook", "serve")
	cmd.Env = append(os.Environ(), "SLIM_STATE_DIR="+state)
	in, err := cmd.StdinPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	return &server{in: in, out: bufio.NewReader(out)}
}

// call sends one request and waits for its answer, which must be a pass.
func (s *server) call(phase string, req []byte) time.Duration {
	s.seq++
	frame := fmt.Sprintf(`{"id":%d,"phase":%q,"request":%s}`+"\n", s.seq, phase, req)
	t0 := time.Now()
	if _, err := io.WriteString(s.in, frame); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	line, err := s.out.ReadBytes('\n')
	d := time.Since(t0)
	if err != nil || !bytes.Contains(line, []byte(fmt.Sprintf(`{"id":%d,"answer":`, s.seq))) || !bytes.Contains(line, []byte(`"action":"pass"`)) {
		fmt.Fprintf(os.Stderr, "unexpected resident answer: %s %v\n", line, err)
		os.Exit(1)
	}
	return d
}
