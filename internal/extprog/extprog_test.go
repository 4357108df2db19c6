//go:build unix

package extprog

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func writeScript(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLookFindsTheFirstExecutableAndSkipsRelativeEntries(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(a, "tool"), []byte("not executable"), 0o644)
	want := writeScript(t, b, "tool", "exit 0\n")
	t.Chdir(b)
	got, err := Look("tool", strings.Join([]string{"", ".", a, b}, string(os.PathListSeparator)))
	if err != nil || got != want {
		t.Fatalf("Look = %q, %v; want %q", got, err, want)
	}
	if _, err := Look("tool", "."); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a relative PATH entry was used: %v", err)
	}
	if _, err := Look("no-such-tool", a); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Look(missing) = %v, want ErrNotFound", err)
	}
}

func TestExecutableRefusesDirectoriesAndFilesWithoutAnExecuteBit(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain")
	os.WriteFile(plain, nil, 0o644)
	for _, p := range []string{dir, plain, filepath.Join(dir, "missing")} {
		if Executable(p) == nil {
			t.Errorf("Executable(%s) = nil", p)
		}
	}
}

func TestBoundedKeepsTheFirstBytesAndCountsTheRest(t *testing.T) {
	b := &Bounded{Max: 4}
	b.Write([]byte("ab"))
	b.Write([]byte("cdef"))
	b.Write([]byte("gh"))
	if got := b.String(); got != "abcd... (4 more bytes)" {
		t.Fatalf("String = %q", got)
	}
}

func TestVersionReturnsTheFirstLine(t *testing.T) {
	p := writeScript(t, t.TempDir(), "v", "echo; echo 'tool 1.2.3'; echo second\n")
	got, err := Version(context.Background(), p, []string{"--version"}, 5*time.Second)
	if err != nil || got != "tool 1.2.3" {
		t.Fatalf("Version = %q, %v", got, err)
	}
}

// A program that does not answer in time is killed with every process it
// started: the grandchild's pid, written before the wait, is gone after.
func TestVersionKillsTheWholeProcessGroupOnTimeout(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	p := writeScript(t, dir, "slow", "sleep 30 &\necho $! > "+pidFile+"\nwait\n")
	start := time.Now()
	_, err := Version(context.Background(), p, nil, 300*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "no answer within") {
		t.Fatalf("Version = %v, want a timeout", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Version took %s", d)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("the grandchild %d survived the timeout", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
