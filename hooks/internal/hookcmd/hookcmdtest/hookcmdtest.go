// Package hookcmdtest holds what the tests of the command-hook adapters
// share: a workspace to run payloads against and the fuzz seeds read from
// a host's payloads.
package hookcmdtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Workspace is a git repository (Root) holding the given files and
// directories, a link "linked" in it to a directory outside (Out), a home
// directory (Home) and a directory for the loop guard's state (State).
type Workspace struct {
	Root, Out, Home, State string
}

// NewWorkspace makes a Workspace under t's temporary directory: dirs and
// files are relative to Root, files map a name to its content.
func NewWorkspace(t *testing.T, dirs []string, files map[string]string) *Workspace {
	t.Helper()
	base := t.TempDir()
	w := &Workspace{Root: filepath.Join(base, "repo"), Out: filepath.Join(base, "outside"),
		Home: filepath.Join(base, "home"), State: filepath.Join(base, "state")}
	mk := []string{w.Out, w.Home}
	for _, d := range dirs {
		mk = append(mk, filepath.Join(w.Root, d))
	}
	for _, d := range append(mk, w.Root) {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("git", "init", "-q", w.Root).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(w.Root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(w.Out, filepath.Join(w.Root, "linked")); err != nil {
		t.Fatal(err)
	}
	return w
}

// Payload reads testdata/<name>.json with $ROOT, $OUT and $HOME replaced
// by the workspace's paths.
func (w *Workspace) Payload(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return []byte(strings.NewReplacer("$ROOT", w.Root, "$OUT", w.Out, "$HOME", w.Home).Replace(string(b)))
}

// Seed adds to f every payload in dir and in dir/recorded (*.json), whole
// and cut in half, and then each of extra.
func Seed(f *testing.F, dir string, extra ...string) {
	f.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	recorded, _ := filepath.Glob(filepath.Join(dir, "recorded", "*.json"))
	files = append(files, recorded...)
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	for _, s := range extra {
		f.Add([]byte(s))
	}
}
