// Package unidiff writes the hunks of a git-style unified diff from changed
// line blocks, the one rendering the rescue dry run and the structural
// replace share: ctx lines of context, hunks merged when their context
// would touch, and "\ No newline at end of file" after a line without a
// terminator. Finding the blocks is the caller's work.
package unidiff

import (
	"fmt"
	"strings"
)

// Block is one changed region: old lines [A0, A1) are replaced by new lines
// [B0, B1).
type Block struct{ A0, A1, B0, B1 int }

// Group splits blks into runs whose ctx lines of context would touch or
// overlap, one hunk per run.
func Group(blks []Block, ctx int) [][]Block {
	var out [][]Block
	for gi := 0; gi < len(blks); {
		gj := gi
		for gj+1 < len(blks) && blks[gj+1].A0-blks[gj].A1 <= 2*ctx {
			gj++
		}
		out = append(out, blks[gi:gj+1])
		gi = gj + 1
	}
	return out
}

// WriteHunks writes the hunks of blks (in order) between an old text of n
// lines and a new one of m lines. line returns line i of the old text (old
// true) or of the new one without its terminator, and whether it had one.
func WriteHunks(b *strings.Builder, blks []Block, n, m, ctx int, line func(old bool, i int) (string, bool)) {
	emit := func(prefix string, old bool, i int) {
		t, ended := line(old, i)
		b.WriteString(prefix)
		b.WriteString(t)
		b.WriteByte('\n')
		if !ended {
			b.WriteString("\\ No newline at end of file\n")
		}
	}
	for _, g := range Group(blks, ctx) {
		first, last := g[0], g[len(g)-1]
		a0 := max(first.A0-ctx, 0)
		b0 := first.B0 - (first.A0 - a0)
		a1 := min(last.A1+ctx, n)
		b1 := last.B1 + (a1 - last.A1)
		if b1 > m {
			b1 = m
		}
		fmt.Fprintf(b, "@@ -%s +%s @@\n", hunkRange(a0, a1-a0), hunkRange(b0, b1-b0))
		pos := a0
		for _, blk := range g {
			for ; pos < blk.A0; pos++ {
				emit(" ", true, pos)
			}
			for i := blk.A0; i < blk.A1; i++ {
				emit("-", true, i)
			}
			for j := blk.B0; j < blk.B1; j++ {
				emit("+", false, j)
			}
			pos = blk.A1
		}
		for ; pos < a1; pos++ {
			emit(" ", true, pos)
		}
	}
}

// hunkRange is one side of a hunk header: start is 0-based, and a side of
// one line gives no count.
func hunkRange(start, count int) string {
	if count == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if count == 1 {
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, count)
}
