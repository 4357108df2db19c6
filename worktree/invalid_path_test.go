package worktree

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Paths no file system here can hold are refused with one code, whether or
// not they exist and however they are spelt, instead of being "inside"
// (nothing to lstat) or "outside" (an lstat that failed).
func TestCheckRefusesPathsNoFileSystemHolds(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGuard(dir, "/", Options{})
	if err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	for name, path := range map[string]string{
		"component of 256 bytes":    strings.Repeat("x", 256),
		"long component below":      "sub/" + strings.Repeat("y", 300) + "/f",
		"path over PATH_MAX":        strings.Repeat("d/", maxPathLen()/2+1) + "f",
		"absolute over PATH_MAX":    dir + "/" + strings.Repeat("e/", maxPathLen()/2) + "f",
		"invalid UTF-8":             "caf\xe9",
		"invalid UTF-8 in a parent": "\xff\xfe/f.txt",
	} {
		t.Run(name, func(t *testing.T) {
			v := g.Check(path)
			if v.Inside || v.Code != CodeInvalidPath {
				t.Fatalf("got inside=%v code=%q reason=%q", v.Inside, v.Code, v.Reason)
			}
			var be *BlockedError
			if err := g.BlockError("apply_patch", v); !errors.As(err, &be) || be.Verdict.Code != CodeInvalidPath || !strings.HasPrefix(be.Message, "apply_patch validation failed: ") {
				t.Fatalf("BlockError: %v", err)
			}
		})
	}
	// A name of exactly 255 bytes is fine.
	if v := g.Check(strings.Repeat("z", 255)); !v.Inside {
		t.Fatalf("255-byte name refused: %s", v.Reason)
	}
}
