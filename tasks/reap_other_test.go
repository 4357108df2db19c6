//go:build !linux

package tasks_test

import (
	"syscall"
	"testing"
)

// adoptOrphans reports that this platform cannot make the test the
// subreaper of its descendants: the zombie checks are skipped.
func adoptOrphans(*testing.T) bool { return false }

func readStat(*testing.T, int) (procStat, bool) { return procStat{}, false }

func reapGroup(*testing.T, int) map[int]syscall.WaitStatus { return nil }
