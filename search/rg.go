package search

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/slimgate/slim/internal/extprog"
)

// DefaultTimeout is how long a search may run unless told otherwise; then
// ripgrep's process group is killed and what was found so far is
// reported, marked as timed out.
const DefaultTimeout = 300 * time.Second

// stderrLimit is how much of ripgrep's stderr is kept for messages.
const stderrLimit = 8 << 10

// GrepOptions describe a content search.
type GrepOptions struct {
	Pattern string // a regular expression (ripgrep's dialect, or Go's in the fallback)
	Target  Target // from ResolveTarget
	// Include, when set, is a glob a file must match to be searched
	// ("*.go", "*.{ts,tsx}", "src/**/*.py"). Without a slash it matches the
	// file's name at any depth.
	Include string
	// Limit is how many matches are shown (0 means DefaultLimit); all
	// are counted.
	Limit int
	// Timeout bounds the run (0 means DefaultTimeout).
	Timeout time.Duration
	// NoHidden skips hidden files and directories. By default they are
	// searched, as OpenCode's grep does (the .git directory never is).
	NoHidden bool
	// Ripgrep is the binary to run; nil runs the built-in fallback,
	// whose output says so and gives FallbackReason.
	Ripgrep        *Ripgrep
	FallbackReason string
}

// GlobOptions describe a file-name search.
type GlobOptions struct {
	// Pattern is the glob file paths (relative to the target directory)
	// must match; without a slash it matches a file's name at any depth.
	Pattern        string
	Target         Target
	Limit          int
	Timeout        time.Duration
	NoHidden       bool
	Ripgrep        *Ripgrep
	FallbackReason string
}

func (o *GrepOptions) defaults() error {
	if o.Pattern == "" {
		return newErr(Usage, CodeUsage, "grep: the pattern is empty; give a regular expression to search for", nil)
	}
	if o.Limit < 0 {
		return newErr(Usage, CodeUsage, fmt.Sprintf("grep: the limit must not be negative, got %d", o.Limit), nil)
	}
	if o.Limit == 0 {
		o.Limit = DefaultLimit
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Target.Dir == "" {
		return newErr(Usage, CodeUsage, "grep: no search directory; resolve the path with ResolveTarget first", nil)
	}
	return nil
}

func (o *GlobOptions) defaults() error {
	if o.Pattern == "" {
		return newErr(Usage, CodeUsage, "glob: the pattern is empty; give a glob such as **/*.go", nil)
	}
	if o.Limit < 0 {
		return newErr(Usage, CodeUsage, fmt.Sprintf("glob: the limit must not be negative, got %d", o.Limit), nil)
	}
	if o.Limit == 0 {
		o.Limit = DefaultLimit
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Target.Dir == "" || o.Target.File != "" {
		return newErr(Usage, CodeUsage, "glob: the search path must be a directory resolved with ResolveTarget", nil)
	}
	return nil
}

// Grep searches file contents: with ripgrep when o.Ripgrep is set, else
// with the built-in fallback.
func Grep(ctx context.Context, o GrepOptions) (*GrepResult, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	if o.Ripgrep == nil {
		return fallbackGrep(ctx, o)
	}
	return rgGrep(ctx, o)
}

// Glob lists files whose path matches a glob: with ripgrep's --files when
// o.Ripgrep is set, else with the built-in fallback.
func Glob(ctx context.Context, o GlobOptions) (*GlobResult, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	if o.Ripgrep == nil {
		return fallbackGlob(ctx, o)
	}
	return rgGlob(ctx, o)
}

// grepArgs is ripgrep's command line for a content search: no config file
// (RIPGREP_CONFIG_PATH is ignored), JSON output, hidden files searched,
// no messages about unreadable files (the exit status still says so), the
// include glob, and never the .git directory.
func grepArgs(o GrepOptions) []string {
	args := []string{"--no-config", "--json", "--no-messages"}
	if !o.NoHidden {
		args = append(args, "--hidden")
	}
	if o.Include != "" {
		args = append(args, "--glob="+o.Include)
	}
	args = append(args, "--glob=!**/.git/**", "--", o.Pattern)
	if o.Target.File != "" {
		return append(args, o.Target.File)
	}
	return append(args, ".")
}

// globArgs is ripgrep's command line for a file listing.
func globArgs(o GlobOptions) []string {
	args := []string{"--no-config", "--files"}
	if !o.NoHidden {
		args = append(args, "--hidden")
	}
	return append(args, "--glob="+o.Pattern, "--glob=!**/.git/**", ".")
}

// rgRun is one ripgrep process with its output streaming in.
type rgRun struct {
	cmd    *exec.Cmd
	stdout io.ReadCloser
	stderr *extprog.Bounded
	ctx    context.Context
	cancel context.CancelFunc
}

func startRg(ctx context.Context, rg *Ripgrep, args []string, dir string, timeout time.Duration) (*rgRun, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	cmd := extprog.Command(ctx, rg.Path, args, dir)
	stderr := &extprog.Bounded{Max: stderrLimit}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		return nil, newErr(Internal, CodeRgFailed, fmt.Sprintf("ripgrep could not be started: %v", err), err)
	}
	widenPipe(stdout)
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, newErr(Internal, CodeRgFailed, fmt.Sprintf("ripgrep (%s) could not be started: %v", rg.Path, err), err)
	}
	return &rgRun{cmd: cmd, stdout: stdout, stderr: stderr, ctx: ctx, cancel: cancel}, nil
}

// wait ends the run and interprets ripgrep's exit: 0 found something, 1
// found nothing, 2 an error (a bad pattern or glob when nothing was
// searched, else some files could not be read).
func (r *rgRun) wait(tool string, info *RunInfo, timeout time.Duration, found bool) error {
	io.Copy(io.Discard, r.stdout)
	err := r.cmd.Wait()
	timedOut := errors.Is(r.ctx.Err(), context.DeadlineExceeded)
	canceled := r.ctx.Err() != nil && !timedOut
	r.cancel()
	if timedOut {
		info.TimedOut, info.Timeout = true, timeout
		return nil
	}
	if canceled {
		return newErr(Internal, CodeRgFailed, fmt.Sprintf("%s: the search was interrupted", tool), r.ctx.Err())
	}
	if err == nil {
		return nil
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return newErr(Internal, CodeRgFailed, fmt.Sprintf("%s: ripgrep failed: %v", tool, err), err)
	}
	msg := strings.TrimSpace(r.stderr.String())
	// The cause keeps the exit status as text only: an *exec.ExitError in
	// the chain would pass ripgrep's exit code off as slim's.
	err = errors.New(exit.String())
	switch code := exit.ExitCode(); {
	case code == 1:
		return nil
	case code == 2 && (strings.Contains(msg, "regex parse error") || strings.Contains(msg, "error parsing regex")):
		return newErr(Validation, CodeBadPattern, fmt.Sprintf("%s: the pattern is not a valid regular expression: %s", tool, msg), err)
	case code == 2 && strings.Contains(msg, "error parsing glob"):
		return newErr(Validation, CodeBadGlob, fmt.Sprintf("%s: the glob is not valid: %s", tool, msg), err)
	case code == 2 && (found || msg == ""):
		info.Partial = true
		return nil
	default:
		if msg == "" {
			msg = err.Error()
		}
		return newErr(Internal, CodeRgFailed, fmt.Sprintf("%s: ripgrep failed (exit %d): %s", tool, code, msg), err)
	}
}

func rgGrep(ctx context.Context, o GrepOptions) (*GrepResult, error) {
	run, err := startRg(ctx, o.Ripgrep, grepArgs(o), o.Target.Dir, o.Timeout)
	if err != nil {
		return nil, err
	}
	ds := openDirStat(o.Target.Dir)
	defer ds.close()
	c := newGrepCollector(o.Limit, ds.modTime)
	readErr := collectGrep(run.stdout, o.Target.Dir, c)
	res := &GrepResult{RunInfo: RunInfo{Engine: EngineRipgrep}}
	if err := run.wait("grep", &res.RunInfo, o.Timeout, c.total > 0); err != nil {
		return nil, err
	}
	if readErr != nil && !res.TimedOut {
		return nil, newErr(Internal, CodeRgFailed, fmt.Sprintf("grep: ripgrep's output could not be read: %v", readErr), readErr)
	}
	res.Matches, res.Total = c.result()
	res.Truncated = res.Total > len(res.Matches)
	return res, nil
}

// collectGrep reads ripgrep's JSON stream into c. A match whose file
// cannot be among those shown is only counted: its text is never decoded.
func collectGrep(r io.Reader, dir string, c *grepCollector) error {
	rr := newRecordReader(r)
	var (
		current    string // the path of the file being reported, as rg spelled it
		currentAbs string
		prefix     []byte // how a match record of the current file starts
	)
	for {
		rec, err := rr.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		switch recordType(rec.head) {
		case "begin":
			ev, err := parseRecord(rec)
			if err != nil {
				return fmt.Errorf("%w: %.200q", err, rec.head)
			}
			current = ev.Path
			currentAbs = rgAbs(dir, current)
			prefix = matchPrefix(rec.head)
		case "match":
			if prefix != nil && !rec.cut && c.bound != nil && bytes.HasPrefix(rec.head, prefix) {
				want, sure := c.wantsFile(currentAbs)
				if !sure {
					want = c.wants(currentAbs, lineNumberHint(rec.head))
				}
				if !want {
					c.count()
					continue
				}
			}
			ev, err := parseRecord(rec)
			if err != nil {
				return fmt.Errorf("%w: %.200q", err, rec.head)
			}
			path := currentAbs
			if ev.Path != current {
				path = rgAbs(dir, ev.Path)
			}
			c.add(Match{Path: path, Line: ev.Line, Text: ev.Text})
		}
	}
}

// matchPrefix is how a match record for the file a begin record opens
// starts: the same path object after a different type.
func matchPrefix(begin []byte) []byte {
	const b, m = `{"type":"begin","data":{"path":`, `{"type":"match","data":{"path":`
	if !bytes.HasPrefix(begin, []byte(b)) {
		return nil
	}
	rest := begin[len(b):]
	// The path object is the whole rest but for the closing "}}".
	if len(rest) < 2 {
		return nil
	}
	return append([]byte(m), rest[:len(rest)-2]...)
}

// lineNumberHint finds a record's line number without decoding it; 0 when
// there is none (which sorts before every kept match, so the record is
// decoded after all).
func lineNumberHint(b []byte) int {
	n, _ := numberAfter(b, lineNumberKey)
	return n
}

// rgAbs makes a path ripgrep printed (relative to dir, maybe "./"-prefixed)
// absolute.
func rgAbs(dir, p string) string {
	p = strings.TrimPrefix(p, "./")
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(dir, filepath.FromSlash(p))
}

func rgGlob(ctx context.Context, o GlobOptions) (*GlobResult, error) {
	run, err := startRg(ctx, o.Ripgrep, globArgs(o), o.Target.Dir, o.Timeout)
	if err != nil {
		return nil, err
	}
	files, total, readErr := collectGlob(run.stdout, o.Target.Dir, o.Limit)
	res := &GlobResult{RunInfo: RunInfo{Engine: EngineRipgrep}, Dir: o.Target.Dir, Pattern: o.Pattern}
	if err := run.wait("glob", &res.RunInfo, o.Timeout, total > 0); err != nil {
		return nil, err
	}
	if readErr != nil && !res.TimedOut {
		return nil, newErr(Internal, CodeRgFailed, fmt.Sprintf("glob: ripgrep's output could not be read: %v", readErr), readErr)
	}
	res.Files, res.Total = files, total
	res.Truncated = res.Total > len(res.Files)
	return res, nil
}

// collectGlob reads ripgrep's file list (one path a line, relative to dir)
// and returns the newest limit files, absolute, and how many were listed.
func collectGlob(r io.Reader, dir string, limit int) ([]string, int, error) {
	ds := openDirStat(dir)
	defer ds.close()
	c := newGlobCollector(limit, ds.modTime)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if line := strings.TrimRight(sc.Text(), "\r"); line != "" {
			c.add(rgAbs(dir, line))
		}
	}
	files, total := c.result()
	return files, total, sc.Err()
}
