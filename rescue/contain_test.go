package rescue

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Containment: every target is checked before any file is read, symbolic
// links resolved (a link out of the workspace is outside, also for a file
// that does not exist yet), and one bad target blocks the whole patch.
func TestContainment(t *testing.T) {
	outside, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		setup func(dir string)
		patch string
		code  string
	}{
		{"Move to a new file below a link to outside blocked", func(dir string) { os.Symlink(outside, filepath.Join(dir, "linked-outside")) },
			"*** Update File: in.txt\n*** Move to: linked-outside/missing/child.txt\n@@\n-in\n+x\n", CodeOutsideWorkspace},
		{"Add below a link to outside blocked", func(dir string) { os.Symlink(outside, filepath.Join(dir, "linked-outside")) },
			"*** Add File: linked-outside/missing/child.txt\n+x\n", CodeOutsideWorkspace},
		{"Add through a link to a missing file outside blocked", func(dir string) { os.Symlink(filepath.Join(outside, "newfile.txt"), filepath.Join(dir, "link")) },
			"*** Add File: link\n+pwned\n", CodeOutsideWorkspace},
		{"Delete of a link to a file outside blocked", func(dir string) {
			os.WriteFile(filepath.Join(outside, "f.txt"), []byte("f\n"), 0o644)
			os.Symlink(filepath.Join(outside, "f.txt"), filepath.Join(dir, "flink"))
		}, "*** Delete File: flink\n", CodeOutsideWorkspace},
		{"write inside .git blocked", func(dir string) { os.MkdirAll(filepath.Join(dir, ".git"), 0o755) },
			"*** Add File: .git/hooks/pre-commit\n+x\n", CodeGitDir},
		{"write inside a nested worktree blocked", func(dir string) {
			os.MkdirAll(filepath.Join(dir, "lane"), 0o755)
			os.WriteFile(filepath.Join(dir, "lane", ".git"), []byte("gitdir: /nowhere\n"), 0o644)
		}, "*** Add File: lane/x.txt\n+x\n", CodeNestedWorktree},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, map[string]string{"in.txt": "in\n"})
			c.setup(e.dir)
			for _, apply := range []bool{false, true} {
				res, err := e.process(wrap(c.patch), apply)
				se := asError(err)
				if se == nil || se.Kind != Blocked || se.Code != c.code {
					t.Fatalf("apply=%v: got %v (%+v), want blocked %s", apply, err, se, c.code)
				}
				if !strings.HasPrefix(se.Message, "apply_patch blocked: ") {
					t.Errorf("message %q", se.Message)
				}
				if res.Decision != DecisionBlock || res.PatchText != nil {
					t.Errorf("decision %s", res.Decision)
				}
			}
			if got, _ := e.read("in.txt"); got != "in\n" {
				t.Errorf("in.txt changed")
			}
			if ents, _ := os.ReadDir(outside); len(ents) > 1 {
				t.Errorf("something was written outside: %v", ents)
			}
			// Passthrough never applies to these: the host would not ask.
			_, err := Process([]byte(wrap(c.patch)), Options{Directory: e.dir, NoWorktree: true, Outside: OutsidePassthrough})
			if kindOf(err) != Blocked {
				t.Errorf("passthrough: %v, want blocked", err)
			}
		})
	}
	// A nested worktree is allowed with the switch, and only with it:
	// Process reads no environment, so SLIM_ALLOW_NESTED alone changes
	// nothing (the CLI reads it and sets the switch).
	e := newEnv(t, nil)
	os.MkdirAll(filepath.Join(e.dir, "lane"), 0o755)
	os.WriteFile(filepath.Join(e.dir, "lane", ".git"), []byte("gitdir: /nowhere\n"), 0o644)
	t.Setenv("SLIM_ALLOW_NESTED", "1")
	if _, err := Process([]byte(wrap("*** Add File: lane/x.txt\n+x\n")), Options{Directory: e.dir, NoWorktree: true, Apply: true}); kindOf(err) != Blocked {
		t.Fatalf("SLIM_ALLOW_NESTED=1 without AllowNested: %v, want blocked", err)
	}
	if _, err := Process([]byte(wrap("*** Add File: lane/x.txt\n+x\n")), Options{Directory: e.dir, NoWorktree: true, AllowNested: true, Apply: true}); err != nil {
		t.Fatalf("AllowNested: %v", err)
	}
	if got, _ := e.read("lane/x.txt"); got != "x\n" {
		t.Errorf("lane/x.txt = %q", got)
	}
}

// Containment is decided before any file is read: a patch that is both
// stale and outside reports blocked, and a malformed one reports validation
// first.
func TestErrorOrder(t *testing.T) {
	e := newEnv(t, map[string]string{"in.txt": "in\n"})
	_, err := e.process(wrap("*** Update File: missing.txt\n@@\n-x\n+y\n*** Add File: ../out.txt\n+x\n"), false)
	if kindOf(err) != Blocked {
		t.Errorf("got %v, want blocked", err)
	}
	_, err = e.process(wrap("*** Add File: ../out.txt\n+x\ngarbage\n"), false)
	if kindOf(err) != Validation {
		t.Errorf("got %v, want validation", err)
	}
}
