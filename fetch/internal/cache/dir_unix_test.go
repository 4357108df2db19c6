//go:build unix

package cache

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func TestEveryDirectoryIs0700AndEveryFile0600(t *testing.T) {
	// With no umask at all, the modes must still come out private.
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	s, c := open(t, nil)
	mustPut(t, s, &Entry{ETag: `"e"`, Payload: json.RawMessage(`{"a":1}`)}, Key("a"), Key("b"))
	c.Add(20 * time.Minute)
	if err := s.Restamp(Key("b"), c.Now()); err != nil {
		t.Fatal(err)
	}
	if err := s.PutNegativeProbe("https://docs.example.com"); err != nil {
		t.Fatal(err)
	}
	root := filepath.Dir(s.root)
	files := 0
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := d.Info()
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		} else {
			files++
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode().Perm(), want)
		}
		return nil
	})
	if files != 4 { // the entry, the alias, the probe and the sweep lock
		t.Fatalf("%d files", files)
	}
}

func TestOpenNarrowsAVersionDirectoryOthersCanRead(t *testing.T) {
	root := t.TempDir()
	v1 := filepath.Join(root, "v1")
	os.Mkdir(v1, 0o700)
	os.Chmod(v1, 0o755)
	if _, err := Open(Options{Dir: root}); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(v1); fi.Mode().Perm() != 0o700 {
		t.Fatalf("v1 is %v, want 0700", fi.Mode().Perm())
	}
}

func TestOpenRefusesARootOthersCanWrite(t *testing.T) {
	root := t.TempDir()
	os.Chmod(root, 0o777)
	if _, err := Open(Options{Dir: root}); kindOf(err) != Unsafe {
		t.Fatalf("err = %v, want Unsafe", err)
	}
	os.Chmod(root, 0o770)
	if _, err := Open(Options{Dir: root}); kindOf(err) != Unsafe {
		t.Fatalf("group-writable: err = %v, want Unsafe", err)
	}
}

func TestOpenFollowsTheUsersOwnLinkAtTheRoot(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real")
	os.Mkdir(target, 0o700)
	link := filepath.Join(dir, "cache")
	os.Symlink(target, link)
	s, err := Open(Options{Dir: link})
	if err != nil {
		t.Fatal(err)
	}
	mustPut(t, s, &Entry{Payload: json.RawMessage(`1`)}, Key("a"))
	if !exists(filepath.Join(target, "v1", "entries", Key("a")+".json.gz")) {
		t.Fatal("the entry is not in the link's target")
	}
}

func TestOpenNeverCreatesThroughALinkBelowTheRoot(t *testing.T) {
	for _, sub := range []string{"v1", "v1/entries", "v1/alias", "v1/llms-neg"} {
		root, outside := t.TempDir(), t.TempDir()
		os.MkdirAll(filepath.Join(root, filepath.Dir(sub)), 0o700)
		os.Symlink(outside, filepath.Join(root, sub))
		if _, err := Open(Options{Dir: root}); kindOf(err) != Unsafe {
			t.Errorf("%s is a link: err = %v, want Unsafe", sub, err)
		}
		if des, _ := os.ReadDir(outside); len(des) != 0 {
			t.Errorf("%s is a link: created %v at its target", sub, des)
		}
	}
}

func TestOpenRefusesAnotherUsersLinkOrDirectory(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give files to another user")
	}
	const other = 54321
	dir := t.TempDir()
	target := filepath.Join(dir, "real")
	os.Mkdir(target, 0o700)
	link := filepath.Join(dir, "planted")
	os.Symlink(target, link)
	if err := os.Lchown(link, other, other); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(Options{Dir: link}); kindOf(err) != Unsafe {
		t.Fatalf("planted link: err = %v, want Unsafe", err)
	}
	if _, err := Open(Options{Dir: target}); err != nil {
		t.Fatal(err)
	}
	os.Chown(filepath.Join(target, "v1", "alias"), other, other)
	if _, err := Open(Options{Dir: target}); kindOf(err) != Unsafe {
		t.Fatalf("another user's alias directory: err = %v, want Unsafe", err)
	}
	os.Chown(filepath.Join(target, "v1", "alias"), os.Geteuid(), os.Getegid())
	if _, err := Open(Options{Dir: target}); err != nil {
		t.Fatal(err)
	}
	os.Chown(target, other, other)
	if _, err := Open(Options{Dir: target}); kindOf(err) != Unsafe {
		t.Fatalf("another user's root: err = %v, want Unsafe", err)
	}
}

func TestALinkOrPipeInPlaceOfACacheFileIsRemovedNotFollowed(t *testing.T) {
	s, c := open(t, nil)
	elsewhere, _ := open(t, nil)
	k := Key("page")
	mustPut(t, elsewhere, &Entry{StoredAt: c.Now(), Payload: json.RawMessage(`"planted"`)}, k)
	target := elsewhere.entryPath(k)
	os.Symlink(target, s.entryPath(k))
	if e, st, err := s.Get(k); e != nil || st != Miss || kindOf(err) != Corrupt {
		t.Fatalf("Get through a link = %v %v %v", e, st, err)
	}
	if exists(s.entryPath(k)) || !exists(target) {
		t.Fatal("want the link removed and its target left alone")
	}

	a := Key("alias")
	os.Symlink(elsewhere.aliasPath(a), s.aliasPath(a))
	if _, st, err := s.Get(a); st != Miss || kindOf(err) != Corrupt || exists(s.aliasPath(a)) {
		t.Fatalf("an alias that is a link: %v %v", st, err)
	}

	if err := syscall.Mkfifo(s.entryPath(k), 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, _, err := s.Get(k); done <- err }()
	select {
	case err := <-done:
		if kindOf(err) != Corrupt || exists(s.entryPath(k)) {
			t.Fatalf("a named pipe: %v", err)
		}
	case <-time.After(5 * time.Second):
		w, _ := os.OpenFile(s.entryPath(k), os.O_WRONLY|syscall.O_NONBLOCK, 0)
		w.Close()
		t.Fatal("Get blocked on a named pipe")
	}
}
