package astgrep

import (
	"context"
	"errors"
	"fmt"
	"github.com/slimgate/slim/search"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestLanguagesAreTheTwentyFiveSorted(t *testing.T) {
	if len(Languages) != 25 {
		t.Fatalf("%d languages, want 25", len(Languages))
	}
	for i := 1; i < len(Languages); i++ {
		if Languages[i-1] >= Languages[i] {
			t.Fatalf("Languages not sorted at %q", Languages[i])
		}
	}
	for _, l := range []string{"go", "python", "typescript", "tsx", "bash", "yaml", "solidity", "nix"} {
		if !ValidLanguage(l) {
			t.Errorf("%s refused", l)
		}
	}
	for _, l := range []string{"", "Go", "ts", "py", "klingon", "js"} {
		if ValidLanguage(l) {
			t.Errorf("%q accepted", l)
		}
	}
}

func TestParseMatchesRepairsACutArray(t *testing.T) {
	one := `{"text":"a","range":{"byteOffset":{"start":0,"end":1},"start":{"line":0,"column":0},"end":{"line":0,"column":1}},"file":"x.go"}`
	for _, tc := range []struct {
		name     string
		in       string
		n        int
		complete bool
	}{
		{"empty output", "", 0, true},
		{"empty array", "[]\n", 0, true},
		{"whole array", "[" + one + "," + one + "]", 2, true},
		{"cut inside the second element", "[" + one + "," + one[:40], 1, false},
		{"cut after a comma", "[" + one + ",", 1, false},
		{"cut inside a string", "[" + one + `,{"text":"ab`, 1, false},
		{"cut before the first element ends", "[" + one[:10], 0, false},
		{"not json", "ERROR", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ms, complete := parseMatches([]byte(tc.in))
			if len(ms) != tc.n || complete != tc.complete {
				t.Fatalf("got %d matches, complete=%v; want %d, %v", len(ms), complete, tc.n, tc.complete)
			}
		})
	}
}

func TestInterpretExitHandling(t *testing.T) {
	match := []byte(`[{"text":"a","file":"x.go"}]`)
	for _, tc := range []struct {
		name  string
		rr    runResult
		n     int
		kind  Kind
		code  string
		warns int
	}{
		{"no files found is an empty result", runResult{exitCode: 1, stderr: "No files found"}, 0, "", "", 1},
		{"no match: exit 1, empty array, no stderr", runResult{exitCode: 1, stdout: []byte("[]")}, 0, "", "", 0},
		{"empty stdout is an empty result", runResult{}, 0, "", "", 0},
		{"other stderr without a match is an error", runResult{exitCode: 2, stderr: "error: unexpected argument"}, 0, Validation, CodeToolError, 0},
		{"a missing path is a verification error", runResult{exitCode: 1, stdout: []byte("[]"), stderr: "ERROR: nope: No such file or directory (os error 2)"}, 0, Verification, CodePathNotFound, 0},
		{"matches with a warning keep the warning", runResult{exitCode: 0, stdout: match, stderr: "Warning: something"}, 1, "", "", 1},
		{"a pattern warning with exit 0 is an empty result", runResult{exitCode: 0, stdout: []byte("[]"), stderr: "Warning: Pattern contains an ERROR node"}, 0, "", "", 1},
		{"a timeout keeps what was read", runResult{exitCode: -1, timedOut: true, stdout: match[:len(match)-1]}, 1, "", "", 0},
		{"a start failure is internal", runResult{startErr: errors.New("exec format error")}, 0, Internal, CodeInternal, 0},
		{"a cancel is internal", runResult{canceled: true}, 0, Internal, CodeInterrupted, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ms, warns, err := interpret("ast_grep_search", tc.rr)
			if tc.kind != "" {
				e, ok := search.AsError(err)
				if !ok || e.Kind != tc.kind || e.Code != tc.code {
					t.Fatalf("error %v, want kind %s code %s", err, tc.kind, tc.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(ms) != tc.n || len(warns) != tc.warns {
				t.Fatalf("%d matches, %d warnings; want %d, %d", len(ms), len(warns), tc.n, tc.warns)
			}
		})
	}
}

func TestPatternHints(t *testing.T) {
	for _, tc := range []struct {
		pattern, lang, want string
	}{
		{"def $F($$$A):", "python", "must not end with a colon"},
		{"class $C:", "python", "must not end with a colon"},
		{"async def $F($$$A):", "python", "must not end with a colon"},
		{"def $F($$$A)", "python", ""},
		{"function $F", "javascript", "needs its parameters and a body"},
		{"async function $F($$$A)", "typescript", "needs its parameters and a body"},
		{"export function $F($$$A)", "tsx", "needs its parameters and a body"},
		{"function $F($$$A) { $$$B }", "typescript", ""},
		{"def $F($$$A):", "go", ""},
	} {
		hints := strings.Join(PatternHints(tc.pattern, tc.lang), "\n")
		if tc.want == "" && hints != "" || !strings.Contains(hints, tc.want) {
			t.Errorf("%s %q: hints %q, want %q", tc.lang, tc.pattern, hints, tc.want)
		}
	}
}

func TestCutEscapesNewlinesAndStopsAtTheWidth(t *testing.T) {
	if got := cut("a\r\nb\nc", 100); got != `a\r\nb\nc` {
		t.Errorf("got %q", got)
	}
	long := strings.Repeat("é", 150)
	got := cut(long, 100)
	if !strings.HasSuffix(got, "...") || strings.Count(got, "é") != 100 {
		t.Errorf("cut to %d runes: %q", strings.Count(got, "é"), got)
	}
	if got := cut("\ufeffprint(1)", 100); got != "print(1)" {
		t.Errorf("the byte order mark is shown: %q", got)
	}
}

func TestStyleAndAdapt(t *testing.T) {
	for _, tc := range []struct {
		name, data, eol string
		final           bool
		bom             int
		repl, adapted   string
	}{
		{"lf", "a\nb\n", EOLLF, true, 0, "x\n  y", "x\n  y"},
		{"crlf gets crlf in the rewrite", "a\r\nb\r\n", EOLCRLF, true, 0, "x\n  y\r\nz", "x\r\n  y\r\nz"},
		{"cr", "a\rb\r", EOLCR, true, 0, "x\ny\r\nz", "x\ry\rz"},
		{"no final newline", "a\nb", EOLLF, false, 0, "x", "x"},
		{"bom and crlf", "\ufeffa\r\n", EOLCRLF, true, 3, "x\ny", "x\r\ny"},
		{"one line", "abc", EOLNone, false, 0, "x\ny", "x\ny"},
		{"bom alone", "\ufeff", EOLNone, false, 3, "x", "x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := styleOf([]byte(tc.data))
			if st.eol != tc.eol || st.final != tc.final || st.bom != tc.bom {
				t.Fatalf("style %+v", st)
			}
			if got := st.adapt(tc.repl); got != tc.adapted {
				t.Fatalf("adapt %q = %q, want %q", tc.repl, got, tc.adapted)
			}
		})
	}
}

func TestGlobRoot(t *testing.T) {
	for glob, want := range map[string]string{
		"*.go":           "",
		"**/*.ts":        "",
		"src/**/*.ts":    "src",
		"src/app/*.ts":   "src/app",
		"src/main.go":    "src",
		"/etc/*.conf":    "/etc",
		"/*.conf":        "/",
		"a/b[0-9]/c.go":  "a",
		"a/{x,y}/c.go":   "a",
		"vendor":         "",
		"../outside/*.x": "../outside",
	} {
		if got := globRoot(glob); got != filepath.FromSlash(want) {
			t.Errorf("globRoot(%q) = %q, want %q", glob, got, want)
		}
	}
}

// script writes an executable shell script standing in for a binary.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("shell scripts stand in for binaries")
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLocateOrder(t *testing.T) {
	dir := t.TempDir()
	onPath := filepath.Join(dir, "path")
	nodeBin := filepath.Join(dir, "proj", "node_modules", ".bin")
	pkg := filepath.Join(dir, "proj", "node_modules", "@ast-grep", "cli-linux-x64-gnu")
	for _, d := range []string{onPath, nodeBin, pkg} {
		os.MkdirAll(d, 0o755)
	}
	explicit := script(t, dir, "my-ast-grep", "echo ast-grep 9")

	b, err := Locate(LocateOptions{Explicit: explicit, Path: onPath})
	if err != nil || b.Path != explicit || b.Source != "SLIM_AST_GREP" {
		t.Fatalf("explicit: %+v %v", b, err)
	}
	if _, err := Locate(LocateOptions{Explicit: filepath.Join(dir, "nope")}); err == nil || !strings.Contains(err.Error(), "npm install -g @ast-grep/cli") {
		t.Fatalf("a bad SLIM_AST_GREP: %v", err)
	}

	// Nothing anywhere: the error says how to install it.
	_, err = Locate(LocateOptions{Path: onPath, NodeBins: []string{nodeBin}})
	if e, ok := search.AsError(err); !ok || e.Kind != Missing || !strings.Contains(e.Message, "npm install -g @ast-grep/cli") {
		t.Fatalf("missing: %v", err)
	}

	// The platform package beside node_modules/.bin, then .bin itself.
	inPkg := script(t, pkg, "ast-grep", "echo ast-grep 1")
	if b, err := Locate(LocateOptions{Path: onPath, NodeBins: []string{"", nodeBin}}); err != nil || b.Path != inPkg {
		t.Fatalf("platform package: %+v %v", b, err)
	}
	inBin := script(t, nodeBin, "ast-grep", "echo ast-grep 1")
	if b, err := Locate(LocateOptions{Path: onPath, NodeBins: []string{nodeBin}}); err != nil || b.Path != inBin || b.Source != "node_modules" {
		t.Fatalf("node_modules/.bin: %+v %v", b, err)
	}
	// PATH beats node_modules.
	pathBin := script(t, onPath, "ast-grep", "echo ast-grep 1")
	if b, err := Locate(LocateOptions{Path: "relative" + string(os.PathListSeparator) + onPath, NodeBins: []string{nodeBin}}); err != nil || b.Path != pathBin || b.Source != "PATH" {
		t.Fatalf("PATH: %+v %v", b, err)
	}
}

func TestLocateRunsSgOnlyWithVersionAndOnlyIfItIsAstGrep(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran-without-version")
	// newgrp, as Debian's /usr/bin/sg is: it must never be started with
	// anything but --version.
	newgrp := filepath.Join(dir, "newgrp")
	os.Mkdir(newgrp, 0o755)
	script(t, newgrp, "sg", fmt.Sprintf(`if [ "$1" != --version ]; then touch %q; fi
echo "Usage: newgrp [-] [group]"; exit 1`, marker))
	_, err := Locate(LocateOptions{Path: newgrp})
	if e, ok := search.AsError(err); !ok || e.Kind != Missing {
		t.Fatalf("newgrp taken for ast-grep: %v", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("sg was run without --version")
	}
	real := filepath.Join(dir, "real")
	os.Mkdir(real, 0o755)
	sg := script(t, real, "sg", `[ "$1" = --version ] && echo "ast-grep 0.51.1"`)
	b, err := Locate(LocateOptions{Path: newgrp + string(os.PathListSeparator) + real})
	if err == nil {
		t.Fatalf("the first sg on PATH is newgrp; Locate must not skip to the next: %+v", b)
	}
	b, err = Locate(LocateOptions{Path: real})
	if err != nil || b.Path != sg || b.Version != "ast-grep 0.51.1" || b.Source != "sg on PATH" {
		t.Fatalf("real sg: %+v %v", b, err)
	}
	// Named in SLIM_AST_GREP, by path or by name, sg is held to the same
	// test.
	for _, explicit := range []string{filepath.Join(newgrp, "sg"), "sg"} {
		_, err = Locate(LocateOptions{Explicit: explicit, Path: newgrp})
		if e, ok := search.AsError(err); !ok || e.Kind != Missing || !strings.Contains(e.Message, "newgrp") {
			t.Fatalf("SLIM_AST_GREP=%s (newgrp) taken for ast-grep: %v", explicit, err)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("sg named in SLIM_AST_GREP was run without --version")
	}
	b, err = Locate(LocateOptions{Explicit: sg})
	if err != nil || b.Path != sg || b.Version != "ast-grep 0.51.1" || b.Source != "SLIM_AST_GREP" {
		t.Fatalf("SLIM_AST_GREP naming a real sg: %+v %v", b, err)
	}
	// A hanging sg is given up on.
	hang := filepath.Join(dir, "hang")
	os.Mkdir(hang, 0o755)
	script(t, hang, "sg", `exec sleep 30`)
	start := time.Now()
	if _, err := Locate(LocateOptions{Path: hang, VersionTimeout: 200 * time.Millisecond}); err == nil {
		t.Fatal("a hanging sg accepted")
	}
	if time.Since(start) > 5*time.Second {
		t.Fatalf("the version probe waited %s", time.Since(start))
	}
}

// fakeQuery is a Query run by a shell script instead of ast-grep.
func fakeQuery(t *testing.T, body string) Query {
	dir := t.TempDir()
	return Query{Binary: script(t, t.TempDir(), "ast-grep", body), Dir: dir, Pattern: "$A", Lang: "go"}
}

func TestRunToolWorkingDirectoryStdinAndArgv(t *testing.T) {
	q := fakeQuery(t, `pwd > "$0.pwd"; cat > "$0.stdin"; for a in "$@"; do printf '%s\n' "$a"; done > "$0.args"; echo '[]'`)
	q.Pattern = "a; rm -rf / $(x)"
	q.Paths = []string{"-x", "b c"}
	q.Globs = []string{"!*.pb.go"}
	os.Mkdir(filepath.Join(q.Dir, "-x"), 0o755)
	os.Mkdir(filepath.Join(q.Dir, "b c"), 0o755)
	res, err := Search(context.Background(), SearchOptions{Query: q, Context: 2})
	if err != nil {
		t.Fatal(err)
	}
	if res.Total != 0 || !strings.HasPrefix(res.Output, "No matches found.") {
		t.Fatalf("result %+v", res)
	}
	read := func(ext string) string {
		b, _ := os.ReadFile(q.Binary + ext)
		return string(b)
	}
	if got, _ := filepath.EvalSymlinks(strings.TrimSpace(read(".pwd"))); got != mustEval(t, q.Dir) {
		t.Errorf("ast-grep ran in %q, want %q", got, q.Dir)
	}
	if read(".stdin") != "" {
		t.Errorf("stdin was not closed: %q", read(".stdin"))
	}
	want := "run\n-p\na; rm -rf / $(x)\n--lang\ngo\n--json=compact\n-C\n2\n--globs\n!*.pb.go\n--\n-x\nb c\n"
	if got := read(".args"); got != want {
		t.Errorf("argv:\n%s\nwant:\n%s", got, want)
	}
}

func mustEval(t *testing.T, p string) string {
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestTimeoutKillsTheProcessGroup(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("process groups")
	}
	q := fakeQuery(t, `sleep 30 & echo $! > "$0.child"
printf '[{"text":"x","file":"a.go","range":{"start":{"line":4}}},'
wait`)
	q.Limits = Limits{Timeout: 300 * time.Millisecond}
	start := time.Now()
	res, err := Search(context.Background(), SearchOptions{Query: q})
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("the search took %s with a 300 ms limit", el)
	}
	if !res.Truncated || strings.Join(res.TruncatedBy, ",") != CutTimeout || res.Total != 1 || res.Matches[0].Line != 5 {
		t.Fatalf("result %+v", res)
	}
	if !strings.Contains(res.Output, "truncated by the timeout") {
		t.Errorf("output does not say it was cut by the timeout:\n%s", res.Output)
	}
	b, _ := os.ReadFile(q.Binary + ".child")
	var pid int
	fmt.Sscan(string(b), &pid)
	deadline := time.Now().Add(3 * time.Second)
	for alive(pid) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if alive(pid) {
		t.Fatalf("the child %d of ast-grep outlived the timeout", pid)
	}
}

func TestCancelStopsAstGrep(t *testing.T) {
	q := fakeQuery(t, `exec sleep 30`)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := Search(ctx, SearchOptions{Query: q})
	if e, ok := search.AsError(err); !ok || e.Code != CodeInterrupted {
		t.Fatalf("got %v", err)
	}
}

func TestOutputCapRepairsTheArrayAndKeepsTheTotal(t *testing.T) {
	// 2000 matches of about 100 bytes: over a 64 KiB cap.
	q := fakeQuery(t, `printf '['; i=0; while [ $i -lt 2000 ]; do [ $i -gt 0 ] && printf ','; printf '{"text":"m%d","file":"f%d.go","range":{"start":{"line":%d,"column":0},"end":{"line":%d}}}' $i $((i % 7)) $i $i; i=$((i+1)); done; printf ']'`)
	q.Limits = Limits{MaxOutput: 64 << 10, MaxMatches: 500}
	res, err := Search(context.Background(), SearchOptions{Query: q})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Matches) != 500 || res.Total <= 500 || res.Total >= 2000 || res.Files != 7 {
		t.Fatalf("%d listed, total %d, files %d", len(res.Matches), res.Total, res.Files)
	}
	if strings.Join(res.TruncatedBy, ",") != CutMatches+","+CutOutput {
		t.Fatalf("truncated by %v", res.TruncatedBy)
	}
	if !strings.HasPrefix(res.Output, fmt.Sprintf("Found %d matches in 7 files\n(showing the first 500 of %d matches", res.Total, res.Total)) {
		t.Fatalf("output starts %q", res.Output[:200])
	}

	// Under the cap, every match is counted and only 500 are listed.
	q.Limits = Limits{}
	res, err = Search(context.Background(), SearchOptions{Query: q})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Matches) != 500 || res.Total != 2000 || strings.Join(res.TruncatedBy, ",") != CutMatches {
		t.Fatalf("%d listed, total %d, cut by %v", len(res.Matches), res.Total, res.TruncatedBy)
	}
}

func TestQueryValidation(t *testing.T) {
	base := Query{Binary: "/bin/true", Dir: t.TempDir(), Pattern: "$A", Lang: "go"}
	for _, tc := range []struct {
		name string
		edit func(*Query)
		kind Kind
	}{
		{"no binary", func(q *Query) { q.Binary = "" }, Missing},
		{"no pattern", func(q *Query) { q.Pattern = "  " }, Usage},
		{"no language", func(q *Query) { q.Lang = "" }, Usage},
		{"unknown language", func(q *Query) { q.Lang = "cobol" }, Usage},
		{"relative directory", func(q *Query) { q.Dir = "rel" }, Usage},
		{"empty glob", func(q *Query) { q.Globs = []string{"!"} }, Usage},
		{"NUL in a path", func(q *Query) { q.Paths = []string{"a\x00b"} }, Usage},
		{"missing path", func(q *Query) { q.Paths = []string{"nope"} }, Verification},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := base
			tc.edit(&q)
			_, err := Search(context.Background(), SearchOptions{Query: q})
			if e, ok := search.AsError(err); !ok || e.Kind != tc.kind {
				t.Fatalf("got %v, want kind %s", err, tc.kind)
			}
		})
	}
	_, err := Search(context.Background(), SearchOptions{Query: Query{Binary: "/bin/true", Dir: base.Dir, Pattern: "$A", Lang: "go", Paths: []string{"nope"}}})
	if !strings.HasPrefix(err.Error(), "Search path does not exist: "+filepath.Join(base.Dir, "nope")) {
		t.Errorf("missing path message: %v", err)
	}
	if _, err := Search(context.Background(), SearchOptions{Query: base, Context: -1}); err == nil {
		t.Error("a negative context accepted")
	}
}

// Containment is decided before ast-grep starts: a path or glob root
// outside the workspace never reaches it.
func TestReplaceChecksContainmentBeforeAstGrepRuns(t *testing.T) {
	q := fakeQuery(t, `touch "$0.ran"; echo '[]'`)
	outside := t.TempDir()
	for _, tc := range []struct {
		name         string
		paths, globs []string
	}{
		{"a path", []string{outside}, nil},
		{"a relative path", []string{".."}, nil},
		{"a glob root", nil, []string{outside + "/**/*.go"}},
		{"an excluding glob root", nil, []string{"!" + outside + "/*.go"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := ReplaceOptions{Query: q, Rewrite: "x"}
			o.Paths, o.Globs = tc.paths, tc.globs
			_, err := Replace(context.Background(), o)
			if e, ok := search.AsError(err); !ok || e.Kind != Blocked {
				t.Fatalf("got %v, want blocked", err)
			}
			if _, err := os.Stat(q.Binary + ".ran"); err == nil {
				t.Fatal("ast-grep ran before the containment check")
			}
		})
	}
	// Inside, it runs.
	if _, err := Replace(context.Background(), ReplaceOptions{Query: q, Rewrite: "x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(q.Binary + ".ran"); err != nil {
		t.Fatal("ast-grep did not run for a replace inside the workspace")
	}
}
