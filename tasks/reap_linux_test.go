//go:build linux

package tasks_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// adoptOrphans makes this test process the subreaper of its descendants
// until the test ends. A settler whose tool call is killed is then
// reparented here instead of to init, so the test itself sees it exit
// and reaps it: a zombie it leaves would show. It reports whether the
// platform can (it always can on Linux).
//
// The tests of this package do not run in parallel, so only this test's
// processes are adopted meanwhile.
func adoptOrphans(t *testing.T) bool {
	t.Helper()
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		t.Fatalf("become the subreaper: %v", err)
	}
	t.Cleanup(func() { unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0) })
	return true
}

// readStat reads the process pid's parent and process group; ok is false
// when there is no such process.
func readStat(t *testing.T, pid int) (procStat, bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
		return procStat{}, false
	}
	if err != nil {
		t.Fatalf("read the process table: %v", err)
	}
	// The command name is in parentheses and may hold anything, so
	// the fields are counted from its last ")".
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	f := strings.Fields(s[i+1:])
	if i < 0 || len(f) < 3 {
		t.Fatalf("unreadable /proc/%d/stat: %q", pid, s)
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgrp, err2 := strconv.Atoi(f[2])
	if err1 != nil || err2 != nil {
		t.Fatalf("unreadable /proc/%d/stat: %q", pid, s)
	}
	return procStat{ppid: ppid, pgrp: pgrp}, true
}

// groupMembers lists the processes of process group pgid, zombies
// included.
func groupMembers(t *testing.T, pgid int) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := readStat(t, pid); ok && st.pgrp == pgid {
			out = append(out, pid)
		}
	}
	return out
}

// reapGroup reaps, by process group, every process of group pgid that
// was adopted by this test, waiting up to 5 s for them to exit, and
// returns their wait statuses by pid. It fails the test when a process
// of the group is still there afterwards, running or a zombie.
func reapGroup(t *testing.T, pgid int) map[int]syscall.WaitStatus {
	t.Helper()
	got := map[int]syscall.WaitStatus{}
	deadline := time.Now().Add(5 * time.Second)
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-pgid, &ws, syscall.WNOHANG, nil)
		switch {
		case pid > 0:
			got[pid] = ws
			continue
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.ECHILD):
			// None of the group is a child of this test any more.
			if left := groupMembers(t, pgid); len(left) > 0 {
				t.Fatalf("process group %d still has %v after it was reaped", pgid, left)
			}
			return got
		case err != nil:
			t.Fatalf("reap process group %d: %v", pgid, err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("process group %d did not exit: %v", pgid, groupMembers(t, pgid))
		}
		time.Sleep(10 * time.Millisecond)
	}
}
