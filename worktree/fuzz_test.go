package worktree

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fuzzFixture builds a root full of links that lead in, out, nowhere and in
// circles, a nested room and a sibling directory outside.
func fuzzFixture(t testing.TB) (base, root string) {
	base = physical(t, t.TempDir())
	root = filepath.Join(base, "root")
	out := filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(root, "in", "deeper"), filepath.Join(root, "nest", ".git"), out} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(root, "in", "f.txt"), "in\n")
	write(t, filepath.Join(root, "..cfg"), "")
	write(t, filepath.Join(out, "f.txt"), "out\n")
	links := map[string]string{
		"lout":           "../outside",
		"labs":           out,
		"dang":           "../outside/nofile",
		"danglong":       "../outside/no/such/dir",
		"lin":            "in",
		"lloop":          "lloop",
		"lup":            "..",
		"in/lroot":       "..",
		"in/deeper/lout": "../../../outside/f.txt",
		"lnest":          "nest",
		"lchain":         "lin/lroot/lout",
		"lself":          ".",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	return base, root
}

// realPhysical resolves p the way the OS does, as far as it exists:
// filepath.EvalSymlinks of the longest existing prefix, with the rest
// re-attached.
func realPhysical(p string) string {
	rest := ""
	for cur := p; ; {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			if rest == "" {
				return r
			}
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// FuzzContainment: no target judged inside resolves, through the real file
// system, outside the root, into the nested room or into a .git directory.
func FuzzContainment(f *testing.F) {
	_, root := fuzzFixture(f)
	g, err := NewGuard(root, "", Options{})
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		"a.txt", "in/f.txt", "lout/f.txt", "labs/x", "dang", "danglong/x", "lin/x", "lloop/x",
		"lup/root/in/f.txt", "in/lroot/lout/x", "in/deeper/lout", "lnest/x", "nest/x", "lchain/x",
		"lself/lself/in/x", "..cfg", "..foo/x", "../root/in/x", "../outside/f.txt", "/etc/passwd",
		"in/../lout/x", "missing/../lout/x", ".git/x", "in/.git", "nest/.git/config", root + "/in/x",
		"lup/outside/f.txt", "./././in//f.txt", "", ".", "..",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, target string) {
		v := g.Check(target)
		if !v.Inside {
			if v.Code == "" || v.Reason == "" {
				t.Fatalf("%q: blocked without code or reason: %+v", target, v)
			}
			return
		}
		real := realPhysical(v.Abs)
		if !hasPathPrefix(real, root) {
			t.Fatalf("%q judged inside, but the OS resolves %s to %s, outside %s", target, v.Abs, real, root)
		}
		if !hasPathPrefix(v.Physical, root) {
			t.Fatalf("%q judged inside with physical %s outside %s", target, v.Physical, root)
		}
		if hasPathPrefix(real, filepath.Join(root, "nest")) && real != filepath.Join(root, "nest") {
			t.Fatalf("%q judged inside, but resolves into the nested room: %s", target, real)
		}
		for _, c := range strings.Split(filepath.ToSlash(real), "/") {
			if c == ".git" {
				t.Fatalf("%q judged inside, but resolves into a .git directory: %s", target, real)
			}
		}
		// The relative form handed to os.Root operations at the top does
		// not climb out of it.
		if rel, err := g.RelToTop(v); err != nil || filepath.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			t.Fatalf("%q: rel %q, %v", target, rel, err)
		}
	})
}

// FuzzParseDotGit feeds arbitrary bytes to the `.git` file and config
// parsers: they never panic, and a parsed gitdir is one trimmed line.
func FuzzParseDotGit(f *testing.F) {
	for _, s := range []string{
		"gitdir: /a/b\n", "gitdir: ../x \r\n", "gitdir:\t\r\n", "garbage", "",
		"[core]\n\tbare = true\n\tworktree = ../../x\n", "[CORE]\nbare=1\n[other]\nbare=true\n",
		"gitdir: a\nsecond line\n", "\xff\xfe",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if dir, err := parseGitFile(b); err == nil {
			if dir == "" || dir != strings.TrimSpace(dir) || strings.ContainsAny(dir, "\n") {
				t.Fatalf("gitdir %q from %q", dir, b)
			}
		}
		c := parseCoreConfig(b)
		if strings.ContainsAny(c.worktree, "\n") {
			t.Fatalf("worktree %q spans lines", c.worktree)
		}
	})
}
