//go:build rescuebugs

package rescue_test

// Known failures of the two-outcome property, kept out of the default run:
//
//	go test -tags 'urfave_cli_no_docs rescuebugs' -run TestKnownBug ./rescue/
//
// Each case is the smallest input found for a failure class of the property
// test (property_test.go). Every one of them applies the patch at a place
// the author did not mean: the place they meant was changed by someone
// else, and a lookalike elsewhere passes a rescue step. The expected outcome
// is a refusal that leaves the file byte-identical. With this tag the
// property test also fails on "applied elsewhere" instead of counting it.

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slimgate/slim/rescue"
)

func init() { failLookalike = true }

func TestKnownBugLookalike(t *testing.T) {
	tests := []struct {
		name, file, patch string
	}{
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
			// it, so that window is not an LCS candidate (ERRATA 40); a
			// window further down that differs in a context line (ctxB for
			// ctxA) scores 6 of 7 and is used.
			name:  "LCS lookalike after the real removed line was rewritten",
			file:  "c1\nc2\nctxA\nx1\nc5\nc6\nc7\nsep\nc1\nc2\nctxB\nr1\nc5\nc6\nc7\n",
			patch: "*** Begin Patch\n*** Update File: f.txt\n@@\n c1\n c2\n ctxA\n-r1\n+new\n c5\n c6\n c7\n*** End Patch\n",
		},
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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "root")
			writeTree(t, root, map[string][]byte{"f.txt": []byte(tt.file)})
			before := snapshot(t, root)
			res, err := rescue.Process([]byte(tt.patch), rescue.Options{Directory: root, Worktree: "/", Apply: true})
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
