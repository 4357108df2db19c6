package astgrep

import "syscall"

// setParentDeath has the kernel kill ast-grep if slim itself dies first
// (killed by SIGKILL, which no handler sees): it runs in a group of its
// own, so a kill of slim's group would not reach it.
func setParentDeath(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
