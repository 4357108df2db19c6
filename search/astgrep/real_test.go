package astgrep

import (
	"context"
	"github.com/slimgate/slim/search"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/slimgate/slim/search/astgrep/astgreptest"
)

// These tests run the real ast-grep (astgreptest.Binary).

// repo creates a git repository with files (relative path to content).
func repo(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "proj")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		if os.Getenv("SLIM_E2E") == "require" {
			t.Fatalf("git init: %v %s", err, out)
		}
		t.Skipf("git init: %v %s", err, out)
	}
	for rel, content := range files {
		write(t, filepath.Join(dir, rel), content)
	}
	return mustEval(t, dir)
}

func write(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// snapshot reads every regular file below dir (the .git dir left out).
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			out[rel] = read(t, p)
		}
		return nil
	})
	return out
}

func sameTree(t *testing.T, dir string, want map[string]string) {
	t.Helper()
	got := snapshot(t, dir)
	for rel, w := range want {
		if got[rel] != w {
			t.Errorf("%s changed:\n got  %q\n want %q", rel, got[rel], w)
		}
	}
	for rel := range got {
		if _, ok := want[rel]; !ok {
			t.Errorf("%s appeared", rel)
		}
	}
}

const (
	goSrc = "package main\n\nimport \"errors\"\n\nfunc f() error {\n\terr := g()\n\tif err != nil {\n\t\treturn err\n\t}\n\treturn nil\n}\n\nfunc h() (int, error) {\n\treturn 0, nil\n}\n\nfunc g() error { return errors.New(\"x\") }\n"
	pySrc = "def greet(name):\n    print(\"hello\", name)\n\n\nclass Greeter:\n    def hi(self):\n        print(\"hi\")\n"
	tsSrc = "export function add(a: number, b: number): number {\n  return a + b;\n}\n\nconst x = console.log(add(1, 2));\nconsole.log(\"done\");\n"
)

func query(t *testing.T, dir, lang, pattern string) Query {
	return Query{Binary: astgreptest.Binary(t), Dir: dir, Pattern: pattern, Lang: lang}
}

func TestSearchGoPythonTypeScript(t *testing.T) {
	dir := repo(t, map[string]string{"main.go": goSrc, "pkg/greet.py": pySrc, "web/app.ts": tsSrc, "web/view.tsx": "const v = <div>{console.log(1)}</div>;\n"})
	for _, tc := range []struct {
		name, lang, pattern string
		paths, globs        []string
		context             int
		want                []string // lines of the output, in order
		total, files        int
	}{
		{name: "go", lang: "go", pattern: "if err != nil { return $E }", total: 1, files: 1,
			want: []string{"Found 1 match in 1 file", "", "main.go", "  7: if err != nil {\\n\t\treturn err\\n\t}"}},
		{name: "go metavariable", lang: "go", pattern: "return $A, nil", total: 1, files: 1,
			want: []string{"Found 1 match in 1 file", "", "main.go", "  14: return 0, nil"}},
		{name: "python, two matches", lang: "python", pattern: "print($$$ARGS)", total: 2, files: 1,
			want: []string{"Found 2 matches in 1 file", "", "pkg/greet.py", `  2: print("hello", name)`, `  7: print("hi")`}},
		{name: "typescript", lang: "typescript", pattern: "console.log($A)", total: 2, files: 1,
			want: []string{"Found 2 matches in 1 file", "", "web/app.ts", "  5: console.log(add(1, 2))", `  6: console.log("done")`}},
		{name: "tsx is its own language", lang: "tsx", pattern: "console.log($A)", total: 1, files: 1,
			want: []string{"Found 1 match in 1 file", "", "web/view.tsx", "  1: console.log(1)"}},
		{name: "context lines", lang: "go", pattern: "return $A, nil", context: 1, total: 1, files: 1,
			want: []string{"Found 1 match in 1 file", "", "main.go", "  13- func h() (int, error) {", "  14: \treturn 0, nil", "  15- }"}},
		{name: "paths narrow the search", lang: "typescript", pattern: "console.log($A)", paths: []string{"pkg"}, total: 0,
			want: []string{"No matches found."}},
		{name: "an exclude glob", lang: "python", pattern: "print($$$A)", globs: []string{"!**/greet.py"}, total: 0,
			want: []string{"No matches found."}},
		{name: "an include glob", lang: "python", pattern: "print($$$A)", globs: []string{"pkg/*.py"}, total: 2, files: 1},
		{name: "python def with a colon gets a hint", lang: "python", pattern: "def $F($$$A):", total: 0,
			want: []string{"No matches found."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := query(t, dir, tc.lang, tc.pattern)
			q.Paths, q.Globs = tc.paths, tc.globs
			res, err := Search(context.Background(), SearchOptions{Query: q, Context: tc.context})
			if err != nil {
				t.Fatal(err)
			}
			if res.Total != tc.total || (tc.total > 0 && res.Files != tc.files) {
				t.Fatalf("total %d files %d, want %d %d\n%s", res.Total, res.Files, tc.total, tc.files, res.Output)
			}
			if tc.want != nil {
				got := strings.Split(strings.TrimRight(res.Output, "\n"), "\n")
				if len(got) < len(tc.want) || strings.Join(got[:len(tc.want)], "\n") != strings.Join(tc.want, "\n") {
					t.Fatalf("output:\n%s\nwant it to start:\n%s", res.Output, strings.Join(tc.want, "\n"))
				}
			}
		})
	}
	t.Run("hints for a pattern that matched nothing", func(t *testing.T) {
		res, err := Search(context.Background(), SearchOptions{Query: query(t, dir, "python", "def $F($$$A):")})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(res.Output, "Hint: A Python def or class pattern must not end with a colon") {
			t.Fatalf("no hint:\n%s", res.Output)
		}
		res, err = Search(context.Background(), SearchOptions{Query: query(t, dir, "typescript", "function subtract($$$A)")})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(res.Output, "needs its parameters and a body") {
			t.Fatalf("no hint:\n%s", res.Output)
		}
	})
}

// The working directory is the project directory, not slim's.
func TestSearchResolvesAgainstTheProjectDirectory(t *testing.T) {
	dir := repo(t, map[string]string{"src/a.py": "print(1)\n"})
	other := repo(t, map[string]string{"src/a.py": "print(2)\nprint(3)\n"})
	wd, _ := os.Getwd()
	defer os.Chdir(wd)
	if err := os.Chdir(other); err != nil {
		t.Fatal(err)
	}
	q := query(t, dir, "python", "print($A)")
	q.Paths = []string{"src"}
	res, err := Search(context.Background(), SearchOptions{Query: q})
	if err != nil {
		t.Fatal(err)
	}
	if res.Total != 1 || res.Matches[0].Text != "print(1)" || res.Matches[0].File != "src/a.py" {
		t.Fatalf("searched the wrong directory: %+v", res.Matches)
	}
}

func TestSearchBadPatternOrGlobIsExplained(t *testing.T) {
	dir := repo(t, map[string]string{"a.go": goSrc})
	q := query(t, dir, "go", "func (")
	res, err := Search(context.Background(), SearchOptions{Query: q})
	if err != nil {
		if e, ok := search.AsError(err); !ok || e.Kind != Validation || !strings.Contains(e.Message, "ast-grep failed") {
			t.Fatalf("error %v", err)
		}
		return
	}
	if res.Total != 0 || !strings.Contains(res.Output, "ast-grep said:") {
		t.Fatalf("an unparsable pattern gave no explanation:\n%s", res.Output)
	}
}

func replaceOpts(t *testing.T, dir, lang, pattern, rewrite string) ReplaceOptions {
	return ReplaceOptions{Query: query(t, dir, lang, pattern), Rewrite: rewrite}
}

func TestReplaceDryRunWritesNothingAndShowsTheDiff(t *testing.T) {
	files := map[string]string{"main.go": goSrc, "pkg/greet.py": pySrc, "web/app.ts": tsSrc}
	dir := repo(t, files)
	res, err := Replace(context.Background(), replaceOpts(t, dir, "python", "print($$$A)", "log($$$A)"))
	if err != nil {
		t.Fatal(err)
	}
	sameTree(t, dir, files)
	if res.Applied || res.Total != 2 || len(res.Files) != 1 {
		t.Fatalf("%+v", res)
	}
	wantOut := "[dry run] 2 replacements in 1 file\n\npkg/greet.py\n  2: print(\"hello\", name) → log(\"hello\", name)\n  7: print(\"hi\") → log(\"hi\")\n\nNothing was written."
	if !strings.HasPrefix(res.Output, wantOut) {
		t.Fatalf("output:\n%s\nwant:\n%s", res.Output, wantOut)
	}
	wantDiff := "--- a/pkg/greet.py\n+++ b/pkg/greet.py\n@@ -1,7 +1,7 @@\n def greet(name):\n-    print(\"hello\", name)\n+    log(\"hello\", name)\n \n \n class Greeter:\n     def hi(self):\n-        print(\"hi\")\n+        log(\"hi\")\n"
	if res.Diff != wantDiff {
		t.Fatalf("diff:\n%s\nwant:\n%s", res.Diff, wantDiff)
	}
}

func TestReplaceApplyGoAndTypeScript(t *testing.T) {
	dir := repo(t, map[string]string{"main.go": goSrc, "web/app.ts": tsSrc, "web/b.ts": "console.log(1);\n"})
	o := replaceOpts(t, dir, "go", "return $A, nil", "return $A, errNone")
	o.Apply = true
	res, err := Replace(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Applied || !strings.HasPrefix(res.Output, "[applied] 1 replacement in 1 file") {
		t.Fatalf("%+v", res)
	}
	if got := read(t, filepath.Join(dir, "main.go")); got != strings.Replace(goSrc, "return 0, nil", "return 0, errNone", 1) {
		t.Fatalf("main.go:\n%s", got)
	}
	o = replaceOpts(t, dir, "typescript", "console.log($A)", "logger.info($A)")
	o.Apply = true
	o.Paths = []string{"web"}
	if res, err = Replace(context.Background(), o); err != nil || res.Total != 3 || len(res.Files) != 2 {
		t.Fatalf("%+v %v", res, err)
	}
	if got := read(t, filepath.Join(dir, "web/b.ts")); got != "logger.info(1);\n" {
		t.Fatalf("b.ts: %q", got)
	}
	if got := read(t, filepath.Join(dir, "web/app.ts")); got != strings.ReplaceAll(tsSrc, "console.log(", "logger.info(") {
		t.Fatalf("app.ts: %q", got)
	}
}

// Line endings, the final newline and the byte order mark survive a
// rewrite, a multi-line one included (ast-grep joins the lines of a
// rewrite with LF).
func TestReplaceKeepsLineEndingsFinalNewlineAndBOM(t *testing.T) {
	for _, tc := range []struct {
		name, file, content, rewrite, want string
	}{
		{"crlf, one line", "a.py", "def f(x):\r\n    print(x)\r\n    return x\r\n", "log($A)",
			"def f(x):\r\n    log(x)\r\n    return x\r\n"},
		{"crlf, a multi-line rewrite", "a.py", "def f(x):\r\n    print(x)\r\n    return x\r\n", "if x:\n    log($A)",
			"def f(x):\r\n    if x:\r\n        log(x)\r\n    return x\r\n"},
		{"crlf, a match that spans lines", "a.py", "def f(x):\r\n    print(x,\r\n          1)\r\n", "log($$$A)",
			"def f(x):\r\n    log(x,\r\n          1)\r\n"},
		{"bom", "a.py", "\ufeffprint(1)\nprint(2)\n", "log($A)", "\ufefflog(1)\nlog(2)\n"},
		{"bom and crlf", "a.py", "\ufeffdef f(x):\r\n    print(x)\r\n", "if x:\n    log($A)", "\ufeffdef f(x):\r\n    if x:\r\n        log(x)\r\n"},
		{"no final newline", "a.py", "x = 1\nprint(x)", "log($A)", "x = 1\nlog(x)"},
		{"no final newline, a rewrite ending in a newline", "a.py", "x = 1\nprint(x)", "log($A)\n", "x = 1\nlog(x)"},
		{"lf stays lf", "a.py", "print(1)\n", "if True:\n    log($A)", "if True:\n    log(1)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := repo(t, map[string]string{tc.file: tc.content})
			pattern := "print($A)"
			if strings.Contains(tc.rewrite, "$$$A") {
				pattern = "print($$$A)"
			}
			o := replaceOpts(t, dir, "python", pattern, tc.rewrite)
			dry, err := Replace(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if read(t, filepath.Join(dir, tc.file)) != tc.content {
				t.Fatal("the dry run wrote")
			}
			o.Apply = true
			res, err := Replace(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if got := read(t, filepath.Join(dir, tc.file)); got != tc.want {
				t.Fatalf("got  %q\nwant %q", got, tc.want)
			}
			if len(res.Files) != 1 || res.Files[0].EOL != styleOf([]byte(tc.content)).eol || dry.Diff == "" {
				t.Fatalf("%+v", res.Files)
			}
		})
	}
}

func TestReplaceNestedMatchesRewriteTheOuterOne(t *testing.T) {
	dir := repo(t, map[string]string{"n.py": "f(f(1))\n"})
	o := replaceOpts(t, dir, "python", "f($A)", "g($A)")
	o.Apply = true
	res, err := Replace(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(dir, "n.py")); got != "g(f(1))\n" || res.Overlapping != 1 || res.Total != 1 {
		t.Fatalf("%q %+v", got, res)
	}
	if !strings.Contains(res.Output, "1 match inside another match left as they are") {
		t.Fatalf("output:\n%s", res.Output)
	}
}

func TestReplaceNoMatchIsAnEmptyResult(t *testing.T) {
	dir := repo(t, map[string]string{"a.py": "x = 1\n"})
	res, err := Replace(context.Background(), replaceOpts(t, dir, "python", "print($A)", "log($A)"))
	if err != nil || res.Total != 0 || !strings.HasPrefix(res.Output, "[dry run] No matches to replace.") {
		t.Fatalf("%+v %v", res, err)
	}
	// A rewrite to the same text changes nothing.
	res, err = Replace(context.Background(), replaceOpts(t, dir, "python", "x = $A", "x = $A"))
	if err != nil || res.Total != 0 || len(res.Files) != 0 {
		t.Fatalf("%+v %v", res, err)
	}
}

// Containment: every path, glob root and reported file must lie inside
// the workspace, or nothing is run or written.
func TestReplaceRefusesWhatLiesOutside(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links")
	}
	files := map[string]string{"a.py": "print(1)\n"}
	dir := repo(t, files)
	outside := filepath.Join(filepath.Dir(dir), "outside")
	write(t, filepath.Join(outside, "o.py"), "print(2)\n")
	if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	nested := filepath.Join(dir, "vendor", "lib")
	write(t, filepath.Join(nested, "n.py"), "print(3)\n")
	if out, err := exec.Command("git", "init", "-q", nested).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	write(t, filepath.Join(dir, ".git", "hooks", "h.py"), "print(4)\n")
	want := snapshot(t, dir)
	for _, tc := range []struct {
		name         string
		paths, globs []string
		code         string
	}{
		{"a relative path out", []string{"../outside"}, nil, CodeOutside},
		{"an absolute path out", []string{outside}, nil, CodeOutside},
		{"a path through a symlink out", []string{"out"}, nil, CodeOutside},
		{"a file through a symlink out", []string{"out/o.py"}, nil, CodeOutside},
		{"an absolute glob root out", nil, []string{outside + "/*.py"}, CodeOutside},
		{"a glob root through a symlink", nil, []string{"out/**/*.py"}, CodeOutside},
		{"a glob that climbs out", nil, []string{"**/../../outside/*.py"}, CodeOutside},
		{"the git dir", []string{".git"}, nil, CodeGitDir},
		{"a nested repository as a path", []string{"vendor/lib"}, nil, CodeNested},
		{"a nested repository found by the walk", []string{"."}, nil, CodeNested},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := replaceOpts(t, dir, "python", "print($A)", "log($A)")
			o.Paths, o.Globs, o.Apply = tc.paths, tc.globs, true
			_, err := Replace(context.Background(), o)
			e, ok := search.AsError(err)
			if !ok || e.Kind != Blocked || e.Code != tc.code || !strings.HasPrefix(e.Message, "ast_grep_replace blocked: ") {
				t.Fatalf("got %v (%+v), want blocked %s", err, e, tc.code)
			}
			sameTree(t, dir, want)
			if read(t, filepath.Join(outside, "o.py")) != "print(2)\n" {
				t.Fatal("the outside file changed")
			}
		})
	}
	t.Run("nested allowed when asked", func(t *testing.T) {
		o := replaceOpts(t, dir, "python", "print($A)", "log($A)")
		o.Paths, o.AllowNested, o.Apply = []string{"vendor/lib"}, true, true
		if _, err := Replace(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		if got := read(t, filepath.Join(nested, "n.py")); got != "log(3)\n" {
			t.Fatalf("n.py %q", got)
		}
	})
}

// A file that changes after ast-grep read it, or between the read and the
// write, stops the whole replace with every file as it was.
func TestReplaceFailingHalfWayLeavesEveryFileAsItWas(t *testing.T) {
	files := map[string]string{"a.py": "print(1)\n", "b.py": "print(2)\n", "c.py": "\ufeffprint(3)\r\n"}
	t.Run("changed between ast-grep and slim's read", func(t *testing.T) {
		dir := repo(t, files)
		o := replaceOpts(t, dir, "python", "print($A)", "log($A)")
		o.Apply = true
		o.afterRun = func() { write(t, filepath.Join(dir, "b.py"), "x = 0\nprint(2)\n") }
		_, err := Replace(context.Background(), o)
		if e, ok := search.AsError(err); !ok || e.Code != CodeFileChanged || e.Kind != Verification {
			t.Fatalf("got %v", err)
		}
		want := map[string]string{"a.py": files["a.py"], "b.py": "x = 0\nprint(2)\n", "c.py": files["c.py"]}
		sameTree(t, dir, want)
	})
	t.Run("changed between slim's read and its write", func(t *testing.T) {
		dir := repo(t, files)
		o := replaceOpts(t, dir, "python", "print($A)", "log($A)")
		o.Apply = true
		o.beforeStep = func(i int) {
			if i == 2 {
				// a.py and b.py are written by now; c.py changes under us.
				write(t, filepath.Join(dir, "c.py"), "print(30)\n")
			}
		}
		_, err := Replace(context.Background(), o)
		if e, ok := search.AsError(err); !ok || e.Code != CodeFileChanged {
			t.Fatalf("got %v", err)
		}
		want := map[string]string{"a.py": files["a.py"], "b.py": files["b.py"], "c.py": "print(30)\n"}
		sameTree(t, dir, want)
	})
	t.Run("interrupted half-way", func(t *testing.T) {
		dir := repo(t, files)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		o := replaceOpts(t, dir, "python", "print($A)", "log($A)")
		o.Apply = true
		o.beforeStep = func(i int) {
			if i == 1 {
				cancel()
			}
		}
		_, err := Replace(ctx, o)
		if e, ok := search.AsError(err); !ok || e.Code != CodeInterrupted || !strings.Contains(e.Message, "every file was restored") {
			t.Fatalf("got %v", err)
		}
		sameTree(t, dir, files)
	})
	t.Run("a directory swapped for a link before the write", func(t *testing.T) {
		if runtime.GOOS == "windows" {
			t.Skip("symbolic links")
		}
		dir := repo(t, map[string]string{"a.py": "print(1)\n", "sub/b.py": "print(2)\n"})
		outside := filepath.Join(filepath.Dir(dir), "elsewhere")
		write(t, filepath.Join(outside, "b.py"), "print(2)\n")
		o := replaceOpts(t, dir, "python", "print($A)", "log($A)")
		o.Apply = true
		o.beforeStep = func(i int) {
			if i == 1 {
				os.Rename(filepath.Join(dir, "sub"), filepath.Join(dir, "sub-moved"))
				os.Symlink(outside, filepath.Join(dir, "sub"))
			}
		}
		_, err := Replace(context.Background(), o)
		if e, ok := search.AsError(err); !ok || e.Kind != Blocked {
			t.Fatalf("got %v", err)
		}
		if read(t, filepath.Join(outside, "b.py")) != "print(2)\n" || read(t, filepath.Join(dir, "a.py")) != "print(1)\n" {
			t.Fatal("a file was written")
		}
	})
}

func TestReplaceApprovedFiles(t *testing.T) {
	files := map[string]string{"a.py": "print(1)\n", "b.py": "x = 1\n"}
	dir := repo(t, files)
	o := replaceOpts(t, dir, "python", "print($A)", "log($A)")
	o.Apply = true
	o.Approved = []string{"b.py"}
	_, err := Replace(context.Background(), o)
	if e, ok := search.AsError(err); !ok || e.Code != CodeNotApproved {
		t.Fatalf("got %v", err)
	}
	sameTree(t, dir, files)
	o.Approved = []string{filepath.Join(dir, "a.py")}
	if _, err := Replace(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if read(t, filepath.Join(dir, "a.py")) != "log(1)\n" {
		t.Fatal("not written")
	}
}

func TestReplaceATruncatedAnswerIsNotApplied(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 3000; i++ {
		b.WriteString("print(1)\n")
	}
	files := map[string]string{"big.py": b.String()}
	dir := repo(t, files)
	o := replaceOpts(t, dir, "python", "print($A)", "log($A)")
	o.Limits = Limits{MaxOutput: 64 << 10}
	o.Apply = true
	_, err := Replace(context.Background(), o)
	if e, ok := search.AsError(err); !ok || e.Code != CodeTooLarge {
		t.Fatalf("got %v", err)
	}
	sameTree(t, dir, files)
	o.Apply = false
	res, err := Replace(context.Background(), o)
	if err != nil || !res.Truncated || res.Total == 0 || res.Total >= 3000 {
		t.Fatalf("%v %+v", err, res.TruncatedBy)
	}
}
