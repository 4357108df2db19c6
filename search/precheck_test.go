package search

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/slimgate/slim/worktree/hostpath"
)

const (
	missingPrefix = "Search path does not exist: "
	invalidPrefix = "Search path is invalid: "
)

// want describes an expected outcome.
type want struct {
	block    string   // "" pass, "missing" or "invalid"
	contains []string // substrings of the block message
	args     map[string]any
	err      bool // the stat failed for another reason: pass and report
}

func check(t *testing.T, name string, got Outcome, err error, w want) {
	t.Helper()
	if (err != nil) != w.err {
		t.Fatalf("%s: err = %v, want error %v", name, err, w.err)
	}
	switch w.block {
	case "":
		if got.Block != "" {
			t.Fatalf("%s: blocked with %q, want pass", name, got.Block)
		}
	case "missing":
		if !strings.HasPrefix(got.Block, missingPrefix) {
			t.Fatalf("%s: %q, want a missing-path block", name, got.Block)
		}
	case "invalid":
		if !strings.HasPrefix(got.Block, invalidPrefix) || !strings.Contains(got.Block, "ENOTDIR") {
			t.Fatalf("%s: %q, want an ENOTDIR block", name, got.Block)
		}
	}
	for _, s := range w.contains {
		if !strings.Contains(got.Block, s) {
			t.Fatalf("%s: message %q lacks %q", name, got.Block, s)
		}
	}
	if !reflect.DeepEqual(got.Args, w.args) {
		t.Fatalf("%s: args %v, want %v", name, got.Args, w.args)
	}
}

func mkfile(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestPrecheckCases(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	mkfile(t, filepath.Join(root, "file.txt"))
	mkfile(t, filepath.Join(root, "reg-file.txt"))
	mkfile(t, filepath.Join(root, "f.txt"))
	os.MkdirAll(filepath.Join(root, "subdir"), 0o755)
	os.MkdirAll(filepath.Join(root, "spaced dir "), 0o755)
	os.MkdirAll(filepath.Join(base, "sibling"), 0o755)
	os.Symlink("/nonexistent/slim-test-target", filepath.Join(root, "dangling"))
	os.Symlink("loop2", filepath.Join(root, "loop1"))
	os.Symlink("loop1", filepath.Join(root, "loop2"))
	proj := filepath.Join(base, "w", "proj")
	os.MkdirAll(filepath.Join(proj, "src"), 0o755)

	v1 := Host{Generation: "v1", Platform: "linux", Directory: root, Cwd: base}
	v2 := v1
	v2.Generation = "v2"
	noDir := v1
	noDir.Directory = ""
	relDir := Host{Generation: "v1", Platform: "linux", Directory: "root", Cwd: base}
	relDirV2 := relDir
	relDirV2.Generation = "v2"
	projHost := Host{Generation: "v1", Platform: "linux", Directory: proj, Cwd: proj}

	type tc struct {
		name string
		tool string
		args map[string]any
		host Host
		want want
	}
	p := func(v any) map[string]any { return map[string]any{"pattern": "x", "path": v} }
	cases := []tc{
		{"grep on a missing absolute path is blocked", "grep", p(filepath.Join(root, "does-not-exist", "missing.txt")), v1,
			want{block: "missing", contains: []string{filepath.Join(root, "does-not-exist", "missing.txt"), "does not exist"}}},
		{"glob on a missing relative path is blocked", "glob", p("no-such-dir"), v1, want{block: "missing", contains: []string{filepath.Join(root, "no-such-dir")}}},
		{"grep on an existing file passes", "grep", p(filepath.Join(root, "file.txt")), v1, want{}},
		{"glob on an existing directory passes", "glob", p("subdir"), v1, want{}},
		{"without a session directory a relative path passes", "grep", p("definitely-missing-relative"), noDir, want{}},
		{"without a session directory a missing absolute path passes", "grep", p(filepath.Join(root, "missing-abs")), noDir, want{}},
		{"read is not checked", "read", p("missing"), v1, want{}},
		{"bash is not checked", "bash", p("missing"), v1, want{}},
		{"ast_grep_search is not checked", "ast_grep_search", p("missing"), v1, want{}},
		{"tool names match exactly: Grep is not checked", "Grep", p("missing"), v1, want{}},
		{"no args pass", "grep", nil, v1, want{}},
		{"args without a path pass", "grep", map[string]any{}, v1, want{}},
		{"a number path passes", "grep", p(42), v1, want{}},
		{"a json.Number path passes", "grep", p(json.Number("42")), v1, want{}},
		{"a null path passes", "grep", p(nil), v1, want{}},
		{"an empty path passes", "grep", p(""), v1, want{}},
		{"the string undefined is an ordinary name", "grep", p("undefined"), v1, want{block: "missing", contains: []string{filepath.Join(root, "undefined")}}},
		{"the string null is an ordinary name", "glob", p("null"), v1, want{block: "missing", contains: []string{filepath.Join(root, "null")}}},
		{"spaces around a missing path are kept", "glob", p("  padded-missing-dir  "), v1,
			want{block: "missing", contains: []string{root + "/  padded-missing-dir   (from \"  padded-missing-dir  \")"}}},
		{"a directory whose name ends in a space exists", "glob", p("spaced dir "), v1, want{}},
		{"grep below a file is invalid", "grep", p("reg-file.txt/child"), v1, want{block: "invalid", contains: []string{filepath.Join(root, "reg-file.txt", "child")}}},
		{"glob below a file is invalid", "glob", p("reg-file.txt/child"), v1, want{block: "invalid"}},
		{"v1 grep joins the path to a relative directory", "grep", p("missing"), relDir, want{block: "missing", contains: []string{missingPrefix + "root/missing (from \"missing\")."}}},
		{"glob resolves a relative directory", "glob", p("missing"), relDir, want{block: "missing", contains: []string{missingPrefix + filepath.Join(root, "missing") + " (from"}}},
		{"v2 grep resolves a relative directory", "grep", p("missing"), relDirV2, want{block: "missing", contains: []string{missingPrefix + filepath.Join(root, "missing") + " (from"}}},
		{"a dangling symlink is missing", "grep", p("dangling"), v1, want{block: "missing", contains: []string{filepath.Join(root, "dangling")}}},
		{"a symlink loop passes with the error reported", "glob", p("loop1"), v1, want{err: true}},
		{"grep keeps a trailing slash, so a file with one is invalid", "grep", p("f.txt/"), v1, want{block: "invalid", contains: []string{root + "/f.txt/ (from \"f.txt/\")"}}},
		{"glob drops a trailing slash", "glob", p("f.txt/"), v1, want{}},
		{"an existing path outside the project passes", "grep", p("../sibling"), v1, want{}},
		{"a stale absolute grep path is moved onto the project", "grep", map[string]any{"pattern": "TODO", "path": "/old/home/proj/src", "include": "*.go"}, projHost,
			want{args: map[string]any{"pattern": "TODO", "path": filepath.Join(proj, "src"), "include": "*.go"}}},
		{"a stale absolute glob path is moved onto the project", "glob", p("/elsewhere/proj/src"), projHost, want{args: p(filepath.Join(proj, "src"))}},
		{"a stale absolute path from a v2 host is moved onto the project", "grep", p("/old/proj"), Host{Generation: "v2", Directory: proj, Cwd: proj}, want{args: p(proj)}},
		{"stale path whose tail is missing is blocked", "grep", p("/old/home/proj/nope"), projHost,
			want{block: "missing", contains: []string{"/old/home/proj/nope (from \"/old/home/proj/nope\")"}}},
		{"stale path with no shared component is blocked", "grep", p("/a/b/c"), projHost, want{block: "missing"}},
		{"the directory's name twice is ambiguous", "grep", p("/x/proj/y/proj/src"), projHost, want{block: "missing"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var before map[string]any
			if c.args != nil {
				before = map[string]any{}
				for k, v := range c.args {
					before[k] = v
				}
			}
			got, err := Precheck(c.tool, c.args, c.host)
			check(t, c.name, got, err, c.want)
			if c.args != nil && !reflect.DeepEqual(c.args, before) {
				t.Fatalf("the input args were modified: %v", c.args)
			}
		})
	}
}

func TestPrecheckOtherStatErrorsPass(t *testing.T) {
	// An unreadable directory gives EACCES, which must never read as
	// "missing". The stat is injected so the case runs as root too.
	errs := []error{
		&fs.PathError{Op: "stat", Path: "x", Err: syscall.EACCES},
		&fs.PathError{Op: "stat", Path: "x", Err: syscall.ELOOP},
		&fs.PathError{Op: "stat", Path: "x", Err: syscall.ENAMETOOLONG},
		&fs.PathError{Op: "stat", Path: "x", Err: syscall.EINVAL},
		errors.New("something else"),
	}
	for _, e := range errs {
		got, err := precheck("grep", map[string]any{"path": "locked/x"}, Host{Generation: "v1", Directory: "/r", Cwd: "/r"},
			func(string) (fs.FileInfo, error) { return nil, e })
		if got.Block != "" || got.Args != nil || err == nil || !errors.Is(err, e) {
			t.Fatalf("%v: got %+v, %v; want pass with the error reported", e, got, err)
		}
	}
	if os.Geteuid() != 0 {
		dir := t.TempDir()
		locked := filepath.Join(dir, "locked")
		os.Mkdir(locked, 0o755)
		mkfile(t, filepath.Join(locked, "x"))
		os.Chmod(locked, 0)
		defer os.Chmod(locked, 0o755)
		got, err := Precheck("grep", map[string]any{"path": "locked/x"}, Host{Generation: "v1", Directory: dir, Cwd: dir})
		if got.Block != "" || err == nil {
			t.Fatalf("real EACCES: got %+v, %v", got, err)
		}
	}
}

func TestResolvePathWin32(t *testing.T) {
	// Win32 rules through hostpath, whatever the running OS.
	w := hostpath.Win32
	tests := []struct {
		gen, tool, dir, cwd, raw, want string
	}{
		{"v1", "grep", `D:\workspace`, `D:\workspace`, `C:src`, `D:\workspace\C:src`},
		{"v1", "glob", `D:\workspace`, `D:\workspace`, `C:src`, `C:\src`},
		{"v2", "grep", `D:\workspace`, `D:\workspace`, `C:src`, `C:\src`},
		{"v1", "glob", `D:\workspace`, `D:\workspace`, `D:src`, `D:\workspace\src`},
		{"v1", "grep", `D:\workspace`, `D:\workspace`, `D:src`, `D:\workspace\D:src`},
		{"v1", "grep", `D:\workspace`, `D:\workspace`, `\src`, `\src`},
		{"v2", "glob", `D:\workspace`, `D:\workspace`, `\\srv\share\x`, `\\srv\share\x`},
		{"v1", "grep", `D:\workspace`, `D:\workspace`, `sub\dir\`, `D:\workspace\sub\dir\`},
		{"v1", "glob", `D:\workspace`, `D:\workspace`, `sub\dir\`, `D:\workspace\sub\dir`},
	}
	for _, tc := range tests {
		if got := resolvePath(w, tc.gen, tc.tool, tc.dir, tc.cwd, tc.raw); got != tc.want {
			t.Errorf("%s %s %q: %q, want %q", tc.gen, tc.tool, tc.raw, got, tc.want)
		}
	}
}

func TestPrecheckWin32(t *testing.T) {
	// The whole pre-check with win32 rules and a stat that knows a few
	// Windows paths, so the lexical logic is tested end to end on any OS.
	exists := map[string]bool{`D:\workspace`: true, `D:\workspace\src`: true, `D:\workspace\f.txt`: false}
	stat := func(name string) (fs.FileInfo, error) {
		isDir, ok := exists[name]
		if !ok {
			if strings.HasPrefix(name, `D:\workspace\f.txt\`) {
				return nil, &fs.PathError{Op: "stat", Path: name, Err: syscall.ENOTDIR}
			}
			return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
		}
		_ = isDir
		return nil, nil
	}
	h := Host{Generation: "v1", Platform: "win32", Directory: `D:\workspace`, Cwd: `D:\workspace`}
	tests := []struct {
		tool string
		raw  string
		w    want
	}{
		{"grep", `src`, want{}},
		{"glob", `C:src`, want{block: "missing", contains: []string{missingPrefix + `C:\src (from "C:src").`}}},
		{"grep", `C:src`, want{block: "missing", contains: []string{missingPrefix + `D:\workspace\C:src (from "C:src").`}}},
		{"grep", `f.txt\child`, want{block: "invalid", contains: []string{invalidPrefix + `D:\workspace\f.txt\child (from "f.txt\child").`}}},
		{"grep", `E:\old\home\WORKSPACE\src`, want{args: map[string]any{"path": `D:\workspace\src`}}},
		{"glob", `\\srv\share\workspace\src`, want{args: map[string]any{"path": `D:\workspace\src`}}},
	}
	for _, tc := range tests {
		got, err := precheck(tc.tool, map[string]any{"path": tc.raw}, h, stat)
		check(t, tc.tool+" "+tc.raw, got, err, tc.w)
	}
}

func TestMessagesSayWhatToDo(t *testing.T) {
	m := missingMessage("grep", "/r/x", "x")
	if !strings.HasPrefix(m, `Search path does not exist: /r/x (from "x"). `) || !strings.Contains(m, "grep") {
		t.Fatal(m)
	}
	i := invalidMessage("glob", "/r/f/x", "f/x")
	if !strings.HasPrefix(i, `Search path is invalid: /r/f/x (from "f/x"). `) || !strings.Contains(i, "ENOTDIR") {
		t.Fatal(i)
	}
}

func FuzzPrecheck(f *testing.F) {
	dir := f.TempDir()
	mkfileF(f, filepath.Join(dir, "a", "b.txt"))
	f.Add("grep", "a/b.txt", "v1", "linux", true, "")
	f.Add("glob", "/old/x/a", "v2", "linux", true, "")
	f.Add("grep", `C:src`, "v1", "win32", false, `D:\w`)
	f.Add("glob", `\\srv\share`, "v2", "win32", false, `\\srv\share\w`)
	f.Add("grep", "a/b.txt/", "v1", "darwin", true, "")
	f.Add("grep", "\x00", "", "", false, "")
	f.Fuzz(func(t *testing.T, tool, path, gen, platform string, realDir bool, directory string) {
		if realDir {
			directory = dir
		}
		h := Host{Generation: gen, Platform: platform, Directory: directory, Cwd: dir}
		for _, args := range []map[string]any{{"path": path}, {"path": []any{path}}, nil} {
			got, _ := Precheck(tool, args, h)
			if got.Block != "" && !strings.HasPrefix(got.Block, missingPrefix) && !strings.HasPrefix(got.Block, invalidPrefix) {
				t.Fatalf("unexpected block %q", got.Block)
			}
			if got.Args != nil {
				if _, ok := got.Args["path"].(string); !ok || got.Block != "" {
					t.Fatalf("bad mutate %+v", got)
				}
			}
		}
	})
}

func mkfileF(f *testing.F, p string) {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
		f.Fatal(err)
	}
}
