// Package extprog finds and runs the external programs slim drives
// (ripgrep, ast-grep, git, node, opencode) the same careful way every time:
// looked up in a PATH list the caller passes (the package reads no
// environment variable), started with an argument vector and never a shell,
// stdin on the null device, stderr kept within a bound, and the whole
// process group killed when the context ends.
package extprog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// ErrNotFound is returned (wrapped) by Look when no directory of the PATH
// list holds an executable of that name.
var ErrNotFound = errors.New("not found")

// Look finds the executable name in the directories of pathList (a PATH
// value, entries separated by os.PathListSeparator). Empty entries and
// relative entries are skipped: a program is never taken from the working
// directory by accident. On Windows, name is tried with ".exe" as well.
func Look(name, pathList string) (string, error) {
	names := []string{name}
	if runtime.GOOS == "windows" && !strings.HasSuffix(strings.ToLower(name), ".exe") {
		names = []string{name + ".exe", name}
	}
	for _, dir := range filepath.SplitList(pathList) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		for _, n := range names {
			p := filepath.Join(dir, n)
			if Executable(p) == nil {
				return p, nil
			}
		}
	}
	return "", fmt.Errorf("%s: %w on PATH", name, ErrNotFound)
}

// Executable reports why path cannot be run (nil when it can): it must
// exist, be a regular file once links are followed, and (outside Windows)
// carry an execute bit.
func Executable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", path)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%s is not executable: %w", path, fs.ErrPermission)
	}
	return nil
}

// Command returns the command for path with args, to run in dir. Its
// stdin is the null device; when ctx ends, the whole process group is
// killed (on Unix the child leads a group of its own, so helpers it forks
// die with it), and Wait gives up on inherited output pipes after a second.
func Command(ctx context.Context, path string, args []string, dir string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir = dir
	setGroup(cmd)
	cmd.Cancel = func() error { return KillGroup(cmd) }
	cmd.WaitDelay = time.Second
	return cmd
}

// KillGroup kills the process group of a started command from Command
// (on Unix: the child and everything it forked; elsewhere the child).
func KillGroup(cmd *exec.Cmd) error { return killGroup(cmd) }

// Bounded is an io.Writer that keeps the first Max bytes written to it and
// counts (but drops) the rest, so a chatty child cannot fill memory.
type Bounded struct {
	Max     int
	buf     bytes.Buffer
	dropped int64
}

// Write keeps what fits under Max; it never fails.
func (b *Bounded) Write(p []byte) (int, error) {
	room := b.Max - b.buf.Len()
	if room > len(p) {
		room = len(p)
	}
	if room > 0 {
		b.buf.Write(p[:room])
	}
	b.dropped += int64(len(p) - max(room, 0))
	return len(p), nil
}

// String is what was kept, with a note when bytes were dropped.
func (b *Bounded) String() string {
	if b.dropped > 0 {
		return fmt.Sprintf("%s... (%d more bytes)", b.buf.String(), b.dropped)
	}
	return b.buf.String()
}

// Version runs `path args...` (typically --version) with a timeout and
// returns the first non-empty line of its stdout, or of its stderr when
// stdout is empty. At most 64 KiB of each stream is read. extraEnv
// ("NAME=value" entries) is added to the environment the program inherits.
func Version(ctx context.Context, path string, args []string, timeout time.Duration, extraEnv ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := Command(ctx, path, args, "")
	if len(extraEnv) > 0 {
		cmd.Env = append(cmd.Environ(), extraEnv...)
	}
	stdout := &Bounded{Max: 64 << 10}
	stderr := &Bounded{Max: 64 << 10}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		return "", fmt.Errorf("%s %s: no answer within %s", path, strings.Join(args, " "), timeout)
	}
	line := firstLine(stdout.buf.String())
	if line == "" {
		line = firstLine(stderr.buf.String())
	}
	if err != nil {
		if line != "" {
			return "", fmt.Errorf("%s %s: %v: %s", path, strings.Join(args, " "), err, line)
		}
		return "", fmt.Errorf("%s %s: %w", path, strings.Join(args, " "), err)
	}
	return line, nil
}

func firstLine(s string) string {
	for line := range strings.Lines(s) {
		if t := strings.TrimSpace(line); t != "" {
			return t
		}
	}
	return ""
}
