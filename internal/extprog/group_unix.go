//go:build unix

package extprog

import (
	"os/exec"
	"syscall"
)

// setGroup makes the child the leader of a new process group, and on
// Linux asks the kernel to kill it should slim die first (setDeathSignal).
func setGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setDeathSignal(cmd.SysProcAttr)
}

// killGroup kills the child's whole process group.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if err == syscall.ESRCH {
		return nil
	}
	if err != nil {
		return cmd.Process.Kill()
	}
	return nil
}
