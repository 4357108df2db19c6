package format

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/slimgate/slim/worktree"
)

// realProgram returns the directory of a real formatter on this machine's
// PATH, or skips the test.
func realProgram(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s is not installed here", name)
	}
	return filepath.Dir(p)
}

func (fx *fixture) run(h *Host, rel string) *Result {
	fx.t.Helper()
	res, err := h.Run(context.Background(), filepath.Join(fx.root, filepath.FromSlash(rel)))
	if err != nil {
		fx.t.Fatalf("Run %s: %v", rel, err)
	}
	return res
}

func (fx *fixture) read(rel string) string {
	fx.t.Helper()
	b, err := os.ReadFile(filepath.Join(fx.root, filepath.FromSlash(rel)))
	if err != nil {
		fx.t.Fatal(err)
	}
	return string(b)
}

// Real gofmt rewrites a badly formatted file; the result says what ran and
// what changed, and a second run changes nothing.
func TestRunRealGofmt(t *testing.T) {
	fx := newFixture(t, "")
	fx.config(`{"formatter": true}`)
	const messy = "package main\nfunc main(){\nprintln( \"hi\" )\n}\n"
	fx.write("main.go", messy)
	h := fx.host(Options{Path: realProgram(t, "gofmt")})
	res := fx.run(h, "main.go")
	const tidy = "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n"
	if got := fx.read("main.go"); got != tidy {
		t.Fatalf("file after gofmt:\n%s", got)
	}
	if len(res.Steps) != 1 || res.Steps[0].Name != "gofmt" || res.Steps[0].Failed || !res.Steps[0].Changed || res.Steps[0].ExitCode != 0 {
		t.Errorf("steps %+v", res.Steps)
	}
	if !res.Changed || res.BytesBefore != len(messy) || res.BytesAfter != len(tidy) || res.EOLFlipped {
		t.Errorf("changed %v, bytes %d -> %d, eol flipped %v", res.Changed, res.BytesBefore, res.BytesAfter, res.EOLFlipped)
	}
	if string(res.Before) != messy || string(res.After) != tidy {
		t.Error("Before and After are not the file's bytes")
	}
	again := fx.run(h, "main.go")
	if again.Changed || again.Steps[0].Changed || len(again.Steps) != 1 {
		t.Errorf("second run changed the file: %+v", again.Steps)
	}
}

// gofmt writes LF: a CRLF file comes back with LF line endings, which Run
// reports as a flip and leaves as the formatter wrote it.
func TestRunReportsTheEOLFlipOfARealFormatter(t *testing.T) {
	fx := newFixture(t, "")
	fx.config(`{"formatter": true}`)
	fx.write("win.go", "package main\r\n\r\nfunc main() {\r\n}\r\n")
	res := fx.run(fx.host(Options{Path: realProgram(t, "gofmt")}), "win.go")
	if res.EOLBefore != EOLCRLF || res.EOLAfter != EOLLF || !res.EOLFlipped || !res.Changed {
		t.Errorf("eol %s -> %s, flipped %v, changed %v", res.EOLBefore, res.EOLAfter, res.EOLFlipped, res.Changed)
	}
	if got := fx.read("win.go"); got != "package main\n\nfunc main() {\n}\n" {
		t.Errorf("the flip was undone or the file is wrong: %q", got)
	}
}

// A formatter of the project's own that turns CRLF into LF is reported
// the same way.
func TestRunReportsACustomFormattersEOLFlip(t *testing.T) {
	fx := newFixture(t, "")
	fx.program("", "tolf", `tr -d '\r' < "$1" > "$1.tmp" && mv "$1.tmp" "$1"`)
	fx.config(`{"formatter": {"tolf": {"command": ["tolf", "$FILE"], "extensions": [".txt"]}}}`)
	fx.write("a.txt", "one\r\ntwo\r\n")
	res := fx.run(fx.host(Options{}), "a.txt")
	if !res.EOLFlipped || res.EOLBefore != EOLCRLF || res.EOLAfter != EOLLF || res.BytesAfter != 8 {
		t.Errorf("eol %s -> %s flipped %v bytes %d", res.EOLBefore, res.EOLAfter, res.EOLFlipped, res.BytesAfter)
	}
}

func TestRunRealRustfmt(t *testing.T) {
	fx := newFixture(t, "")
	fx.config(`{"formatter": true}`)
	fx.write("lib.rs", "fn main(){let x=1;println!(\"{}\",x);}\n")
	res := fx.run(fx.host(Options{Path: realProgram(t, "rustfmt")}), "lib.rs")
	if res.Failed || !res.Changed {
		t.Fatalf("rustfmt: %+v", res.Steps)
	}
	if got := fx.read("lib.rs"); !strings.Contains(got, "    let x = 1;\n") {
		t.Errorf("file after rustfmt:\n%s", got)
	}
}

func TestRunRealTerraformFmt(t *testing.T) {
	fx := newFixture(t, "")
	fx.config(`{"formatter": true}`)
	fx.write("main.tf", "variable \"a\" {\ndefault=1\n}\n")
	res := fx.run(fx.host(Options{Path: realProgram(t, "terraform")}), "main.tf")
	if res.Failed {
		t.Fatalf("terraform: %+v", res.Steps)
	}
	if got := fx.read("main.tf"); !strings.Contains(got, "  default = 1\n") {
		t.Errorf("file after terraform fmt:\n%s", got)
	}
}

// A formatter that hangs is killed at the time bound with everything it
// started, reported as timed out, and the next formatter still runs.
func TestRunKillsAHangingFormatterAtTheBound(t *testing.T) {
	fx := newFixture(t, "")
	pidFile := filepath.Join(fx.above, "child.pid")
	fx.program("", "hang", `sleep 30 & echo $! > `+pidFile+`; wait`)
	fx.program("", "mark", `echo marked >> "$1"`)
	fx.config(`{"formatter": {"hang": {"command": ["hang", "$FILE"], "extensions": [".txt"]}, "mark": {"command": ["mark", "$FILE"], "extensions": [".txt"]}}}`)
	fx.write("a.txt", "x\n")
	start := time.Now()
	res := fx.run(fx.host(Options{Timeout: 300 * time.Millisecond}), "a.txt")
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Run took %s with a 300ms bound", took)
	}
	if len(res.Steps) != 2 {
		t.Fatalf("steps %+v", res.Steps)
	}
	hang := res.Steps[0]
	if !hang.TimedOut || !hang.Failed || hang.ExitCode != -1 || !strings.Contains(hang.Error, "300ms") {
		t.Errorf("hang step %+v", hang)
	}
	if res.Steps[1].Failed || !res.Steps[1].Changed || !res.Failed {
		t.Errorf("mark step %+v, result failed %v", res.Steps[1], res.Failed)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	deadline := time.Now().Add(2 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("the hanging formatter's child %d is still alive", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A formatter that fails is reported with its exit code and the first line
// of its stderr; it is not an error of Run.
func TestRunReportsAFailingFormatter(t *testing.T) {
	fx := newFixture(t, "")
	fx.program("", "gofmt", `echo "main.go:1:1: expected 'package', found 'EOF'" >&2; exit 2`)
	fx.config(`{"formatter": true}`)
	fx.write("main.go", "")
	res := fx.run(fx.host(Options{}), "main.go")
	st := res.Steps[0]
	if !st.Failed || st.ExitCode != 2 || st.TimedOut || !strings.Contains(st.Error, "expected 'package'") || !res.Failed || res.Changed {
		t.Errorf("step %+v", st)
	}
}

// A command whose program is missing fails its step without running.
func TestRunReportsAMissingProgram(t *testing.T) {
	fx := newFixture(t, "")
	fx.config(`{"formatter": {"gofmt": {"command": ["no-such-formatter", "$FILE"]}}}`)
	fx.write("main.go", "package main\n")
	res := fx.run(fx.host(Options{}), "main.go")
	if st := res.Steps[0]; !st.Failed || !strings.Contains(st.Error, "no-such-formatter is not on PATH") {
		t.Errorf("step %+v", st)
	}
}

// The formatter gets the absolute path as $FILE, runs in the session
// directory with its environment added, and its output is kept within the
// bound.
func TestRunGivesTheHostsArgumentsDirectoryAndEnvironment(t *testing.T) {
	fx := newFixture(t, "svc")
	rec := filepath.Join(fx.above, "record")
	fx.program("", "record", `{ echo "args=$*"; echo "pwd=$(pwd)"; echo "env=$FMT_MODE/$BASE"; } > `+rec+`; head -c 100000 /dev/zero | tr '\0' x`)
	fx.write("svc/opencode.json", `{"formatter": {"record": {"command": ["record", "--mode", "$FILE"], "extensions": [".txt"], "environment": {"FMT_MODE": "strict"}}}}`)
	fx.write("data/a.txt", "x\n")
	res := fx.run(fx.host(Options{Env: []string{"PATH=" + os.Getenv("PATH"), "BASE=kept"}, OutputLimit: 1000}), "data/a.txt")
	got, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	want := "args=--mode " + filepath.Join(fx.root, "data", "a.txt") + "\npwd=" + fx.dir + "\nenv=strict/kept\n"
	if string(got) != want {
		t.Errorf("the formatter saw\n%s\nwant\n%s", got, want)
	}
	if out := res.Steps[0].Stdout; len(out) > 1100 || !strings.Contains(out, "more bytes") {
		t.Errorf("stdout kept %d bytes: %.80q", len(out), out)
	}
}

// A relative command with a separator (pint's ./vendor/bin/pint) runs from
// the session directory.
func TestRunFindsARelativeCommandInTheSessionDirectory(t *testing.T) {
	fx := newFixture(t, "")
	fx.config(`{"formatter": true}`)
	fx.write("composer.json", `{"require": {"laravel/pint": "^1"}}`)
	fx.program(filepath.Join(fx.root, "vendor", "bin"), "pint", `printf '<?php\n' > "$1"`)
	fx.write("a.php", "<?php   \n")
	res := fx.run(fx.host(Options{}), "a.php")
	if res.Failed || !res.Changed || fx.read("a.php") != "<?php\n" {
		t.Errorf("steps %+v", res.Steps)
	}
}

// Run refuses files it must not format, before running anything.
func TestRunRefusesFilesOutsideOrMissing(t *testing.T) {
	fx := newFixture(t, "")
	fx.program("", "gofmt", `echo ran >> `+filepath.Join(fx.above, "ran"))
	fx.config(`{"formatter": true}`)
	outside := fx.write("../elsewhere/x.go", "package x\n")
	if err := os.Symlink(outside, filepath.Join(fx.root, "link.go")); err != nil {
		t.Fatal(err)
	}
	fx.write(".git/config.go", "package x\n")
	fx.write("dir.go/keep", "")
	h := fx.host(Options{})
	for _, tc := range []struct {
		name, file string
		check      func(error) bool
	}{
		{"outside the worktree", outside, isBlocked(worktree.CodeOutside)},
		{"a link to outside", filepath.Join(fx.root, "link.go"), isBlocked(worktree.CodeOutside)},
		{"inside the git directory", filepath.Join(fx.root, ".git", "config.go"), isBlocked(worktree.CodeGitDir)},
		{"missing", filepath.Join(fx.root, "gone.go"), isKind(Verification, CodeMissing)},
		{"a directory", filepath.Join(fx.root, "dir.go"), isKind(Verification, CodeNotRegular)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := h.Run(context.Background(), tc.file)
			if res != nil || !tc.check(err) {
				t.Errorf("Run = %v, %v", res, err)
			}
		})
	}
	if _, err := h.Explain(context.Background(), outside); !isBlocked(worktree.CodeOutside)(err) {
		t.Errorf("Explain of a file outside: %v", err)
	}
	if _, err := os.Stat(filepath.Join(fx.above, "ran")); err == nil {
		t.Error("a formatter ran on a refused file")
	}
	if got := fx.read("../elsewhere/x.go"); got != "package x\n" {
		t.Errorf("the file outside changed: %q", got)
	}
}

func isBlocked(code string) func(error) bool {
	return func(err error) bool {
		var be *worktree.BlockedError
		return errors.As(err, &be) && be.Verdict.Code == code && strings.Contains(be.Message, "format blocked")
	}
}

func isKind(k Kind, code string) func(error) bool {
	return func(err error) bool {
		e, ok := AsError(err)
		return ok && e.Kind == k && e.Code == code
	}
}

// With a rule that could not be decided, nothing runs, as in the host.
func TestRunRunsNothingWhenDetectionFails(t *testing.T) {
	fx := newFixture(t, "")
	fx.config(`{"formatter": {"mark": {"command": ["mark", "$FILE"], "extensions": [".ts"]}}}`)
	fx.program("", "mark", `echo marked >> "$1"`)
	fx.program("", "prettier", "")
	fx.write("package.json", "{not json")
	fx.write("a.ts", "let a\n")
	res := fx.run(fx.host(Options{}), "a.ts")
	if len(res.Steps) != 0 || res.Changed || res.DetectionError == "" || !strings.Contains(res.DetectionError, "package.json is not valid JSON") {
		t.Errorf("steps %+v, detection error %q", res.Steps, res.DetectionError)
	}
}

// No formatter for the file: nothing runs and nothing changes.
func TestRunWithNoFormatterChangesNothing(t *testing.T) {
	fx := newFixture(t, "")
	fx.write("a.txt", "x\r\n")
	res := fx.run(fx.host(Options{}), "a.txt")
	if len(res.Steps) != 0 || res.Changed || res.Failed || res.Enabled || res.EOLBefore != EOLCRLF || res.EOLFlipped {
		t.Errorf("result %+v", res)
	}
}

// Cancelling Run kills the running formatter and returns the context's
// error.
func TestRunStopsWhenTheContextEnds(t *testing.T) {
	fx := newFixture(t, "")
	fx.program("", "hang", "sleep 30")
	fx.config(`{"formatter": {"hang": {"command": ["hang", "$FILE"], "extensions": [".txt"]}}}`)
	fx.write("a.txt", "x\n")
	h := fx.host(Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	res, err := h.Run(ctx, filepath.Join(fx.root, "a.txt"))
	if res != nil || !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
		t.Errorf("Run = %v, %v after %s", res, err, time.Since(start))
	}
}

func TestEOLOf(t *testing.T) {
	for in, want := range map[string]EOL{
		"": EOLNone, "abc": EOLNone, "a\n": EOLLF, "a\r\nb\r\n": EOLCRLF, "a\rb\r": EOLCR,
		"a\r\nb\n": EOLMixed, "a\rb\n": EOLMixed, "\r\n\r": EOLMixed,
	} {
		if got := EOLOf([]byte(in)); got != want {
			t.Errorf("EOLOf(%q) = %s, want %s", in, got, want)
		}
	}
}

// Explain runs nothing but a probe: the file is left alone.
func TestExplainWritesNothing(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("shell scripts")
	}
	fx := newFixture(t, "")
	fx.program("", "gofmt", `echo changed > "$2"`)
	fx.config(`{"formatter": true}`)
	fx.write("main.go", "package main\n")
	x := fx.explain(fx.host(Options{}), "main.go")
	if running(x) != "gofmt" {
		t.Fatalf("running %q", running(x))
	}
	if got := fx.read("main.go"); got != "package main\n" {
		t.Errorf("Explain changed the file: %q", got)
	}
}
