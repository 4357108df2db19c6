package testbin

import (
	"os"
	"path/filepath"
	"testing"
)

type fakeM struct{ code int }

func (f fakeM) Run() int { return f.code }

// TestMRemovesSharedDir checks the clean-up without building anything: M
// passes the tests' exit code on and removes the directory Shared built
// into.
func TestMRemovesSharedDir(t *testing.T) {
	dir, err := os.MkdirTemp("", "slim-testbin-")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "slim")
	if err := os.WriteFile(bin, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	shared.dir, shared.path = dir, bin
	if code := M(fakeM{code: 3}).Run(); code != 3 {
		t.Errorf("M(m).Run() = %d, want m's 3", code)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		os.RemoveAll(dir)
		t.Errorf("the shared directory is still there after M ran: %v", err)
	}
	if shared.path != "" {
		t.Errorf("shared.path = %q after M ran, want empty", shared.path)
	}
}
