package rescue

import (
	"fmt"
	"strings"

	"github.com/slimgate/slim/internal/unidiff"
)

// This file renders --dry-run --diff: a git-style unified diff of what
// --apply would write, with three lines of context, "a/" and "b/" names,
// /dev/null for an added or deleted file, and "\ No newline at end of file"
// where a side ends without one.

func (w *world) unifiedDiff(r *resolution) string {
	var b strings.Builder
	for _, l := range r.lineages {
		var from, to *fileText
		var fromName, toName string
		switch {
		case l.origin == "" && l.dest == "":
			continue
		case l.origin == "":
			from, to = &fileText{}, l.cur
			fromName, toName = "/dev/null", "b/"+l.destPath
		case l.dest == "":
			from, to = l.base, &fileText{}
			fromName, toName = "a/"+l.srcPath, "/dev/null"
		default:
			from, to = l.base, l.cur
			fromName, toName = "a/"+l.srcPath, "b/"+l.destPath
			if string(from.bytes()) == string(to.bytes()) && l.dest == l.origin {
				continue
			}
		}
		fmt.Fprintf(&b, "--- %s\n+++ %s\n", fromName, toName)
		writeHunks(&b, from, to, 3)
	}
	return b.String()
}

func writeHunks(b *strings.Builder, from, to *fileText, ctx int) {
	unidiff.WriteHunks(b, diffLines(keyed(from), keyed(to)), len(from.lines), len(to.lines), ctx, func(old bool, i int) (string, bool) {
		t := to
		if old {
			t = from
		}
		return t.lines[i], t.terms[i] != eolNone
	})
}
