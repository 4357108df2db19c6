package timing

import (
	"os"
	"testing"
	"time"
)

func TestCPUTicksCountThisProcessWorking(t *testing.T) {
	before := cpuTicks(os.Getpid())
	if before < 0 {
		t.Fatal("cannot read this process's CPU time")
	}
	for start := time.Now(); time.Since(start) < 150*time.Millisecond; {
	}
	if after := cpuTicks(os.Getpid()); after-before < 5 {
		t.Errorf("150 ms of spinning counted %d ticks", after-before)
	}
	if cpuTicks(-1) != -1 {
		t.Errorf("a process that does not exist has a CPU time")
	}
}
