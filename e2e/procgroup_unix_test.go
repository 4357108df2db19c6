//go:build unix

package e2e

import (
	"os/exec"
	"syscall"
)

// inOwnProcessGroup starts cmd as the leader of a new process group and makes
// a context cancellation kill the whole group, so nothing the host started
// outlives a timeout.
func inOwnProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd) }
}

// killGroup kills cmd's process group (after Start).
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}

// groupAlive reports whether any process of process group pgid is left.
func groupAlive(pgid int) bool {
	return syscall.Kill(-pgid, 0) == nil
}
