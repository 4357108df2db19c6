package rescue_test

// The two-outcome property over real source files: an edit of a Go source
// file from the Go distribution, a Codex patch written against the file as
// it was, a drift of the file on disk, and then rescue.Process. Either the
// patch is applied and the file equals the intended edit on the drifted
// file (untouched lines byte-identical), or it is refused and nothing on
// disk changed. A wrong apply (the file differs from the intended edit) or
// an unsafe one (a refusal that still changed the disk) fails the test;
// refusals are counted, and the drift kinds the rescue is built for must
// mostly apply.

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/slimgate/slim/internal/drift"
	"github.com/slimgate/slim/rescue"
)

var (
	propSeed    = flag.Uint64("rescue.seed", 1, "seed for the property test's file sample, edits and drifts")
	propFiles   = flag.Int("rescue.files", 200, "number of Go distribution source files the property test samples (40 with -short)")
	propDump    = flag.String("rescue.dump", "", "directory to write failing property cases into (patch, before, got, want)")
	propRefused = flag.String("rescue.refused", "", "directory to write the refused reindented, edited-edge and already-applied cases into (patch, disk, want, the refusal)")
)

// srcFile is one sampled source file.
type srcFile struct {
	rel  string // slash path below GOROOT/src
	data []byte
}

// goSources returns a deterministic sample of n text files from the Go
// distribution's src tree: sorted, shuffled with seed, and filtered to
// UTF-8 without NUL or CR, 20 to 4000 lines, testdata trees left out.
func goSources(t testing.TB, n int, seed uint64) []srcFile {
	t.Helper()
	root := filepath.Join(runtime.GOROOT(), "src")
	var paths []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil || len(paths) == 0 {
		t.Skipf("Go distribution sources not available under %s: %v", root, err)
	}
	sort.Strings(paths)
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	r.Shuffle(len(paths), func(i, j int) { paths[i], paths[j] = paths[j], paths[i] })
	var out []srcFile
	for _, p := range paths {
		if len(out) == n {
			break
		}
		data, err := os.ReadFile(p)
		if err != nil || !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 || bytes.IndexByte(data, '\r') >= 0 {
			continue
		}
		if lines := bytes.Count(data, []byte("\n")); lines < 20 || lines > 4000 {
			continue
		}
		rel, _ := filepath.Rel(root, p)
		out = append(out, srcFile{filepath.ToSlash(rel), data})
	}
	return out
}

// tree is a snapshot of a directory: slash path -> contents ("/" suffix for
// directories).
type tree map[string]string

func snapshot(t testing.TB, dir string) tree {
	t.Helper()
	out := tree{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		if d.IsDir() {
			out[rel+"/"] = ""
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[rel] = string(b)
		return nil
	})
	if err != nil {
		t.Fatalf("snapshot %s: %v", dir, err)
	}
	return out
}

// diff describes how b differs from a, or "" when they are equal.
func (a tree) diff(b tree) string {
	var out []string
	for k, v := range a {
		w, ok := b[k]
		switch {
		case !ok:
			out = append(out, "missing "+k)
		case v != w:
			out = append(out, "changed "+k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, "extra "+k)
		}
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// writeTree creates dir (which must not exist yet) holding files.
func writeTree(t testing.TB, dir string, files map[string][]byte) {
	t.Helper()
	for rel, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// refusal classifies a Process error: a refusal must be a *rescue.Error
// of kind verification; anything else is a failure of its own.
func refusal(err error) (msg string, ok bool) {
	var se *rescue.Error
	if !errors.As(err, &se) {
		return fmt.Sprintf("not a *rescue.Error: %T %v", err, err), false
	}
	if se.Kind != rescue.Verification {
		return fmt.Sprintf("kind %s (%s): %s", se.Kind, se.Code, se.Message), false
	}
	return se.Message, true
}

// minRightPercent is the share of the reindented, edited-edge and
// already-applied cases that must come out right: applied, or refused
// where the edited-edge oracle (ambiguousEdge) finds the case ambiguous.
// The rest is refused because another place in the file could be the one
// the author meant by the matcher's look-alike rule (framed by the chunk's
// context, placeable by another step, or as close as an edited edge).
const minRightPercent = 95

// kindStats counts outcomes for one drift kind.
type kindStats struct {
	cases, applied, refused          int
	elsewhere                        int // applied at a lookalike place (a failure)
	mustApply, mustRefuse            int
	rewriteRefused, rewriteRewritten int
	strategies                       map[string]int
	// ambiguous counts the cases the edited-edge oracle made must-refuse
	// (all of them refused when the test passes).
	ambiguous int
	// right counts the cases with the outcome wanted: applied where a
	// refusal is not required, refused where it is.
	right int
}

// ambiguousEdge is the oracle for an edited-edge case: whether a careful
// reader could not tell the place the author meant from another one. It
// knows the meant place (the generator's, not the matcher's) and shares
// no code with the matcher: it scores every window of the drifted file as
// long as the chunk's old lines by their longest common subsequence with
// them, lines compared byte for byte, and calls the case ambiguous when a
// window that does not overlap the meant place scores at least as high as
// the meant place does after the edit (the edited line no longer agrees
// there, so the meant place scores one less than all). Only windows the
// chunk may name count: after the line the @@ header names, if any, and
// none at all when the chunk is pinned by "*** End of File".
func ambiguousEdge(c *drift.Case) bool {
	if c.Kind != drift.EditedEdge || c.Patch.EOF {
		return false
	}
	old := drift.Texts(c.View[c.Patch.OldStart:c.Patch.OldEnd])
	disk := drift.Texts(c.Disk)
	m := len(old)
	meant := c.DiskStart - (c.Edit.Start - c.Patch.OldStart)
	lo := 0
	if c.Patch.Scope >= 0 {
		lo = c.Patch.Scope + 1
	}
	score := func(s int) int {
		prev, cur := make([]int, m+1), make([]int, m+1)
		for _, o := range old {
			for j, d := range disk[s : s+m] {
				switch {
				case o == d:
					cur[j+1] = prev[j] + 1
				default:
					cur[j+1] = max(prev[j+1], cur[j])
				}
			}
			prev, cur = cur, prev
		}
		return prev[m]
	}
	want := score(meant)
	for s := lo; s+m <= len(disk); s++ {
		if (s+m <= meant || s >= meant+m) && score(s) >= want {
			return true
		}
	}
	return false
}

func TestPropertyDrift(t *testing.T) {
	n := *propFiles
	if testing.Short() && n > 40 {
		n = 40
	}
	files := goSources(t, n, *propSeed)
	if len(files) < n {
		t.Logf("only %d usable files", len(files))
	}
	r := rand.New(rand.NewPCG(*propSeed, 0xd41f7))
	stats := map[drift.Kind]*kindStats{}
	for _, k := range drift.Kinds {
		stats[k] = &kindStats{strategies: map[string]int{}}
	}
	var failures []string
	fail := func(c *drift.Case, format string, args ...any) {
		msg := fmt.Sprintf("%s: %s", c, fmt.Sprintf(format, args...))
		failures = append(failures, msg)
		dumpCase(t, c, len(failures), msg)
	}
	root := t.TempDir()
	id := 0
	for _, f := range files {
		orig := drift.Split(f.data)
		for _, kind := range drift.Kinds {
			c, ok := drift.NewCase(r, kind, f.rel, orig)
			if !ok {
				continue
			}
			id++
			st := stats[kind]
			st.cases++
			if ambiguousEdge(c) {
				c.Want, c.Why = drift.MustRefuse, "ambiguous: another place agrees with the chunk as well as the meant one"
				st.ambiguous++
			}
			switch c.Want {
			case drift.MustApply:
				st.mustApply++
			case drift.MustRefuse:
				st.mustRefuse++
			}
			runCase(t, c, filepath.Join(root, fmt.Sprint(id)), st, fail)
		}
	}
	t.Logf("seed %d, %d files, %d cases", *propSeed, len(files), id)
	t.Log("\n" + outcomeTable(stats))
	// The drifts the rescue is built to see through must mostly apply; a
	// refusal is allowed (a look-alike elsewhere), a collapse is not.
	for _, k := range []drift.Kind{drift.Reindented, drift.EditedEdge, drift.AlreadyApplied} {
		st := stats[k]
		t.Logf("%s: %d of %d right (%.1f%%): %d applied; %d made must-refuse by the ambiguity oracle; %d refused",
			k, st.right, st.cases, 100*float64(st.right)/float64(max(1, st.cases)), st.applied, st.ambiguous, st.refused)
		if st.cases >= 20 && 100*st.right < minRightPercent*st.cases {
			t.Errorf("%s: %d of %d cases right, want at least %d%%", k, st.right, st.cases, minRightPercent)
		}
	}
	for i, f := range failures {
		if i == 25 {
			t.Errorf("... and %d more failures", len(failures)-25)
			break
		}
		t.Error(f)
	}
}

// runCase runs one case in apply mode, then in rewrite mode followed by an
// apply of the handed-on patch, and checks the two-outcome property.
func runCase(t *testing.T, c *drift.Case, dir string, st *kindStats, fail func(*drift.Case, string, ...any)) {
	disk := c.DiskBytes()
	patch := []byte(c.Patch.Text)

	// Apply mode.
	applyDir := dir + "-apply"
	writeTree(t, applyDir, map[string][]byte{c.Path: disk})
	before := snapshot(t, applyDir)
	res, err := rescue.Process(patch, rescue.Options{Directory: applyDir, NoWorktree: true, Apply: true})
	after := snapshot(t, applyDir)
	appliedBytes := after[c.Path]
	applied := err == nil
	if applied {
		st.applied++
		if res != nil && len(res.Chunks) > 0 {
			st.strategies[res.Chunks[0].Strategy]++
		}
		want := string(c.Expected())
		if got := after[c.Path]; got != want {
			if line, ok := lookalike(c, res); ok {
				// Counted in its own column, and a failure like any
				// other wrong result: the matcher refuses look-alikes.
				st.elsewhere++
				fail(c, "applied at a lookalike place, line %d (%s), not where the author meant:\n%s",
					line, res.Chunks[0].Strategy, lineDiff(want, got))
				return
			}
			fail(c, "applied, but the file is not the intended edit of the drifted file:\n%s", lineDiff(want, got))
		}
		delete(before, c.Path)
		delete(after, c.Path)
		if d := before.diff(after); d != "" {
			fail(c, "applied, and other paths changed: %s", d)
		}
		if res == nil || res.Applied == nil || !*res.Applied {
			fail(c, "applied without Result.Applied = true")
		}
		if c.Want == drift.MustRefuse {
			fail(c, "applied, but the case must be refused")
		} else {
			st.right++
		}
	} else {
		st.refused++
		if c.Want == drift.MustRefuse {
			st.right++
		}
		msg, ok := refusal(err)
		if !ok {
			fail(c, "refused with the wrong kind of error: %s", msg)
		}
		if d := before.diff(after); d != "" {
			fail(c, "refused, and the directory changed: %s (error: %s)", d, msg)
		}
		if c.Want == drift.MustApply {
			fail(c, "refused, but the case must apply: %s", msg)
		}
		if *propRefused != "" && rescuedKind(c.Kind) {
			writeCase(t, filepath.Join(*propRefused, fmt.Sprintf("%s-%04d", c.Kind, st.refused)), c, c.String()+"\n"+msg)
		}
	}

	// Rewrite mode, then apply what it hands on.
	rwDir := dir + "-rewrite"
	writeTree(t, rwDir, map[string][]byte{c.Path: disk})
	before = snapshot(t, rwDir)
	res2, err2 := rescue.Process(patch, rescue.Options{Directory: rwDir, NoWorktree: true})
	if d := before.diff(snapshot(t, rwDir)); d != "" {
		fail(c, "rewrite mode changed the directory: %s", d)
	}
	switch {
	case err2 != nil && applied:
		// Rewrite mode may refuse only what the host cannot write (the
		// "Cannot express" refusal); it resolves chunks exactly as apply
		// mode does.
		msg, ok := refusal(err2)
		if !ok || !strings.Contains(msg, "Cannot express") {
			fail(c, "rewrite mode refused what apply mode applied: %s", msg)
		}
		st.rewriteRefused++
		if st.rewriteRefused <= 2 {
			t.Logf("note: %s: rewrite mode refused, the host cannot write it: %s", c, firstLine(msg))
		}
	case err2 != nil:
		if msg, ok := refusal(err2); !ok {
			fail(c, "rewrite mode failed with the wrong kind of error: %s", msg)
		}
	case !applied:
		fail(c, "rewrite mode accepted (%s) what apply mode refused (%v)", res2.Decision, err)
	default:
		if res2.PatchText == nil {
			fail(c, "rewrite mode gave no patch text (decision %s)", res2.Decision)
			return
		}
		text := *res2.PatchText
		switch res2.Decision {
		case rescue.DecisionUnchanged:
			if text != c.Patch.Text {
				fail(c, "decision unchanged, but the patch text differs")
			}
		case rescue.DecisionRewrite:
			st.rewriteRewritten++
		default:
			fail(c, "rewrite mode decision %q", res2.Decision)
		}
		_, err3 := rescue.Process([]byte(text), rescue.Options{Directory: rwDir, NoWorktree: true, Apply: true})
		if err3 != nil {
			fail(c, "the handed-on patch does not apply: %v\n%s", err3, text)
			return
		}
		if got, want := snapshot(t, rwDir)[c.Path], appliedBytes; got != want {
			fail(c, "the handed-on patch gives different bytes from apply mode:\n%s\npatch:\n%s", lineDiff(want, got), text)
		}
	}
}

// outcomeTable renders the per-kind counts as a Markdown table.
func outcomeTable(stats map[drift.Kind]*kindStats) string {
	var b strings.Builder
	b.WriteString("| drift | cases | applied | refused | applied elsewhere | must apply | must refuse | rewrite mode: rewritten | rewrite mode: refused | strategies (applied) |\n")
	b.WriteString("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n")
	var tot kindStats
	for _, k := range drift.Kinds {
		s := stats[k]
		var strat []string
		for name, n := range s.strategies {
			if n == 0 {
				continue
			}
			strat = append(strat, fmt.Sprintf("%s %d", name, n))
		}
		sort.Strings(strat)
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %d | %d | %d | %s |\n", k, s.cases, s.applied, s.refused, s.elsewhere,
			s.mustApply, s.mustRefuse, s.rewriteRewritten, s.rewriteRefused, strings.Join(strat, ", "))
		tot.cases += s.cases
		tot.applied += s.applied
		tot.refused += s.refused
		tot.elsewhere += s.elsewhere
		tot.mustApply += s.mustApply
		tot.mustRefuse += s.mustRefuse
		tot.rewriteRewritten += s.rewriteRewritten
		tot.rewriteRefused += s.rewriteRefused
	}
	fmt.Fprintf(&b, "| all | %d | %d | %d | %d | %d | %d | %d | %d | |\n", tot.cases, tot.applied, tot.refused, tot.elsewhere,
		tot.mustApply, tot.mustRefuse, tot.rewriteRewritten, tot.rewriteRefused)
	return b.String()
}

// lineDiff shows the first differing line of two texts.
func lineDiff(want, got string) string {
	w, g := strings.SplitAfter(want, "\n"), strings.SplitAfter(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return fmt.Sprintf("first difference at line %d:\n  want %q\n  got  %q", i+1, a, b)
		}
	}
	return "texts are equal"
}

// rescuedKind reports whether k is one of the drift kinds the newer
// rescue steps are for, whose refusals -rescue.refused writes out.
func rescuedKind(k drift.Kind) bool {
	return k == drift.Reindented || k == drift.EditedEdge || k == drift.AlreadyApplied
}

// dumpCase writes a failing case to -rescue.dump, if set.
func dumpCase(t *testing.T, c *drift.Case, n int, msg string) {
	if *propDump == "" {
		return
	}
	writeCase(t, filepath.Join(*propDump, fmt.Sprintf("case%03d", n)), c, msg)
}

// writeCase writes one case into dir: the patch, the file as the author
// read it, the file on disk, the expected result and msg.
func writeCase(t *testing.T, dir string, c *drift.Case, msg string) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Logf("dump: %v", err)
		return
	}
	os.WriteFile(filepath.Join(dir, "patch.txt"), []byte(c.Patch.Text), 0o644)
	os.WriteFile(filepath.Join(dir, "view"), drift.Join(c.View), 0o644)
	os.WriteFile(filepath.Join(dir, "disk"), c.DiskBytes(), 0o644)
	os.WriteFile(filepath.Join(dir, "want"), c.Expected(), 0o644)
	os.WriteFile(filepath.Join(dir, "failure.txt"), []byte(msg+"\n"), 0o644)
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}

// lookalike reports whether an apply that gave unexpected bytes placed the
// chunk by a rescue step (prefix-suffix or lcs) at another place than the
// one the author meant (the matcher must refuse such look-alikes).
func lookalike(c *drift.Case, res *rescue.Result) (int, bool) {
	if res == nil || len(res.Chunks) != 1 {
		return 0, false
	}
	ch := res.Chunks[0]
	if ch.Strategy != "lcs" && ch.Strategy != "prefix-suffix" {
		return 0, false
	}
	meant := c.DiskStart - (c.Edit.Start - c.Patch.OldStart) + 1 // 1-based start of the old lines
	if ch.Line == meant {
		return 0, false
	}
	return ch.Line, true
}

// lookalikeCase is a patch that must be refused because the place its
// author meant changed and only a lookalike elsewhere still resembles it.
type lookalikeCase struct {
	name, file, patch string
}

// TestLookalikeRegressions holds look-alike cases the property test found.
func TestLookalikeRegressions(t *testing.T) {
	runLookalike(t, []lookalikeCase{
		{
			// The author's region (r1, r2 between p* and s*) was rewritten
			// (x1, x2): prefix/suffix refuses it by the bound, but the same
			// brackets occur again around r1, r2-other, which passes the
			// bound (LCS 1 of 2), so that region is removed instead. It
			// holds a line (r2-other) the author never saw.
			name:  "prefix-suffix lookalike after the real region was rewritten",
			file:  "head\np1\np2\np3\nx1\nx2\ns1\ns2\ns3\nmid\np1\np2\np3\nr1\nr2-other\ns1\ns2\ns3\ntail\n",
			patch: "*** Begin Patch\n*** Update File: f.txt\n@@\n p1\n p2\n p3\n-r1\n-r2\n+new\n s1\n s2\n s3\n*** End Patch\n",
		},
		{
			// The removed line r1 was rewritten (x1) where the author saw
			// it, so that window is not an LCS candidate (a removed line
			// must agree with the line it removes); a
			// window further down that differs in a context line (ctxB for
			// ctxA) scores 6 of 7 and is used.
			name:  "LCS lookalike after the real removed line was rewritten",
			file:  "c1\nc2\nctxA\nx1\nc5\nc6\nc7\nsep\nc1\nc2\nctxB\nr1\nc5\nc6\nc7\n",
			patch: "*** Begin Patch\n*** Update File: f.txt\n@@\n c1\n c2\n ctxA\n-r1\n+new\n c5\n c6\n c7\n*** End Patch\n",
		},
	})
}

func runLookalike(t *testing.T, tests []lookalikeCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "root")
			writeTree(t, root, map[string][]byte{"f.txt": []byte(tt.file)})
			before := snapshot(t, root)
			res, err := rescue.Process([]byte(tt.patch), rescue.Options{Directory: root, NoWorktree: true, Apply: true})
			if err == nil {
				var where []string
				for _, c := range res.Chunks {
					where = append(where, fmt.Sprintf("%s at line %d", c.Strategy, c.Line))
				}
				t.Errorf("applied (%s); want a refusal. File now:\n%s", strings.Join(where, ", "), snapshot(t, root)["f.txt"])
				return
			}
			if msg, ok := refusal(err); !ok {
				t.Errorf("refused with the wrong kind of error: %s", msg)
			}
			if d := before.diff(snapshot(t, root)); d != "" {
				t.Errorf("refused, but the directory changed: %s", d)
			}
		})
	}
}

// TestPropertyMultiChunk is the two-outcome property for patches with 2 to
// 5 chunks in one Update (the cursor, rendering and host check across
// chunks), with no drift, trailing blanks and curly quotes on every context
// line, or CRLF. Each chunk's old lines are unique in the file, even by the
// coarse key, so every case must apply, and give exactly the edits.
func TestPropertyMultiChunk(t *testing.T) {
	n := *propFiles
	if testing.Short() && n > 40 {
		n = 40
	}
	files := goSources(t, n, *propSeed+1000)
	r := rand.New(rand.NewPCG(*propSeed, 0x3c4a))
	root := t.TempDir()
	counts := map[string][3]int{} // drift -> {cases, rewritten, refused by the host check}
	failures := 0
	for id, f := range files {
		view := drift.Split(f.data)
		edits := drift.SpreadEdits(r, view, 2+r.IntN(4), 3)
		if len(edits) < 2 || !uniqueChunks(view, edits) {
			continue
		}
		kind := []string{"none", "blanks+curly", "crlf"}[r.IntN(3)]
		disk := drift.Clone(view)
		for _, e := range edits {
			for i := max(0, e.Start-3); i < min(len(disk), e.Start+e.Del+3); i++ {
				inEdit := i >= e.Start && i < e.Start+e.Del
				switch {
				case kind == "blanks+curly" && !inEdit:
					disk[i].Text = drift.Curl(disk[i].Text) + " \t"
				}
			}
		}
		if kind == "crlf" {
			for i := range disk {
				if disk[i].EOL == "\n" {
					disk[i].EOL = "\r\n"
				}
			}
		}
		patch := "*** Begin Patch\n" + drift.UpdateHunk(f.rel, view, edits, 3) + "*** End Patch\n"
		want := string(drift.ApplyAll(disk, edits))
		c := counts[kind]
		c[0]++
		report := func(format string, args ...any) {
			failures++
			if failures <= 10 {
				t.Errorf("%s (%s, %d chunks): %s\npatch:\n%s", f.rel, kind, len(edits), fmt.Sprintf(format, args...), patch)
			}
		}

		dir := filepath.Join(root, fmt.Sprint(id))
		writeTree(t, dir, map[string][]byte{f.rel: drift.Join(disk)})
		if _, err := rescue.Process([]byte(patch), rescue.Options{Directory: dir, NoWorktree: true, Apply: true}); err != nil {
			report("apply mode refused: %v", err)
		} else if got := snapshot(t, dir)[f.rel]; got != want {
			report("apply mode gave other bytes:\n%s", lineDiff(want, got))
		}

		dir2 := dir + "-rewrite"
		writeTree(t, dir2, map[string][]byte{f.rel: drift.Join(disk)})
		res, err := rescue.Process([]byte(patch), rescue.Options{Directory: dir2, NoWorktree: true})
		if err != nil {
			// Rewrite mode may refuse what the host cannot write (a file
			// ending in a blank line, say). Nothing else.
			if msg, ok := refusal(err); !ok || !strings.Contains(msg, "Cannot express") {
				report("rewrite mode refused: %v", err)
			} else {
				c[2]++
			}
			counts[kind] = c
			continue
		}
		if res.Decision == rescue.DecisionRewrite {
			c[1]++
		}
		if _, err := rescue.Process([]byte(*res.PatchText), rescue.Options{Directory: dir2, NoWorktree: true, Apply: true}); err != nil {
			report("the handed-on patch does not apply: %v\n%s", err, *res.PatchText)
		} else if got := snapshot(t, dir2)[f.rel]; got != want {
			report("the handed-on patch gives other bytes:\n%s\nhanded on:\n%s", lineDiff(want, got), *res.PatchText)
		}
		counts[kind] = c
	}
	for _, k := range []string{"none", "blanks+curly", "crlf"} {
		t.Logf("%-13s %4d cases, %4d rewritten in rewrite mode, %d refused there because the host cannot write them",
			k, counts[k][0], counts[k][1], counts[k][2])
	}
	if failures > 10 {
		t.Errorf("... %d failures in all", failures)
	}
}

// uniqueChunks reports whether each edit's old lines (3 lines of context)
// occur once in view by the coarse key.
func uniqueChunks(view []drift.Line, edits []drift.Edit) bool {
	keys := make([]string, len(view))
	for i, l := range view {
		keys[i] = drift.CoarseKey(l.Text)
	}
	for _, e := range edits {
		lo, hi := max(0, e.Start-3), min(len(view), e.Start+e.Del+3)
		n := 0
		for p := 0; p+hi-lo <= len(keys) && n < 2; p++ {
			same := true
			for i := lo; i < hi; i++ {
				if keys[p+i-lo] != keys[i] {
					same = false
					break
				}
			}
			if same {
				n++
			}
		}
		if n != 1 {
			return false
		}
	}
	return true
}
