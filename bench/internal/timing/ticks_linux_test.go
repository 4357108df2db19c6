package timing

import (
	"os"
	"syscall"
	"testing"
	"time"
)

func TestCPUTicksCountThisProcessWorking(t *testing.T) {
	before := cpuTicks(os.Getpid())
	if before < 0 {
		t.Fatal("cannot read this process's CPU time")
	}
	// Spin until the kernel says this process used 150 ms more CPU.
	used := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	for start := used(); used()-start < 150*time.Millisecond; {
	}
	if after := cpuTicks(os.Getpid()); after-before < 10 {
		t.Errorf("150 ms of CPU counted %d ticks", after-before)
	}
	if cpuTicks(-1) != -1 {
		t.Errorf("a process that does not exist has a CPU time")
	}
}
