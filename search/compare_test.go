package search

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

func grepBoth(t *testing.T, rg *Ripgrep, root, pattern, include string, noHidden bool) (rgRes, fbRes *GrepResult) {
	t.Helper()
	target, err := ResolveTarget("grep", "", TargetOptions{Directory: root})
	if err != nil {
		t.Fatal(err)
	}
	o := GrepOptions{Pattern: pattern, Target: target, Include: include, Limit: 100000, NoHidden: noHidden}
	o.Ripgrep = rg
	if rgRes, err = Grep(context.Background(), o); err != nil {
		t.Fatalf("rg: %v", err)
	}
	o.Ripgrep, o.FallbackReason = nil, "test"
	if fbRes, err = Grep(context.Background(), o); err != nil {
		t.Fatalf("fallback: %v", err)
	}
	return rgRes, fbRes
}

func matchLines(root string, ms []Match) []string {
	var out []string
	for _, m := range ms {
		out = append(out, fmt.Sprintf("%s:%d: %s", strings.TrimPrefix(m.Path, root+"/"), m.Line, m.Text))
	}
	sort.Strings(out)
	return out
}

// The fallback finds the same lines as ripgrep on the same tree, for
// patterns and include globs where the two agree by design.
func TestFallbackGrepFindsWhatRipgrepFinds(t *testing.T) {
	rg := needRg(t)
	root := polyglotTree(t)
	cases := []struct{ pattern, include string }{
		{"needle", ""},
		{"(?i)needle", ""},
		{"^needle", ""},
		{"needle$", ""},
		{"Needle", ""},
		{`func \w+\(`, ""},
		{`[Nn]eedle\(`, "*.go"},
		{"needle", "*.go"},
		{"needle", "*.{ts,tsx}"},
		{"needle", "internal/**/*.go"},
		{"needle", "web/**"},
		{"needle", "*.txt"},
		{"needle", "!*.txt"},
		{"needle", "*.log"},
		{"needle", "build/*"},
		{"return", ""},
		{`x \* 2`, ""},
		{"^$", ""},
		{"needle with", ""},
		{"second", ""},
	}
	for _, c := range cases {
		t.Run(c.pattern+" include="+c.include, func(t *testing.T) {
			r, f := grepBoth(t, rg, root, c.pattern, c.include, false)
			want, got := matchLines(root, r.Matches), matchLines(root, f.Matches)
			if strings.Join(want, "\n") != strings.Join(got, "\n") || r.Total != f.Total {
				t.Fatalf("ripgrep found %d:\n%s\n\nthe fallback found %d:\n%s", r.Total, strings.Join(want, "\n"), f.Total, strings.Join(got, "\n"))
			}
		})
	}
	t.Run("hidden files skipped", func(t *testing.T) {
		r, f := grepBoth(t, rg, root, "needle", "", true)
		want, got := matchLines(root, r.Matches), matchLines(root, f.Matches)
		if strings.Join(want, "\n") != strings.Join(got, "\n") {
			t.Fatalf("ripgrep:\n%s\n\nfallback:\n%s", strings.Join(want, "\n"), strings.Join(got, "\n"))
		}
	})
}

// The fallback lists the same files as ripgrep --files for the same globs.
func TestFallbackGlobListsWhatRipgrepLists(t *testing.T) {
	rg := needRg(t)
	root := polyglotTree(t)
	target, err := ResolveTarget("glob", "", TargetOptions{Directory: root})
	if err != nil {
		t.Fatal(err)
	}
	for _, pattern := range []string{"*.go", "**/*.go", "*.log", "sub/*", "**/lane.go", "*", ".env*", "web/src/*.ts",
		"*.{js,ts}", "[a-m]*.txt", "**/*", "docs", "build/*", "internal/**", "/main.go", "*.min.js", "?ain.go", "!*.go"} {
		t.Run(pattern, func(t *testing.T) {
			o := GlobOptions{Pattern: pattern, Target: target, Limit: 100000, Ripgrep: rg}
			r, err := Glob(context.Background(), o)
			if err != nil {
				t.Fatalf("rg: %v", err)
			}
			o.Ripgrep = nil
			f, err := Glob(context.Background(), o)
			if err != nil {
				t.Fatalf("fallback: %v", err)
			}
			want, got := append([]string(nil), r.Files...), append([]string(nil), f.Files...)
			sort.Strings(want)
			sort.Strings(got)
			if strings.Join(want, "\n") != strings.Join(got, "\n") {
				t.Fatalf("ripgrep:\n%s\n\nfallback:\n%s", strings.Join(want, "\n"), strings.Join(got, "\n"))
			}
		})
	}
}

// The documented difference: Go's \w is ASCII-only, ripgrep's is
// Unicode-aware, so a word with an accented letter matches only under
// ripgrep. If this starts to agree, the documentation is out of date.
func TestFallbackDiffersFromRipgrepOnUnicodeClasses(t *testing.T) {
	rg := needRg(t)
	root := polyglotTree(t)
	r, f := grepBoth(t, rg, root, `na\w+ve`, "", false)
	if r.Total != 1 || f.Total != 0 {
		t.Fatalf(`na\w+ve: ripgrep found %d, the fallback %d; want 1 and 0`, r.Total, f.Total)
	}
	// Spelled with an explicit Unicode class, both agree.
	r, f = grepBoth(t, rg, root, `na\pL+ve`, "", false)
	if r.Total != 1 || f.Total != 1 {
		t.Fatalf(`na\pL+ve: ripgrep found %d, the fallback %d; want 1 and 1`, r.Total, f.Total)
	}
}

// A worktree lane under .slim/worktrees is hidden from git by .gitignore
// and brought back for searches by .ignore negations; both engines must
// find it, or the host's lanes vanish from every search.
func TestWorktreeLanesReIncludedByIgnoreAreSearched(t *testing.T) {
	rg := needRg(t)
	root := polyglotTree(t)
	lane := filepath.Join(root, ".slim", "worktrees", "lane", "lane.go")
	r, f := grepBoth(t, rg, root, "needle in lane", "", false)
	for name, res := range map[string]*GrepResult{"ripgrep": r, "the fallback": f} {
		if res.Total != 1 || res.Matches[0].Path != lane {
			t.Errorf("grep with %s: %+v, want the one line in %s", name, res.Matches, lane)
		}
	}
	target, err := ResolveTarget("glob", "", TargetOptions{Directory: root})
	if err != nil {
		t.Fatal(err)
	}
	for _, engine := range []*Ripgrep{rg, nil} {
		res, err := Glob(context.Background(), GlobOptions{Pattern: "lane.go", Target: target, Limit: 100, Ripgrep: engine})
		if err != nil {
			t.Fatal(err)
		}
		if res.Total != 1 || res.Files[0] != lane {
			t.Errorf("glob with ripgrep=%v: %v, want %s", engine != nil, res.Files, lane)
		}
	}
}
