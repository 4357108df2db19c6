package search

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// ignoreCases are gitignore rules and the paths they decide. Each is also
// checked against git itself (TestIgnoreCasesAgreeWithGit).
var ignoreCases = []struct {
	name  string
	rules string
	path  string
	dir   bool
	want  bool
}{
	{"a slash-free pattern matches at any depth", "*.log", "a/b/c.log", false, true},
	{"a slash-free pattern matches at the top", "*.log", "c.log", false, true},
	{"a leading slash anchors at the file's directory", "/root.txt", "sub/root.txt", false, false},
	{"an anchored pattern matches at the top", "/root.txt", "root.txt", false, true},
	{"a slash in the middle anchors too", "docs/build", "x/docs/build", false, false},
	{"a slash in the middle matches from the top", "docs/build", "docs/build", false, true},
	{"a trailing slash matches directories only", "build/", "build", false, false},
	{"a trailing slash matches a directory", "build/", "build", true, true},
	{"a trailing slash matches a directory at any depth", "build/", "x/build", true, true},
	{"a question mark is one character", "a?c.txt", "abc.txt", false, true},
	{"a question mark is not a slash", "a?c.txt", "a/c.txt", false, false},
	{"a question mark is not nothing", "a?c.txt", "ac.txt", false, false},
	{"a bracket class", "[ab].txt", "b.txt", false, true},
	{"a negated bracket class", "[!ab].txt", "b.txt", false, false},
	{"a negated bracket class matches others", "[!ab].txt", "c.txt", false, true},
	{"a range", "v[0-9].md", "v7.md", false, true},
	{"regular expression characters are literal", "a+b(1).txt", "a+b(1).txt", false, true},
	{"a plus is not a repetition", "a+b.txt", "aab.txt", false, false},
	{"braces are literal in gitignore", "{a,b}.txt", "a.txt", false, false},
	{"braces match themselves", "{a,b}.txt", "{a,b}.txt", false, true},
	{"a dot is literal", "a.txt", "abtxt", false, false},
	{"a leading double star matches in every directory", "**/gen", "x/y/gen", false, true},
	{"a trailing double star matches everything inside", "out/**", "out/a/b.txt", false, true},
	{"a middle double star matches zero directories", "a/**/b", "a/b", false, true},
	{"a middle double star matches several", "a/**/b", "a/x/y/b", false, true},
	{"a star does not cross a slash", "src/*.go", "src/pkg/a.go", false, false},
	{"a star stays within one name", "src/*.go", "src/a.go", false, true},
	{"the last matching rule wins: re-included", "*.log\n!keep.log", "keep.log", false, false},
	{"the last matching rule wins: ignored again", "*.log\n!keep.log\nkeep.log", "keep.log", false, true},
	{"a comment is not a rule", "#secret.txt", "#secret.txt", false, false},
	{"an escaped hash is a name", `\#secret.txt`, "#secret.txt", false, true},
	{"an escaped bang is a name", `\!bang.txt`, "!bang.txt", false, true},
	{"trailing spaces are dropped", "trail.txt   ", "trail.txt", false, true},
	{"an escaped trailing space is kept", `space\ `, "space ", false, true},
	{"an escaped star is literal", `star\*.txt`, "star*.txt", false, true},
	{"an escaped star does not match others", `star\*.txt`, "starx.txt", false, false},
	{"CRLF rule files work", "*.tmp\r\n", "x.tmp", false, true},
}

func TestIgnoreRules(t *testing.T) {
	for _, c := range ignoreCases {
		t.Run(c.name, func(t *testing.T) {
			f := parseIgnore(c.rules)
			decided, ignored := f.match(c.path, c.dir)
			if got := decided && ignored; got != c.want {
				t.Fatalf("rules %q, path %q (dir %v): ignored = %v, want %v", c.rules, c.path, c.dir, got, c.want)
			}
		})
	}
}

// TestIgnoreCasesAgreeWithGit asks git check-ignore about every case, so
// the table says what git does, not what the fallback happens to do.
func TestIgnoreCasesAgreeWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git is not installed; .ci/run installs it")
		}
		t.Skip("git is not installed")
	}
	for _, c := range ignoreCases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			git := func(args ...string) (string, error) {
				cmd := exec.Command("git", args...)
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
				out, err := cmd.CombinedOutput()
				return string(out), err
			}
			if out, err := git("init", "-q"); err != nil {
				t.Fatalf("git init: %v %s", err, out)
			}
			os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(c.rules), 0o644)
			p := filepath.Join(dir, filepath.FromSlash(c.path))
			os.MkdirAll(filepath.Dir(p), 0o755)
			if c.dir {
				os.MkdirAll(p, 0o755)
			} else {
				os.WriteFile(p, nil, 0o644)
			}
			out, err := git("check-ignore", "-q", "--", c.path)
			got := err == nil
			if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() != 1 {
				t.Fatalf("git check-ignore: %v %s", err, out)
			}
			if got != c.want {
				t.Fatalf("git says ignored = %v for rules %q, path %q; the table says %v", got, strings.TrimSpace(c.rules), c.path, c.want)
			}
		})
	}
}
