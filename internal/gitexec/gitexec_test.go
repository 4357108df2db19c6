package gitexec

import (
	"os/exec"
	"strings"
	"testing"
)

func TestOutput(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	if _, err := Output(dir, "init", "-q"); err != nil {
		t.Fatal(err)
	}
	out, err := Output(dir, "rev-parse", "--is-inside-work-tree")
	if err != nil || strings.TrimSpace(out) != "true" {
		t.Fatalf("rev-parse = %q, %v", out, err)
	}
	_, err = Output(dir, "rev-parse", "--verify", "no-such-ref")
	if err == nil || !strings.Contains(err.Error(), "git rev-parse --verify no-such-ref") {
		t.Fatalf("want an error naming the command, got %v", err)
	}
}
