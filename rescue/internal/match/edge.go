package match

import (
	"strings"

	"github.com/slimgate/slim/rescue/internal/patch"
)

// This file is the edited-edge rescue: someone changed the chunk's first
// or last context line since the author read it (appended a comment,
// changed a value, moved a brace), while the removed lines and the rest of
// the context are intact. Prefix/suffix and LCS both need the chunk's edge
// lines, so they miss such a chunk.
//
// The rule, for the first line (the last is the mirror image): the chunk
// starts with at least two context lines, so the edited line does not
// touch a changed line; the chunk without its first line matches exactly
// one place in the window on a seek rung, and at least three old lines
// remain (two when the file's edge pins them: they end the file and the
// chunk ends with "*** End of File"; for the last line, they start the
// file); the file line just before that place is clearly the same line
// as the author's (sameLine); and no rival looks like the chunk: no other
// place reaches the look-alike score (the look-alike rule; for a chunk
// of three old lines, two of them in order), and no other place holds the
// chunk's leading and trailing context, its first line as the author saw
// it included, with a region of about the chunk's size between (the
// author's place, its removed lines rewritten since, with a similar block
// elsewhere). A frame found without that line is usually the accepted
// place itself, read with a shorter region: a run of its own removed
// lines that repeats its leading context.

// sameLine reports whether file line f is clearly the line o the author
// saw, edited: the same indentation, and either o with a comment appended
// or at least 60% of the longer line kept as a common prefix and suffix.
func sameLine(o, f string) bool {
	if leading(o) != leading(f) {
		return false
	}
	ko, kf := lineKey(o), lineKey(f)
	if ko == "" || kf == "" || ko == kf {
		return false
	}
	if rest, ok := strings.CutPrefix(kf, ko); ok {
		rest = strings.TrimLeft(rest, " \t")
		for _, c := range []string{"//", "/*", "#", "--", ";"} {
			if strings.HasPrefix(rest, c) {
				return true
			}
		}
	}
	short, long := len(ko), len(kf)
	if short > long {
		short, long = long, short
	}
	if short < 3 {
		return false
	}
	p := 0
	for p < short && ko[p] == kf[p] {
		p++
	}
	s := 0
	for s < short-p && ko[len(ko)-1-s] == kf[len(kf)-1-s] {
		s++
	}
	return 10*(p+s) >= 6*long
}

// edgeCandidate is a chunk placed with its first or last line edited.
type edgeCandidate struct {
	start int  // file line of the chunk's first old line
	first bool // the first line was edited (else the last)
}

// placeEdge runs the edited-edge rescue; nil, nil when it does not apply.
func (v *FileView) placeEdge(ch *patch.Chunk, lo int, abs, body string, pl *Placement) (*Placement, error) {
	lines := ch.Lines
	old := oldTexts(lines)
	m := len(old)
	if m < 3 {
		return nil, nil
	}
	n := len(v.lines)
	var found []edgeCandidate
	var reducedStarts []int
	for _, first := range []bool{true, false} {
		// The edited line and the one next to it must be context lines.
		var edge string
		var reduced []patch.ChunkLine
		if first {
			if lines[0].Op != patch.OpContext || lines[1].Op != patch.OpContext {
				continue
			}
			edge, reduced = lines[0].Text, lines[1:]
		} else {
			k := len(lines)
			if lines[k-1].Op != patch.OpContext || lines[k-2].Op != patch.OpContext {
				continue
			}
			edge, reduced = lines[k-1].Text, lines[:k-1]
		}
		from := lo
		if first {
			from = lo + 1
		}
		cands, _ := v.seek(reduced, from, false)
		if len(cands) == 0 {
			continue
		}
		if len(cands) > 1 {
			// The chunk without its edge line names several places, and
			// each is as good as the other.
			for _, c := range cands {
				if first {
					c--
				}
				reducedStarts = append(reducedStarts, c)
			}
			continue
		}
		c := cands[0]
		start := c
		if first {
			start = c - 1
		}
		at := start
		if !first {
			at = start + m - 1
		}
		if at < 0 || at >= n || !sameLine(edge, v.lines[at]) {
			continue
		}
		if ch.EOF && start+m != n {
			continue
		}
		// Two old lines left are too few to name a place, unless the
		// file's edge pins them: the chunk ends the file ("*** End of
		// File") below an edited first line, or starts the file above an
		// edited last line.
		if m == 3 && (first && (!ch.EOF || start+m != n) || !first && start != 0) {
			continue
		}
		found = append(found, edgeCandidate{start: start, first: first})
	}
	if len(reducedStarts) > 0 || len(found) > 1 {
		starts := reducedStarts
		for _, f := range found {
			starts = append(starts, f.start)
		}
		return nil, ambiguityError(PhaseEditedEdge, "Edited-edge rescue was ambiguous", abs, body, oneBased(dedupSorted(starts)))
	}
	if len(found) == 0 {
		return nil, nil
	}
	c := found[0]
	keys := oldKeys(lines)
	others, sure := v.lookalikes(keys, lo, c.start, c.start)
	if sure {
		others = v.meantRivals(lines, others, c.start, c.start, c.start, rivalsEdge)
	}
	if len(others) == 0 && sure {
		others = v.framedRivals(lines, c, lo)
	}
	if len(others) == 0 && sure && m == 3 {
		others = v.closeTriples(keys, lo, c.start)
	}
	if len(others) > 0 || !sure {
		return nil, ambiguityError(PhaseEditedEdge, "Edited-edge rescue was ambiguous", abs, body, sortedStarts(c.start, others))
	}
	v.finishSeek(pl, lines, c.start, StrategyEditedEdge, ch.EOF)
	return pl, nil
}

// closeTriples returns the starts of the windows of a three-line chunk,
// other than the accepted one at acc, in which two of its three lines
// agree in order by fold+trim key (pairs at the accepted place's own file
// lines aside). The look-alike scan needs all three there; with one line
// edited at the accepted place, a window where two agree is as close.
func (v *FileView) closeTriples(keys []string, lo, acc int) []int {
	n := len(v.lines)
	hs := v.lineKeyHashes()
	var keyHs [3]uint32
	for k, key := range keys {
		keyHs[k] = keyHash(v, key)
	}
	var out []int
	win := make([]string, 3)
	lastEnd := -1
	for s := lo; s+3 <= n; s++ {
		hits := 0
		for j := s; j < s+3; j++ {
			if hs[j] == keyHs[0] || hs[j] == keyHs[1] || hs[j] == keyHs[2] {
				hits++
			}
		}
		if hits < 2 {
			continue
		}
		for j := range win {
			win[j] = lineKey(v.lines[s+j])
		}
		if lcsOutside(keys, win, s, acc, acc) >= 2 {
			if s >= lastEnd {
				out = append(out, s)
			}
			lastEnd = s + 3
		}
	}
	return out
}

// framedRivals returns the starts of other places framed by the chunk's
// leading and trailing context runs with a region between them within the
// prefix/suffix size bound, the edge line found by key beside them as the
// author saw it: the author's place, changed inside since, may be one of
// them. (The runs are matched without the edge line first, on a seek
// rung, and the edge line then by key.)
func (v *FileView) framedRivals(lines []patch.ChunkLine, c edgeCandidate, lo int) []int {
	body := lines
	if c.first {
		body = body[1:]
	} else {
		body = body[:len(body)-1]
	}
	P := 0
	for P < len(body) && body[P].Op == patch.OpContext {
		P++
	}
	S := 0
	for S < len(body)-P && body[len(body)-1-S].Op == patch.OpContext {
		S++
	}
	if P == 0 || S == 0 || P+S == len(body) {
		return nil
	}
	D := 0
	for _, l := range body[P : len(body)-S] {
		if l.Op != patch.OpAdd {
			D++
		}
	}
	maxR := D + max(2, (D+1)/2)
	leftIDs, ok1 := v.idsOf(oldTexts(body[:P]))
	rightIDs, ok2 := v.idsOf(oldTexts(body[len(body)-S:]))
	if !ok1 || !ok2 {
		return nil
	}
	own := c.start
	edge := lines[len(lines)-1].Text
	if c.first {
		own++
		edge = lines[0].Text
	}
	edgeKey := lineKey(edge)
	// keyAt reports whether file line f holds the edge line the author
	// saw, whitespace at both ends and typography aside.
	keyAt := func(f int) bool { return f >= 0 && f < len(v.lines) && lineKey(v.lines[f]) == edgeKey }
	var out []int
	lefts := v.blockHits(leftIDs, lo, len(v.lines), maxListedCandidates)
	for _, i := range lefts {
		if i == own || c.first && !keyAt(i-1) {
			continue
		}
		for _, j := range v.blockHits(rightIDs, i+P, min(len(v.lines), i+P+maxR+S), 0) {
			if j-(i+P) <= maxR && (c.first || keyAt(j+S)) {
				if c.first {
					i-- // where the chunk's first line is
				}
				out = append(out, i)
				break
			}
		}
	}
	return out
}

// dedupSorted sorts xs and drops repeats.
func dedupSorted(xs []int) []int {
	for i := 1; i < len(xs); i++ {
		for j := i; j > 0 && xs[j] < xs[j-1]; j-- {
			xs[j], xs[j-1] = xs[j-1], xs[j]
		}
	}
	out := xs[:0]
	for i, x := range xs {
		if i == 0 || x != xs[i-1] {
			out = append(out, x)
		}
	}
	return out
}
