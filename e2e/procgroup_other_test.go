//go:build !unix

package e2e

import "os/exec"

// inOwnProcessGroup: without process groups, cancellation kills the host
// process itself (exec's default).
func inOwnProcessGroup(cmd *exec.Cmd) {}

// killGroup kills the host process.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return cmd.Process.Kill()
}

// groupAlive cannot be known without process groups; report none left.
func groupAlive(pgid int) bool { return false }
