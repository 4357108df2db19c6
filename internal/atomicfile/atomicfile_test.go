package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	for _, tc := range []struct {
		name  string
		write func(string, []byte, os.FileMode) error
	}{
		{"WriteFile", WriteFile},
		{"Replace", Replace},
		{"WriteFileNoDirSync", WriteFileNoDirSync},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "f.json")
			if err := tc.write(p, []byte("one"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := tc.write(p, []byte("two"), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(p)
			if err != nil || string(got) != "two" {
				t.Fatalf("content = %q, %v; want two", got, err)
			}
			fi, _ := os.Stat(p)
			if fi.Mode().Perm() != 0o600 {
				t.Errorf("mode = %v, want 0600", fi.Mode().Perm())
			}
			ents, _ := os.ReadDir(dir)
			if len(ents) != 1 {
				t.Errorf("directory holds %d entries, want only the target (no temporary left)", len(ents))
			}
		})
	}
}

func TestWriteFailsCleanly(t *testing.T) {
	dir := t.TempDir()
	// The target is a directory: the final rename fails and nothing is left.
	target := filepath.Join(dir, "sub")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(target, "keep"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(target, []byte("data"), 0o644); err == nil {
		t.Fatal("writing over a non-empty directory succeeded")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("a temporary file was left behind: %v", ents)
	}
	// A missing directory is an error that names the file.
	if err := WriteFile(filepath.Join(dir, "missing", "f"), nil, 0o644); err == nil {
		t.Fatal("writing into a missing directory succeeded")
	}
}

func TestSyncDirIgnoresWhatCannotBeSynced(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.json")
	if err := WriteFileNoDirSync(p, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	SyncDir(p)
	SyncDir(filepath.Join(dir, "missing", "f.json"))
	if got, err := os.ReadFile(p); err != nil || string(got) != "one" {
		t.Fatalf("content = %q, %v; want one", got, err)
	}
}

func TestRemoveTempsDeletesOnlyThisFilesTemporaries(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "state.json")
	if err := WriteFile(p, []byte("doc"), 0o600); err != nil {
		t.Fatal(err)
	}
	// What a writer killed before its rename leaves, next to files that
	// must stay: the target, another file's temporary, look-alikes.
	left := []string{".state.json.tmp-123", ".state.json.tmp-"}
	keep := []string{"state.json", ".other.json.tmp-1", "state.json.tmp-1", ".state.json.tmpx"}
	for _, n := range append(left, keep[1:]...) {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, ".state.json.tmp-dir"), 0o700); err != nil {
		t.Fatal(err)
	}
	keep = append(keep, ".state.json.tmp-dir")
	n, err := RemoveTemps(p)
	if err != nil || n != len(left) {
		t.Fatalf("RemoveTemps = %d, %v; want %d, nil", n, err, len(left))
	}
	ents, _ := os.ReadDir(dir)
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if len(got) != len(keep) {
		t.Fatalf("left %v, want exactly %v", got, keep)
	}
	for _, k := range keep {
		if _, err := os.Lstat(filepath.Join(dir, k)); err != nil {
			t.Errorf("%s was removed: %v", k, err)
		}
	}
	if b, _ := os.ReadFile(p); string(b) != "doc" {
		t.Fatalf("the target changed: %q", b)
	}
}
