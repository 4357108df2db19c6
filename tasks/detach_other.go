//go:build !unix

package tasks

import "os/exec"

// detach does nothing where there are no sessions.
func detach(cmd *exec.Cmd) {}
