package githook

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitEnv isolates git from the user's configuration.
func gitEnv(t *testing.T) []string {
	home := t.TempDir()
	return append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+home, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
}

type repo struct {
	t   *testing.T
	dir string
	env []string
}

func newRepo(t *testing.T) *repo {
	t.Helper()
	r := &repo{t: t, dir: t.TempDir(), env: gitEnv(t)}
	r.git("init", "-q", "-b", "main")
	r.git("config", "core.autocrlf", "false")
	return r
}

func (r *repo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.dir
	cmd.Env = r.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (r *repo) write(name, body string) {
	r.t.Helper()
	p := filepath.Join(r.dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// stage writes name and adds it to the index.
func (r *repo) stage(name, body string) {
	r.t.Helper()
	r.write(name, body)
	r.git("add", name)
}

func (r *repo) symlink(target, name string) {
	r.t.Helper()
	if err := os.Symlink(target, filepath.Join(r.dir, name)); err != nil {
		r.t.Fatal(err)
	}
}

func (r *repo) commitAll(msg string) {
	r.t.Helper()
	r.git("add", "-A")
	r.git("commit", "-q", "--no-verify", "-m", msg)
}

func (r *repo) run(hook string) []Finding {
	r.t.Helper()
	// Run uses the process environment for git, like a real hook does.
	for _, kv := range r.env {
		k, v, _ := strings.Cut(kv, "=")
		if k == "HOME" || k == "XDG_CONFIG_HOME" || k == "GIT_CONFIG_NOSYSTEM" {
			r.t.Setenv(k, v)
		}
	}
	f, err := Run(hook, Options{Dir: r.dir})
	if err != nil {
		r.t.Fatalf("Run(%s): %v", hook, err)
	}
	return f
}

func checks(fs []Finding) string {
	var s []string
	for _, f := range fs {
		s = append(s, f.Check+":"+f.Path)
	}
	return strings.Join(s, ",")
}

func TestRunCases(t *testing.T) {
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("s\n"), 0o644)
	tests := []struct {
		name  string
		setup func(r *repo) // after an initial commit of base files
		want  string        // checks(findings)
		code  string        // code of the first finding, when set
	}{
		{"clean edit", func(r *repo) { r.stage("a.txt", "one\ntwo\nthree\n") }, "", ""},
		{"nothing staged", func(r *repo) {}, "", ""},
		{"CRLF to LF flip", func(r *repo) { r.stage("crlf.txt", "x\ny\n") }, "eol:crlf.txt", ""},
		{"LF to CRLF flip", func(r *repo) { r.stage("a.txt", "one\r\ntwo\r\n") }, "eol:a.txt", ""},
		{"CRLF kept while editing", func(r *repo) { r.stage("crlf.txt", "x\r\nY\r\nz\r\n") }, "", ""},
		{"new CRLF file is not a flip", func(r *repo) { r.stage("new.txt", "a\r\nb\r\n") }, "", ""},
		{"deleted file is skipped", func(r *repo) { r.git("rm", "-q", "crlf.txt") }, "", ""},
		{"binary file is skipped", func(r *repo) { r.stage("bin.dat", "\x00a\nb\n") }, "", ""},
		{"conflict markers", func(r *repo) {
			r.stage("a.txt", "one\n<<<<<<< HEAD\nmine\n=======\ntheirs\n>>>>>>> topic\n")
		}, "conflict-markers:a.txt", ""},
		{"conflict markers in a new file", func(r *repo) {
			r.stage("n.md", "<<<<<<< ours\nx\n>>>>>>> theirs\n")
		}, "conflict-markers:n.md", ""},
		{"a lone ======= is a heading underline", func(r *repo) {
			r.stage("doc.md", "Title\n=======\n\ntext\n")
		}, "", ""},
		{"an opening marker without a closing one", func(r *repo) {
			r.stage("doc.md", "<<<<<<< just text\n")
		}, "", ""},
		{"markers without the space do not count", func(r *repo) {
			r.stage("doc.md", "<<<<<<<\n>>>>>>>\n")
		}, "", ""},
		{"symlink inside", func(r *repo) { r.symlink("a.txt", "ok-link"); r.git("add", "ok-link") }, "", ""},
		{"symlink to an absolute outside path", func(r *repo) {
			r.symlink(filepath.Join(outside, "secret.txt"), "out-link")
			r.git("add", "out-link")
		}, "containment:out-link", "outside_workspace"},
		{"relative symlink climbing out", func(r *repo) {
			os.MkdirAll(filepath.Join(r.dir, "d"), 0o755)
			r.symlink("../../../../../../../../../../etc/passwd", "d/up")
			r.git("add", "d/up")
		}, "containment:d/up", "outside_workspace"},
		{"symlink into .git", func(r *repo) { r.symlink(".git/config", "cfg"); r.git("add", "cfg") }, "containment:cfg", "git_dir"},
		{"symlink into a nested worktree", func(r *repo) {
			lane := filepath.Join(r.dir, ".slim", "worktrees", "lane")
			r.git("worktree", "add", "-q", lane)
			r.symlink(".slim/worktrees/lane/a.txt", "lane-link")
			r.git("add", "lane-link")
		}, "containment:lane-link", "nested_worktree"},
		{"nested repository staged as a gitlink", func(r *repo) {
			n := &repo{t: r.t, dir: filepath.Join(r.dir, "nested"), env: r.env}
			os.MkdirAll(n.dir, 0o755)
			n.git("init", "-q")
			n.write("x", "x\n")
			n.commitAll("n")
			r.git("add", "nested")
		}, "containment:nested", "nested_worktree"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRepo(t)
			r.write("a.txt", "one\ntwo\n")
			r.write("crlf.txt", "x\r\ny\r\n")
			r.write("bin.dat", "\x00a\r\nb\r\n")
			r.commitAll("base")
			tc.setup(r)
			for _, hook := range Hooks {
				got := r.run(hook)
				if checks(got) != tc.want {
					t.Fatalf("%s: findings %q, want %q (%+v)", hook, checks(got), tc.want, got)
				}
				if tc.code != "" && got[0].Code != tc.code {
					t.Fatalf("%s: code %q, want %q (%s)", hook, got[0].Code, tc.code, got[0].Message)
				}
				for _, f := range got {
					if strings.Contains(f.String(), "\n") {
						t.Fatalf("finding spans lines: %q", f.String())
					}
				}
			}
		})
	}
}

func TestRunInitialCommit(t *testing.T) {
	r := newRepo(t)
	r.write("a.txt", "<<<<<<< a\n>>>>>>> b\n")
	r.write("b.txt", "fine\r\n")
	r.git("add", ".")
	if got := checks(r.run("pre-commit")); got != "conflict-markers:a.txt" {
		t.Fatalf("got %q", got)
	}
}

func TestRunHonoursGitIndexFile(t *testing.T) {
	r := newRepo(t)
	r.write("a.txt", "one\n")
	r.commitAll("base")
	// Stage a conflicted version into a temporary index only, as
	// `git commit -a` does.
	tmpIndex := filepath.Join(t.TempDir(), "index")
	r.env = append(r.env, "GIT_INDEX_FILE="+tmpIndex)
	r.git("read-tree", "HEAD")
	r.stage("a.txt", "<<<<<<< x\n>>>>>>> y\n")
	r.env = r.env[:len(r.env)-1]

	if got := checks(r.run("pre-commit")); got != "" {
		t.Fatalf("the real index is clean, got %q", got)
	}
	t.Setenv("GIT_INDEX_FILE", tmpIndex)
	if got := checks(r.run("pre-commit")); got != "conflict-markers:a.txt" {
		t.Fatalf("with GIT_INDEX_FILE: got %q", got)
	}
}

func TestRunLinkedWorktreeWithGitDir(t *testing.T) {
	r := newRepo(t)
	r.write("a.txt", "one\n")
	r.commitAll("base")
	wt := filepath.Join(t.TempDir(), "wt")
	r.git("worktree", "add", "-q", wt)
	w := &repo{t: t, dir: wt, env: r.env}
	w.stage("a.txt", "one\r\n")
	gitDir := strings.TrimSpace(w.git("rev-parse", "--absolute-git-dir"))
	// As git runs hooks: cwd at the worktree top, GIT_DIR set.
	t.Setenv("GIT_DIR", gitDir)
	if got := checks(w.run("pre-commit")); got != "eol:a.txt" {
		t.Fatalf("got %q", got)
	}
}

func TestRunErrors(t *testing.T) {
	if _, err := Run("post-commit", Options{Dir: t.TempDir()}); err == nil {
		t.Fatal("unknown hook accepted")
	}
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(t.TempDir()))
	if _, err := Run("pre-commit", Options{Dir: t.TempDir()}); err == nil {
		t.Fatal("want an error outside a repository")
	}
}

func TestDominantEOL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"no newline", ""},
		{"a\nb\n", "LF"},
		{"a\r\nb\r\n", "CRLF"},
		{"a\rb\r", "CR"},
		{"a\r\nb\nc\n", "LF"},
		{"a\r\nb\r\nc\n", "CRLF"},
		{"a\r\nb\n", ""},
	}
	for _, tc := range tests {
		if got := dominantEOL([]byte(tc.in)); got != tc.want {
			t.Errorf("dominantEOL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestConflictLine(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"", 0},
		{"<<<<<<< a\n>>>>>>> b", 1},
		{"x\n<<<<<<< a\r\n=======\r\n>>>>>>> b\r\n", 2},
		{">>>>>>> b\n<<<<<<< a\n", 0},
		{"=======\n", 0},
		{" <<<<<<< a\n>>>>>>> b\n", 0},
	}
	for _, tc := range tests {
		if got := conflictLine([]byte(tc.in)); got != tc.want {
			t.Errorf("conflictLine(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestParseDiffIndex(t *testing.T) {
	raw := ":100644 100644 aaa bbb M\x00dir/a b.txt\x00:000000 120000 000 ccc A\x00l\x00"
	got, err := parseDiffIndex(raw)
	if err != nil || len(got) != 2 || got[0].path != "dir/a b.txt" || got[1].newMode != modeSymlink || got[1].status != 'A' {
		t.Fatalf("%+v %v", got, err)
	}
	if _, err := parseDiffIndex("garbage\x00x\x00"); err == nil {
		t.Fatal("garbage accepted")
	}
}

func FuzzDominantEOLAndConflict(f *testing.F) {
	f.Add([]byte("a\r\n<<<<<<< x\n>>>>>>> y\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		switch dominantEOL(b) {
		case "", "LF", "CRLF", "CR":
		default:
			t.Fatal("unexpected EOL name")
		}
		if n := conflictLine(b); n < 0 || n > strings.Count(string(b), "\n")+1 {
			t.Fatalf("line %d out of range", n)
		}
	})
}

func FuzzParseDiffIndex(f *testing.F) {
	f.Add(":100644 100644 aaa bbb M\x00a.txt\x00")
	f.Add(":000000 160000 000 ccc A\x00sub\x00:100644 000000 a 0 D\x00gone\x00")
	f.Fuzz(func(t *testing.T, raw string) {
		entries, err := parseDiffIndex(raw)
		if err != nil {
			return
		}
		for _, e := range entries {
			if e.status == 0 || e.newMode == "" {
				t.Fatalf("incomplete entry %+v", e)
			}
		}
	})
}
