//go:build unix

package astgrep

import (
	"os/exec"
	"syscall"
)

// setGroup starts the command as the leader of a new process group, so
// that it and everything it starts can be killed together.
func setGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setParentDeath(cmd.SysProcAttr)
}

// killGroup kills the command's whole process group.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil {
		cmd.Process.Kill()
	}
}
