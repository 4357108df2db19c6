package search

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// dirStat must give every path the time modTime gives it: through the
// directory handle for paths below the directory, links followed, 0 for
// what cannot be stat'ed, and by the absolute path for anything else.
func TestDirStatAgreesWithModTime(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "proj")
	writeTree(t, dir, map[string]string{"a.go": "a", "sub/deep/b.go": "b"})
	writeTree(t, root, map[string]string{"outside.go": "o", "target.go": "t"})
	if err := os.Symlink(filepath.Join(root, "target.go"), filepath.Join(dir, "link.go")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("nowhere", filepath.Join(dir, "dangling.go")); err != nil {
		t.Fatal(err)
	}
	base := time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.UTC)
	for i, p := range []string{"proj/a.go", "proj/sub/deep/b.go", "outside.go", "target.go"} {
		at := base.Add(time.Duration(i) * time.Hour)
		if err := os.Chtimes(filepath.Join(root, p), at, at); err != nil {
			t.Fatal(err)
		}
	}
	ds := openDirStat(dir)
	defer ds.close()
	for _, p := range []string{
		filepath.Join(dir, "a.go"),
		filepath.Join(dir, "sub", "deep", "b.go"),
		filepath.Join(dir, "link.go"),     // the target's time, as os.Stat gives
		filepath.Join(dir, "dangling.go"), // 0
		filepath.Join(dir, "missing.go"),  // 0
		filepath.Join(root, "outside.go"), // not below the directory
		dir,
	} {
		if got, want := ds.modTime(p), modTime(p); got != want {
			t.Errorf("modTime(%s) = %d through the directory, %d by its path", p, got, want)
		}
	}
	if got, want := ds.modTime(filepath.Join(dir, "link.go")), base.Add(3*time.Hour).UnixNano(); got != want {
		t.Errorf("a link below the directory gives %d, want its target's time %d", got, want)
	}

	// A directory that is gone (or never was) leaves the plain stat.
	gone := openDirStat(filepath.Join(root, "nope"))
	defer gone.close()
	if got, want := gone.modTime(filepath.Join(dir, "a.go")), modTime(filepath.Join(dir, "a.go")); got != want || got == 0 {
		t.Errorf("without a directory handle modTime = %d, want %d", got, want)
	}
}
