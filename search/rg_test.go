package search

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestFindRipgrepOrder(t *testing.T) {
	pathDir, ocDir, other := t.TempDir(), t.TempDir(), t.TempDir()
	exe := func(dir, name string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	onPath := exe(pathDir, "rg")
	inOpenCode := exe(ocDir, "rg")
	explicit := exe(other, "my-rg")

	cases := []struct {
		name       string
		o          FindOptions
		wantPath   string
		wantSource string
		wantCode   string
	}{
		{"the explicit binary wins", FindOptions{Explicit: explicit, PathList: pathDir, OpenCodeBin: ocDir}, explicit, SourceExplicit, ""},
		{"then rg on PATH", FindOptions{PathList: pathDir, OpenCodeBin: ocDir}, onPath, SourcePath, ""},
		{"then OpenCode's downloaded copy", FindOptions{PathList: other, OpenCodeBin: ocDir}, inOpenCode, SourceOpenCode, ""},
		{"an explicit name is looked up on PATH", FindOptions{Explicit: "rg", PathList: pathDir, OpenCodeBin: ocDir}, onPath, SourceExplicit, ""},
		{"an explicit name not on PATH is an error", FindOptions{Explicit: "my-rg", PathList: pathDir}, "", "", CodeRgUnusable},
		{"an explicit binary that is missing is an error, not a fallback to PATH", FindOptions{Explicit: filepath.Join(other, "nope"), ExplicitFrom: "SLIM_RG", PathList: pathDir}, "", "", CodeRgUnusable},
		{"nothing found", FindOptions{PathList: other, OpenCodeBin: filepath.Join(other, "none")}, "", "", CodeRgNotInstalled},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rg, err := FindRipgrep(c.o)
			if c.wantCode != "" {
				e, ok := AsError(err)
				if !ok || e.Code != c.wantCode || e.Kind != Missing {
					t.Fatalf("err = %v, want code %s", err, c.wantCode)
				}
				return
			}
			if err != nil || rg.Path != c.wantPath || rg.Source != c.wantSource {
				t.Fatalf("FindRipgrep = %+v, %v; want %s from %s", rg, err, c.wantPath, c.wantSource)
			}
		})
	}
}

func TestMissingRipgrepNamesTheInstallCommands(t *testing.T) {
	_, err := FindRipgrep(FindOptions{PathList: t.TempDir()})
	for _, want := range []string{"ripgrep (rg) was not found", "apt-get install ripgrep", "brew install ripgrep", "winget install"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("error %v does not say %q", err, want)
		}
	}
}

func dirTarget(t *testing.T, dir string) Target {
	t.Helper()
	tg, err := ResolveTarget("grep", "", TargetOptions{Directory: dir})
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func TestGrepWithRipgrepOrdersByModificationTimeAndLimits(t *testing.T) {
	rg := needRg(t)
	root := polyglotTree(t)
	res, err := Grep(context.Background(), GrepOptions{Pattern: "needle", Target: dirTarget(t, root), Limit: 3, Ripgrep: rg})
	if err != nil {
		t.Fatal(err)
	}
	got := matchLines(root, res.Matches)
	// main.go is the newest file, then util.go, then index.ts (two lines,
	// of which the limit leaves one).
	if res.Total != 29 || !res.Truncated || len(res.Matches) != 3 ||
		res.Matches[0].Path != filepath.Join(root, "main.go") ||
		res.Matches[1].Path != filepath.Join(root, "internal/util/util.go") ||
		res.Matches[2].Path != filepath.Join(root, "web/src/index.ts") || res.Matches[2].Line != 1 {
		t.Fatalf("total %d, truncated %v, matches %v", res.Total, res.Truncated, got)
	}
}

func TestGrepOfOneFileSearchesItEvenWhenIgnored(t *testing.T) {
	rg := needRg(t)
	root := polyglotTree(t)
	tg, err := ResolveTarget("grep", "server.log", TargetOptions{Directory: root})
	if err != nil {
		t.Fatal(err)
	}
	if tg.Dir != root || tg.File != "server.log" {
		t.Fatalf("target %+v", tg)
	}
	for _, r := range []*Ripgrep{rg, nil} {
		res, err := Grep(context.Background(), GrepOptions{Pattern: "needle", Target: tg, Ripgrep: r})
		if err != nil {
			t.Fatal(err)
		}
		if res.Total != 1 || res.Matches[0].Path != filepath.Join(root, "server.log") {
			t.Fatalf("%s: %+v", res.Engine, res)
		}
	}
}

func TestGrepOfOneBinaryFileSearchesItWhole(t *testing.T) {
	rg := needRg(t)
	root := polyglotTree(t)
	tg, err := ResolveTarget("grep", "binary.bin", TargetOptions{Directory: root})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []*Ripgrep{rg, nil} {
		res, err := Grep(context.Background(), GrepOptions{Pattern: "needle", Target: tg, Ripgrep: r})
		if err != nil {
			t.Fatal(err)
		}
		if res.Total != 1 || res.Matches[0].Line != 1 {
			t.Fatalf("%s: %+v", res.Engine, res)
		}
	}
}

func TestBadPatternsAndGlobsAreValidationErrors(t *testing.T) {
	rg := needRg(t)
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.txt": "x\n"})
	tg := dirTarget(t, root)
	for _, r := range []*Ripgrep{rg, nil} {
		_, err := Grep(context.Background(), GrepOptions{Pattern: "a(", Target: tg, Ripgrep: r})
		if e, ok := AsError(err); !ok || e.Kind != Validation || e.Code != CodeBadPattern {
			t.Errorf("bad pattern (rg %v): %v", r != nil, err)
		}
		_, err = Grep(context.Background(), GrepOptions{Pattern: "x", Include: "a{b", Target: tg, Ripgrep: r})
		if e, ok := AsError(err); !ok || e.Kind != Validation || e.Code != CodeBadGlob {
			t.Errorf("bad include (rg %v): %v", r != nil, err)
		}
		_, err = Glob(context.Background(), GlobOptions{Pattern: "[", Target: tg, Ripgrep: r})
		if e, ok := AsError(err); !ok || e.Kind != Validation || e.Code != CodeBadGlob {
			t.Errorf("bad glob (rg %v): %v", r != nil, err)
		}
	}
}

// fakeRg writes a script standing in for rg.
func fakeRg(t *testing.T, body string) *Ripgrep {
	t.Helper()
	p := filepath.Join(t.TempDir(), "rg")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return &Ripgrep{Path: p, Source: SourceExplicit}
}

func TestATimedOutSearchReportsWhatItFoundAndStopsRipgrep(t *testing.T) {
	root := t.TempDir()
	rg := fakeRg(t, `printf '%s\n' '{"type":"begin","data":{"path":{"text":"a.go"}}}'
printf '%s\n' '{"type":"match","data":{"path":{"text":"a.go"},"lines":{"text":"needle\n"},"line_number":4,"absolute_offset":0,"submatches":[]}}'
sleep 30
`)
	start := time.Now()
	res, err := Grep(context.Background(), GrepOptions{Pattern: "needle", Target: dirTarget(t, root), Timeout: 300 * time.Millisecond, Ripgrep: rg})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("the search took %s", d)
	}
	if !res.TimedOut || res.Total != 1 || res.Matches[0].Line != 4 {
		t.Fatalf("%+v", res)
	}
	if !strings.Contains(res.Text(), "stopped after 300ms") {
		t.Fatalf("text %q", res.Text())
	}
}

func TestRipgrepExitTwoWithResultsIsAPartialSearch(t *testing.T) {
	root := t.TempDir()
	rg := fakeRg(t, `echo 'a.txt'
exit 2
`)
	res, err := Glob(context.Background(), GlobOptions{Pattern: "*", Target: dirTarget(t, root), Ripgrep: rg})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Partial || res.Total != 1 || !strings.Contains(res.Text(), "could not be read") {
		t.Fatalf("%+v", res)
	}
}

func TestRipgrepFailureWithoutResultsIsAnInternalErrorWithItsMessage(t *testing.T) {
	rg := fakeRg(t, `echo 'rg: something broke' >&2
exit 2
`)
	_, err := Grep(context.Background(), GrepOptions{Pattern: "x", Target: dirTarget(t, t.TempDir()), Ripgrep: rg})
	e, ok := AsError(err)
	if !ok || e.Kind != Internal || !strings.Contains(e.Message, "something broke") {
		t.Fatalf("err = %v", err)
	}
	var ec interface{ ExitCode() int }
	if asExitCoder(err, &ec) {
		t.Fatalf("the error carries ripgrep's exit code (%d) in its chain", ec.ExitCode())
	}
}

// ripgrep is run with an argument vector, so shell syntax in a pattern is
// only a pattern.
func TestPatternsAreNeverInterpretedByAShell(t *testing.T) {
	rg := needRg(t)
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.txt": "$(touch pwned) `x` ; | & >\n"})
	res, err := Grep(context.Background(), GrepOptions{Pattern: `\$\(touch pwned\)`, Target: dirTarget(t, root), Ripgrep: rg})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "pwned")); err == nil {
		t.Fatal("a shell ran the pattern")
	}
	if res.Total != 1 {
		t.Fatalf("the shell syntax, searched for as text, matched %d lines, want 1", res.Total)
	}
	res, err = Grep(context.Background(), GrepOptions{Pattern: "-e", Target: dirTarget(t, root), Ripgrep: rg})
	if err != nil || res.Total != 0 {
		t.Fatalf("a pattern that looks like a flag: %+v %v", res, err)
	}
}

func asExitCoder(err error, target *interface{ ExitCode() int }) bool {
	for err != nil {
		if ec, ok := err.(interface{ ExitCode() int }); ok {
			*target = ec
			return true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		err = u.Unwrap()
	}
	return false
}
