//go:build !unix

package extprog

import "os/exec"

// setGroup does nothing where there are no Unix process groups.
func setGroup(cmd *exec.Cmd) {}

// killGroup kills the child itself.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return cmd.Process.Kill()
}
