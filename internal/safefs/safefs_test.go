package safefs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// openTree makes the tree of files (mkTree) and opens it, closed when the
// test ends.
func openTree(t *testing.T, files map[string]string) (string, *Tree) {
	t.Helper()
	dir := mkTree(t, files)
	tree, err := Open(dir, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tree.Close() })
	return dir, tree
}

func mkTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func reasonOf(err error) Reason {
	var fe *Error
	if errors.As(err, &fe) {
		return fe.Reason
	}
	return 0
}

func stat(t *testing.T, p string) fs.FileInfo {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}

// Open refuses a top that is not the directory the check recorded (it was
// swapped for a link or another directory in between), and a top that is
// itself a denied directory.
func TestOpenComparesTheTopWithTheCheckedIdentity(t *testing.T) {
	base := mkTree(t, map[string]string{"repo/f": "x", "other/f": "y"})
	repo := filepath.Join(base, "repo")
	want := stat(t, repo)
	if _, err := Open(repo, want, Options{}); err != nil {
		t.Fatal(err)
	}
	os.Rename(repo, repo+".real")
	os.Symlink(filepath.Join(base, "other"), repo)
	if _, err := Open(repo, want, Options{}); reasonOf(err) != Changed {
		t.Fatalf("swapped top: got %v", err)
	}
	if _, err := Open(repo+".real", want, Options{Deny: []fs.FileInfo{want}}); reasonOf(err) != Denied {
		t.Fatalf("denied top: got %v", err)
	}
}

// Walk opens directories one at a time and refuses each kind of directory
// a write may not pass through.
func TestWalkRefusesLinksDeniedAndNestedDirectories(t *testing.T) {
	dir := mkTree(t, map[string]string{"a/b/f": "x", "git/config": "c", "nested/.git/HEAD": "h", "file": "f", "sess/nested2/.git/HEAD": "h"})
	os.Symlink("a", filepath.Join(dir, "link"))
	tree, err := Open(dir, nil, Options{Deny: []fs.FileInfo{stat(t, filepath.Join(dir, "git"))}, Session: "sess/nested2"})
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	for _, tc := range []struct {
		rel     string
		reason  Reason
		missing int
	}{
		{"a/b", 0, 0},
		{"a/b/new/deeper", 0, 2},
		{"link", Link, 0},
		{"link/b", Link, 0},
		{"git", Denied, 0},
		{"nested", Nested, 0},
		{"file/x", NotDir, 0},
		{"sess/nested2", 0, 0}, // the session's own repository is not nested
	} {
		d, missing, err := tree.Walk(tc.rel)
		if reasonOf(err) != tc.reason || (tc.reason == 0 && err != nil) {
			t.Errorf("%s: got %v, want %v", tc.rel, err, tc.reason)
			continue
		}
		if err == nil && len(missing) != tc.missing {
			t.Errorf("%s: %d missing (%s), want %d", tc.rel, len(missing), d.Rel(), tc.missing)
		}
	}
}

// Verify notices a parent swapped after it was opened, even when the swap
// puts back a directory of the same name.
func TestVerifyNoticesASwappedParent(t *testing.T) {
	dir, tree := openTree(t, map[string]string{"a/b/f": "x", "c/f": "y"})
	d, _, err := tree.Walk("a/b")
	if err != nil {
		t.Fatal(err)
	}
	if err := tree.Verify(d); err != nil {
		t.Fatal(err)
	}
	os.Rename(filepath.Join(dir, "a"), filepath.Join(dir, "a.old"))
	os.Mkdir(filepath.Join(dir, "a"), 0o755)
	os.Mkdir(filepath.Join(dir, "a", "b"), 0o755)
	if err := tree.Verify(d); reasonOf(err) != Changed {
		t.Fatalf("got %v", err)
	}
}

// ReadRegular refuses what is not a regular file and what is larger than
// the bound, from the size, without reading it.
func TestReadRegularIsBounded(t *testing.T) {
	dir := mkTree(t, map[string]string{"small": "12345", "big": "0123456789"})
	os.Symlink("small", filepath.Join(dir, "link"))
	tree, err := Open(dir, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	top := tree.Top()
	read := func(name string) ([]byte, error) {
		lst, err := top.Root().Lstat(name)
		if err != nil {
			t.Fatal(err)
		}
		data, _, err := top.ReadRegular(name, lst, 5)
		return data, err
	}
	if data, err := read("small"); err != nil || string(data) != "12345" {
		t.Fatalf("small: %q %v", data, err)
	}
	if _, err := read("big"); reasonOf(err) != TooLarge {
		t.Fatalf("big: %v", err)
	}
	if _, err := read("link"); reasonOf(err) != NotRegular {
		t.Fatalf("link: %v", err)
	}
}
