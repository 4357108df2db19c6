//go:build unix

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/slimgate/slim/internal/testbin"
)

// SIGINT or SIGTERM while `slim rescue --apply` writes a large patch rolls
// every file back: the files are all old afterwards, never a mix, and slim
// says so. The signal is sent once the first file has changed on disk, so
// it arrives during the writes.
func TestRescueApplyInterruptedRollsBack(t *testing.T) {
	bin := testbin.Shared(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			const n = 3000
			var patch bytes.Buffer
			patch.WriteString("*** Begin Patch\n")
			for i := 0; i < n; i++ {
				name := fmt.Sprintf("f%04d.txt", i)
				if err := os.WriteFile(filepath.Join(dir, name), []byte("old\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(&patch, "*** Update File: %s\n@@\n-old\n+new\n", name)
			}
			patch.WriteString("*** End Patch\n")
			cmd := exec.Command(bin, "rescue", "--root", dir, "--apply", "-")
			cmd.Stdin = &patch
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			first := filepath.Join(dir, "f0000.txt")
			deadline := time.Now().Add(60 * time.Second)
			for time.Now().Before(deadline) {
				if b, _ := os.ReadFile(first); string(b) == "new\n" {
					break
				}
				time.Sleep(time.Millisecond)
			}
			cmd.Process.Signal(sig)
			err := cmd.Wait()
			old, changed := 0, 0
			for i := 0; i < n; i++ {
				b, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("f%04d.txt", i)))
				if string(b) == "old\n" {
					old++
				} else {
					changed++
				}
			}
			if err == nil {
				// The whole patch finished before the signal: all new.
				if changed != n {
					t.Fatalf("exit 0 with %d of %d files changed", changed, n)
				}
				t.Skip("the apply finished before the signal arrived")
			}
			if code := cmd.ProcessState.ExitCode(); code != 1 {
				t.Errorf("exit code %d, want 1; stderr: %s", code, stderr.String())
			}
			if !bytes.Contains(stderr.Bytes(), []byte("interrupted before")) || !bytes.Contains(stderr.Bytes(), []byte("every file was restored")) {
				t.Errorf("stderr: %s", stderr.String())
			}
			if changed != 0 {
				t.Errorf("%d of %d files left changed after the interrupt", changed, n)
			}
			ents, _ := os.ReadDir(dir)
			if len(ents) != n {
				t.Errorf("%d entries in the directory, want %d (siblings left behind)", len(ents), n)
			}
		})
	}
}
