package rescue

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testEnv is a temporary session directory with files.
type testEnv struct {
	t   *testing.T
	dir string
}

func newEnv(t *testing.T, files map[string]string) *testEnv {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return &testEnv{t: t, dir: dir}
}

func (e *testEnv) process(patch string, apply bool) (*Result, error) {
	return Process([]byte(patch), Options{Directory: e.dir, NoWorktree: true, Apply: apply})
}

func (e *testEnv) read(name string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(e.dir, name))
	if err != nil {
		return "", false
	}
	return string(b), true
}

func wrap(body string) string { return "*** Begin Patch\n" + body + "*** End Patch\n" }

func kindOf(err error) Kind {
	if err == nil {
		return ""
	}
	return asError(err).Kind
}

func TestSmoke(t *testing.T) {
	e := newEnv(t, map[string]string{"a.txt": "a\nb\nc\n"})
	patch := wrap("*** Update File: a.txt\n@@\n a\n-b\n+B\n c\n")
	res, err := e.process(patch, false)
	if err != nil {
		t.Fatal(err)
	}
	if res.Decision != DecisionUnchanged || *res.PatchText != patch {
		t.Fatalf("got %+v", res)
	}
	res, err = e.process(wrap("*** Update File: a.txt\n@@\n a\n-b  \n+B\n c\n"), false)
	if err != nil {
		t.Fatal(err)
	}
	// The trailing blanks of "-b  " match the file only tolerantly: the
	// patch is rewritten with the file's own line.
	if want := wrap("*** Update File: a.txt\n@@\n a\n-b\n+B\n c\n"); res.Decision != DecisionRewrite || res.PatchText == nil || *res.PatchText != want {
		t.Fatalf("tolerant chunk: got %+v", res)
	}
	if _, err := e.process(patch, true); err != nil {
		t.Fatal(err)
	}
	if got, _ := e.read("a.txt"); got != "a\nB\nc\n" {
		t.Fatalf("applied %q", got)
	}
}

// TestNewRescuesReported: the indentation rescue names its mapping as a
// repair (carried in --json), re-indents the added lines, and hands on a
// patch that applies to the same bytes; an already-applied chunk is
// reported and changes nothing.
func TestNewRescuesReported(t *testing.T) {
	for _, tc := range []struct {
		name, file, patch, want string
		repair                  Repair
		strategy                string
	}{
		{
			name:     "indentation",
			file:     "func f() {\n    if ok {\n        old()\n    }\n}\n",
			patch:    "*** Begin Patch\n*** Update File: f.go\n@@\n func f() {\n \tif ok {\n-\t\told()\n+\t\tnew()\n \t}\n*** End Patch\n",
			want:     "func f() {\n    if ok {\n        new()\n    }\n}\n",
			repair:   Repair{Kind: "indentation", Line: 3, Detail: `each leading "\t" -> "    "`},
			strategy: "indent",
		},
		{
			name:     "already applied",
			file:     "a\nb\nc\nNEW\nd\ne\nf\n",
			patch:    "*** Begin Patch\n*** Update File: f.go\n@@\n a\n b\n c\n-old\n+NEW\n d\n e\n f\n*** End Patch\n",
			want:     "a\nb\nc\nNEW\nd\ne\nf\n",
			repair:   Repair{Kind: "already_applied", Line: 3},
			strategy: "already-applied",
		},
		{
			name:     "edited edge",
			file:     "c1 := one() // why\nc2 := two()\nc3 := three()\nr1 := old()\nc4 := four()\nc5 := five()\n",
			patch:    "*** Begin Patch\n*** Update File: f.go\n@@\n c1 := one()\n c2 := two()\n c3 := three()\n-r1 := old()\n+r1 := new()\n c4 := four()\n c5 := five()\n*** End Patch\n",
			want:     "c1 := one() // why\nc2 := two()\nc3 := three()\nr1 := new()\nc4 := four()\nc5 := five()\n",
			strategy: "edited-edge",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "f.go")
			if err := os.WriteFile(path, []byte(tc.file), 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := Process([]byte(tc.patch), Options{Directory: dir, NoWorktree: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Chunks) != 1 || res.Chunks[0].Strategy != tc.strategy {
				t.Fatalf("chunks %+v, want one placed by %s", res.Chunks, tc.strategy)
			}
			if tc.repair.Kind != "" {
				js, _ := json.Marshal(res.Repairs)
				want, _ := json.Marshal(tc.repair)
				if !strings.Contains(string(js), string(want)) {
					t.Errorf("repairs %s, want %s among them", js, want)
				}
			}
			if res.Decision != DecisionRewrite || res.PatchText == nil {
				t.Fatalf("decision %s, want a rewritten patch", res.Decision)
			}
			if _, err := Process([]byte(*res.PatchText), Options{Directory: dir, NoWorktree: true, Apply: true}); err != nil {
				t.Fatalf("the handed-on patch does not apply: %v\n%s", err, *res.PatchText)
			}
			if got, _ := os.ReadFile(path); string(got) != tc.want {
				t.Errorf("file %q, want %q\nhanded on:\n%s", got, tc.want, *res.PatchText)
			}
		})
	}
}
