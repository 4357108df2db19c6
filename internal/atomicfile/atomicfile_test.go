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
