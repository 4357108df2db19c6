package astgrep

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"github.com/slimgate/slim/internal/extprog"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// Limits bound one ast-grep run.
type Limits struct {
	// Timeout stops ast-grep (its whole process group) and marks the result
	// as cut short by time.
	Timeout time.Duration
	// MaxOutput caps ast-grep's stdout in bytes; the JSON array is cut back
	// to its last complete match.
	MaxOutput int
	// MaxMatches is how many matches a result lists; the total found is
	// kept beside them.
	MaxMatches int
}

// DefaultLimits are 300 s, 1 MiB of output and 500 matches.
var DefaultLimits = Limits{Timeout: 300 * time.Second, MaxOutput: 1 << 20, MaxMatches: 500}

// maxStderr is how much of ast-grep's stderr is kept for messages.
const maxStderr = 64 << 10

func (l Limits) withDefaults() Limits {
	if l.Timeout <= 0 {
		l.Timeout = DefaultLimits.Timeout
	}
	if l.MaxOutput <= 0 {
		l.MaxOutput = DefaultLimits.MaxOutput
	}
	if l.MaxMatches <= 0 {
		l.MaxMatches = DefaultLimits.MaxMatches
	}
	return l
}

// runResult is what one ast-grep process left.
type runResult struct {
	stdout    []byte
	stderr    string
	exitCode  int
	timedOut  bool // killed by the time limit
	outputCut bool // stdout passed the cap; the process was stopped
	canceled  bool // the caller's context ended first
	startErr  error
}

// runTool runs bin with args in dir: no shell, stdin closed (the null
// device), stdout capped at lim.MaxOutput, stderr at maxStderr, in a process
// group of its own that is killed when the time limit passes, the output
// cap is reached or ctx ends.
func runTool(ctx context.Context, bin, dir string, args []string, env []string, lim Limits) runResult {
	var res runResult
	// The limits below kill the group themselves, so the command's own
	// context never ends.
	cmd := extprog.Command(context.Background(), bin, args, dir)
	cmd.Env = env

	var (
		mu      sync.Mutex
		stopped bool
	)
	stop := func(flag *bool) {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			return
		}
		stopped = true
		*flag = true
		extprog.KillGroup(cmd)
	}
	out := &capWriter{limit: lim.MaxOutput, full: func() { stop(&res.outputCut) }}
	errBuf := &extprog.Bounded{Max: maxStderr}
	cmd.Stdout = out
	cmd.Stderr = errBuf
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		res.startErr = err
		return res
	}
	timer := time.AfterFunc(lim.Timeout, func() { stop(&res.timedOut) })
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			stop(&res.canceled)
		case <-done:
		}
	}()
	err := cmd.Wait()
	close(done)
	timer.Stop()
	mu.Lock()
	// Anything ast-grep left behind in its group goes too.
	if !stopped {
		stopped = true
		extprog.KillGroup(cmd)
	}
	mu.Unlock()
	res.stdout = out.buf.Bytes()
	res.stderr = strings.TrimSpace(errBuf.String())
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.exitCode = ee.ExitCode()
	case errors.Is(err, exec.ErrWaitDelay):
	default:
		res.startErr = err
	}
	return res
}

// capWriter keeps the first limit bytes and calls full once when more
// arrive.
type capWriter struct {
	buf    bytes.Buffer
	limit  int
	isFull bool
	full   func()
}

func (w *capWriter) Write(p []byte) (int, error) {
	if w.isFull {
		return len(p), nil
	}
	if room := w.limit - w.buf.Len(); len(p) > room {
		w.buf.Write(p[:room])
		w.isFull = true
		w.full()
		return len(p), nil
	}
	return w.buf.Write(p)
}

// rawMatch is one element of ast-grep's --json output.
type rawMatch struct {
	Text  string `json:"text"`
	Range struct {
		ByteOffset offsets  `json:"byteOffset"`
		Start      position `json:"start"`
		End        position `json:"end"`
	} `json:"range"`
	File               string   `json:"file"`
	Lines              string   `json:"lines"`
	Replacement        *string  `json:"replacement"`
	ReplacementOffsets *offsets `json:"replacementOffsets"`
	Language           string   `json:"language"`
}

type offsets struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

type position struct {
	Line   int `json:"line"`
	Column int `json:"column"`
}

// parseMatches decodes ast-grep's JSON array. Output cut anywhere (by the
// cap or a kill) is repaired by keeping every complete element before the
// cut; complete says whether the array was whole.
func parseMatches(stdout []byte) (ms []rawMatch, complete bool) {
	if len(bytes.TrimSpace(stdout)) == 0 {
		return nil, true
	}
	dec := json.NewDecoder(bytes.NewReader(stdout))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('[') {
		return nil, false
	}
	for dec.More() {
		var m rawMatch
		if err := dec.Decode(&m); err != nil {
			return ms, false
		}
		ms = append(ms, m)
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim(']') {
		return ms, false
	}
	return ms, true
}
