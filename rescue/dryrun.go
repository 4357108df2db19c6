package rescue

import (
	"fmt"
	"strings"
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
	blks := diffLines(keyed(from), keyed(to))
	n, m := len(from.lines), len(to.lines)
	line := func(prefix string, t *fileText, i int) {
		b.WriteString(prefix)
		b.WriteString(t.lines[i])
		b.WriteByte('\n')
		if t.terms[i] == eolNone {
			b.WriteString("\\ No newline at end of file\n")
		}
	}
	for _, g := range groupBlocks(blks, ctx) {
		first, last := g[0], g[len(g)-1]
		a0 := max(first.A0-ctx, 0)
		b0 := first.B0 - (first.A0 - a0)
		a1 := min(last.A1+ctx, n)
		b1 := last.B1 + (a1 - last.A1)
		if b1 > m {
			b1 = m
		}
		fmt.Fprintf(b, "@@ -%s +%s @@\n", span(a0, a1-a0), span(b0, b1-b0))
		pos := a0
		for _, blk := range g {
			for ; pos < blk.A0; pos++ {
				line(" ", from, pos)
			}
			for i := blk.A0; i < blk.A1; i++ {
				line("-", from, i)
			}
			for j := blk.B0; j < blk.B1; j++ {
				line("+", to, j)
			}
			pos = blk.A1
		}
		for ; pos < a1; pos++ {
			line(" ", from, pos)
		}
	}
}

// groupBlocks splits blks into runs whose ctx lines of context would touch
// or overlap, one chunk per run.
func groupBlocks(blks []editBlock, ctx int) [][]editBlock {
	var out [][]editBlock
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

func span(start, count int) string {
	if count == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if count == 1 {
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, count)
}
