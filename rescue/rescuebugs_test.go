//go:build rescuebugs

package rescue_test

// Known failures of the two-outcome property, kept out of the default run:
//
//	go test -tags 'urfave_cli_no_docs rescuebugs' -run TestKnownBug ./rescue/
//
// Each case is the smallest input found for a failure class of the property
// test (property_test.go): the patch is applied at a place the author did
// not mean, because the place they meant was changed by someone else and a
// lookalike elsewhere passes a rescue step. The expected outcome is a
// refusal that leaves the file byte-identical. With this tag the property
// test also fails on "applied elsewhere" instead of counting it. Cases that
// have been fixed move to TestLookalikeRegressions (property_test.go).

import "testing"

func init() { failLookalike = true }

func TestKnownBugLookalike(t *testing.T) {
	runLookalike(t, []lookalikeCase{
		{
			// The first context line changed (x0 for c1) where the author
			// saw it. Both that window and a lookalike (ctxB for ctxA)
			// score 4 of 5 = needed, so by ERRATA 14 ("any window whose
			// score reaches needed") the chunk is ambiguous. The LCS
			// candidate filter (first and last line must match on a seek
			// rung, rescue.md 2.12 item 3) drops the real window, and the
			// lookalike is used.
			name:  "LCS first-line filter hides the real window",
			file:  "x0\nc2\nctxA\nc4\nc5\nsep\nc1\nc2\nctxB\nc4\nc5\n",
			patch: "*** Begin Patch\n*** Update File: f.txt\n@@\n c1\n c2\n ctxA\n+new\n c4\n c5\n*** End Patch\n",
		},
		{
			// The first context line changed (p1x for p1) where the author
			// saw it, so prefix/suffix cannot frame that place. Further
			// down the same frame holds r1, r2, r3-other: 2 of 3 removed
			// lines agree, the bound passes, and that region (with a line
			// the author never saw) is replaced. The real place (8 of 9
			// lines agree, every removed line intact) is never weighed:
			// LCS runs only when prefix/suffix found nothing, and its
			// first-line filter would drop the real window anyway.
			name:  "prefix-suffix lookalike when the real place's first context line drifted",
			file:  "p1x\np2\np3\nr1\nr2\nr3\ns1\ns2\ns3\nsep\np1\np2\np3\nr1\nr2\nr3-other\ns1\ns2\ns3\n",
			patch: "*** Begin Patch\n*** Update File: f.txt\n@@\n p1\n p2\n p3\n-r1\n-r2\n-r3\n+new\n s1\n s2\n s3\n*** End Patch\n",
		},
	})
}
