package match

import (
	"errors"
	"strings"

	"github.com/slimgate/slim/rescue/internal/patch"
)

// This file recognises a chunk whose change is already in the file: the
// author (or someone else) made the same edit since the patch was written,
// so the lines the chunk would leave are there and the lines it expects
// are not. Such a chunk is left as it is, so that a patch re-sent after
// part of it landed does not fail on that part.
//
// The rule: the chunk changes something and starts with a context line
// (and ends with one, or with "*** End of File"), so that the new lines
// frame each change, or the file's edge frames that side (a chunk that
// starts with a change whose new lines start the file, and whose trailing
// context stands nowhere else; the mirror image at the end); its new
// lines (context and added lines, in order; at least two of them not
// blank, or one when the file's edge frames them) occur exactly once in
// the search window on some seek rung (at the very end of the file when
// the chunk ends with "*** End of File"); its old lines occur nowhere on a
// seek rung, except at the lines the new ones cover; and no other place
// looks like the old lines by the look-alike rule in a way that could make
// it the place meant (rival.go).
//
// What a wrong skip costs. Taking a chunk as already applied writes
// nothing for it, so it can never put a line in the wrong place or change
// one. Its only harm is to report the change as made when it is not: the
// author meant another place, which someone changed since, and the new
// lines found are a similar block that held them already. Refusing is
// then right (the author's edit conflicts, or must go elsewhere), and the
// skip hides that. So the step refuses exactly when another place could
// be the one meant with the change missing there:
//
//   - the old lines stand there, or agree there apart from whitespace
//     (the change is still to make at that place, re-indented since);
//   - it is framed by the chunk's context at the author's indentation,
//     with about the chunk's size of other lines between: the place meant
//     with the lines the chunk changes rewritten by someone else since (a
//     conflict). This cannot be told from a sibling block of the same
//     frame, so it refuses, however the lines between read;
//   - the file's edge frames the change and the context on the other side
//     stands elsewhere too;
//   - the new lines stand at two places or more (nothing tells which one
//     is the change made).
//
// It is safe to skip past any other look-alike. One framed by the chunk's
// context only at another indentation could be the place meant only if
// someone had re-indented it and rewritten the lines the chunk changes at
// once, while the accepted place holds the new lines exactly as the author
// wrote them; one that differs in a line the chunk keeps needs an edit the
// matcher refuses anyway. Neither holds the old lines, so the change is not
// missing there in any form the matcher could place.
//
// One non-blank new line is enough when the file's edge frames the change
// (a deletion of a file's licence header and package line, whose new lines
// are a blank, the import and a blank): nothing can stand between the
// edge and them, the old lines stand nowhere, and the context they frame
// stands nowhere else. Elsewhere one line found once is too little.
//
// A chunk whose @@ line matched a later line of the same text (a label
// such as "Loop:" that the next function has too) is searched for past the
// place meant and not found there; appliedBeforeContext then runs the step
// on the whole window from the cursor, as for a chunk without @@ lines.

// newSide returns the chunk's new lines (context and added) as context
// lines, in order, and for each old context line the index it has among
// them.
func newSide(lines []patch.ChunkLine) (side []patch.ChunkLine, ctxAt map[int]int) {
	ctxAt = map[int]int{}
	k := 0
	for _, l := range lines {
		switch l.Op {
		case patch.OpContext:
			ctxAt[k] = len(side)
			side = append(side, patch.ChunkLine{Op: patch.OpContext, Text: l.Text, Line: l.Line})
			k++
		case patch.OpAdd:
			side = append(side, patch.ChunkLine{Op: patch.OpContext, Text: l.Text, Line: l.Line})
		default:
			k++
		}
	}
	return side, ctxAt
}

// changes reports whether the chunk removes or adds a line.
func changes(lines []patch.ChunkLine) bool {
	for _, l := range lines {
		if l.Op != patch.OpContext {
			return true
		}
	}
	return false
}

// placeApplied fills pl and returns true when the chunk's change is
// already in the file (see the rule above). When the new lines are found
// but a rival looks like the old ones, it returns false with the
// candidates (the applied place and the rivals) in pl.Candidates; the
// chunk must then be refused, since a rescue elsewhere could edit a
// look-alike while the author's change is already made.
func (v *FileView) placeApplied(ch *patch.Chunk, lo int, pl *Placement) bool {
	return v.placeAppliedAt(ch, lo, pl, -1)
}

// placeAppliedAt is placeApplied where, when inner >= 0, the old lines
// seen at file line inner (inside the applied place) are no rival either.
func (v *FileView) placeAppliedAt(ch *patch.Chunk, lo int, pl *Placement, inner int) bool {
	if v.exactOnly || !changes(ch.Lines) {
		return false
	}
	// The new lines must frame every change: a context line first, and a
	// context line last or the end of the file. Otherwise lines the chunk
	// removes, rewritten by someone else, would look removed (the context
	// after them is there either way). A chunk that starts (ends) with a
	// change is framed on that side only by the file's edge: its new lines
	// must then start (end) the file, where nothing someone rewrote can
	// stand before (after) them. (Old lines found inside the new ones are
	// evidence enough.)
	last := ch.Lines[len(ch.Lines)-1].Op
	atStart := inner < 0 && ch.Lines[0].Op != patch.OpContext
	atEnd := inner < 0 && last != patch.OpContext && !ch.EOF
	if atStart && (atEnd || lo > 0) {
		return false
	}
	side, ctxAt := newSide(ch.Lines)
	nonBlank := 0
	for _, l := range side {
		if strings.TrimSpace(l.Text) != "" {
			nonBlank++
		}
	}
	if nonBlank < 2 && !(nonBlank == 1 && (atStart || atEnd)) {
		// One line found once is too little to call the change made,
		// unless the file's edge pins it: then nothing stands between
		// the edge and the new lines, and the context it frames must
		// stand nowhere else (contextElsewhere below).
		return false
	}
	cands, pinned := v.seek(side, lo, ch.EOF)
	if len(cands) != 1 || (ch.EOF && !pinned) {
		return false
	}
	p := cands[0]
	if atStart && p != 0 || atEnd && p+len(side) != len(v.lines) {
		return false
	}
	if atStart || atEnd {
		if q := v.contextElsewhere(ch.Lines, atStart, p, len(side), lo); q >= 0 {
			// The run of context on the framed side stands at another
			// place too: that may be the place meant, its removed lines
			// rewritten since, with nothing but the file's edge to tell
			// the two apart.
			pl.Candidates = sortedStarts(p, []int{q})
			return false
		}
	}
	// The offsets at which the applied place already holds the old
	// context lines: those lines seen there are not a rival.
	offLo, offHi := p, p
	first := true
	for k, at := range ctxAt {
		off := p + at - k
		if first || off < offLo {
			offLo = off
		}
		if first || off > offHi {
			offHi = off
		}
		first = false
	}
	if inner >= 0 {
		offLo, offHi = min(offLo, inner), max(offHi, inner)
	}
	others, sure := v.lookalikes(oldKeys(ch.Lines), lo, offLo, offHi)
	if sure {
		others = v.meantRivals(ch.Lines, others, offLo, offHi, p, rivalsApplied)
	}
	if len(others) > 0 || !sure {
		// The change looks made here, but another place looks like the
		// lines the chunk expects: that may be the place the author
		// meant. Nothing may be placed at either.
		pl.Candidates = sortedStarts(p, others)
		return false
	}
	out := make([]PlacedLine, len(side))
	for i := range side {
		out[i] = PlacedLine{Op: patch.OpContext, FileLine: p + i, Text: v.lines[p+i]}
	}
	pl.Start, pl.End = p, p+len(side)
	pl.Lines = out
	pl.ShapeChanged = true
	pl.Strategy = StrategyAlreadyApplied
	pl.Candidates = []int{p + 1}
	pl.EOFKept = ch.EOF && pl.End == len(v.lines)
	pl.Cursor = pl.End
	pl.Repairs = append(pl.Repairs, patch.Repair{Kind: patch.RepairAlreadyApplied, Line: ch.Line})
	return true
}

// contextElsewhere returns where the chunk's run of context lines on the
// side its context frames (the trailing run when the change starts the
// chunk, else the leading run) occurs on a seek rung in [lo, N) other than
// where the applied place, at p with size lines, holds it; -1 when it
// occurs nowhere else.
func (v *FileView) contextElsewhere(lines []patch.ChunkLine, trailing bool, p, size, lo int) int {
	var run []string
	if trailing {
		for i := len(lines) - 1; i >= 0 && lines[i].Op == patch.OpContext; i-- {
			run = append([]string{lines[i].Text}, run...)
		}
	} else {
		for i := 0; i < len(lines) && lines[i].Op == patch.OpContext; i++ {
			run = append(run, lines[i].Text)
		}
	}
	ids, ok := v.idsOf(run)
	if !ok {
		return -1
	}
	own := p
	if trailing {
		own = p + size - len(run)
	}
	for _, q := range v.blockHits(ids, lo, len(v.lines), 2) {
		if q != own {
			return q
		}
	}
	return -1
}

// appliedBeforeContext returns the placement of a chunk whose @@ lines
// narrowed the search to [lo, N) from cursor, and which was not found
// there (err, a not-found refusal), when its change is already made
// before lo: the @@ line matched a later line of the same text (a label
// such as "Loop:" that the next function has too), past the place meant.
// The already-applied step then runs on [cursor, N), as for a chunk
// without @@ lines, and the @@ lines are dropped (repair
// context_not_found). The window is wider, so the step's uniqueness
// checks are stricter than they were on [lo, N), and nothing is written
// for the chunk. It returns nil when that does not hold.
func (v *FileView) appliedBeforeContext(ch *patch.Chunk, cursor, lo int, err error) *Placement {
	var e *Error
	if !errors.As(err, &e) || e.Phase != PhaseNotFound {
		return nil
	}
	pl := &Placement{Contexts: make([]int, len(ch.Contexts))}
	for i, c := range ch.Contexts {
		pl.Contexts[i] = -1
		kind := patch.RepairContextNotFound
		if isUnifiedDiffHeader(c.Text) {
			kind = patch.RepairUnifiedDiffHeader
		}
		pl.Repairs = append(pl.Repairs, patch.Repair{Kind: kind, Line: c.Line})
	}
	if !v.placeApplied(ch, cursor, pl) || pl.Start >= lo {
		return nil
	}
	return pl
}

// appendsAtEnd reports whether the chunk adds lines after its last old
// line, which is a context line: with "*** End of File" it appends to the
// end of the text the author saw.
func appendsAtEnd(lines []patch.ChunkLine) bool {
	if len(lines) == 0 || lines[len(lines)-1].Op != patch.OpAdd {
		return false
	}
	for i := len(lines) - 1; i >= 0; i-- {
		if lines[i].Op != patch.OpAdd {
			return lines[i].Op == patch.OpContext
		}
	}
	return false
}

// appliedAround fills pl and returns true when the one place where the
// old lines match, at c, lies inside the place where the chunk's change is
// already made (placeApplied): the added lines repeat the context, so the
// old lines occur within the new ones.
func (v *FileView) appliedAround(ch *patch.Chunk, lo, c int, pl *Placement) bool {
	if v.exactOnly {
		return false
	}
	adds, old := 0, 0
	for _, l := range ch.Lines {
		switch l.Op {
		case patch.OpAdd:
			adds++
		default:
			old++
		}
	}
	if adds == 0 {
		return false // the new lines are fewer than the old: none lies inside
	}
	side, _ := newSide(ch.Lines)
	if len(side) == old {
		same := true
		k := 0
		for _, l := range ch.Lines {
			if l.Op != patch.OpAdd {
				if l.Text != side[k].Text {
					same = false
					break
				}
				k++
			}
		}
		if same {
			return false // the chunk changes nothing: its old lines are its new ones
		}
	}
	var try Placement
	try.Contexts = pl.Contexts
	try.Repairs = append([]patch.Repair(nil), pl.Repairs...)
	ok := v.placeAppliedAt(ch, lo, &try, c)
	if !ok {
		pl.Candidates = try.Candidates
		return false
	}
	if c < try.Start || c+old > try.End {
		return false
	}
	*pl = try
	return true
}

// appliedAmbiguity refuses a chunk whose change looks already made at one
// place while another looks like the lines it expects.
func appliedAmbiguity(abs, body string, cands []int) error {
	return ambiguityError(PhaseAlreadyApplied, "The change looks already made, but another place looks like the expected lines", abs, body, cands)
}
