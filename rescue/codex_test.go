package rescue

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestCodexScenarios runs the apply_patch scenarios of Codex's own test
// suite (Add, Delete, Update, Move, several chunks, failures), in the Codex
// fixture layout: input/ is copied to a temporary directory, patch.txt
// is applied with Process in apply mode, and the tree must equal expected/,
// or, with expected_error, the error must match and the tree must equal
// input/.
func TestCodexScenarios(t *testing.T) {
	root := filepath.Join("..", "fixtures", "rescue", "codex")
	ents, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) < 20 {
		t.Fatalf("only %d scenarios", len(ents))
	}
	for _, ent := range ents {
		dir := filepath.Join(root, ent.Name())
		t.Run(ent.Name(), func(t *testing.T) {
			patch, err := os.ReadFile(filepath.Join(dir, "patch.txt"))
			if err != nil {
				t.Fatal(err)
			}
			input := readTree(t, filepath.Join(dir, "input"))
			work, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			writeTree(t, work, input)
			_, perr := Process(patch, Options{Directory: work, NoWorktree: true, Apply: true})
			got := readTree(t, work)
			if want, err := os.ReadFile(filepath.Join(dir, "expected_error")); err == nil {
				kind, sub, _ := strings.Cut(strings.TrimSpace(string(want)), ": ")
				if perr == nil {
					t.Fatalf("no error, want %s", want)
				}
				if string(kindOf(perr)) != kind || !strings.Contains(perr.Error(), sub) {
					t.Fatalf("error %s %q, want %s %q", kindOf(perr), perr.Error(), kind, sub)
				}
				compareTrees(t, got, input)
				return
			}
			if perr != nil {
				t.Fatalf("apply: %v", perr)
			}
			want := readTree(t, filepath.Join(dir, "expected"))
			delete(want, ".keep-empty")
			compareTrees(t, got, want)
		})
	}
}

func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) && p == dir {
				return filepath.SkipDir
			}
			return err
		}
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			out[filepath.ToSlash(rel)] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func compareTrees(t *testing.T, got, want map[string]string) {
	t.Helper()
	var names []string
	for n := range got {
		names = append(names, n)
	}
	for n := range want {
		if _, ok := got[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		g, gok := got[n]
		w, wok := want[n]
		switch {
		case !gok:
			t.Errorf("%s missing, want %q", n, w)
		case !wok:
			t.Errorf("%s = %q, not expected", n, g)
		case g != w:
			t.Errorf("%s = %q, want %q", n, g, w)
		}
	}
}
