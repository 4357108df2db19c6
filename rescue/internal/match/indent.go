package match

import (
	"fmt"
	"sort"
	"strings"

	"github.com/slimgate/slim/rescue/internal/patch"
)

// This file is the indentation rescue: a chunk whose lines are all in the
// file, but with their leading whitespace changed by one consistent
// mapping (a formatter turned tabs into spaces, a block was re-indented,
// or the author's copy had the indentation wrong).
//
// The rule: every non-blank old line must agree with its file line apart
// from leading whitespace, and one mapping from the family below must
// turn each old line's indentation into its file line's; the chunk must
// have at least two non-blank old lines (a lone line could sit at any
// level) and there must be exactly one place in the window where the old
// lines agree apart from whitespace (with several, the step leaves the
// chunk to the later ones, which refuse it as ambiguous or find it
// otherwise), and no other place may look like the chunk (the look-alike
// rule). Context and removed lines keep the
// file's bytes; each added line is re-indented through the mapping where
// its indentation is in the mapping's domain, and kept as written
// otherwise (blank added lines are always kept). When two mappings of the
// family explain the old lines but re-indent an added line differently,
// the mapping is not determined and the step refuses.
//
// The family:
//   - a unit swap over the whole indentation: each leading tab becomes 2,
//     4 or 8 spaces, or each leading run of that many spaces a tab, or
//     each leading 2 spaces become 4 or the reverse;
//   - a constant prefix added to every indentation;
//   - a constant prefix removed from every indentation (every old line
//     must start with it).

// indentMap is one mapping of leading whitespace.
type indentMap struct {
	unit     bool
	from, to string // the unit swapped, or the prefix removed (from) or added (to)
}

// indentUnits are the unit swaps tried, in order.
var indentUnits = [][2]string{
	{"\t", "    "}, {"    ", "\t"},
	{"\t", "  "}, {"  ", "\t"},
	{"\t", "        "}, {"        ", "\t"},
	{"  ", "    "}, {"    ", "  "},
}

// leading returns the leading run of spaces and tabs of s.
func leading(s string) string {
	return s[:len(s)-len(strings.TrimLeft(s, " \t"))]
}

// apply maps an indentation; ok is false when it lies outside the
// mapping's domain (a prefix removal of a prefix it does not start with).
func (m indentMap) apply(ind string) (string, bool) {
	if m.unit {
		k := 0
		for strings.HasPrefix(ind[k*len(m.from):], m.from) {
			k++
		}
		return strings.Repeat(m.to, k) + ind[k*len(m.from):], true
	}
	if !strings.HasPrefix(ind, m.from) {
		return "", false
	}
	return m.to + ind[len(m.from):], true
}

// String names the mapping for the repair's Detail.
func (m indentMap) String() string {
	switch {
	case m.unit:
		return fmt.Sprintf("each leading %q -> %q", m.from, m.to)
	case m.from == "":
		return fmt.Sprintf("prefix %q added", m.to)
	default:
		return fmt.Sprintf("prefix %q removed", m.from)
	}
}

// reindent returns an added line through m: kept when blank or when its
// indentation is outside m's domain.
func (m indentMap) reindent(s string) string {
	if strings.TrimSpace(s) == "" {
		return s
	}
	ind := leading(s)
	out, ok := m.apply(ind)
	if !ok {
		return s
	}
	return out + s[len(ind):]
}

// fits reports whether m turns each old indentation into the file's, and
// keeps distinct indentations distinct.
func (m indentMap) fits(old, file []string) bool {
	seen := map[string]string{}
	for i, o := range old {
		got, ok := m.apply(o)
		if !ok || got != file[i] {
			return false
		}
		seen[got] = o
	}
	// A unit swap can send two old indentations to one ("\t" and "    "
	// both to four spaces): the mapping would merge levels.
	distinct := map[string]bool{}
	for _, o := range old {
		distinct[o] = true
	}
	return len(seen) == len(distinct)
}

// indentMaps returns every mapping of the family that turns the old
// indentations into the file's, other than the identity.
func indentMaps(old, file []string) []indentMap {
	var out []indentMap
	for _, u := range indentUnits {
		if m := (indentMap{unit: true, from: u[0], to: u[1]}); m.fits(old, file) {
			out = append(out, m)
		}
	}
	o, f := old[0], file[0]
	if len(f) > len(o) && strings.HasSuffix(f, o) {
		if m := (indentMap{to: f[:len(f)-len(o)]}); m.fits(old, file) {
			out = append(out, m)
		}
	}
	if len(o) > len(f) && strings.HasSuffix(o, f) {
		if m := (indentMap{from: o[:len(o)-len(f)]}); m.fits(old, file) {
			out = append(out, m)
		}
	}
	return out
}

// rungRest reports whether two lines agree on a seek rung once their
// leading spaces and tabs are set aside.
func rungRest(a, b string) bool {
	return ladderKey(a[len(leading(a)):]) == ladderKey(b[len(leading(b)):])
}

// indentPlaces returns the starts in [lo, N-m] where every old line
// agrees with its file line by fold+trim key (blank with blank), at most
// limit of them.
func (v *FileView) indentPlaces(keys []string, lo, limit int) []int {
	n, m := len(v.lines), len(keys)
	if m == 0 || n-lo < m {
		return nil
	}
	hs := v.lineKeyHashes()
	keyHs := make([]uint32, m)
	nonBlank := false
	for k, key := range keys {
		keyHs[k] = keyHash(v, key)
		nonBlank = nonBlank || key != ""
	}
	if !nonBlank {
		return nil
	}
	var out []int
	// at reports whether every old line agrees with the file at p, and
	// whether enough places are found.
	at := func(p int) (done bool) {
		for k := range keys {
			if hs[p+k] != keyHs[k] {
				return false
			}
		}
		for k, key := range keys {
			if lineKey(v.lines[p+k]) != key {
				return false
			}
		}
		out = append(out, p)
		return len(out) >= limit
	}
	if !v.useKeyIndex() {
		anchor := 0
		for keys[anchor] == "" {
			anchor++
		}
		for p := lo; p+m <= n; p++ {
			if hs[p+anchor] == keyHs[anchor] && at(p) {
				break
			}
		}
		return out
	}
	// Every place holds the chunk's rarest key at its offset: visit only
	// the lines in that key's bucket of the key index.
	anchor, rarest := 0, []int32(nil)
	for k := range keys {
		if ps := v.keyBucket(keyHs[k]); k == 0 || len(ps) < len(rarest) {
			anchor, rarest = k, ps
		}
	}
	for _, q := range rarest[sort.Search(len(rarest), func(i int) bool { return int(rarest[i]) >= lo+anchor }):] {
		p := int(q) - anchor
		if p+m > n || at(p) {
			break
		}
	}
	return out
}

// placeIndent runs the indentation rescue. It returns nil, nil when the
// step does not apply (no place or several, no mapping, fewer than two
// non-blank old lines), and an ambiguity error when another place looks
// like the chunk.
func (v *FileView) placeIndent(ch *patch.Chunk, lines []patch.ChunkLine, lo int, abs, body string, pl *Placement) (*Placement, error) {
	old := oldTexts(lines)
	m := len(old)
	nonBlank := 0
	for _, o := range old {
		if strings.TrimSpace(o) != "" {
			nonBlank++
		}
	}
	if nonBlank < 2 {
		return nil, nil
	}
	keys := oldKeys(lines)
	places := v.indentPlaces(keys, lo, 2)
	if len(places) == 0 {
		return nil, nil
	}
	if len(places) > 1 {
		return nil, nil // the later steps name the candidates
	}
	p := places[0]
	if ch.EOF && p+m != len(v.lines) {
		return nil, nil // the chunk names the end of the file
	}
	var oldInd, fileInd []string
	for k, o := range old {
		if strings.TrimSpace(o) == "" {
			continue
		}
		f := v.lines[p+k]
		if !rungRest(o, f) {
			return nil, nil // the lines differ in more than leading whitespace
		}
		oldInd = append(oldInd, leading(o))
		fileInd = append(fileInd, leading(f))
	}
	changed := false
	for i := range oldInd {
		if oldInd[i] != fileInd[i] {
			changed = true
		}
	}
	if !changed {
		return nil, nil // not an indentation drift
	}
	maps := indentMaps(oldInd, fileInd)
	if len(maps) == 0 {
		return nil, nil
	}
	// Every mapping that explains the old lines must re-indent the added
	// lines alike.
	for _, l := range lines {
		if l.Op != patch.OpAdd {
			continue
		}
		want := maps[0].reindent(l.Text)
		for _, mp := range maps[1:] {
			if mp.reindent(l.Text) != want {
				return nil, nil
			}
		}
	}
	others, sure := v.lookalikes(keys, lo, p, p)
	if sure {
		others = v.meantRivals(lines, others, p, p, p, rivalsPlaceable)
	}
	if len(others) > 0 || !sure {
		return nil, ambiguityError(PhaseIndent, "Indentation rescue was ambiguous", abs, body, sortedStarts(p, others))
	}
	mp := maps[0]
	out := make([]PlacedLine, 0, len(lines))
	k := p
	for _, l := range lines {
		if l.Op == patch.OpAdd {
			out = append(out, PlacedLine{Op: patch.OpAdd, FileLine: -1, Text: mp.reindent(l.Text)})
			continue
		}
		out = append(out, PlacedLine{Op: l.Op, FileLine: k, Text: v.lines[k]})
		k++
	}
	pl.Start, pl.End = p, p+m
	pl.Lines = out
	pl.Strategy = StrategyIndent
	pl.Candidates = []int{p + 1}
	pl.EOFKept = ch.EOF && pl.End == len(v.lines)
	pl.Cursor = pl.End
	pl.Repairs = append(pl.Repairs, patch.Repair{Kind: patch.RepairIndentation, Line: ch.Line, Detail: mp.String()})
	return pl, nil
}

// sortedStarts returns the 1-based starts of the accepted place and its
// rivals, sorted.
func sortedStarts(accepted int, others []int) []int {
	out := []int{accepted + 1}
	for _, o := range others {
		out = append(out, o+1)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}
