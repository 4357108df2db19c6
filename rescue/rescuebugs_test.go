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
	})
}
