package rescue_test

// Look-alike refusal: a rescue step that accepts one place must not be the
// only one that looks like the author's. A place whose first or last
// context line, or indentation, changed cannot be framed by prefix/suffix
// and fails the LCS first/last-line filter, but when it still reaches the
// LCS acceptance score it competes, and the chunk is refused as ambiguous
// (naming both places) instead of being applied at the look-alike.

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/slimgate/slim/rescue"
)

func TestLookalikeUnframedPlace(t *testing.T) {
	runLookalike(t, []lookalikeCase{
		{
			// The first context line changed (x0 for c1) where the author
			// saw it. That window and a look-alike (ctxB for ctxA) both
			// score 4 of 5 = needed: two candidates, so it is refused as
			// ambiguous.
			name:  "LCS: the real window's first line changed",
			file:  "x0\nc2\nctxA\nc4\nc5\nsep\nc1\nc2\nctxB\nc4\nc5\n",
			patch: "*** Begin Patch\n*** Update File: f.txt\n@@\n c1\n c2\n ctxA\n+new\n c4\n c5\n*** End Patch\n",
		},
		{
			// The same with the last context line changed.
			name:  "LCS: the real window's last line changed",
			file:  "c1\nc2\nctxA\nc4\nx5\nsep\nc1\nc2\nctxB\nc4\nc5\n",
			patch: "*** Begin Patch\n*** Update File: f.txt\n@@\n c1\n c2\n ctxA\n+new\n c4\n c5\n*** End Patch\n",
		},
		{
			// The first context line changed (p1x for p1), so prefix/suffix
			// cannot frame the real place; the same frame further down
			// holds r1, r2 and a re-indented r3, which passes. The real
			// place (8 of 9 lines agree) competes.
			name:  "prefix-suffix: the real place's first context line changed",
			file:  "p1x\np2\np3\nr1\nr2\nr3\ns1\ns2\ns3\nsep\np1\np2\np3\nr1\nr2\n  r3\ns1\ns2\ns3\n",
			patch: "*** Begin Patch\n*** Update File: f.txt\n@@\n p1\n p2\n p3\n-r1\n-r2\n-r3\n+new\n s1\n s2\n s3\n*** End Patch\n",
		},
		{
			// The same with the last context line changed.
			name:  "prefix-suffix: the real place's last context line changed",
			file:  "p1\np2\np3\nr1\nr2\nr3\ns1\ns2\ns3x\nsep\np1\np2\np3\nr1\nr2\n  r3\ns1\ns2\ns3\n",
			patch: "*** Begin Patch\n*** Update File: f.txt\n@@\n p1\n p2\n p3\n-r1\n-r2\n-r3\n+new\n s1\n s2\n s3\n*** End Patch\n",
		},
		{
			// The real place was re-indented (tabs to spaces): no line of
			// it matches on a rung any more, but every line agrees by key.
			name:  "prefix-suffix: the real place was re-indented",
			file:  "    p1\n    p2\n    r1\n    r2\n    s1\n    s2\nsep\n\tp1\n\tp2\n\tr1\n\tr2-other\n\ts1\n\ts2\n",
			patch: "*** Begin Patch\n*** Update File: f.txt\n@@\n \tp1\n \tp2\n-\tr1\n-\tr2\n+\tnew\n \ts1\n \ts2\n*** End Patch\n",
		},
		{
			// LCS with the real window's first line re-indented and a
			// look-alike that differs in a context line.
			name:  "LCS: the real window's first line was re-indented",
			file:  "    c1\n\tc2\n\tctxA\n\tr1\n\tc5\nsep\n\tc1\n\tc2\n\tctxB\n\tr1\n\tc5\n",
			patch: "*** Begin Patch\n*** Update File: f.txt\n@@\n \tc1\n \tc2\n \tctxA\n-\tr1\n+\tnew\n \tc5\n*** End Patch\n",
		},
		{
			// The real place was partly re-indented, and the accepted
			// look-alike overlaps it: it begins at the real place's
			// second "if err != nil {". A window shifted from the accepted
			// region is not a competitor, but the real place is, overlap
			// or not, because it puts the old lines at other file lines.
			name: "prefix-suffix: the look-alike overlaps the real place",
			file: "\tif err != nil {\n        panic(err)\n\t}\n\tgo Accept(l)\n\n    c, err := Dial(a)\n\tif err != nil {\n\t\tpanic(err)\n\t}\n\n" +
				"\tvar reply Reply\n\terr = c.Call()\n\tif err != nil {\n\t\tpanic(err)\n\t}\n\n\tc.Close()\n",
			patch: "*** Begin Patch\n*** Update File: f.txt\n@@\n \tif err != nil {\n \t\tpanic(err)\n \t}\n-\tgo Accept(l)\n-\n-\tc, err := Dial(a)\n-\tif err != nil {\n+\treturn err\n+\t}\n \t\tpanic(err)\n \t}\n \n*** End Patch\n",
		},
	})
}

// TestLookalikeNamesBothPlaces checks the refusal's message: an ambiguity
// that lists the real place and the look-alike.
func TestLookalikeNamesBothPlaces(t *testing.T) {
	for _, tc := range []struct {
		name, file, patch, phase, lines string
	}{
		{
			name:  "lcs",
			file:  "x0\nc2\nctxA\nc4\nc5\nsep\nc1\nc2\nctxB\nc4\nc5\n",
			patch: "*** Begin Patch\n*** Update File: f.txt\n@@\n c1\n c2\n ctxA\n+new\n c4\n c5\n*** End Patch\n",
			phase: "LCS rescue was ambiguous",
			lines: "Candidates at lines 1, 7.",
		},
		{
			name:  "prefix-suffix",
			file:  "p1x\np2\np3\nr1\nr2\nr3\ns1\ns2\ns3\nsep\np1\np2\np3\nr1\nr2\n  r3\ns1\ns2\ns3\n",
			patch: "*** Begin Patch\n*** Update File: f.txt\n@@\n p1\n p2\n p3\n-r1\n-r2\n-r3\n+new\n s1\n s2\n s3\n*** End Patch\n",
			phase: "Prefix/suffix rescue was ambiguous",
			lines: "Candidates at lines 1, 11.",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "root")
			writeTree(t, root, map[string][]byte{"f.txt": []byte(tc.file)})
			_, err := rescue.Process([]byte(tc.patch), rescue.Options{Directory: root, NoWorktree: true, Apply: true})
			if err == nil {
				t.Fatal("applied; want an ambiguity refusal")
			}
			msg, ok := refusal(err)
			if !ok {
				t.Fatalf("wrong kind of error: %s", msg)
			}
			if !strings.Contains(msg, tc.phase) || !strings.Contains(msg, tc.lines) {
				t.Errorf("message %q, want %q and %q", msg, tc.phase, tc.lines)
			}
		})
	}
}

// TestLookalikeControls: without a competing place the same rescues apply,
// so the refusals above come from the look-alike and nothing else.
func TestLookalikeControls(t *testing.T) {
	for _, tc := range []struct{ name, file, patch, want string }{
		{
			name:  "lcs",
			file:  "x0\nsep\nc1\nc2\nctxB\nc4\nc5\n",
			patch: "*** Begin Patch\n*** Update File: f.txt\n@@\n c1\n c2\n ctxA\n+new\n c4\n c5\n*** End Patch\n",
			want:  "x0\nsep\nc1\nc2\nctxB\nnew\nc4\nc5\n",
		},
		{
			name:  "prefix-suffix",
			file:  "p1x\np2\nsep\np1\np2\np3\nr1\nr2\n  r3\ns1\ns2\ns3\n",
			patch: "*** Begin Patch\n*** Update File: f.txt\n@@\n p1\n p2\n p3\n-r1\n-r2\n-r3\n+new\n s1\n s2\n s3\n*** End Patch\n",
			want:  "p1x\np2\nsep\np1\np2\np3\nnew\ns1\ns2\ns3\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) { wantApplied(t, tc.file, tc.patch, tc.want) })
	}
}

// TestLookalikeNewRescues: the indentation, edited-edge and already-applied
// steps refuse when the place the author meant may have changed and a
// similar block elsewhere would be edited (or the chunk skipped) instead.
func TestLookalikeNewRescues(t *testing.T) {
	runLookalike(t, []lookalikeCase{
		{
			// The author meant the first block; someone rewrote the lines
			// it removes. The second block's first line differed from the
			// start (a similar block), and every other line matches.
			name: "edited edge: the meant place rewritten, a similar block elsewhere",
			file: "c1 := one()\nc2 := two()\nc3 := three()\nx1\nx2\nx3\nx4\nx5\nc4 := four()\nc5 := five()\nc6 := six()\nsep\n" +
				"c1 := one() // other\nc2 := two()\nc3 := three()\nr1\nr2\nr3\nr4\nr5\nc4 := four()\nc5 := five()\nc6 := six()\n",
			patch: "*** Begin Patch\n*** Update File: f.txt\n@@\n c1 := one()\n c2 := two()\n c3 := three()\n-r1\n-r2\n-r3\n-r4\n-r5\n+new\n c4 := four()\n c5 := five()\n c6 := six()\n*** End Patch\n",
		},
		{
			// The meant block (one level deep) had a line changed; a copy
			// two levels deep agrees with the chunk apart from whitespace.
			name:  "indentation: the meant place changed, a copy at another level",
			file:  "func a() {\n\tx := 1\n\ty := 2\n\tchanged := 3\n\tw := 4\n}\nfunc b() {\n\tif ok {\n\t\tx := 1\n\t\ty := 2\n\t\tz := 3\n\t\tw := 4\n\t}\n}\n",
			patch: "*** Begin Patch\n*** Update File: f.txt\n@@\n \tx := 1\n \ty := 2\n-\tz := 3\n+\tz := 30\n \tw := 4\n*** End Patch\n",
		},
		{
			// The change looks made at the first block, but the lines the
			// chunk expects are still at the second, re-indented: that may
			// be the place meant.
			name:  "already applied: the expected lines drifted elsewhere",
			file:  "a\nb\nc\nNEW\nd\ne\nf\nsep\n  a\n  b\n  c\n  old\n  d\n  e\n  f\n",
			patch: "*** Begin Patch\n*** Update File: f.txt\n@@\n a\n b\n c\n-old\n+NEW\n d\n e\n f\n*** End Patch\n",
		},
	})
}

// TestLookalikeStrongStepsWhichRivalsCount pins which look-alikes stop the
// indentation, edited-edge and already-applied steps. A look-alike stops
// them when it could be the place meant: framed by the chunk's context
// (the meant place, the lines the chunk changes rewritten since), a place
// another rescue step would take on its own, or, against an edited edge,
// a place as close as the accepted one. A similar block that differs from
// the author's lines in a way no step accepts does not stop them.
func TestLookalikeStrongStepsWhichRivalsCount(t *testing.T) {
	const a = "func a() {\n\tx := 1\n\ty := 2\n\tz := 30\n\tw := 4\n\tv := 5\n}\n"
	const change = "*** Begin Patch\n*** Update File: f.txt\n@@\n \tx := 1\n \ty := 2\n-\tz := 3\n+\tz := 30\n \tw := 4\n \tv := 5\n*** End Patch\n"
	// The Fatal check of the second block was rewritten by someone else,
	// and the first block's last line reads like the patch's last line.
	const checks = "\tif err != nil {\n\t\tt.Fatal(err)\n\t} else if k.IsZero() == 1 {\n\t\tt.Error(\"k is zero\")\n\t} else if p.Bytes()[0] != 4 {\n\t\tt.Error(\"p is infinity\")\n\t}\n\tif loopCount == 0 {\n\t\tt.Error(\"overflow was not rejected\")\n\t}\n" +
		"\tif err != nil {\n\t\tchanged() // was: t.Fatal(err)\n\t} else if k.IsZero() == 1 {\n\t\tt.Error(\"k is zero\")\n\t} else if p.Bytes()[0] != 4 {\n\t\tt.Error(\"p is infinity\")\n\t}\n\tif loopCount == 0 {\n\t\tt.Error(\"zero was not rejected\")\n\t}\n"
	runLookalike(t, []lookalikeCase{
		{
			// The author meant b, to change z as a already has it; someone
			// rewrote b's z since. The new lines stand at a, but b is
			// framed by the chunk's context: the change is not known to
			// be made.
			name:  "already applied: the meant place rewritten, the new lines at a similar block",
			file:  a + "func b() {\n\tx := 1\n\ty := 2\n\tz := someoneElse()\n\tw := 4\n\tv := 5\n}\n",
			patch: change,
		},
		{
			// The indentation step would place the chunk at a (one more
			// tab), but b keeps the author's indentation and only a kept
			// line differs there: LCS would place it at b.
			name:  "indentation: another step would place the chunk at the look-alike",
			file:  "func a() {\n\t\tx := 1\n\t\ty := 2\n\t\tz := 3\n\t\tw := 4\n\t\tv := 5\n}\nfunc b() {\n\tx := 1\n\ty := 2\n\tz := 3\n\tw := 44\n\tv := 5\n}\n",
			patch: change,
		},
		{
			// As above, but at b someone appended a comment to the first
			// line: the edited-edge step would place the chunk there.
			name:  "indentation: the look-alike is the chunk with an edited first line",
			file:  "func a() {\n\t\tx := 1\n\t\ty := 2\n\t\tz := 3\n\t\tw := 4\n\t\tv := 5\n}\nfunc b() {\n\tx := 1 // note\n\ty := 2\n\tz := 3\n\tw := 4\n\tv := 5\n}\n",
			patch: change,
		},
		{
			// The change is made at the end of the file, and the lines the
			// chunk expects stand re-indented at the top. With no context
			// after the change there is no frame: the agreement of every
			// line apart from whitespace is what refuses it.
			name:  "already applied at the end: the expected lines stand re-indented elsewhere",
			file:  "  a := 1\n  b := 2\n  c := 3\n  old()\nsep\na := 1\nb := 2\nc := 3\nNEW()\n",
			patch: "*** Begin Patch\n*** Update File: f.txt\n@@\n a := 1\n b := 2\n c := 3\n-old()\n+NEW()\n*** End of File\n*** End Patch\n",
		},
		{
			// The edited-edge step would take the first block (its last
			// line reads like the patch's), but the second, meant block
			// differs in one line too: its first line was rewritten.
			name: "edited edge: a look-alike as close as the accepted place",
			file: checks,
			patch: "*** Begin Patch\n*** Update File: f.txt\n@@\n \t\tt.Fatal(err)\n \t} else if k.IsZero() == 1 {\n \t\tt.Error(\"k is zero\")\n-\t} else if p.Bytes()[0] != 4 {\n-\t\tt.Error(\"p is infinity\")\n" +
				" \t}\n \tif loopCount == 0 {\n \t\tt.Error(\"zero was not rejected\")\n*** End Patch\n",
		},
	})
	for _, tc := range []struct{ name, file, patch, want string }{
		{
			// b differs from the author's lines in w, a line the chunk
			// keeps: it is not the place meant, so the change counts as
			// made at a and the file is left as it is.
			name:  "already applied: a similar block differs in a kept line",
			file:  a + "func b() {\n\tx := 1\n\ty := 2\n\tz := 3\n\tq := 4\n\tv := 5\n}\n",
			patch: change,
			want:  a + "func b() {\n\tx := 1\n\ty := 2\n\tz := 3\n\tq := 4\n\tv := 5\n}\n",
		},
		{
			// The author's copy had four spaces for each tab. a agrees
			// apart from that; b agrees only in four of five lines, at
			// the file's indentation, which no step accepts.
			name:  "indentation: a similar block differs in a kept line",
			file:  "func a() {\n\tx := 1\n\ty := 2\n\tz := 3\n\tw := 4\n\tv := 5\n}\nfunc b() {\n\tx := 1\n\ty := 2\n\tz := 3\n\tq := 4\n\tv := 5\n}\n",
			patch: "*** Begin Patch\n*** Update File: f.txt\n@@\n     x := 1\n     y := 2\n-    z := 3\n+    z := 30\n     w := 4\n     v := 5\n*** End Patch\n",
			want:  a + "func b() {\n\tx := 1\n\ty := 2\n\tz := 3\n\tq := 4\n\tv := 5\n}\n",
		},
		{
			// Someone appended a comment to the first line. The second
			// block differs in its last two lines, more than the accepted
			// place does, and no step would place the chunk there.
			name: "edited edge: a similar block differs in two lines",
			file: "\ta := one() // edited by someone else\n\tb := two()\n\tc := three()\n\tr := old()\n\td := four()\n\te := five()\n\tf := six()\nsep\n" +
				"\ta := one()\n\tb := two()\n\tc := three()\n\tr := old()\n\td := four()\n\te := other()\n\tf := another()\n",
			patch: "*** Begin Patch\n*** Update File: f.txt\n@@\n \ta := one()\n \tb := two()\n \tc := three()\n-\tr := old()\n+\tr := updated()\n \td := four()\n \te := five()\n \tf := six()\n*** End Patch\n",
			want: "\ta := one() // edited by someone else\n\tb := two()\n\tc := three()\n\tr := updated()\n\td := four()\n\te := five()\n\tf := six()\nsep\n" +
				"\ta := one()\n\tb := two()\n\tc := three()\n\tr := old()\n\td := four()\n\te := other()\n\tf := another()\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) { wantApplied(t, tc.file, tc.patch, tc.want) })
	}
}

// wantApplied applies patch to f.txt holding file and fails t unless the
// patch applies and leaves want.
func wantApplied(t *testing.T, file, patch, want string) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "root")
	writeTree(t, root, map[string][]byte{"f.txt": []byte(file)})
	if _, err := rescue.Process([]byte(patch), rescue.Options{Directory: root, NoWorktree: true, Apply: true}); err != nil {
		t.Fatalf("refused: %v", err)
	}
	if got := snapshot(t, root)["f.txt"]; got != want {
		t.Errorf("file %q, want %q", got, want)
	}
}
