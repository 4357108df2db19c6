package match

import (
	"fmt"
	"hash/maphash"
	"sort"
	"strconv"
	"strings"

	"github.com/slimgate/slim/rescue/internal/patch"
)

// This file places one chunk in a file: the steps in order (seek over all
// rungs, the trailing-empty retry, prefix/suffix, LCS; the first step that
// finds one place wins, and a step that finds several refuses), the search
// window (from the cursor, narrowed by the @@ contexts, pinned to the end by
// "*** End of File"), pure insertions, and the failure messages, which name
// the candidates or the closest region so that the author can fix the
// patch.

// Match phases, carried by Error.
const (
	PhaseSeek         = "seek"
	PhasePrefixSuffix = "prefix-suffix"
	PhaseLCS          = "lcs"
	PhaseIndent       = "indent"
	PhaseEditedEdge   = "edited-edge"
	// PhaseAlreadyApplied refuses a chunk whose change looks made at one
	// place while another looks like the lines it expects.
	PhaseAlreadyApplied = "already-applied"
	PhaseAnchor         = "anchor"
	PhaseNotFound       = "not-found"
)

// maxListedCandidates bounds the candidates collected for one refusal.
const maxListedCandidates = 1000

// maxPairs bounds the prefix/suffix (left, right) pairs evaluated per chunk.
const maxPairs = 4096

// Error is every refusal Place returns: the chunk does not fit the file.
// Message is the whole text the model reads, starting with
// VerificationPrefix; Phase and Candidates are for callers that report
// details in JSON.
type Error struct {
	Message string
	// Phase is the rung that refused the chunk ("" when none applies).
	Phase string
	// Candidates are the 1-based start lines of every accepted candidate of
	// an ambiguity refusal (at most maxListedCandidates).
	Candidates []int
}

func (e *Error) Error() string { return e.Message }

// VerificationPrefix starts the message of every verification error: the
// patch is well formed but does not fit the files (a chunk not found or
// ambiguous, a file missing, binary or already there).
const VerificationPrefix = "apply_patch verification failed: "

func verificationError(cause *Error, msg string) error {
	if cause == nil {
		cause = &Error{}
	}
	cause.Message = VerificationPrefix + msg
	return cause
}

// candidatesTail is the hint that ends every ambiguity message.
func candidatesTail(cands []int) string {
	var b strings.Builder
	b.WriteString("\nCandidates at lines ")
	shown := cands
	if len(shown) > 10 {
		shown = shown[:10]
	}
	for i, c := range shown {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(c))
	}
	if len(cands) > len(shown) {
		fmt.Fprintf(&b, " (and %d more)", len(cands)-len(shown))
	}
	b.WriteString(". Add unchanged context lines around the change, or an @@ line naming the enclosing function or section, so that only one place matches.")
	return b.String()
}

func ambiguityError(phase, what, abs, body string, cands []int) error {
	return verificationError(&Error{Phase: phase, Candidates: cands},
		what+" in "+abs+":\n"+body+candidatesTail(cands))
}

// oneBased returns the 1-based line numbers of 0-based positions.
func oneBased(ps []int) []int {
	out := make([]int, len(ps))
	for i, p := range ps {
		out[i] = p + 1
	}
	return out
}

// Place finds where chunk ch lands in the file, searching from cursor (a
// 0-based file line). abs is the file's absolute path, used in messages.
// Every error is an *Error.
func (v *FileView) Place(ch *patch.Chunk, cursor int, abs string) (*Placement, error) {
	n := len(v.lines)
	if cursor < 0 {
		cursor = 0
	}
	if cursor > n {
		cursor = n
	}
	pl := &Placement{Contexts: make([]int, len(ch.Contexts))}
	if !hasOld(ch.Lines) {
		return v.placeInsertion(ch, cursor, abs, pl)
	}

	// Narrow the window with the @@ contexts; a context that is not found
	// is dropped (and reported), since the body may still be unique.
	lo := cursor
	for i, c := range ch.Contexts {
		p := v.firstAtOrAfter(v.idOf(c.Text), lo)
		if p < 0 {
			pl.Contexts[i] = -1
			kind := patch.RepairContextNotFound
			if isUnifiedDiffHeader(c.Text) {
				kind = patch.RepairUnifiedDiffHeader
			}
			pl.Repairs = append(pl.Repairs, patch.Repair{Kind: kind, Line: c.Line})
			continue
		}
		pl.Contexts[i] = p
		lo = p + 1
	}

	old := ch.OldLines()
	body := strings.Join(old, "\n")

	// Step 1: seek over all rungs.
	cands, pinned := v.seek(ch.Lines, lo, ch.EOF)
	if ch.EOF && !pinned && !v.exactOnly {
		// The old lines are no longer at the end of the file. When the new
		// ones are, the change is already made; when the chunk changes the
		// file's last lines, the lines added after them since touch the
		// change, and placing it before them would be a guess.
		if v.placeApplied(ch, lo, pl) {
			return pl, nil
		} else if len(pl.Candidates) > 0 {
			return nil, appliedAmbiguity(abs, body, pl.Candidates)
		}
		if len(cands) > 0 && appendsAtEnd(ch.Lines) {
			return nil, grownEnd(abs, body)
		}
	}
	if len(cands) == 1 {
		// Added lines that end (or start) like the chunk's context can
		// make the old lines occur inside the change already made: the
		// one place the old lines match lies within the one place the
		// new lines match. Applying there would make the change twice.
		if v.appliedAround(ch, lo, cands[0], pl) {
			return pl, nil
		} else if len(pl.Candidates) > 0 {
			return nil, appliedAmbiguity(abs, body, pl.Candidates)
		}
		v.finishSeek(pl, ch.Lines, cands[0], "", ch.EOF)
		return pl, nil
	} else if len(cands) > 1 {
		return nil, ambiguityError(PhaseSeek, "Expected lines match more than one place", abs, body, oneBased(cands))
	}
	if v.exactOnly {
		return nil, v.notFound(abs, old, lo)
	}

	// Step 2: the change is already in the file.
	if v.placeApplied(ch, lo, pl) {
		return pl, nil
	} else if len(pl.Candidates) > 0 {
		return nil, appliedAmbiguity(abs, body, pl.Candidates)
	}

	// Step 3: the same seek without a trailing empty old line. Dropping
	// a line can make the chunk match a look-alike of the place meant, so
	// the look-alike rule applies.
	if old[len(old)-1] == "" {
		reduced := dropTrailingEmpty(ch.Lines)
		if !hasOld(reduced) {
			if n == 0 {
				pl.Start, pl.End, pl.Cursor = 0, 0, 0
				pl.Lines = addLines(reduced)
				pl.Strategy = StrategyTrailingEmpty
				pl.EOFKept = ch.EOF
				pl.Candidates = []int{1}
				return pl, nil
			}
		} else if cands, _ := v.seek(reduced, lo, ch.EOF); len(cands) == 1 {
			if others, sure := v.lookalikes(oldKeys(ch.Lines), lo, cands[0], cands[0]); len(others) > 0 || !sure {
				return nil, ambiguityError(PhaseSeek, "Expected lines match more than one place", abs, body, sortedStarts(cands[0], others))
			}
			v.finishSeek(pl, reduced, cands[0], StrategyTrailingEmpty, ch.EOF)
			return pl, nil
		} else if len(cands) > 1 {
			return nil, ambiguityError(PhaseSeek, "Expected lines match more than one place", abs, body, oneBased(cands))
		}
	}

	// Step 4: one mapping of leading whitespace over the whole chunk.
	if p, err := v.placeIndent(ch, ch.Lines, lo, abs, body, pl); p != nil || err != nil {
		return p, err
	}
	got, err := v.placeRescue(ch, lo, abs, body, old, pl)
	if err != nil && lo > cursor {
		if alt := v.appliedBeforeContext(ch, cursor, lo, err); alt != nil {
			return alt, nil
		}
	}
	return got, err
}

// placeRescue runs the rescue steps that may place a chunk away from the
// end of the file (prefix/suffix, LCS, the edited edge). A chunk that
// appends after the last lines the author saw, with "*** End of File",
// is refused when placed anywhere but at the end: lines were added after
// those since, and the order of the two additions is not known.
func (v *FileView) placeRescue(ch *patch.Chunk, lo int, abs, body string, old []string, pl *Placement) (*Placement, error) {
	got, err := v.placeMovable(ch, lo, abs, body, old, pl)
	if err == nil && ch.EOF && got.End != len(v.lines) && appendsAtEnd(ch.Lines) {
		return nil, grownEnd(abs, body)
	}
	return got, err
}

// grownEnd refuses a chunk that appends at the end of the file when the
// file has lines after the ones the author saw last.
func grownEnd(abs, body string) error {
	return verificationError(&Error{Phase: PhaseNotFound}, "Failed to find expected lines at the end of "+abs+":\n"+body+
		"\nThe chunk ends with \"*** End of File\" and adds lines after the last lines of the file, but other lines were added after those since the patch was written, so where the new lines go is not known. Re-read the end of the file and write the patch again.")
}

// placeMovable is steps 5 to 7 of Place.
func (v *FileView) placeMovable(ch *patch.Chunk, lo int, abs, body string, old []string, pl *Placement) (*Placement, error) {
	n := len(v.lines)

	// Step 5: prefix/suffix.
	psCands, complete, changed := v.prefixSuffix(ch.Lines, lo)
	if len(psCands) == 1 && complete && len(changed) == 0 {
		// The one region must also be the only place that looks like the
		// author's: a place whose prefix or suffix changed is not framed,
		// but it still competes (look-alike refusal).
		c := psCands[0]
		// Old line k of a prefix line sits at file line c.start+k, of a
		// suffix line at c.end-c.p-D+k: the offsets the region accounts for.
		a, b := c.start, c.end-c.p-len(c.interiorIdx)
		others, sure := v.lookalikes(oldKeys(ch.Lines), lo, min(a, b), max(a, b))
		changed, complete = others, sure
	}
	if len(psCands) == 1 && complete && len(changed) == 0 {
		c := psCands[0]
		c.fill(v, pl, ch.Lines)
		pl.EOFKept = ch.EOF && pl.End == n
		return pl, nil
	} else if len(psCands) > 0 {
		return nil, ambiguityError(PhasePrefixSuffix, "Prefix/suffix rescue was ambiguous", abs, body, refusalStarts(psCands, changed))
	}

	// Step 6: bounded LCS.
	if cands, changed, complete := v.lcsWindows(ch.Lines, lo); len(cands) == 1 && complete && len(changed) == 0 {
		c := cands[0]
		v.fillLCS(pl, ch.Lines, c)
		pl.EOFKept = ch.EOF && pl.End == n
		return pl, nil
	} else if len(cands) > 0 {
		// The look-alike LCS refuses for may be the place meant with its
		// first or last line edited: one line differs there, while every
		// LCS window differs in more or is framed by an edge line that
		// the chunk does not hold. The edited-edge step has rivals of its
		// own, which include every place as close as the one it accepts.
		if p, err := v.placeEdge(ch, lo, abs, body, pl); p != nil && err == nil {
			return p, nil
		}
		return nil, ambiguityError(PhaseLCS, "LCS rescue was ambiguous", abs, body, refusalStarts(cands, changed))
	}

	// Step 7: the first or last context line edited.
	if p, err := v.placeEdge(ch, lo, abs, body, pl); p != nil || err != nil {
		return p, err
	}
	return nil, v.notFound(abs, old, lo)
}

// refusalStarts returns, sorted and 1-based, the starts of the accepted
// candidates and of the changed look-alike places of an ambiguous rescue.
func refusalStarts[C interface{ begin() int }](cands []C, changed []int) []int {
	starts := make([]int, 0, len(cands)+len(changed))
	for _, c := range cands {
		starts = append(starts, c.begin()+1)
	}
	for _, c := range changed {
		starts = append(starts, c+1)
	}
	sort.Ints(starts)
	return starts
}

func hasOld(lines []patch.ChunkLine) bool {
	for _, l := range lines {
		if l.Op != patch.OpAdd {
			return true
		}
	}
	return false
}

func oldTexts(lines []patch.ChunkLine) []string {
	var out []string
	for _, l := range lines {
		if l.Op != patch.OpAdd {
			out = append(out, l.Text)
		}
	}
	return out
}

func addLines(lines []patch.ChunkLine) []PlacedLine {
	var out []PlacedLine
	for _, l := range lines {
		if l.Op == patch.OpAdd {
			out = append(out, PlacedLine{Op: patch.OpAdd, FileLine: -1, Text: l.Text})
		}
	}
	return out
}

// isUnifiedDiffHeader reports whether an @@ context is a unified-diff range
// header such as "-1,3 +1,3 @@".
func isUnifiedDiffHeader(s string) bool {
	s = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(s), "@@"))
	rng := func(sign byte) bool {
		if len(s) == 0 || s[0] != sign {
			return false
		}
		s = s[1:]
		digits := func() bool {
			i := 0
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				i++
			}
			s = s[i:]
			return i > 0
		}
		if !digits() {
			return false
		}
		if len(s) > 0 && s[0] == ',' {
			s = s[1:]
			return digits()
		}
		return true
	}
	if !rng('-') || len(s) == 0 || s[0] != ' ' {
		return false
	}
	s = strings.TrimLeft(s, " ")
	if !rng('+') {
		return false
	}
	s = strings.TrimLeft(s, " ")
	return s == "" || strings.HasPrefix(s, "@@")
}

// seek returns every place in [lo, N) where the old lines of lines match on
// some rung. With eof, position N-m is tried first and a match there is the
// only answer (pinned).
func (v *FileView) seek(lines []patch.ChunkLine, lo int, eof bool) (cands []int, pinned bool) {
	old := oldTexts(lines)
	ids, ok := v.idsOf(old)
	if !ok {
		return nil, false
	}
	n, m := len(v.lines), len(old)
	if eof && n-m >= lo && v.blockAt(ids, n-m) {
		return []int{n - m}, true
	}
	return v.blockHits(ids, lo, n, maxListedCandidates), false
}

// strictestRung returns the strictest rung on which old matches the file at p.
func (v *FileView) strictestRung(old []string, p int) string {
	if v.exactOnly {
		return StrategyExact
	}
	for r := rungExact; r < numRungs; r++ {
		all := true
		for k, o := range old {
			if rungKey(r, v.lines[p+k]) != rungKey(r, o) {
				all = false
				break
			}
		}
		if all {
			return rungNames[r]
		}
	}
	return StrategyNFC
}

// finishSeek fills pl for a seek match of lines at p, in the author's order.
// strategy overrides the rung name when set.
func (v *FileView) finishSeek(pl *Placement, lines []patch.ChunkLine, p int, strategy string, eof bool) {
	old := oldTexts(lines)
	if strategy == "" {
		strategy = v.strictestRung(old, p)
	}
	k := p
	out := make([]PlacedLine, 0, len(lines))
	for _, l := range lines {
		if l.Op == patch.OpAdd {
			out = append(out, PlacedLine{Op: patch.OpAdd, FileLine: -1, Text: l.Text})
			continue
		}
		out = append(out, PlacedLine{Op: l.Op, FileLine: k, Text: v.lines[k]})
		k++
	}
	pl.Start, pl.End = p, p+len(old)
	pl.Lines = out
	pl.Strategy = strategy
	pl.Candidates = []int{p + 1}
	pl.EOFKept = eof && pl.End == len(v.lines)
	pl.Cursor = pl.End
}

// dropTrailingEmpty returns lines without the last old line (which is
// empty) and without a trailing empty new line, the way Codex and OpenCode
// retry on the old and new line lists separately. Expressed with
// operations: a last old line that is a context line stays on the new side
// (it becomes an added line); a last new line that is a context line stays
// on the old side (it becomes a removed line).
func dropTrailingEmpty(lines []patch.ChunkLine) []patch.ChunkLine {
	out := append([]patch.ChunkLine(nil), lines...)
	for i := len(out) - 1; i >= 0; i-- {
		if out[i].Op == patch.OpAdd {
			continue
		}
		if out[i].Op == patch.OpDelete {
			out = append(out[:i], out[i+1:]...)
		} else {
			out[i].Op = patch.OpAdd
		}
		break
	}
	for i := len(out) - 1; i >= 0; i-- {
		if out[i].Op == patch.OpDelete {
			continue
		}
		if out[i].Text == "" {
			if out[i].Op == patch.OpAdd {
				out = append(out[:i], out[i+1:]...)
			} else {
				out[i].Op = patch.OpDelete // an old line stays; the new side loses it
			}
		}
		break
	}
	return out
}

// placeInsertion places a chunk without old lines. With "*** End of File"
// it goes at the end; otherwise its last @@ context is the anchor it goes
// after, which must be found exactly once (an empty file needs none).
// Without either, it is refused: the host would put it at the end of the
// file, which the author may not have meant.
func (v *FileView) placeInsertion(ch *patch.Chunk, cursor int, abs string, pl *Placement) (*Placement, error) {
	n := len(v.lines)
	pl.Lines = addLines(ch.Lines)
	if ch.EOF {
		// The end marker decides the place; contexts only get reported.
		lo := cursor
		for i, c := range ch.Contexts {
			p := v.firstAtOrAfter(v.idOf(c.Text), lo)
			pl.Contexts[i] = p
			if p < 0 {
				pl.Repairs = append(pl.Repairs, patch.Repair{Kind: patch.RepairContextNotFound, Line: c.Line})
				continue
			}
			lo = p + 1
		}
		pl.Start, pl.End, pl.Cursor = n, n, n
		pl.Strategy = StrategyEOFInsert
		pl.EOFKept = true
		pl.Candidates = []int{n + 1}
		return pl, nil
	}
	if len(ch.Contexts) == 0 {
		if n == 0 {
			pl.Start, pl.End, pl.Cursor = 0, 0, 0
			pl.Strategy = StrategyEOFInsert
			pl.Candidates = []int{1}
			return pl, nil
		}
		return nil, verificationError(&Error{Phase: PhaseAnchor},
			"Missing insertion anchor in "+abs+`: add "*** End of File" after the added lines to append them, or begin the chunk with "@@ <an existing line>" to insert after that line`)
	}
	lo := cursor
	last := len(ch.Contexts) - 1
	for i, c := range ch.Contexts[:last] {
		p := v.firstAtOrAfter(v.idOf(c.Text), lo)
		if p < 0 {
			return nil, verificationError(&Error{Phase: PhaseAnchor},
				"Failed to find insertion anchor in "+abs+":\n"+c.Text)
		}
		pl.Contexts[i] = p
		lo = p + 1
	}
	anchor := ch.Contexts[last]
	id := v.idOf(anchor.Text)
	hits := v.allAtOrAfter(id, lo, maxListedCandidates)
	switch len(hits) {
	case 0:
		return nil, verificationError(&Error{Phase: PhaseAnchor},
			"Failed to find insertion anchor in "+abs+":\n"+anchor.Text)
	case 1:
	default:
		return nil, ambiguityError(PhaseAnchor, "Insertion anchor was ambiguous", abs, anchor.Text, oneBased(hits))
	}
	a := hits[0]
	pl.Contexts[last] = a
	pl.Start, pl.End, pl.Cursor = a+1, a+1, a+1
	pl.Strategy = StrategyAnchor
	pl.Candidates = []int{a + 1}
	return pl, nil
}

// psCandidate is one accepted prefix/suffix region: prefix at start, suffix
// at end (file lines [start+P, end) between them).
type psCandidate struct {
	start, end  int // prefix start; suffix start
	p, s        int // prefix and suffix lengths
	match       []int
	matched     int
	needed      int
	interiorIdx []int // index in lines of each interior old line
}

func (c psCandidate) begin() int { return c.start }

// prefixSuffix returns every region the bounded prefix/suffix rescue
// accepts: P and S are the leading and trailing runs of
// context lines; the region between the matched prefix and suffix must stay
// within the size bound, must remove nothing when the chunk removes
// nothing, must resemble the removed lines by key, and must contain every
// interior context line. complete is false when the pair budget ran out
// before every pair was tried; a single candidate is then not known to be
// unique and is reported as ambiguous.
//
// changed lists the prefix starts of refused regions that lie within the
// size bound and do not overlap any accepted region: places framed by the
// same prefix and suffix whose lines changed since the author read them.
// The author may have meant one of them, so next to an accepted region they
// make the rescue ambiguous instead of letting it edit a look-alike place.
func (v *FileView) prefixSuffix(lines []patch.ChunkLine, lo int) (cands []psCandidate, complete bool, changed []int) {
	n := len(v.lines)
	P := 0
	for P < len(lines) && lines[P].Op == patch.OpContext {
		P++
	}
	S := 0
	for S < len(lines)-P && lines[len(lines)-1-S].Op == patch.OpContext {
		S++
	}
	if P == 0 || S == 0 {
		return nil, true, nil
	}
	left := oldTexts(lines[:P])
	right := oldTexts(lines[len(lines)-S:])
	interior := lines[P : len(lines)-S]
	var keys []string
	var ctx []bool
	var idx []int
	hasDel := false
	nctx := 0
	for i, l := range interior {
		if l.Op == patch.OpAdd {
			continue
		}
		keys = append(keys, lineKey(l.Text))
		ctx = append(ctx, l.Op == patch.OpContext)
		idx = append(idx, P+i)
		if l.Op == patch.OpDelete {
			hasDel = true
		} else {
			nctx++
		}
	}
	D := len(keys)
	maxR := D + max(2, (D+1)/2)
	leftIDs, ok1 := v.idsOf(left)
	rightIDs, ok2 := v.idsOf(right)
	if !ok1 || !ok2 {
		return nil, true, nil
	}
	lefts := v.blockHits(leftIDs, lo, n, 0)
	if len(lefts) == 0 {
		return nil, true, nil
	}
	rights := v.blockHits(rightIDs, lefts[0]+P, n, 0)
	var out []psCandidate
	var refused [][2]int // spans [start, end) of refused regions within the bound
	finish := func(complete bool) ([]psCandidate, bool, []int) {
		var changed []int
		for _, r := range refused {
			disjoint := true
			for _, c := range out {
				if r[0] < c.end+c.s && c.start < r[1] {
					disjoint = false
					break
				}
			}
			if disjoint && (len(changed) == 0 || changed[len(changed)-1] != r[0]) {
				changed = append(changed, r[0])
			}
		}
		return out, complete, changed
	}
	refuse := func(i, j int) {
		if len(refused) < maxListedCandidates {
			refused = append(refused, [2]int{i, j + S})
		}
	}
	pairs := 0
	for _, i := range lefts {
		from := i + P
		// first right hit at or after from
		a, b := 0, len(rights)
		for a < b {
			h := (a + b) / 2
			if rights[h] < from {
				a = h + 1
			} else {
				b = h
			}
		}
		for _, j := range rights[a:] {
			R := j - from
			if R > maxR {
				break
			}
			if pairs++; pairs > maxPairs {
				return finish(false)
			}
			if !hasDel && R != nctx {
				refuse(i, j)
				continue // the chunk removes nothing, so no file line may go
			}
			region := make([]string, R)
			for k := range region {
				region[k] = lineKey(v.lines[from+k])
			}
			match, matched, ok := alignRegion(keys, ctx, region)
			if !ok {
				refuse(i, j)
				continue
			}
			allCtx := true
			for k, c := range ctx {
				if c && match[k] < 0 {
					allCtx = false
					break
				}
			}
			// Every line of the region must be one the author saw, and
			// every line the author saw must be there: a line someone
			// else added, removed or rewrote inside the region would be
			// overwritten by the patch (only whitespace and typography
			// may have drifted).
			need := D
			if !allCtx || matched < need || R != D {
				refuse(i, j)
				continue
			}
			out = append(out, psCandidate{start: i, end: j, p: P, s: S, match: match, matched: matched, needed: need, interiorIdx: idx})
			if len(out) >= maxListedCandidates {
				return finish(true)
			}
		}
	}
	return finish(true)
}

// fill writes the placement of an accepted prefix/suffix region: file order,
// context lines with the file's bytes, and in each changed block the file's
// removed lines before the authored added lines.
func (c psCandidate) fill(v *FileView, pl *Placement, lines []patch.ChunkLine) {
	var out []PlacedLine
	for k := 0; k < c.p; k++ {
		out = append(out, PlacedLine{Op: patch.OpContext, FileLine: c.start + k, Text: v.lines[c.start+k]})
	}
	// file line of each interior context line
	ctxAt := map[int]int{}
	for k, li := range c.interiorIdx {
		if lines[li].Op == patch.OpContext {
			ctxAt[li] = c.start + c.p + c.match[k]
		}
	}
	f := c.start + c.p
	var pending []PlacedLine
	flush := func(upto int) {
		for ; f < upto; f++ {
			out = append(out, PlacedLine{Op: patch.OpDelete, FileLine: f, Text: v.lines[f]})
		}
		out = append(out, pending...)
		pending = pending[:0]
	}
	for li := c.p; li < len(lines)-c.s; li++ {
		l := lines[li]
		switch l.Op {
		case patch.OpAdd:
			pending = append(pending, PlacedLine{Op: patch.OpAdd, FileLine: -1, Text: l.Text})
		case patch.OpContext:
			g := ctxAt[li]
			flush(g)
			out = append(out, PlacedLine{Op: patch.OpContext, FileLine: g, Text: v.lines[g]})
			f = g + 1
		}
	}
	flush(c.end)
	for k := 0; k < c.s; k++ {
		out = append(out, PlacedLine{Op: patch.OpContext, FileLine: c.end + k, Text: v.lines[c.end+k]})
	}
	pl.Start, pl.End = c.start, c.end+c.s
	pl.Lines = out
	pl.ShapeChanged = true
	pl.Strategy = StrategyPrefixSuffix
	pl.Candidates = []int{c.start + 1}
	pl.Score, pl.Needed = c.matched, c.needed
	pl.Cursor = pl.End
}

type lcsCandidate struct {
	start, score, needed int
}

func (c lcsCandidate) begin() int { return c.start }

// lcsWindows returns every window the bounded LCS rescue accepts: windows of
// m lines whose first and last lines match the chunk's on some rung, at
// most MaxLCSCandidates of them, scoring at least LCSNeeded(m) by the LCS of
// fold+trim keys, and in which every removed line agrees by key with the
// window line it removes, so that a rescue never removes a line the author
// did not see.
//
// changed lists the starts of other places that look like the author's but
// are not accepted, and do not overlap an accepted window: framed windows
// that fail the agreement rule or the score but still share more than half
// of their lines with the chunk, and any window that reaches the score
// without being framed (its first or last line changed). Next to an
// accepted window they make the rescue ambiguous, so that a look-alike
// elsewhere is never edited in place of the author's. The unframed places
// are looked for only when exactly one window is accepted, the only case
// in which they change the outcome; complete is false when that search ran
// out of budget, and the one window is then not known to be unique.
func (v *FileView) lcsWindows(lines []patch.ChunkLine, lo int) (cands []lcsCandidate, changed []int, complete bool) {
	n := len(v.lines)
	old := oldTexts(lines)
	m := len(old)
	if m == 0 || n == 0 || m > MaxLCSChunkLines {
		return nil, nil, true
	}
	firstID, lastID := v.idOf(old[0]), v.idOf(old[m-1])
	if firstID < 0 || lastID < 0 {
		return nil, nil, true
	}
	var starts []int
	for _, q := range v.postings(firstID) {
		i := int(q)
		if i < lo {
			continue
		}
		if i > n-m {
			break
		}
		if (m == 1 || v.lineIs(i+m-1, lastID)) && v.lineIs(i, firstID) {
			starts = append(starts, i)
			if len(starts) > MaxLCSCandidates {
				return nil, nil, true
			}
		}
	}
	if len(starts) == 0 {
		return nil, nil, true
	}
	needed := LCSNeeded(m)
	keys := oldKeys(lines)
	del := make([]bool, 0, m)
	for _, l := range lines {
		if l.Op != patch.OpAdd {
			del = append(del, l.Op == patch.OpDelete)
		}
	}
	win := make([]string, m)
	var out []lcsCandidate
	var refused []int
	for _, i := range starts {
		agree := true
		for k := range win {
			win[k] = lineKey(v.lines[i+k])
			if del[k] && win[k] != keys[k] {
				agree = false
			}
		}
		s := lcsLen(keys, win)
		switch {
		case agree && s >= needed:
			out = append(out, lcsCandidate{start: i, score: s, needed: needed})
		case 2*s > m:
			refused = append(refused, i)
		}
	}
	overlaps := func(r int) bool {
		for _, c := range out {
			if r < c.start+m && c.start < r+m {
				return true
			}
		}
		return false
	}
	for _, r := range refused {
		if !overlaps(r) {
			changed = append(changed, r)
		}
	}
	complete = true
	if len(out) == 1 && len(changed) == 0 {
		c := out[0]
		changed, complete = v.lookalikes(keys, lo, c.start, c.start)
	}
	return out, changed, complete
}

// oldKeys returns the fold+trim keys of the old lines of a chunk.
func oldKeys(lines []patch.ChunkLine) []string {
	var out []string
	for _, l := range lines {
		if l.Op != patch.OpAdd {
			out = append(out, lineKey(l.Text))
		}
	}
	return out
}

// lookalikeBudget bounds the LCS table cells the look-alike scan fills for
// one chunk.
const lookalikeBudget = 1 << 22

// lookalikes returns the places in [lo, N) that look like the author's,
// other than the accepted one: windows of m = len(keys) lines whose LCS of
// fold+trim keys with keys reaches LCSNeeded(m), the LCS acceptance score,
// counting only pairs (old line k, file line f) whose offset f-k lies
// outside [offLo, offHi], the offsets at which the accepted place already
// puts the old lines. So the accepted place itself, seen through a window
// shifted by a few lines, does not count against itself, while another
// place does even when it overlaps the accepted one. No line of a window
// has to match on a rung: a place whose first or last line, or
// indentation, changed since the author read it is still found.
// Overlapping windows are one place, reported by its first window.
// complete is false when the budget ran out before every window was scored.
//
// Every window is bounded first, cheaply and soundly: each old line pairs
// with at most one window line of the same key, so the score cannot exceed
// the sum, over the chunk's distinct keys, of the smaller of the number of
// window lines and the number of old lines with that key. A window whose
// bound is below LCSNeeded(m) cannot reach the score and is skipped without
// being scored. The bound is kept as the window slides, from a hash of each
// line's key (a hash collision can only raise the bound, never hide a
// window).
func (v *FileView) lookalikes(keys []string, lo, offLo, offHi int) (starts []int, complete bool) {
	n, m := len(v.lines), len(keys)
	if m == 0 || n-lo < m || v.exactOnly {
		return nil, true
	}
	needed := LCSNeeded(m)
	hs := v.lineKeyHashes()
	// The distinct key hashes of the chunk, with how many old lines have
	// each: a window's score cannot exceed the sum over them of
	// min(lines of the window with that hash, old lines with it).
	keyHs := make([]uint32, m)
	for k, key := range keys {
		keyHs[k] = keyHash(v, key)
	}
	var bits [64]uint64 // 4096-bit filter over the top 12 bits of each hash
	var want []uint32
	var mult []int
	for _, h := range keyHs {
		bits[h>>26] |= 1 << ((h >> 20) & 63)
		j := 0
		for j < len(want) && want[j] != h {
			j++
		}
		if j == len(want) {
			want = append(want, h)
			mult = append(mult, 0)
		}
		mult[j]++
	}
	cnt := make([]int, len(want))
	bound := 0
	// at returns the index in want of line p's hash, or -1.
	at := func(p int) int {
		h := hs[p]
		if bits[h>>26]&(1<<((h>>20)&63)) == 0 {
			return -1
		}
		for j, w := range want {
			if w == h {
				return j
			}
		}
		return -1
	}
	win := make([]string, m)
	prev := make([]int, m+1)
	cur := make([]int, m+1)
	// score is the LCS of keys (old line k) and the window at i (file line
	// i+j), counting a pair only when its offset i+j-k is not the accepted
	// one. By hashes it is an upper bound of the score by keys (a collision
	// can only add pairs), and much cheaper; by keys it is exact.
	score := func(i int, byKey bool) int {
		if byKey {
			for j := range win {
				win[j] = lineKey(v.lines[i+j])
			}
		}
		clear(prev)
		for k := range keys {
			cur[0] = 0
			for j := range win {
				eq := keyHs[k] == hs[i+j]
				if eq && byKey {
					eq = keys[k] == win[j]
				}
				switch {
				case eq && (i+j-k < offLo || i+j-k > offHi):
					cur[j+1] = prev[j] + 1
				case prev[j+1] >= cur[j]:
					cur[j+1] = prev[j+1]
				default:
					cur[j+1] = cur[j]
				}
			}
			prev, cur = cur, prev
		}
		return prev[m]
	}
	cells := 0
	lastEnd := -1 // end of the last window that reached the score
	// Only windows that hold a line of one of the chunk's rarer keys can
	// reach the score (rareWindows); when those lines are many, every
	// window is visited.
	ranges, ok := v.rareWindows(want, mult, lo, m, needed)
	if !ok {
		ranges = [][2]int{{lo, n - m}}
	}
	for _, r := range ranges {
		clear(cnt)
		bound = 0
		for p := r[0]; p < r[0]+m; p++ {
			if j := at(p); j >= 0 {
				if cnt[j] < mult[j] {
					bound++
				}
				cnt[j]++
			}
		}
		for i := r[0]; ; i++ {
			if bound >= needed {
				if cells += m * m; cells > lookalikeBudget {
					return starts, false
				}
				if score(i, false) >= needed && score(i, true) >= needed {
					if i >= lastEnd {
						starts = append(starts, i)
						if len(starts) >= maxListedCandidates {
							return starts, true
						}
					}
					lastEnd = i + m
				}
			}
			if i >= r[1] {
				break
			}
			// Slide: line i leaves, line i+m enters. Most lines fail the
			// filter, which is tested inline.
			if h := hs[i]; bits[h>>26]&(1<<((h>>20)&63)) != 0 {
				if j := at(i); j >= 0 {
					cnt[j]--
					if cnt[j] < mult[j] {
						bound--
					}
				}
			}
			if h := hs[i+m]; bits[h>>26]&(1<<((h>>20)&63)) != 0 {
				if j := at(i + m); j >= 0 {
					if cnt[j] < mult[j] {
						bound++
					}
					cnt[j]++
				}
			}
		}
	}
	return starts, true
}

// keyHash returns the 32-bit hash of a fold+trim key used by the look-alike
// scan.
func keyHash(v *FileView, key string) uint32 {
	return uint32(maphash.String(v.seed, key) >> 32)
}

// lineKeyHashes returns the hash of each file line's fold+trim key, built
// on first use.
func (v *FileView) lineKeyHashes() []uint32 {
	if v.keyHash != nil {
		return v.keyHash
	}
	hs := make([]uint32, len(v.lines))
	for i, l := range v.lines {
		hs[i] = keyHash(v, lineKey(l)) // an ASCII line's key is a substring: no copy
	}
	v.keyHash = hs
	return hs
}

// fillLCS writes the placement of an LCS window: old line k stands for
// window line k; context lines keep the window's bytes, removed lines
// remove their window line, and each changed block lists its removed lines
// before its added lines.
func (v *FileView) fillLCS(pl *Placement, lines []patch.ChunkLine, c lcsCandidate) {
	var out, dels, adds []PlacedLine
	flush := func() {
		out = append(out, dels...)
		out = append(out, adds...)
		dels, adds = dels[:0], adds[:0]
	}
	k := c.start
	for _, l := range lines {
		switch l.Op {
		case patch.OpAdd:
			adds = append(adds, PlacedLine{Op: patch.OpAdd, FileLine: -1, Text: l.Text})
		case patch.OpDelete:
			dels = append(dels, PlacedLine{Op: patch.OpDelete, FileLine: k, Text: v.lines[k]})
			k++
		default:
			flush()
			out = append(out, PlacedLine{Op: patch.OpContext, FileLine: k, Text: v.lines[k]})
			k++
		}
	}
	flush()
	pl.Start, pl.End = c.start, k
	pl.Lines = out
	pl.ShapeChanged = true
	pl.Strategy = StrategyLCS
	pl.Candidates = []int{c.start + 1}
	pl.Score, pl.Needed = c.score, c.needed
	pl.Cursor = pl.End
}

// closestBudget bounds the line comparisons of the closest-region search
// before it falls back to positions suggested by the index.
const closestBudget = 8 << 20

// notFound builds the "Failed to find expected lines" error with a hint:
// the closest region of the file and its first line that differs.
func (v *FileView) notFound(abs string, old []string, lo int) error {
	msg := "Failed to find expected lines in " + abs + ":\n" + strings.Join(old, "\n")
	msg += v.closestRegion(old, lo)
	return verificationError(&Error{Phase: PhaseNotFound}, msg)
}

// closestRegion returns the hint naming the window of m lines, at or after
// lo, where the most old lines agree by fold+trim key with the file line at
// the same offset, and the first line that differs there. It returns "" when
// no line agrees anywhere.
func (v *FileView) closestRegion(old []string, lo int) string {
	n, m := len(v.lines), len(old)
	if m == 0 || lo >= n {
		return ""
	}
	li := v.looseIDs()
	keys := make([]int32, m)
	for k, o := range old {
		id, ok := li.keyID[lineKey(o)]
		if !ok {
			id = -1
		}
		keys[k] = id
	}
	hiP := max(lo, n-m)
	score := func(p int) int {
		s := 0
		for k, id := range keys {
			if p+k < n && li.ids[p+k] == id {
				s++
			}
		}
		return s
	}
	bestP, bestK := -1, 0
	try := func(p int) {
		if p < lo || p > hiP {
			return
		}
		if s := score(p); s > bestK || (s == bestK && s > 0 && p < bestP) {
			bestP, bestK = p, s
		}
	}
	if (hiP-lo+1)*m <= closestBudget {
		for p := lo; p <= hiP; p++ {
			try(p)
		}
	} else {
		// Too big to try every start: try the starts implied by the rarest
		// ladder matches of each old line.
		tried := 0
		for k, o := range old {
			for _, q := range v.postings(v.idOf(o)) {
				if int(q) < lo+k {
					continue
				}
				try(int(q) - k)
				if tried++; tried > 1<<14 {
					break
				}
			}
		}
	}
	if bestP < 0 || bestK == 0 {
		return ""
	}
	// First difference: first line that disagrees by key; when all agree by
	// key, the first that matches on no rung.
	diff := -1
	for k, id := range keys {
		if bestP+k >= n || li.ids[bestP+k] != id {
			diff = k
			break
		}
	}
	if diff < 0 {
		for k, o := range old {
			if v.ids[bestP+k] != v.idOf(o) {
				diff = k
				break
			}
		}
	}
	if diff < 0 {
		diff = 0
	}
	fileText := "(end of file)"
	if bestP+diff < n {
		fileText = v.lines[bestP+diff]
	}
	return fmt.Sprintf("\nClosest region: lines %d-%d (%d of %d lines agree); first difference at line %d:\n  file:  %s\n  patch: %s",
		bestP+1, min(bestP+m, n), bestK, m, bestP+diff+1, fileText, old[diff])
}
