//go:build unix && !linux

package astgrep

import "syscall"

func setParentDeath(*syscall.SysProcAttr) {}
