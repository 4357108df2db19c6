package extprog

import "syscall"

// setDeathSignal has the kernel send SIGKILL to the child when the thread
// that started it ends. For slim that is when slim itself ends: it locks
// no goroutine to a thread, so the runtime keeps its threads as long as
// the process lives.
func setDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
