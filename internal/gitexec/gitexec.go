// Package gitexec runs the git binary for the commands that may (the git
// hook checks and the hook installers; never the per-tool-call hook path)
// and turns its failures into errors that carry git's own message.
package gitexec

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
)

// Output runs `git args...` in dir with the process environment (so
// GIT_DIR, GIT_WORK_TREE and GIT_INDEX_FILE apply) and returns its stdout.
// A failure is reported with git's stderr when it printed one.
func Output(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return "", fmt.Errorf("git %s: %s", strings.Join(args, " "), msg)
		}
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return string(out), nil
}
