package search

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slimgate/slim/worktree"
)

func TestResolveTarget(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "proj")
	outside := filepath.Join(base, "elsewhere")
	writeTree(t, root, map[string]string{
		"src/a.go":  "package a\n",
		"file.txt":  "x\n",
		".git/HEAD": "ref: refs/heads/main\n",
		"lane/.git": "gitdir: /nowhere\n",
		"lane/l.go": "package l\n",
	})
	writeTree(t, outside, map[string]string{"o.txt": "o\n"})
	if err := os.Symlink(outside, filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	g, err := worktree.NewGuard(root, "", worktree.Options{AllowNested: true, GitDir: filepath.Join(root, ".git")})
	if err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join("/old/home", filepath.Base(root), "src")
	cases := []struct {
		name      string
		tool, raw string
		allow     bool
		wantDir   string
		wantFile  string
		wantKind  Kind
		wantCode  string
		wantText  string
	}{
		{"no path searches the project directory", "grep", "", false, root, "", "", "", ""},
		{"a relative directory", "glob", "src", false, filepath.Join(root, "src"), "", "", "", ""},
		{"grep takes a file and runs in its directory", "grep", "src/a.go", false, filepath.Join(root, "src"), "a.go", "", "", ""},
		{"glob refuses a file", "glob", "file.txt", false, "", "", Verification, CodeNotDirectory, "is a file"},
		{"a missing path is refused before the search", "grep", "nope", false, "", "", Verification, CodePathMissing, "Search path does not exist: " + filepath.Join(root, "nope")},
		{"a file where a directory must be", "grep", "file.txt/child", false, "", "", Verification, CodePathInvalid, "Search path is invalid:"},
		{"a stale absolute path is re-anchored", "grep", stale, false, filepath.Join(root, "src"), "", "", "", ""},
		{"a path outside is blocked", "grep", "../elsewhere", false, "", "", Blocked, CodeOutside, "lies outside the workspace"},
		{"a link out is blocked", "glob", "out", false, "", "", Blocked, CodeOutside, "lies outside the workspace"},
		{"outside is allowed when asked", "grep", "../elsewhere", true, outside, "", "", "", ""},
		{"the git directory is always blocked", "grep", ".git", true, "", "", Blocked, CodeGitDir, "git directory"},
		{"a nested worktree may be read", "grep", "lane", false, filepath.Join(root, "lane"), "", "", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tg, err := ResolveTarget(c.tool, c.raw, TargetOptions{Directory: root, Guard: g, AllowOutside: c.allow})
			if c.wantKind != "" {
				e, ok := AsError(err)
				if !ok || e.Kind != c.wantKind || e.Code != c.wantCode || !strings.Contains(e.Message, c.wantText) {
					t.Fatalf("err = %v, want %s/%s containing %q", err, c.wantKind, c.wantCode, c.wantText)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tg.Dir != c.wantDir || tg.File != c.wantFile {
				t.Fatalf("target %+v, want dir %s file %q", tg, c.wantDir, c.wantFile)
			}
			if c.raw == stale && (!tg.Reanchored || len(tg.Notes) == 0) {
				t.Fatalf("re-anchoring not reported: %+v", tg)
			}
			if c.allow && !tg.Outside {
				t.Fatalf("an outside path let through is not marked: %+v", tg)
			}
		})
	}
}

func TestResolveTargetNeedsAnAbsoluteDirectory(t *testing.T) {
	if _, err := ResolveTarget("grep", "", TargetOptions{Directory: "rel"}); err == nil {
		t.Fatal("a relative project directory was accepted")
	}
}
