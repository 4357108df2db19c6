package safefs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readFile(t *testing.T, tree *Tree, rel string) *File {
	t.Helper()
	d, _, err := tree.Walk(filepath.Dir(rel))
	if err != nil {
		t.Fatal(err)
	}
	lst, err := d.Root().Lstat(filepath.Base(rel))
	if err != nil {
		t.Fatal(err)
	}
	data, fi, err := d.ReadRegular(filepath.Base(rel), lst, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	return &File{Data: data, Info: fi}
}

func contents(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && p != dir {
			rel, _ := filepath.Rel(dir, p)
			if fi.Mode().IsRegular() {
				b, _ := os.ReadFile(p)
				out[rel] = string(b)
			} else {
				out[rel] = fi.Mode().String()
			}
		}
		return nil
	})
	return out
}

// Apply writes every change (creating directories) or, when one fails,
// none: the tree is left as it was, with no sibling files.
func TestApplyAllOrNothing(t *testing.T) {
	dir, tree := openTree(t, map[string]string{"a": "a", "b": "b", "gone": "g"})
	changes := []Change{
		{Rel: "a", Data: []byte("A"), Old: readFile(t, tree, "a")},
		{Rel: "new/dir/c", Data: []byte("C")},
		{Rel: "gone", Old: readFile(t, tree, "gone")},
		{Rel: "b", Data: []byte("B"), Old: readFile(t, tree, "b")},
	}
	before := contents(t, dir)
	err := tree.Apply(changes, ApplyOptions{BeforeStep: func(i int) {
		if i == 2 {
			os.WriteFile(filepath.Join(dir, "b"), []byte("theirs"), 0o644)
		}
	}})
	var ce *ConflictError
	if !errors.As(err, &ce) || ce.Rel != "b" || ce.What != "changed" {
		t.Fatalf("got %v", err)
	}
	before["b"] = "theirs"
	wantContents(t, dir, before)

	os.WriteFile(filepath.Join(dir, "b"), []byte("b"), 0o644)
	changes[3].Old = readFile(t, tree, "b")
	if err := tree.Apply(changes, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a": "A", "b": "B", "new": "drwxr-xr-x", "new/dir": "drwxr-xr-x", "new/dir/c": "C"}
	got := contents(t, dir)
	for k := range got {
		if strings.Contains(k, ".slim-") {
			t.Errorf("left behind %s", k)
		}
	}
	for k, v := range want {
		if k == "new" || k == "new/dir" {
			if !strings.HasPrefix(got[k], "d") {
				t.Errorf("%s is %q", k, got[k])
			}
			continue
		}
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if _, ok := got["gone"]; ok {
		t.Errorf("gone not removed")
	}
}

// A compare-and-swap failure found before any write changes nothing, and a
// file that appeared where a new one goes is not overwritten.
func TestApplyRefusesAFileThatAppeared(t *testing.T) {
	dir, tree := openTree(t, map[string]string{"x": "theirs"})
	err := tree.Apply([]Change{{Rel: "x", Data: []byte("mine")}}, ApplyOptions{})
	var ce *ConflictError
	if !errors.As(err, &ce) || ce.What != "appeared" {
		t.Fatalf("got %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "x")); string(b) != "theirs" {
		t.Fatalf("x = %q", b)
	}
}

// A rollback that cannot put a file back says so: the kept old inode
// removed by someone during the transaction makes the error list the file
// instead of claiming every file was restored.
func TestRollbackThatCannotRestoreSaysSo(t *testing.T) {
	dir, tree := openTree(t, map[string]string{"a": "a", "b": "b"})
	changes := []Change{
		{Rel: "a", Data: []byte("A"), Old: readFile(t, tree, "a")},
		{Rel: "b", Data: []byte("B"), Old: readFile(t, tree, "b")},
	}
	err := tree.Apply(changes, ApplyOptions{BeforeStep: func(i int) {
		if i != 1 {
			return
		}
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".orig") {
				os.Remove(filepath.Join(dir, e.Name()))
			}
		}
		os.WriteFile(filepath.Join(dir, "b"), []byte("theirs"), 0o644)
	}})
	var we *WriteError
	if !errors.As(err, &we) || len(we.Incomplete) == 0 || !strings.Contains(err.Error(), "the rollback was incomplete") {
		t.Fatalf("got %v", err)
	}
}

// A panic in the middle of a transaction puts back what was written
// before it goes on: no mix of old and new files, no sibling left.
func TestApplyPanicRollsBack(t *testing.T) {
	dir, tree := openTree(t, map[string]string{"a": "a", "b": "b"})
	changes := []Change{
		{Rel: "a", Data: []byte("A"), Old: readFile(t, tree, "a")},
		{Rel: "new/c", Data: []byte("C")},
		{Rel: "b", Data: []byte("B"), Old: readFile(t, tree, "b")},
	}
	before := contents(t, dir)
	func() {
		defer func() {
			if p := recover(); p != "boom" {
				t.Fatalf("recovered %v, want the panic to go on", p)
			}
		}()
		tree.Apply(changes, ApplyOptions{BeforeStep: func(i int) {
			if i == 2 {
				panic("boom")
			}
		}})
	}()
	wantContents(t, dir, before)
}

// wantContents fails t unless dir holds exactly the entries of want (as
// contents gives them).
func wantContents(t *testing.T, dir string, want map[string]string) {
	t.Helper()
	got := contents(t, dir)
	if len(got) != len(want) {
		t.Errorf("entries: %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
}
