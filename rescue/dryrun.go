package rescue

import (
	"fmt"
	"strings"

	"github.com/slimgate/slim/internal/unidiff"
)

// This file renders --dry-run --diff, and the per-file changes of a dry run
// or an apply: a git-style unified diff of what --apply would write, with three lines of context, "a/" and "b/" names,
// /dev/null for an added or deleted file, and "\ No newline at end of file"
// where a side ends without one.

// joinDiffs is the --dry-run --diff output: every change's diff in turn.
func joinDiffs(changes []Change) string {
	var b strings.Builder
	for _, c := range changes {
		b.WriteString(c.Diff)
	}
	return b.String()
}

// changes lists, in lineage order, every file r changes, each with its own
// git-style diff and its added and deleted line counts. A file that ends
// with the bytes it started with under its own name is left out.
func (w *world) changes(r *resolution) []Change {
	out := []Change{}
	for _, l := range r.lineages {
		var from, to *fileText
		var fromName, toName string
		c := Change{}
		switch {
		case l.origin == "" && l.dest == "":
			continue
		case l.origin == "":
			from, to = &fileText{}, l.cur
			fromName, toName = "/dev/null", "b/"+l.destPath
			c.Path, c.Abs, c.Op = l.destPath, l.destAbs, "add"
		case l.dest == "":
			from, to = l.base, &fileText{}
			fromName, toName = "a/"+l.srcPath, "/dev/null"
			c.Path, c.Abs, c.Op = l.srcPath, l.srcAbs, "delete"
		default:
			from, to = l.base, l.cur
			fromName, toName = "a/"+l.srcPath, "b/"+l.destPath
			if string(from.bytes()) == string(to.bytes()) && l.dest == l.origin {
				continue
			}
			c.Path, c.Abs, c.Op = l.srcPath, l.srcAbs, "update"
			if l.dest != l.origin {
				c.Move, c.MoveAbs = l.destPath, l.destAbs
			}
		}
		blks := diffLines(keyed(from), keyed(to))
		for _, blk := range blks {
			c.Deletions += blk.A1 - blk.A0
			c.Additions += blk.B1 - blk.B0
		}
		var b strings.Builder
		fmt.Fprintf(&b, "--- %s\n+++ %s\n", fromName, toName)
		writeBlocks(&b, blks, from, to, 3)
		c.Diff = b.String()
		out = append(out, c)
	}
	return out
}

func writeBlocks(b *strings.Builder, blks []editBlock, from, to *fileText, ctx int) {
	unidiff.WriteHunks(b, blks, len(from.lines), len(to.lines), ctx, func(old bool, i int) (string, bool) {
		t := to
		if old {
			t = from
		}
		return t.lines[i], t.terms[i] != eolNone
	})
}
