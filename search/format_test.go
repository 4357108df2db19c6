package search

import (
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"
	"time"
)

func TestGrepTextLaysOutMatchesAsOpenCodeDoes(t *testing.T) {
	r := &GrepResult{RunInfo: RunInfo{Engine: EngineRipgrep}, Total: 3, Matches: []Match{
		{Path: "/p/new.go", Line: 3, Text: "func a() {}"},
		{Path: "/p/new.go", Line: 9, Text: "func b() {}"},
		{Path: "/p/old.go", Line: 1, Text: "package old"},
	}}
	want := "Found 3 matches\n/p/new.go:\n  Line 3: func a() {}\n  Line 9: func b() {}\n\n/p/old.go:\n  Line 1: package old"
	if got := r.Text(); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

func TestGrepTextSaysNoFilesFoundWhenNothingMatched(t *testing.T) {
	r := &GrepResult{RunInfo: RunInfo{Engine: EngineRipgrep}}
	if got := r.Text(); got != "No files found" {
		t.Fatalf("got %q", got)
	}
	g := &GlobResult{RunInfo: RunInfo{Engine: EngineRipgrep}}
	if got := g.Text(); got != "No files found" {
		t.Fatalf("glob got %q", got)
	}
}

func TestGrepTextNamesTheTotalAndHowToNarrowWhenTruncated(t *testing.T) {
	r := &GrepResult{RunInfo: RunInfo{Engine: EngineRipgrep, Truncated: true}, Total: 250,
		Matches: []Match{{Path: "/p/a.go", Line: 1, Text: "x"}}}
	got := r.Text()
	if !strings.HasPrefix(got, "Found 250 matches (showing 1)\n") {
		t.Fatalf("first line of %q", got)
	}
	if !strings.Contains(got, "\n\n(Only 1 of the 250 matching lines are shown") || !strings.Contains(got, "include glob") {
		t.Fatalf("no truncation hint in %q", got)
	}
}

func TestFallbackOutputSaysSoOnItsFirstLine(t *testing.T) {
	r := &GrepResult{RunInfo: RunInfo{Engine: EngineFallback, FallbackReason: "ripgrep (rg) was not found"}}
	first, rest, _ := strings.Cut(r.Text(), "\n")
	if !strings.HasPrefix(first, "(Fallback search: ripgrep (rg) was not found") || !strings.Contains(first, "differ") || rest != "No files found" {
		t.Fatalf("got %q / %q", first, rest)
	}
	g := &GlobResult{RunInfo: RunInfo{Engine: EngineFallback, FallbackReason: "why"}, Files: []string{"/a"}}
	if first, _, _ := strings.Cut(g.Text(), "\n"); !strings.HasPrefix(first, "(Fallback search: why") {
		t.Fatalf("glob first line %q", first)
	}
}

func TestTextNotesTimeoutsAndSkippedFiles(t *testing.T) {
	r := &GlobResult{RunInfo: RunInfo{Engine: EngineRipgrep, TimedOut: true, Timeout: 2 * time.Second, Partial: true}, Files: []string{"/a", "/b"}, Total: 2}
	want := "/a\n/b\n\n(The search was stopped after 2s, its time limit; the results above are incomplete.)\n\n(Some files or directories could not be read and were skipped.)"
	if got := r.Text(); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

func TestGlobTextExplainsThatAnAbsolutePatternMatchesNothing(t *testing.T) {
	r := &GlobResult{RunInfo: RunInfo{Engine: EngineRipgrep}, Dir: "/p", Pattern: "/p/src/*.go"}
	if got := r.Text(); !strings.HasPrefix(got, "No files found\n\n(The pattern is matched against paths relative to /p") {
		t.Fatalf("got %q", got)
	}
}

// The collectors keep exactly what a full sort would show (newest file
// first, then path, then line) and count everything, whatever the order
// the matches arrive in and however many there are.
func TestCollectorsKeepWhatAFullSortWouldShow(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for round := 0; round < 200; round++ {
		nFiles := 1 + rng.Intn(40)
		limit := 1 + rng.Intn(30)
		mtimes := map[string]int64{}
		var all []Match
		for f := 0; f < nFiles; f++ {
			p := fmt.Sprintf("/p/f%02d.go", f)
			mtimes[p] = int64(rng.Intn(5)) // ties on purpose
			for l := 1; l <= rng.Intn(12); l++ {
				all = append(all, Match{Path: p, Line: l * 3, Text: "x"})
			}
		}
		stat := func(p string) int64 { return mtimes[p] }
		// Files arrive in any order; a file's lines arrive in order.
		order := rng.Perm(nFiles)
		c := newGrepCollector(limit, stat)
		g := newGlobCollector(limit, stat)
		for _, f := range order {
			p := fmt.Sprintf("/p/f%02d.go", f)
			g.add(p)
			for _, m := range all {
				if m.Path == p {
					if rng.Intn(2) == 0 && !c.wants(m.Path, m.Line) {
						c.count()
						continue
					}
					c.add(m)
				}
			}
		}
		want := append([]Match(nil), all...)
		sort.SliceStable(want, func(i, j int) bool {
			a, b := want[i], want[j]
			if mtimes[a.Path] != mtimes[b.Path] {
				return mtimes[a.Path] > mtimes[b.Path]
			}
			if a.Path != b.Path {
				return a.Path < b.Path
			}
			return a.Line < b.Line
		})
		if len(want) > limit {
			want = want[:limit]
		}
		got, total := c.result()
		if total != len(all) || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("round %d: got %d total, %v\nwant %d total, %v", round, total, got, len(all), want)
		}
		var files []string
		for p := range mtimes {
			files = append(files, p)
		}
		sort.Slice(files, func(i, j int) bool {
			if mtimes[files[i]] != mtimes[files[j]] {
				return mtimes[files[i]] > mtimes[files[j]]
			}
			return files[i] < files[j]
		})
		if len(files) > limit {
			files = files[:limit]
		}
		gotFiles, gotTotal := g.result()
		if gotTotal != nFiles || fmt.Sprint(gotFiles) != fmt.Sprint(files) {
			t.Fatalf("round %d: glob got %d, %v; want %d, %v", round, gotTotal, gotFiles, nFiles, files)
		}
	}
}
