package format

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/slimgate/slim/internal/extprog"
)

// EOL is a file's line ending style.
type EOL string

// The line ending styles.
const (
	EOLNone  EOL = "none" // no line break at all
	EOLLF    EOL = "lf"
	EOLCRLF  EOL = "crlf"
	EOLCR    EOL = "cr"
	EOLMixed EOL = "mixed"
)

// EOLOf classifies data's line endings.
func EOLOf(data []byte) EOL {
	crlf := bytes.Count(data, []byte("\r\n"))
	cr := bytes.Count(data, []byte("\r")) - crlf
	lf := bytes.Count(data, []byte("\n")) - crlf
	kinds := 0
	style := EOLNone
	for _, k := range []struct {
		n int
		e EOL
	}{{lf, EOLLF}, {crlf, EOLCRLF}, {cr, EOLCR}} {
		if k.n > 0 {
			kinds++
			style = k.e
		}
	}
	if kinds > 1 {
		return EOLMixed
	}
	return style
}

// Step is one formatter's run on a file.
type Step struct {
	Name string `json:"name"`
	// Command is the argument vector as run, $FILE replaced.
	Command []string `json:"command"`
	// ExitCode is the formatter's exit status (-1 when it did not exit:
	// not started, or killed).
	ExitCode int `json:"exitCode"`
	// Failed is set when the formatter did not start, exited non-zero or
	// was killed at its time bound (TimedOut); Error says how.
	Failed   bool   `json:"failed,omitempty"`
	TimedOut bool   `json:"timedOut,omitempty"`
	Error    string `json:"error,omitempty"`
	// Stdout and Stderr are the formatter's output, cut at the output limit.
	Stdout     string `json:"stdout,omitempty"`
	Stderr     string `json:"stderr,omitempty"`
	DurationMS int64  `json:"durationMs"`
	// Changed says whether the file's bytes differ after this formatter.
	Changed bool `json:"changed"`
}

// Result is what Run did to one file.
type Result struct {
	*Explanation
	Steps []Step `json:"steps"`
	// Changed says whether the file's bytes differ after all formatters;
	// BytesBefore and BytesAfter are its sizes.
	Changed     bool `json:"changed"`
	BytesBefore int  `json:"bytesBefore"`
	BytesAfter  int  `json:"bytesAfter"`
	// EOLBefore and EOLAfter are its line ending styles; EOLFlipped is set
	// when the formatters changed them (crlf to lf, say). Run reports this
	// and never undoes it.
	EOLBefore  EOL  `json:"eolBefore"`
	EOLAfter   EOL  `json:"eolAfter"`
	EOLFlipped bool `json:"eolFlipped"`
	// Failed is set when any step failed.
	Failed bool `json:"failed"`
	// Before and After are the file's bytes before the first formatter and
	// after the last, for callers that show or check the change.
	Before []byte `json:"-"`
	After  []byte `json:"-"`
}

// Run runs every formatter the host would run on file, in the host's
// order, each with $FILE replaced by the file's absolute path, as an
// argument vector (no shell), in the session directory (the host's working
// directory for formatters), with its environment added, stdin on the
// null device, its output kept within the output limit, and killed with
// its whole process group at the time bound. It reports what changed,
// line endings included, and undoes nothing. A formatter that fails is
// reported in its Step (and in Result.Failed), not as an error; the next
// one still runs.
//
// The file must lie inside the worktree (else a *worktree.BlockedError)
// and be an existing regular file (else a Verification error). When a
// rule could not be decided (Explanation.DetectionError), no formatter
// runs, as in the host. When ctx ends, the running formatter is killed and
// Run returns ctx's error.
func (h *Host) Run(ctx context.Context, file string) (*Result, error) {
	v, err := h.target(file)
	if err != nil {
		return nil, err
	}
	if err := h.statTarget(file, v.Abs); err != nil {
		return nil, err
	}
	x := h.explain(ctx, v.Abs)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	before, err := h.read(file, v.Abs)
	if err != nil {
		return nil, err
	}
	res := &Result{Explanation: x, Steps: []Step{}, Before: before, BytesBefore: len(before), EOLBefore: EOLOf(before)}
	cur := before
	if x.DetectionError == "" {
		for _, d := range x.Running() {
			st := h.runOne(ctx, d, h.formatterEnv(d.Name))
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			after, err := h.read(file, v.Abs)
			if err != nil {
				return nil, err
			}
			st.Changed = !bytes.Equal(cur, after)
			cur = after
			res.Steps = append(res.Steps, st)
			res.Failed = res.Failed || st.Failed
		}
	}
	res.After = cur
	res.BytesAfter = len(cur)
	res.Changed = !bytes.Equal(before, cur)
	res.EOLAfter = EOLOf(cur)
	res.EOLFlipped = res.EOLBefore != res.EOLAfter && res.EOLBefore != EOLNone && res.EOLAfter != EOLNone
	return res, nil
}

// read reads the file; a formatter that removed it is an error.
func (h *Host) read(file, abs string) ([]byte, error) {
	if err := h.statTarget(file, abs); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return nil, newErr(Internal, CodeInternal, fmt.Sprintf("format: read %s: %v", file, err), err)
	}
	return data, nil
}

// formatterEnv returns the environment entries of the named formatter,
// sorted.
func (h *Host) formatterEnv(name string) []string {
	var env []string
	for _, row := range h.table {
		if row.f.Name == name && row.removed == "" {
			for k, v := range row.f.Environment {
				env = append(env, k+"="+v)
			}
		}
	}
	sort.Strings(env)
	return env
}

// runOne runs one formatter under the time bound.
func (h *Host) runOne(ctx context.Context, d Decision, extraEnv []string) Step {
	st := Step{Name: d.Name, Command: d.Command, ExitCode: -1}
	start := time.Now()
	env := h.opts.Env
	if env == nil {
		env = os.Environ()
	}
	env = append(append([]string(nil), env...), extraEnv...)
	prog, err := h.program(d.Command[0], extraEnv)
	if err != nil {
		st.Failed, st.Error = true, err.Error()
		st.DurationMS = time.Since(start).Milliseconds()
		return st
	}
	rctx, cancel := context.WithTimeout(ctx, h.opts.Timeout)
	defer cancel()
	cmd := extprog.Command(rctx, prog, d.Command[1:], h.dir)
	cmd.Env = env
	stdout := &extprog.Bounded{Max: h.opts.OutputLimit}
	stderr := &extprog.Bounded{Max: h.opts.OutputLimit}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err = cmd.Run()
	st.DurationMS = time.Since(start).Milliseconds()
	st.Stdout, st.Stderr = stdout.String(), stderr.String()
	if cmd.ProcessState != nil && cmd.ProcessState.Exited() {
		st.ExitCode = cmd.ProcessState.ExitCode()
	}
	switch {
	case errors.Is(rctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil:
		st.Failed, st.TimedOut = true, true
		st.ExitCode = -1
		st.Error = fmt.Sprintf("killed after %s, its time bound", h.opts.Timeout)
	case err != nil:
		st.Failed = true
		st.Error = err.Error()
		if line := firstLine(st.Stderr); line != "" {
			st.Error += ": " + line
		}
	}
	return st
}

// program finds the program a command names: an absolute path as it is,
// a relative path with a separator in the session directory (the host's
// working directory), a bare name on PATH (the one the formatter's own
// environment sets, if it sets one).
func (h *Host) program(name string, extraEnv []string) (string, error) {
	switch {
	case filepath.IsAbs(name):
		return name, nil
	case strings.ContainsRune(name, '/') || strings.ContainsRune(name, filepath.Separator):
		p := filepath.Join(h.dir, name)
		if err := extprog.Executable(p); err != nil {
			return "", fmt.Errorf("%s cannot run: %v", p, err)
		}
		return p, nil
	}
	path := h.opts.Path
	for _, kv := range extraEnv {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	p, err := extprog.Look(name, path)
	if err != nil {
		return "", fmt.Errorf("%s is not on PATH", name)
	}
	return p, nil
}

func firstLine(s string) string {
	for line := range strings.Lines(s) {
		if t := strings.TrimSpace(line); t != "" {
			return t
		}
	}
	return ""
}
