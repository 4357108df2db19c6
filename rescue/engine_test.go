package rescue

import (
	"os"
	"path/filepath"
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
