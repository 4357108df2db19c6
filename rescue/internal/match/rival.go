package match

import "github.com/slimgate/slim/rescue/internal/patch"

// This file decides which look-alikes stop the three steps that accept a
// place on strong evidence: the indentation step (every line of the chunk
// is there, under one mapping of leading whitespace), the edited-edge step
// (every line but one edge line is there, and that line is clearly the same
// line edited) and the already-applied step (the chunk's new lines are
// there exactly, and its old lines nowhere).
//
// The look-alike rule finds every other stretch in which 70% of the
// chunk's lines agree. For prefix/suffix and LCS, which accept a place
// whose inner lines may differ, each such stretch stops the rescue. For
// the three steps above, a stretch stops it only when it could be the
// place the author meant:
//
//   - framed: it holds the chunk's leading and trailing context (whitespace
//     and typography aside) with a region of about the chunk's size
//     between. That is the meant place with the lines the chunk changes
//     rewritten by someone else since (a conflict), or a block of the same
//     frame; the two cannot be told apart, so the chunk is refused.
//   - placeable: some rescue step would place the chunk there on its own.
//     Every line agrees apart from whitespace (indentation, prefix/suffix);
//     the first and last lines match on a seek rung, every removed line
//     agrees and 70% of the lines do (LCS); or every line but the first or
//     last matches on a seek rung and that line is clearly the same line
//     edited (edited edge). Then the author's lines stand at both places,
//     each with a drift the matcher sees through, and either could be the
//     one meant.
//
// Any other look-alike differs from what the author saw in a way no step
// accepts: a line the chunk keeps is another line there, an edge line is
// a different line, or it matches only through a re-indentation and a
// changed line at once. To be the place meant it would need someone
// else's edit that the matcher refuses anyway, while the accepted place
// needs only the drift its step is for; such a block is a similar block
// (a table entry, a generated wrapper, repeated error handling), not the
// author's lines.
//
// The edited-edge step weighs placeable look-alikes by how close they
// are: its accepted place differs from the author's lines in one line, so
// a place that differs in one line too, the others at the author's
// indentation (as close), stops it, and so does a place another step
// would take with no more differing (every line apart from whitespace, or
// one edited edge line); a place only LCS would take differs in two lines
// or more, and one that is as close only once re-indented differs in its
// indentation and a line at once: worse explanations than one edited line,
// so they do not.
//
// The already-applied step is stricter about what it skips, and looser
// about what stops it: only a framed place, or a place where every line
// agrees apart from whitespace, stops it. Skipping a chunk writes nothing,
// so a wrong skip can never change a line; its only risk is that the
// author meant another place, changed since, where the change is not
// made. A framed place is that case (refused), and so is the old text
// standing re-indented elsewhere (refused). The frame must stand at the
// author's indentation, as the accepted place holds the new lines there
// exactly: a place framed only at another indentation, with other lines
// between, would need a re-indentation and a rewrite at once to be the
// place meant, and does not stop the step (applied.go says why a skip can
// afford that). A place that only an LCS or
// edited-edge rescue would take is the author's block with one of the
// lines the chunk keeps changed by someone else, and it could only be
// meant if the author's own text already held the chunk's new lines,
// context and all, somewhere else; the change is then taken as made,
// since a chunk whose change is made must not make the patch fail.

// rivalMode says which look-alikes stop a step (see above).
type rivalMode int

const (
	// rivalsPlaceable: framed or placeable look-alikes stop the step.
	rivalsPlaceable rivalMode = iota
	// rivalsEdge: framed look-alikes and those in which all lines but
	// one agree at the author's indentation (edited edge); an LCS
	// placement needs more to differ.
	rivalsEdge
	// rivalsApplied: look-alikes framed at the author's indentation, and
	// those that agree line for line apart from whitespace, stop the
	// step (already applied).
	rivalsApplied
)

// meantRivals returns the look-alikes among rivals (window starts from
// lookalikes) that could be the place the author meant: framed or
// placeable as mode says. offLo..offHi are the offsets at which the
// accepted place holds the old lines, and acc is its first line; windows
// there are the accepted place itself. When the work would exceed
// lookalikeBudget, the rivals not yet examined are all kept.
func (v *FileView) meantRivals(lines []patch.ChunkLine, rivals []int, offLo, offHi, acc int, mode rivalMode) []int {
	if len(rivals) == 0 {
		return nil
	}
	n := len(v.lines)
	old := oldTexts(lines)
	keys := oldKeys(lines)
	m := len(old)
	del := make([]bool, 0, m)
	for _, l := range lines {
		if l.Op != patch.OpAdd {
			del = append(del, l.Op == patch.OpDelete)
		}
	}
	hs := v.lineKeyHashes()
	keyHs := make([]uint32, m)
	for k, key := range keys {
		keyHs[k] = keyHash(v, key)
	}
	rungIDs, _ := v.idsOf(old) // -1 for a line no file line matches on a rung
	eqKey := func(f, k int) bool { return hs[f] == keyHs[k] && lineKey(v.lines[f]) == keys[k] }
	eqRung := func(f, k int) bool { return rungIDs[k] >= 0 && v.lineIs(f, rungIDs[k]) }

	// The frame: the chunk's leading and trailing runs of context lines,
	// and the bound on the region between them.
	lead := 0
	for lead < len(lines) && lines[lead].Op == patch.OpContext {
		lead++
	}
	trail := 0
	for trail < len(lines)-lead && lines[len(lines)-1-trail].Op == patch.OpContext {
		trail++
	}
	inner := 0
	for _, l := range lines[lead : len(lines)-trail] {
		if l.Op != patch.OpAdd {
			inner++
		}
	}
	maxR := inner + max(2, (inner+1)/2)
	// Against the already-applied step the frame must stand at the
	// author's indentation (see above): the accepted place holds the new
	// lines there exactly.
	eqFrame := eqKey
	if mode == rivalsApplied {
		eqFrame = func(f, k int) bool {
			return eqKey(f, k) && (keys[k] == "" || leading(v.lines[f]) == leading(old[k]))
		}
	}
	framedAt := func(s int) bool {
		if lead == 0 || trail == 0 || s == acc || s+lead+trail > n {
			return false
		}
		for k := 0; k < lead; k++ {
			if !eqFrame(s+k, k) {
				return false
			}
		}
		for j := s + lead; j <= s+lead+maxR && j+trail <= n; j++ {
			all := true
			for k := 0; k < trail; k++ {
				if !eqFrame(j+k, m-trail+k) {
					all = false
					break
				}
			}
			if all {
				return true
			}
		}
		return false
	}
	needed := LCSNeeded(m)
	win := make([]string, m)
	var indented []string // the old lines' keys with their indentation, for rivalsEdge
	if mode == rivalsEdge {
		indented = make([]string, m)
		for k, o := range old {
			indented[k] = indentedKey(o)
		}
	}
	cells := 0 // comparisons made, bounded by lookalikeBudget
	placeableAt := func(s int) bool {
		if s+m > n || (s >= offLo && s <= offHi) {
			return false
		}
		keyDiff, rungDiff, firstOff, lastOff, removedOK := 0, 0, false, false, true
		for k := 0; k < m; k++ {
			if !eqKey(s+k, k) {
				keyDiff++
				if del[k] {
					removedOK = false
				}
			}
			if !eqRung(s+k, k) {
				rungDiff++
				firstOff = firstOff || k == 0
				lastOff = lastOff || k == m-1
			}
		}
		if keyDiff == 0 {
			return true // indentation or prefix/suffix
		}
		if mode == rivalsApplied {
			return false
		}
		if m >= 4 && rungDiff == 1 {
			if firstOff && !del[0] && !del[1] && sameLine(old[0], v.lines[s]) {
				return true // edited first line
			}
			if lastOff && !del[m-1] && !del[m-2] && sameLine(old[m-1], v.lines[s+m-1]) {
				return true // edited last line
			}
		}
		// Against an edited edge only a place as close as the accepted one
		// counts (one line differs, added or removed, the others at the
		// author's indentation): a place LCS would take differs in more
		// lines, and one that agrees only once re-indented differs in its
		// indentation and a line at once; either is a worse explanation of
		// the author's lines than one edited line is. Against the other
		// steps a place LCS would take counts.
		lcsOK := removedOK && !firstOff && !lastOff
		if mode != rivalsEdge && !lcsOK {
			return false
		}
		cells += m * m
		if mode == rivalsEdge {
			for k := range win {
				win[k] = indentedKey(v.lines[s+k])
			}
			return lcsOutside(indented, win, s, offLo, offHi) >= m-1
		}
		for k := range win {
			win[k] = lineKey(v.lines[s+k])
		}
		return lcsOutside(keys, win, s, offLo, offHi) >= needed
	}
	var out []int
	for i, r := range rivals {
		if cells += (2*m + 1) * (m + maxR); cells > lookalikeBudget {
			return append(out, rivals[i:]...)
		}
		for s := max(0, r-m); s <= r+m && s < n; s++ {
			if framedAt(s) || placeableAt(s) {
				out = append(out, r)
				break
			}
		}
	}
	return out
}

// lcsOutside is lcsLen of keys (old line k) and win (file line s+j),
// counting a pair only when its offset s+j-k lies outside [offLo, offHi]:
// lines that agree because the window overlaps the accepted place, at the
// file lines that place gives them, are that place, not a rival.
func lcsOutside(keys, win []string, s, offLo, offHi int) int {
	prev := make([]int, len(win)+1)
	cur := make([]int, len(win)+1)
	for k := range keys {
		cur[0] = 0
		for j := range win {
			switch off := s + j - k; {
			case keys[k] == win[j] && (off < offLo || off > offHi):
				cur[j+1] = prev[j] + 1
			case prev[j+1] >= cur[j]:
				cur[j+1] = prev[j+1]
			default:
				cur[j+1] = cur[j]
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(win)]
}

// indentedKey is lineKey with the line's indentation kept in front: two
// lines agree by it when they agree by lineKey at the same indentation.
func indentedKey(s string) string { return leading(s) + "\x00" + lineKey(s) }
