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
		t.Run(tc.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "root")
			writeTree(t, root, map[string][]byte{"f.txt": []byte(tc.file)})
			if _, err := rescue.Process([]byte(tc.patch), rescue.Options{Directory: root, NoWorktree: true, Apply: true}); err != nil {
				t.Fatalf("refused: %v", err)
			}
			if got := snapshot(t, root)["f.txt"]; got != tc.want {
				t.Errorf("file %q, want %q", got, tc.want)
			}
		})
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
