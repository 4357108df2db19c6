package rescue

import (
	"strings"

	"github.com/slimgate/slim/internal/unidiff"
	"github.com/slimgate/slim/rescue/internal/jsstr"
	"github.com/slimgate/slim/rescue/internal/match"
	"github.com/slimgate/slim/rescue/internal/patch"
)

// This file renders the patch slim hands on, in a form the host's own apply
// step turns into exactly the intended text; what no form can express is
// refused (cannotExpress) rather than handed on. Each file's
// content lineage becomes at most one hunk. An Update is rendered at one of
// three levels, tried in order until the re-verification and the host
// check agree:
//
//	1. chunk by chunk from the placements (the author's order for seek
//	   matches, file order for reshaped chunks), or, for merged hunks, one
//	   minimal chunk per changed block with the preceding line as @@ text;
//	2. unified-diff style chunks with three context lines and no @@ text;
//	3. one chunk over the whole file.
//
// Context and "-" lines carry the file's bytes, "+" lines the authored
// bytes. For lines that end in CRLF the rendered line carries the CR, since
// the host keeps a CR inside a line (repair host_eol).

const maxLevel = 3

type renderer struct {
	b       strings.Builder
	hostEOL bool
}

func (r *renderer) line(s string) {
	r.b.WriteString(s)
	r.b.WriteByte('\n')
}

// body writes one chunk body line; cr adds the CR of a CRLF terminator.
func (r *renderer) body(op patch.Op, text string, cr bool) {
	r.b.WriteByte(byte(op))
	r.b.WriteString(text)
	if cr {
		r.b.WriteByte('\r')
		r.hostEOL = true
	}
	r.b.WriteByte('\n')
}

// renderPatch renders the lineages of res, each Update at its level.
func renderPatch(res *resolution, level map[*lineage]int) (string, bool) {
	r := &renderer{}
	r.line(patch.BeginMarker)
	for _, l := range res.lineages {
		switch {
		case l.origin == "" && l.dest == "":
			// added and deleted again: nothing to do
		case l.origin == "":
			r.line(patch.AddHeader + " " + l.destPath)
			for _, s := range addContentLines(l.cur.bytes()) {
				r.line("+" + s)
			}
		case l.dest == "":
			r.line(patch.DeleteHeader + " " + l.srcPath)
		default:
			r.line(patch.UpdateHeader + " " + l.srcPath)
			if l.dest != l.origin {
				r.line(patch.MoveHeader + " " + l.destPath)
			}
			lv := level[l]
			if lv < 1 {
				lv = 1
			}
			switch {
			case lv == 1 && l.hunks == 1 && l.update != nil:
				r.placed(l)
			case lv == 1:
				r.blocks(l.base, l.cur, 0)
			case lv == 2:
				r.blocks(l.base, l.cur, 3)
			default:
				r.whole(l.base, l.cur)
			}
		}
	}
	r.line(patch.EndMarker)
	return r.b.String(), r.hostEOL
}

// addContentLines returns the "+" lines whose Add content is exactly t: the
// host joins an Add's lines with LF and adds one LF unless the content is
// empty or already ends with LF.
func addContentLines(t []byte) []string {
	s := string(t)
	if s == "" {
		return nil
	}
	body := strings.TrimSuffix(s, "\n")
	if body == s {
		return strings.Split(s, "\n") // no final LF: cannot be expressed; the checks refuse
	}
	if body == "" || strings.HasSuffix(body, "\n") {
		return strings.Split(s, "\n")
	}
	return strings.Split(body, "\n")
}

func crOf(t *fileText, i int) bool { return t.terms[i] == eolCRLF }

// placed renders a single Update from its placements.
func (r *renderer) placed(l *lineage) {
	base := l.base
	n := len(base.lines)
	pls, chs := l.placements, l.chunks
	if len(pls) == 0 {
		r.line("@@")
		return
	}
	for i := 0; i < len(pls); i++ {
		pl, ch := pls[i], chs[i]
		lines := append([]match.PlacedLine(nil), pl.Lines...)
		eof := ch.EOF && pl.EOFKept
		// The host puts a chunk without old lines at the end of the file,
		// so an insertion inside the file becomes "insert before the next
		// line": merged with the next chunk when that starts right there
		// (both would claim that line), else carrying the next line as
		// context.
		if pl.Start == pl.End && pl.Start < n {
			for i+1 < len(pls) && pls[i+1].Start == pl.Start && !hasOldPlaced(lines) {
				i++
				// The next chunk's leading "-" lines go first, so the merged
				// chunk lists its removed lines before the inserted ones.
				next := pls[i].Lines
				k := 0
				for k < len(next) && next[k].Op == patch.OpDelete {
					k++
				}
				merged := append(append(append([]match.PlacedLine(nil), next[:k]...), lines...), next[k:]...)
				lines = merged
				eof = chs[i].EOF && pls[i].EOFKept
			}
			if !hasOldPlaced(lines) {
				lines = append(lines, match.PlacedLine{Op: patch.OpContext, FileLine: pl.Start, Text: base.lines[pl.Start]})
			}
		}
		wrote := false
		for k := range ch.Contexts {
			if k < len(pl.Contexts) && pl.Contexts[k] >= 0 {
				if t := base.lines[pl.Contexts[k]]; jsstr.Trim(t) != "" {
					r.line("@@ " + t)
					wrote = true
				}
			}
		}
		if !wrote {
			r.line("@@")
		}
		for _, pline := range lines {
			if pline.Op == patch.OpAdd {
				r.body(patch.OpAdd, pline.Text, base.eol == eolCRLF)
			} else {
				r.body(pline.Op, base.lines[pline.FileLine], crOf(base, pline.FileLine))
			}
		}
		if eof {
			r.line(patch.EOFMarker)
		}
	}
}

func hasOldPlaced(ls []match.PlacedLine) bool {
	for _, l := range ls {
		if l.Op != patch.OpAdd {
			return true
		}
	}
	return false
}

// keyed returns each line with its terminator, so a diff sees a changed
// terminator as a changed line.
func keyed(t *fileText) []string {
	out := make([]string, len(t.lines))
	for i := range t.lines {
		out[i] = t.lines[i] + t.terms[i].String()
	}
	return out
}

// blocks renders the change from base to cur as diff chunks. ctx 0 gives
// one minimal chunk per block with the preceding line as @@ text; ctx > 0
// gives unified-diff chunks with ctx context lines.
func (r *renderer) blocks(base, cur *fileText, ctx int) {
	n := len(base.lines)
	blks := diffLines(keyed(base), keyed(cur))
	if len(blks) == 0 {
		// Nothing changes (a pure move): one chunk of context.
		if n == 0 {
			r.line("@@")
			return
		}
		r.line("@@")
		k := ctx
		if k < 1 {
			k = 1
		}
		for i := 0; i < k && i < n; i++ {
			r.body(patch.OpContext, base.lines[i], crOf(base, i))
		}
		return
	}
	if ctx == 0 {
		for _, b := range blks {
			if b.A0 > 0 && jsstr.Trim(base.lines[b.A0-1]) != "" {
				r.line("@@ " + base.lines[b.A0-1])
			} else {
				r.line("@@")
			}
			r.change(base, cur, b)
			if b.A0 == b.A1 && b.A0 < n {
				r.body(patch.OpContext, base.lines[b.A0], crOf(base, b.A0))
			} else if b.A1 == n {
				r.line(patch.EOFMarker)
			}
		}
		return
	}
	for _, g := range unidiff.Group(blks, ctx) {
		start := max(g[0].A0-ctx, 0)
		end := min(g[len(g)-1].A1+ctx, n)
		if start == end && n > 0 {
			// an insertion with no line around it cannot happen when n > 0
			end = start + 1
		}
		r.line("@@")
		r.span(base, cur, g, start, end)
		if end == n && n > 0 {
			r.line(patch.EOFMarker)
		}
	}
}

// whole renders the change as one chunk over every line of the file.
func (r *renderer) whole(base, cur *fileText) {
	n := len(base.lines)
	r.line("@@")
	r.span(base, cur, diffLines(keyed(base), keyed(cur)), 0, n)
	if n > 0 {
		r.line(patch.EOFMarker)
	}
}

// span renders the body lines of base[start:end] with blks applied: the
// unchanged lines as context, each block as its deleted then added lines.
func (r *renderer) span(base, cur *fileText, blks []editBlock, start, end int) {
	pos := start
	for _, b := range blks {
		for ; pos < b.A0; pos++ {
			r.body(patch.OpContext, base.lines[pos], crOf(base, pos))
		}
		r.change(base, cur, b)
		pos = b.A1
	}
	for ; pos < end; pos++ {
		r.body(patch.OpContext, base.lines[pos], crOf(base, pos))
	}
}

// change renders one block's deleted base lines then its added cur lines.
func (r *renderer) change(base, cur *fileText, b editBlock) {
	for i := b.A0; i < b.A1; i++ {
		r.body(patch.OpDelete, base.lines[i], crOf(base, i))
	}
	for j := b.B0; j < b.B1; j++ {
		r.body(patch.OpAdd, cur.lines[j], crOf(cur, j))
	}
}
