package worktree

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/format/index"

	"github.com/slimgate/slim/worktree/hostpath"
)

// noEnv is an environment without GIT_* variables.
func noEnv(string) string { return "" }

func mustResolve(t *testing.T, dir string) *Info {
	t.Helper()
	info, err := resolveEnv(dir, noEnv)
	if err != nil {
		t.Fatalf("resolve %s: %v", dir, err)
	}
	return info
}

func mustGuard(t *testing.T, dir, wt string, opts Options) *Guard {
	t.Helper()
	g, err := NewGuard(dir, wt, opts)
	if err != nil {
		t.Fatalf("NewGuard(%s, %s): %v", dir, wt, err)
	}
	return g
}

// expect checks a verdict: want is "inside", or a verdict code.
func expect(t *testing.T, g *Guard, target, want string) Verdict {
	t.Helper()
	v := g.Check(target)
	got := "inside"
	if !v.Inside {
		got = v.Code
	}
	if got != want {
		t.Errorf("Check(%q) = %s (%s; physical %s), want %s", target, got, v.Reason, v.Physical, want)
	}
	if v.Inside && (v.Code != "" || v.Reason != "" || v.Root == "" || v.Rel == "") {
		t.Errorf("Check(%q): inside verdict with code %q reason %q root %q rel %q", target, v.Code, v.Reason, v.Root, v.Rel)
	}
	if !v.Inside && v.Reason == "" {
		t.Errorf("Check(%q): blocked verdict without a reason", target)
	}
	return v
}

const (
	inside  = "inside"
	outside = CodeOutside
	nested  = CodeNested
	gitdir  = CodeGitDir
)

func TestResolveLayouts(t *testing.T) {
	r := makeRepos(t)
	tests := []struct {
		name                 string
		dir                  string
		kind                 Kind
		worktree, gitDir     string
		commonDir, superproj string
	}{
		{"main checkout root", r.main, KindMain, r.main, filepath.Join(r.main, ".git"), filepath.Join(r.main, ".git"), ""},
		{"main checkout subdirectory", filepath.Join(r.main, "deep", "er"), KindMain, r.main, filepath.Join(r.main, ".git"), filepath.Join(r.main, ".git"), ""},
		{"linked worktree", r.wt, KindLinked, r.wt, filepath.Join(r.main, ".git", "worktrees", "wt"), filepath.Join(r.main, ".git"), ""},
		{"nested lane", filepath.Join(r.lane, "deep"), KindLinked, r.lane, filepath.Join(r.main, ".git", "worktrees", "lane"), filepath.Join(r.main, ".git"), ""},
		{"submodule", r.sub, KindSubmodule, r.sub, filepath.Join(r.sup, ".git", "modules", "libs", "sub"), filepath.Join(r.sup, ".git", "modules", "libs", "sub"), r.sup},
		{"submodule subdirectory", filepath.Join(r.sub, "deep", "er"), KindSubmodule, r.sub, filepath.Join(r.sup, ".git", "modules", "libs", "sub"), filepath.Join(r.sup, ".git", "modules", "libs", "sub"), r.sup},
		{"superproject", r.sup, KindMain, r.sup, filepath.Join(r.sup, ".git"), filepath.Join(r.sup, ".git"), ""},
		{"no git", r.outside, KindNone, "", "", "", ""},
		{"inside the git dir", filepath.Join(r.main, ".git", "refs"), KindNone, "", filepath.Join(r.main, ".git"), filepath.Join(r.main, ".git"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.dir == r.outside {
				if _, err := os.Lstat(filepath.Join(filepath.Dir(r.base), ".git")); err == nil {
					t.Skip("the temp dir lies inside a repository")
				}
			}
			info := mustResolve(t, tt.dir)
			if info.Directory != tt.dir || info.Kind != tt.kind || info.Worktree != tt.worktree ||
				info.GitDir != tt.gitDir || info.CommonDir != tt.commonDir || info.Superproject != tt.superproj {
				t.Errorf("got %+v\nwant dir %s kind %s worktree %s gitDir %s commonDir %s super %s",
					info, tt.dir, tt.kind, tt.worktree, tt.gitDir, tt.commonDir, tt.superproj)
			}
			if len(info.Notes) != 0 {
				t.Errorf("unexpected notes %q", info.Notes)
			}
			// Agreement with git itself where git has a worktree.
			if tt.worktree != "" {
				top := git(t, tt.dir, "rev-parse", "--show-toplevel")
				if physical(t, top) != info.Worktree {
					t.Errorf("git says top level %s, Resolve %s", top, info.Worktree)
				}
				gd := git(t, tt.dir, "rev-parse", "--absolute-git-dir")
				if physical(t, gd) != info.GitDir {
					t.Errorf("git says git dir %s, Resolve %s", gd, info.GitDir)
				}
			}
			if tt.superproj != "" {
				sp := git(t, tt.dir, "rev-parse", "--show-superproject-working-tree")
				if physical(t, sp) != info.Superproject {
					t.Errorf("git says superproject %s, Resolve %s", sp, info.Superproject)
				}
			}
		})
	}
}

// TestResolveFileArgument: a file resolves as its directory.
func TestResolveFileArgument(t *testing.T) {
	r := makeRepos(t)
	info := mustResolve(t, filepath.Join(r.main, "a.txt"))
	if info.Directory != r.main || info.Worktree != r.main {
		t.Errorf("got %+v", info)
	}
}

// go-git opens a linked worktree correctly only with EnableDotGitCommonDir:
// without it, HEAD (which lives in the common dir) does not resolve. Resolve
// agrees with the correct opening.
func TestGoGitOpensLinkedWorktreeOnlyWithCommonDir(t *testing.T) {
	r := makeRepos(t)
	repo, err := gogit.PlainOpenWithOptions(r.wt, &gogit.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true})
	if err != nil {
		t.Fatal(err)
	}
	head, err := repo.Head()
	if err != nil || head.Name().String() != "refs/heads/feat" {
		t.Errorf("with common dir: HEAD %v, %v; want refs/heads/feat", head, err)
	}
	wt, err := repo.Worktree()
	if err != nil || wt.Filesystem.Root() != r.wt {
		t.Errorf("top level %v, %v; want %s", wt, err, r.wt)
	}
	repo2, err := gogit.PlainOpenWithOptions(r.wt, &gogit.PlainOpenOptions{DetectDotGit: true})
	if err == nil {
		if _, err := repo2.Head(); err == nil {
			t.Error("HEAD resolved without EnableDotGitCommonDir; go-git was expected to fail there")
		}
	}
	// Our resolution agrees with go-git's.
	info := mustResolve(t, r.wt)
	if info.Worktree != r.wt || info.Kind != KindLinked {
		t.Errorf("Resolve: %+v", info)
	}
}

func TestBareRepository(t *testing.T) {
	needGit(t)
	base := physical(t, t.TempDir())
	bare := filepath.Join(base, "bare.git")
	git(t, base, "init", "-q", "--bare", bare)
	info := mustResolve(t, bare)
	if info.Kind != KindNone || info.Worktree != "" || info.GitDir != bare {
		t.Errorf("bare: %+v", info)
	}
	info = mustResolve(t, filepath.Join(bare, "refs", "heads"))
	if info.Kind != KindNone || info.Worktree != "" || info.GitDir != bare {
		t.Errorf("inside bare: %+v", info)
	}
}

func TestRootIsNeverAWorktree(t *testing.T) {
	info := mustResolve(t, "/")
	if info.Worktree != "" || info.Kind != KindNone {
		t.Errorf("/ resolved as %+v", info)
	}
	g := mustGuard(t, t.TempDir(), "/", Options{})
	if g.Worktree() != "" {
		t.Errorf("worktree / kept as %q", g.Worktree())
	}
	expect(t, g, "/etc/hosts", outside)
}

// A linked worktree whose admin dir is gone (prunable) is reported in a
// note and resolved as a plain directory.
func TestPrunableWorktreeIsAPlainDirectory(t *testing.T) {
	r := makeRepos(t)
	if err := os.RemoveAll(filepath.Join(r.main, ".git", "worktrees", "wt")); err != nil {
		t.Fatal(err)
	}
	info := mustResolve(t, r.wt)
	if info.Kind != KindNone || info.Worktree != "" || info.GitDir != "" {
		t.Errorf("prunable: %+v", info)
	}
	if len(info.Notes) != 1 || !strings.Contains(info.Notes[0], "prunable worktree") {
		t.Errorf("notes %q", info.Notes)
	}
	g, err := NewGuard(info.Directory, info.Worktree, Options{GitDir: info.GitDir, CommonDir: info.CommonDir})
	if err != nil {
		t.Fatal(err)
	}
	if g.Top() != r.wt {
		t.Errorf("top %s, want the directory %s", g.Top(), r.wt)
	}
	expect(t, g, "x.txt", inside)
	expect(t, g, filepath.Join(r.main, "a.txt"), outside)
}

// TestIncompleteRepository: a commondir that points nowhere is a note.
func TestIncompleteRepository(t *testing.T) {
	r := makeRepos(t)
	write(t, filepath.Join(r.main, ".git", "worktrees", "wt", "commondir"), "../../nowhere\n")
	info := mustResolve(t, r.wt)
	if info.Kind != KindNone || info.Worktree != "" || len(info.Notes) != 1 || !strings.Contains(info.Notes[0], "incomplete repository") {
		t.Errorf("incomplete: %+v", info)
	}
}

// A .git file with CRLF line endings and trailing blanks is parsed, with an
// absolute or a relative gitdir.
func TestGitFileWithCRLFAndTrailingBlanks(t *testing.T) {
	r := makeRepos(t)
	admin := filepath.Join(r.main, ".git", "worktrees", "wt")
	for _, content := range []string{
		"gitdir: " + admin + "  \r\n",
		"gitdir:\t" + admin + "\r\n\r\n",
		"gitdir: ../main/.git/worktrees/wt \r\n",
	} {
		write(t, filepath.Join(r.wt, ".git"), content)
		info := mustResolve(t, r.wt)
		if info.Kind != KindLinked || info.Worktree != r.wt || info.GitDir != admin || info.CommonDir != filepath.Join(r.main, ".git") {
			t.Errorf("%q: %+v", content, info)
		}
	}
	write(t, filepath.Join(r.wt, ".git"), "garbage\n")
	info := mustResolve(t, r.wt)
	if info.Kind != KindNone || len(info.Notes) != 1 {
		t.Errorf("garbage gitfile: %+v", info)
	}
}

// Resolve inside a real pre-commit hook of a linked worktree: the test
// captures the environment git gives the hook and resolves with that
// environment from the hook's working directory, which must agree with git.
func TestResolveInsidePreCommitHook(t *testing.T) {
	r := makeRepos(t)
	capture := filepath.Join(r.base, "capture")
	hook := "#!/bin/sh\nset -e\nout=" + capture + "\nmkdir -p \"$out\"\n" +
		"pwd -P > \"$out/pwd\"\n" +
		"printf '%s' \"$GIT_DIR\" > \"$out/GIT_DIR\"\n" +
		"printf '%s' \"$GIT_INDEX_FILE\" > \"$out/GIT_INDEX_FILE\"\n" +
		"printf '%s' \"$GIT_WORK_TREE\" > \"$out/GIT_WORK_TREE\"\n" +
		"git rev-parse --show-toplevel > \"$out/toplevel\"\n" +
		"git rev-parse --absolute-git-dir > \"$out/gitdir\"\n" +
		"git diff --cached --name-only > \"$out/staged\"\n" +
		"cp \"$GIT_INDEX_FILE\" \"$out/index\"\n"
	hookPath := filepath.Join(r.main, ".git", "hooks", "pre-commit")
	write(t, hookPath, hook)
	if err := os.Chmod(hookPath, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(r.wt, "new.txt"), "new\n")
	write(t, filepath.Join(r.wt, "a.txt"), "changed\n")
	git(t, r.wt, "add", "new.txt")
	git(t, r.wt, "commit", "-q", "-a", "-m", "from the worktree")

	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(capture, name))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	if read("GIT_INDEX_FILE") == "" {
		t.Fatal("git gave the hook no GIT_INDEX_FILE")
	}
	t.Chdir(read("pwd"))
	for _, k := range []string{"GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE"} {
		t.Setenv(k, read(k))
	}
	t.Setenv("GIT_COMMON_DIR", "")
	info, err := Resolve(".")
	if err != nil {
		t.Fatal(err)
	}
	if info.Worktree != physical(t, read("toplevel")) || info.GitDir != physical(t, read("gitdir")) || info.Kind != KindLinked {
		t.Errorf("hook resolution %+v; git says top %s git dir %s", info, read("toplevel"), read("gitdir"))
	}
	idx := read("GIT_INDEX_FILE")
	if !filepath.IsAbs(idx) {
		idx = filepath.Join(read("pwd"), idx)
	}
	if info.IndexFile != idx {
		t.Errorf("index file %s, want the hook's temporary index %s", info.IndexFile, idx)
	}
	// The captured copy of that temporary index holds what git staged.
	f, err := os.Open(filepath.Join(capture, "index"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ix index.Index
	if err := index.NewDecoder(f).Decode(&ix); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ix.Entries {
		names = append(names, e.Name)
	}
	if got := strings.Join(names, ","); !strings.Contains(got, "new.txt") || !strings.Contains(got, "a.txt") {
		t.Errorf("temporary index entries %s", got)
	}
	if staged := read("staged"); staged != "a.txt\nnew.txt" {
		t.Errorf("git staged %q", staged)
	}
}

// TestGitEnvWorkTree: GIT_DIR plus GIT_WORK_TREE from the environment.
func TestGitEnvWorkTree(t *testing.T) {
	r := makeRepos(t)
	env := map[string]string{"GIT_DIR": filepath.Join(r.main, ".git"), "GIT_WORK_TREE": r.main}
	info, err := resolveEnv(r.outside, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if info.Worktree != r.main || info.Kind != KindMain || info.Directory != r.outside {
		t.Errorf("%+v", info)
	}
	// Without GIT_WORK_TREE, git takes the working directory as the top.
	delete(env, "GIT_WORK_TREE")
	t.Chdir(r.main)
	info, err = resolveEnv(filepath.Join(r.main, "deep"), func(k string) string { return env[k] })
	if err != nil || info.Worktree != r.main || info.Directory != filepath.Join(r.main, "deep") || info.Kind != KindMain {
		t.Errorf("GIT_DIR alone: %+v %v", info, err)
	}
	// A relative GIT_DIR is taken against the working directory, as in a
	// main checkout's hooks.
	env["GIT_DIR"] = ".git"
	info, err = resolveEnv(r.main, func(k string) string { return env[k] })
	if err != nil || info.GitDir != filepath.Join(r.main, ".git") || info.Worktree != r.main {
		t.Errorf("relative GIT_DIR: %+v %v", info, err)
	}
	env["GIT_COMMON_DIR"] = filepath.Join(r.main, ".git")
	env["GIT_DIR"] = filepath.Join(r.main, ".git", "worktrees", "wt")
	env["GIT_WORK_TREE"] = r.wt
	info, err = resolveEnv(r.wt, func(k string) string { return env[k] })
	if err != nil || info.Kind != KindLinked || info.CommonDir != filepath.Join(r.main, ".git") {
		t.Errorf("%+v %v", info, err)
	}
	// A bare repository named by GIT_DIR has no worktree.
	bare := filepath.Join(r.base, "bare.git")
	git(t, r.base, "init", "-q", "--bare", bare)
	info, err = resolveEnv(r.outside, func(k string) string { return map[string]string{"GIT_DIR": bare}[k] })
	if err != nil || info.Kind != KindNone || info.Worktree != "" || info.GitDir != bare {
		t.Errorf("bare GIT_DIR: %+v %v", info, err)
	}
}

func TestContainmentCases(t *testing.T) {
	r := makeRepos(t)
	if err := os.Symlink(r.outside, filepath.Join(r.main, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(r.outside, "new.txt"), filepath.Join(r.main, "new")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("deep", filepath.Join(r.main, "inlink")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(r.main, filepath.Join(r.main, "deep", "abslink")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("loop2", filepath.Join(r.main, "loop1")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("loop1", filepath.Join(r.main, "loop2")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(r.main, ".git"), filepath.Join(r.main, "gitlink")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(r.main, "..cfg"), "")
	deep := filepath.Join(r.main, "deep", "er")

	mainG := mustGuard(t, r.main, r.main, Options{})
	deepG := mustGuard(t, deep, r.main, Options{})
	wtG := mustGuard(t, r.wt, r.wt, Options{})
	laneG := mustGuard(t, r.lane, r.lane, Options{})
	subG := mustGuard(t, r.sub, r.sub, Options{})
	supG := mustGuard(t, r.sup, r.sup, Options{})
	mainNested := mustGuard(t, r.main, r.main, Options{AllowNested: true})

	tests := []struct {
		name   string
		g      *Guard
		target string
		want   string
	}{
		{"new file", mainG, "a/b.txt", inside},
		{"existing file", mainG, "a.txt", inside},
		{"the root itself", mainG, ".", inside},
		{"worktree file above a subdirectory session", deepG, "../../a.txt", inside},
		{"file in a subdirectory session", deepG, "x.txt", inside},
		{"main checkout file from a linked worktree, absolute", wtG, filepath.Join(r.main, "a.txt"), outside},
		{"main checkout file from a linked worktree, by ../main", wtG, "../main/a.txt", outside},
		{"main's common git dir from a linked worktree", wtG, filepath.Join(r.main, ".git", "config"), gitdir},
		{"main checkout file from a nested lane", laneG, "../../../a.txt", outside},
		{"nested lane from the main session", mainG, ".slim/worktrees/lane/x.txt", nested},
		{"existing file of a nested lane from the main session", mainG, ".slim/worktrees/lane/a.txt", nested},
		{"nested lane allowed by AllowNested", mainNested, ".slim/worktrees/lane/x.txt", inside},
		{"beside the nested lane", mainG, ".slim/notes.txt", inside},
		{"superproject file from the submodule", subG, filepath.Join(r.sup, "a.txt"), outside},
		{"superproject file by ../..", subG, "../../a.txt", outside},
		{"submodule from the superproject", supG, "libs/sub/a.txt", nested},
		{"new file in the submodule from the superproject", supG, "libs/sub/new/x.txt", nested},
		{"submodule file from the submodule", subG, "a.txt", inside},
		{"system file /etc/hosts", mainG, "/etc/hosts", outside},
		{"existing file through a directory link out", mainG, "link/f.txt", outside},
		{"missing file through a directory link out", mainG, "link/missing/child.txt", outside},
		{"dangling link out", mainG, "new", outside},
		{"relative link inside", mainG, "inlink/x", inside},
		{"absolute link inside", mainG, "deep/abslink/deep/y", inside},
		{"sibling of the root", mainG, "../outside.txt", outside},
		{"climb out through a subdirectory", mainG, "sub/../../x", outside},
		{"..foo is a name", mainG, "..foo/x", inside},
		{"..cfg is a name", mainG, "..cfg", inside},
		{"absolute path outside", mainG, filepath.Join(r.outside, "x"), outside},
		{"missing then .. then link out", mainG, "missing/../link/x", outside},
		{"link loop", mainG, "loop1/x", outside},
		{".git component", mainG, ".git/config", gitdir},
		{".git new hook", mainG, ".git/hooks/pre-commit", gitdir},
		{".git in a subdirectory", mainG, "deep/.git/x", gitdir},
		{".git itself", mainG, ".git", gitdir},
		{"link into .git", mainG, "gitlink/config", gitdir},
		{"linked worktree's .git file", wtG, ".git", gitdir},
		{"lane's admin dir from the lane", laneG, filepath.Join(r.main, ".git", "worktrees", "lane", "HEAD"), gitdir},
		{"submodule's git dir from the superproject", supG, ".git/modules/libs/sub/config", gitdir},
		{"NUL byte", mainG, "a\x00b", outside},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := expect(t, tt.g, tt.target, tt.want)
			if v.Inside {
				// The physical path lies below the verdict's root.
				if !hasPathPrefix(v.Physical, v.Root) && !strings.EqualFold(v.Physical, v.Root) {
					t.Errorf("physical %s not below root %s", v.Physical, v.Root)
				}
			}
		})
	}

	// Details the table does not show.
	if v := mainG.Check("new"); v.Physical != filepath.Join(r.outside, "new.txt") || v.BySpelling {
		t.Errorf("dangling link out: physical %s, bySpelling %v", v.Physical, v.BySpelling)
	}
	if v := mainG.Check("link/f.txt"); v.BySpelling || !strings.Contains(v.Reason, "symbolic link") {
		t.Errorf("directory link out: bySpelling %v reason %q", v.BySpelling, v.Reason)
	}
	if v := mainG.Check("../outside.txt"); !v.BySpelling {
		t.Error("../outside.txt must be outside by spelling")
	}
	if v := mainG.Check(".slim/worktrees/lane/x.txt"); v.Room != r.lane {
		t.Errorf("nested lane: room %q, want %s", v.Room, r.lane)
	}
	if v := supG.Check("libs/sub/a.txt"); v.Room != r.sub {
		t.Errorf("submodule: room %q, want %s", v.Room, r.sub)
	}
	if v := mainG.Check("inlink/x"); v.Rel != filepath.Join("deep", "x") || v.Root != r.main {
		t.Errorf("relative link inside: root %s rel %s", v.Root, v.Rel)
	}
	if v := deepG.Check("../../a.txt"); v.Root != r.main || v.Rel != "a.txt" {
		t.Errorf("worktree above a subdirectory session: root %s rel %s", v.Root, v.Rel)
	}
}

// A root given through a symbolic link: the top is the physical directory,
// and targets spelled through either path are inside.
func TestSymlinkedRoot(t *testing.T) {
	needGit(t)
	base := physical(t, t.TempDir())
	real := newRepo(t, filepath.Join(base, "real"))
	alias := filepath.Join(base, "alias")
	if err := os.Symlink(real, alias); err != nil {
		t.Fatal(err)
	}
	for _, root := range []string{real, alias} {
		g := mustGuard(t, root, root, Options{})
		if g.Top() != real {
			t.Errorf("top %s, want %s", g.Top(), real)
		}
		for _, target := range []string{filepath.Join(real, "x"), filepath.Join(alias, "x"), filepath.Join(alias, "a.txt"), "y"} {
			v := expect(t, g, target, inside)
			if v.Root != real {
				t.Errorf("root %s", v.Root)
			}
		}
		expect(t, g, filepath.Join(alias, ".git", "config"), gitdir)
	}
}

// caseInsensitiveTemp reports whether the temp volume ignores case.
func caseInsensitiveTemp(t *testing.T) (string, bool) {
	base := physical(t, t.TempDir())
	d := filepath.Join(base, "Proj")
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	a, err1 := os.Stat(d)
	b, err2 := os.Stat(filepath.Join(base, "proj"))
	return d, err1 == nil && err2 == nil && os.SameFile(a, b)
}

// On a case-insensitive volume, a target spelled in another case is inside
// by file identity, and .GIT is the git directory.
func TestCaseInsensitiveVolume(t *testing.T) {
	d, ci := caseInsensitiveTemp(t)
	if !ci {
		t.Skip("the temp volume is case-sensitive (probed: Proj and proj are different files); this test needs a case-insensitive volume")
	}
	g := mustGuard(t, d, "", Options{})
	lower := filepath.Join(filepath.Dir(d), "proj")
	expect(t, g, filepath.Join(lower, "x"), inside)
	expect(t, g, filepath.Join(lower, ".GIT", "x"), gitdir)
}

// The Windows containment rules that are lexical (drive letters compared
// without case, other drives, drive-relative paths, UNC shares, reserved
// device names, streams, trailing dots and spaces), with the win32 flavor
// on any OS; junctions need Windows (TestWindowsDrivesAndJunctions).
func TestWin32PathLogic(t *testing.T) {
	f := hostpath.Win32
	tests := []struct {
		root, target string
		want         bool
	}{
		{`C:\r`, `c:\r\x`, true},
		{`c:\r`, `C:\R\x`, true},
		{`C:\r`, `D:\r\x`, false},
		{`C:\r`, `D:x`, false},
		{`C:\r`, `C:\r\..\s`, false},
		{`C:\r`, `C:\r\..foo\x`, true},
		{`\\srv\share\r`, `\\SRV\share\r\x`, true},
		{`\\srv\share\r`, `\\srv\other\r\x`, false},
		{`C:\r`, `\\?\C:\r\x`, false}, // the host's lexical view; the OS decides physically
	}
	for _, tt := range tests {
		abs := f.Resolve(tt.root, tt.target)
		if got := relInside(f, f.Resolve(tt.root, tt.root), abs); got != tt.want {
			t.Errorf("win32 %s in %s (abs %s) = %v, want %v", tt.target, tt.root, abs, got, tt.want)
		}
	}
	for _, tt := range []struct {
		p, dir string
		want   bool
	}{{`D:x`, `C:\r`, true}, {`d:`, `C:\r`, true}, {`c:x`, `C:\r`, false}, {`D:\x`, `C:\r`, false}, {`x`, `C:\r`, false}} {
		if got := isOtherDriveRelative(tt.p, tt.dir); got != tt.want {
			t.Errorf("isOtherDriveRelative(%q, %q) = %v", tt.p, tt.dir, got)
		}
	}
	bad := []string{`C:\r\NUL`, `C:\r\com1.txt`, `C:\r\f.txt:stream`, `C:\r\dir.\x`, `C:\r\x `, `C:\r\CON\x`}
	for _, p := range bad {
		if winNameProblem(p) == "" {
			t.Errorf("%s accepted", p)
		}
	}
	good := []string{`C:\r\x`, `C:\r\..cfg`, `\\srv\share\a\b`, `C:\r\console.txt`, `C:\r\.git`}
	for _, p := range good {
		if why := winNameProblem(p); why != "" {
			t.Errorf("%s refused: %s", p, why)
		}
	}
	// A win32 host's paths cannot be walked on a posix machine: outside.
	if runtime.GOOS != "windows" {
		g := mustGuard(t, t.TempDir(), "", Options{})
		g.flavor = hostpath.Win32
		g.rawDir = `C:\r`
		v := g.Check(`x`)
		if v.Inside || v.Abs != `C:\r\x` {
			t.Errorf("win32 path on posix: %+v", v)
		}
	}
}

// Drive letters in either case, another drive, and a junction that points
// outside, on a real Windows volume.
func TestWindowsDrivesAndJunctions(t *testing.T) {
	if runtime.GOOS != "windows" {
		t.Skip("drive letters, junctions and 8.3 names exist only on Windows; their path logic is covered by TestWin32PathLogic and the hostpath vectors")
	}
	base := physical(t, t.TempDir())
	root := filepath.Join(base, "r")
	out := filepath.Join(base, "out")
	for _, d := range []string{root, out} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	g := mustGuard(t, root, "", Options{Flavor: hostpath.Win32})
	expect(t, g, strings.ToLower(root[:1])+root[1:]+`\x`, inside)
	expect(t, g, strings.ToUpper(root[:1])+root[1:]+`\x`, inside)
	other := "D:"
	if strings.EqualFold(root[:1], "D") {
		other = "E:"
	}
	expect(t, g, other+`\r\x`, outside)
	// A junction in the root that points outside.
	junction := filepath.Join(root, "j")
	if out, err := exec.Command("cmd", "/c", "mklink", "/J", junction, out).CombinedOutput(); err != nil {
		t.Logf("mklink /J failed (%v: %s); junction case not run", err, out)
	} else {
		expect(t, g, `j\x.txt`, outside)
	}
	// 8.3 aliases need short-name generation on the volume, which is often
	// off; the identity comparison covers them like any other second
	// spelling (TestSymlinkedRoot).
}

// A directory checked inside and then swapped for a link to outside is
// refused by os.Root at write time.
func TestRootRefusesSwappedLink(t *testing.T) {
	base := physical(t, t.TempDir())
	rootDir := filepath.Join(base, "root")
	outsideDir := filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(rootDir, "dir"), outsideDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	g := mustGuard(t, rootDir, "", Options{})
	v := expect(t, g, "dir/f.txt", inside)
	rel, err := g.RelToTop(v)
	if err != nil {
		t.Fatal(err)
	}
	// The swap, after the check.
	if err := os.Remove(filepath.Join(rootDir, "dir")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outsideDir, filepath.Join(rootDir, "dir")); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(g.Top())
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	f, err := root.Create(rel)
	if err == nil {
		f.Close()
		t.Fatal("os.Root wrote through the swapped link")
	}
	if _, err := os.Stat(filepath.Join(outsideDir, "f.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file appeared outside: %v", err)
	}
	// And a fresh check now sees the link.
	expect(t, g, "dir/f.txt", outside)
}

// On volumes that treat NFC and NFD as one name (APFS), a directory made in
// NFD and addressed in NFC is inside.
func TestUnicodeNormalisation(t *testing.T) {
	base := physical(t, t.TempDir())
	nfd := filepath.Join(base, "cafe\u0301")
	if err := os.Mkdir(nfd, 0o755); err != nil {
		t.Fatal(err)
	}
	nfc := filepath.Join(base, "caf\u00e9")
	a, _ := os.Stat(nfd)
	b, err := os.Stat(nfc)
	if err != nil || !os.SameFile(a, b) {
		t.Skip("the temp volume keeps NFC and NFD names apart (probed); this test needs a normalising volume such as APFS")
	}
	g := mustGuard(t, nfd, "", Options{})
	expect(t, g, filepath.Join(nfc, "x"), inside)
}

// A hard-linked file is inside, with a warning that names its link count.
func TestHardLinkIsInsideWithAWarning(t *testing.T) {
	base := physical(t, t.TempDir())
	rootDir := filepath.Join(base, "root")
	write(t, filepath.Join(base, "outside", "h.txt"), "shared\n")
	if err := os.MkdirAll(rootDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(base, "outside", "h.txt"), filepath.Join(rootDir, "h.txt")); err != nil {
		t.Skipf("hard links not supported here: %v", err)
	}
	g := mustGuard(t, rootDir, "", Options{})
	v := expect(t, g, "h.txt", inside)
	if runtime.GOOS != "windows" && (len(v.Warnings) != 1 || !strings.Contains(v.Warnings[0], "2 hard links")) {
		t.Errorf("warnings %q", v.Warnings)
	}
	write(t, filepath.Join(rootDir, "single.txt"), "x")
	if v := g.Check("single.txt"); len(v.Warnings) != 0 {
		t.Errorf("warning for a single link: %q", v.Warnings)
	}
}

func TestBlockErrorMessages(t *testing.T) {
	r := makeRepos(t)
	g := mustGuard(t, r.main, r.main, Options{})
	tests := []struct {
		target, code, msg string
	}{
		{"../x", outside, "apply_patch blocked: patch contains path outside workspace root: " + filepath.Join(r.base, "x")},
		{".slim/worktrees/lane/f", nested, "apply_patch blocked: patch contains path inside nested worktree " + r.lane + ": " + filepath.Join(r.lane, "f")},
		{".git/config", gitdir, "apply_patch blocked: patch writes inside the git directory: " + filepath.Join(r.main, ".git", "config")},
	}
	for _, tt := range tests {
		err := g.BlockError("apply_patch", g.Check(tt.target))
		var be *BlockedError
		if !errors.As(err, &be) || be.Verdict.Code != tt.code || be.Message != tt.msg {
			t.Errorf("%s: %+v\nwant %s", tt.target, err, tt.msg)
		}
	}
	if err := g.BlockError("apply_patch", g.Check("a.txt")); err != nil {
		t.Errorf("inside verdict gave %v", err)
	}
}

func TestRelToTop(t *testing.T) {
	base := physical(t, t.TempDir())
	wt := filepath.Join(base, "wt")
	dir := filepath.Join(base, "elsewhere")
	for _, d := range []string{wt, dir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	g := mustGuard(t, dir, wt, Options{})
	if g.Top() != wt {
		t.Fatalf("top %s", g.Top())
	}
	v := expect(t, g, filepath.Join(wt, "a", "b"), inside)
	if rel, err := g.RelToTop(v); err != nil || rel != filepath.Join("a", "b") {
		t.Errorf("rel %q %v", rel, err)
	}
	v = expect(t, g, "c", inside) // in the directory, which lies outside the worktree
	if _, err := g.RelToTop(v); err == nil || v.Root != dir {
		t.Errorf("directory outside the worktree: root %s, err %v", v.Root, err)
	}
	if _, err := g.RelToTop(g.Check("../x")); err == nil {
		t.Error("RelToTop of an outside verdict")
	}
}

func TestNewGuardErrors(t *testing.T) {
	for _, tt := range []struct{ dir, wt string }{
		{"", ""},
		{"relative", ""},
		{filepath.Join(t.TempDir(), "missing"), ""},
		{t.TempDir(), filepath.Join(t.TempDir(), "missing")},
		{t.TempDir(), "rel"},
		{"/a\x00b", ""},
	} {
		if _, err := NewGuard(tt.dir, tt.wt, Options{}); err == nil {
			t.Errorf("NewGuard(%q, %q) succeeded", tt.dir, tt.wt)
		}
	}
}
