//go:build unix

package rescue

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// statOf returns the raw stat of p.
func statOf(t *testing.T, p string) (os.FileInfo, *syscall.Stat_t) {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi, fi.Sys().(*syscall.Stat_t)
}

// A rollback puts back the very file that was there: its inode, so its
// owner, its full mode (set-uid included) and its other hard links survive.
// A successful apply keeps owner and full mode too.
func TestRollbackRestoresInodeOwnerModeAndLinks(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a file another owner")
	}
	e := newEnv(t, map[string]string{"tool": "old\n", "b.txt": "b\n"})
	tool := filepath.Join(e.dir, "tool")
	if err := os.Chown(tool, 1234, 2345); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(tool, 0o755|os.ModeSetuid); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(tool, filepath.Join(e.dir, "tool.link")); err != nil {
		t.Fatal(err)
	}
	fi0, _ := statOf(t, tool)
	patch := wrap("*** Update File: tool\n@@\n-old\n+new\n*** Update File: b.txt\n@@\n-b\n+B\n")

	// Fail on the second file: b.txt changes under slim after tool is
	// written.
	_, err := Process([]byte(patch), Options{Directory: e.dir, NoWorktree: true, Apply: true,
		BeforeWrite: func(i int) {
			if i == 1 {
				os.WriteFile(filepath.Join(e.dir, "b.txt"), []byte("someone\n"), 0o644)
			}
		}})
	if err == nil || !strings.Contains(err.Error(), "File changed since it was read") {
		t.Fatalf("got %v", err)
	}
	fi1, st1 := statOf(t, tool)
	if !os.SameFile(fi0, fi1) {
		t.Errorf("the rollback put back another inode")
	}
	if st1.Uid != 1234 || st1.Gid != 2345 || fi1.Mode() != fi0.Mode() || st1.Nlink != 2 {
		t.Errorf("after rollback: uid %d gid %d mode %v links %d; want 1234 2345 %v 2", st1.Uid, st1.Gid, fi1.Mode(), st1.Nlink, fi0.Mode())
	}
	if got, _ := e.read("tool"); got != "old\n" {
		t.Errorf("tool = %q", got)
	}
	assertNoSiblings(t, e.dir)

	// A successful apply keeps owner and full mode.
	os.WriteFile(filepath.Join(e.dir, "b.txt"), []byte("b\n"), 0o644)
	if _, err := Process([]byte(patch), Options{Directory: e.dir, NoWorktree: true, Apply: true}); err != nil {
		t.Fatal(err)
	}
	fi2, st2 := statOf(t, tool)
	if st2.Uid != 1234 || st2.Gid != 2345 || fi2.Mode() != fi0.Mode() {
		t.Errorf("after apply: uid %d gid %d mode %v; want 1234 2345 %v", st2.Uid, st2.Gid, fi2.Mode(), fi0.Mode())
	}
	if got, _ := e.read("tool"); got != "new\n" {
		t.Errorf("tool = %q", got)
	}
	assertNoSiblings(t, e.dir)
}

// A deleted file comes back as the same inode when the patch fails later.
func TestRollbackRestoresDeletedInode(t *testing.T) {
	e := newEnv(t, map[string]string{"gone.txt": "g\n", "b.txt": "b\n"})
	fi0, _ := statOf(t, filepath.Join(e.dir, "gone.txt"))
	// Removals run last: fail the removal's own compare-and-swap by
	// changing the file that is deleted after it.
	_, err := Process([]byte(wrap("*** Delete File: gone.txt\n*** Delete File: b.txt\n")), Options{Directory: e.dir, NoWorktree: true, Apply: true,
		BeforeWrite: func(i int) {
			if i == 1 {
				os.WriteFile(filepath.Join(e.dir, "b.txt"), []byte("someone\n"), 0o644)
			}
		}})
	if err == nil {
		t.Fatal("applied")
	}
	fi1, _ := statOf(t, filepath.Join(e.dir, "gone.txt"))
	if !os.SameFile(fi0, fi1) {
		t.Errorf("gone.txt came back as another inode")
	}
	assertNoSiblings(t, e.dir)
}

func assertNoSiblings(t *testing.T, dir string) {
	t.Helper()
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && strings.Contains(fi.Name(), ".slim-") {
			t.Errorf("left behind %s", p)
		}
		return nil
	})
}
