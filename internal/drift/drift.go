package drift

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Kind names one way the file on disk differs from the text the patch author
// read.
type Kind string

// The drift kinds.
const (
	None            Kind = "none"             // no drift: the control
	CurlyInFile     Kind = "curly-in-file"    // straight quotes became curly in a context or removed line
	CurlyInPatch    Kind = "curly-in-patch"   // the author's copy had curly quotes where the file has straight ones
	TrailingSpaces  Kind = "trailing-spaces"  // trailing blanks added to context or removed lines
	TabsToSpaces    Kind = "tabs-to-spaces"   // leading tabs of context or removed lines became spaces
	CRLF            Kind = "crlf"             // the whole file was converted to CRLF
	NoFinalNewline  Kind = "no-final-newline" // the final newline was dropped
	ChangedContext  Kind = "changed-context"  // one context line was edited by someone else
	DuplicatedBlock Kind = "duplicated-block" // the chunk's old lines now occur twice
	RewrittenRegion Kind = "rewritten-region" // every removed line was rewritten by someone else
	BOM             Kind = "bom"              // a UTF-8 byte order mark was added at the start
	MixedEOL        Kind = "mixed-eol"        // the chunk's lines got CRLF in an otherwise LF file
	Reindented      Kind = "reindented"       // one mapping of leading whitespace changed every line of the chunk
	EditedEdge      Kind = "edited-edge"      // the chunk's first or last context line was edited by someone else
	AlreadyApplied  Kind = "already-applied"  // the edit is already in the file
)

// Kinds lists every drift kind in report order.
var Kinds = []Kind{None, CurlyInFile, CurlyInPatch, TrailingSpaces, TabsToSpaces, CRLF,
	NoFinalNewline, ChangedContext, DuplicatedBlock, RewrittenRegion, BOM, MixedEOL,
	Reindented, EditedEdge, AlreadyApplied}

// Want is the outcome a case requires. Either means both outcomes are
// acceptable (the two-outcome property still applies: a correct apply or a
// refusal that changed nothing).
type Want int

const (
	Either Want = iota
	MustApply
	MustRefuse
)

func (w Want) String() string {
	switch w {
	case MustApply:
		return "apply"
	case MustRefuse:
		return "refuse"
	default:
		return "either"
	}
}

// Case is one generated test case.
type Case struct {
	Kind    Kind
	variant int // which drift of the kind (Reindented)
	Header  Header
	Path    string // slash-separated path used in the patch
	Orig    []Line // the file before the drift
	View    []Line // what the patch author read
	Disk    []Line // what is on disk when the patch is applied
	Edit    Edit   // in View coordinates
	Patch   Patch
	// DiskStart is Edit.Start in Disk coordinates.
	DiskStart int
	// DiskAdd holds the added lines as a correct apply writes them, when
	// they differ from the authored Edit.Add: a chunk placed through a
	// mapping of leading whitespace re-indents its added lines through it.
	DiskAdd []string
	// Done is set when Disk already holds the edit: a correct apply leaves
	// the file as it is.
	Done bool
	Want Want
	Why  string // why Want is what it is
}

// diskAdd returns the added lines a correct apply writes.
func (c *Case) diskAdd() []string {
	if c.DiskAdd != nil {
		return c.DiskAdd
	}
	return c.Edit.Add
}

// Expected returns the bytes a correct apply must leave on disk. A UTF-8
// BOM is set aside and restored: it is part of no line.
func (c *Case) Expected() []byte {
	if c.Done {
		return Join(c.Disk)
	}
	disk := c.Disk
	if len(disk) > 0 && strings.HasPrefix(disk[0].Text, bom) {
		disk = Clone(disk)
		disk[0].Text = strings.TrimPrefix(disk[0].Text, bom)
		return append([]byte(bom), Apply(disk, c.DiskStart, c.Edit.Del, c.diskAdd())...)
	}
	return Apply(disk, c.DiskStart, c.Edit.Del, c.diskAdd())
}

const bom = "\ufeff"

// DiskBytes returns the drifted file.
func (c *Case) DiskBytes() []byte { return Join(c.Disk) }

// String describes the case for a failure message.
func (c *Case) String() string {
	return fmt.Sprintf("%s %s header=%s edit{start=%d del=%d add=%d} diskStart=%d want=%s (%s)",
		c.Path, c.Kind, c.Header, c.Edit.Start+1, c.Edit.Del, len(c.Edit.Add), c.DiskStart+1, c.Want, c.Why)
}

// NewCase makes a case of the given kind from orig (at least 8 lines). The
// chunk's old lines occur once in the author's text, even by CoarseKey. It
// returns false when no such case is found after a few attempts (no quotes,
// no tab indentation, only repeated blocks, ...).
func NewCase(r *rand.Rand, kind Kind, path string, orig []Line) (*Case, bool) {
	if len(orig) < 8 {
		return nil, false
	}
	for attempt := 0; attempt < 12; attempt++ {
		c := &Case{Kind: kind, Path: path, Orig: orig, Header: Header(r.IntN(3))}
		switch {
		case kind == NoFinalNewline && r.IntN(2) == 0:
			c.Edit = EditNear(r, orig, 3)
		default:
			c.Edit = RandomEdit(r, orig)
		}
		if kind == RewrittenRegion && c.Edit.Del == 0 {
			continue
		}
		if kind == Reindented {
			c.variant = r.IntN(4)
		}
		if c.build(r) {
			return c, true
		}
	}
	return nil, false
}

// build derives View, Patch, Disk, DiskStart and Want; false when the drift
// does not apply to this edit.
func (c *Case) build(r *rand.Rand) bool {
	c.View = c.Orig
	if c.Kind == CurlyInPatch {
		span := spanOf(len(c.Orig), c.Edit, 3)
		c.View = Clone(c.Orig)
		if !pickAndChange(r, c.View, span, hasQuote, Curl) {
			return false
		}
	}
	if c.Kind == Reindented && c.variant == reindentPatchSpaces {
		// The author's copy had four spaces for each leading tab, in the
		// lines they copied and the lines they wrote; the file keeps its
		// tabs, so the added lines go in with tabs.
		span := spanOf(len(c.Orig), c.Edit, 3)
		c.View = Clone(c.Orig)
		changed := false
		for i := span[0]; i < span[1]; i++ {
			if t := tabsToSpaces(c.View[i].Text); t != c.View[i].Text {
				c.View[i].Text = t
				changed = true
			}
		}
		if !changed {
			return false
		}
		c.DiskAdd = c.Edit.Add
		c.Edit.Add = mapLines(c.Edit.Add, tabsToSpaces)
	}
	c.Patch = WritePatch(c.Path, c.View, c.Edit, 3, c.Header)
	// The author's patch must name one place in the text they read:
	// otherwise applying it at another copy would be right too, and the
	// expected bytes would not follow from the edit's position.
	if countBlock(c.View, Texts(c.View[c.Patch.OldStart:c.Patch.OldEnd])) != 1 {
		return false
	}
	c.Disk = Clone(c.Orig)
	c.DiskStart = c.Edit.Start
	os, oe := c.Patch.OldStart, c.Patch.OldEnd
	span := [2]int{os, oe}
	switch c.Kind {
	case None, CurlyInPatch:
	case CurlyInFile:
		if !pickAndChange(r, c.Disk, span, hasQuote, Curl) {
			return false
		}
	case TrailingSpaces:
		blanks := []string{" ", "  ", "\t", " \t", "    "}
		if !pickAndChange(r, c.Disk, span, func(string) bool { return true }, func(s string) string {
			return s + blanks[r.IntN(len(blanks))]
		}) {
			return false
		}
	case TabsToSpaces:
		if !pickAndChange(r, c.Disk, span, func(s string) bool { return strings.HasPrefix(s, "\t") }, tabsToSpaces) {
			return false
		}
		// When every tab-indented line of the chunk changed, one mapping
		// (a tab to four spaces) covers the chunk, and the added lines
		// follow it.
		all := true
		for i := os; i < oe; i++ {
			if strings.HasPrefix(c.Disk[i].Text, "\t") {
				all = false
			}
		}
		if all && nonBlank(Texts(c.View[os:oe])) >= 2 {
			c.DiskAdd = mapLines(c.Edit.Add, tabsToSpaces)
		}
	case CRLF:
		for i := range c.Disk {
			if c.Disk[i].EOL == "\n" {
				c.Disk[i].EOL = "\r\n"
			}
		}
	case BOM:
		if strings.HasPrefix(c.Disk[0].Text, bom) {
			return false
		}
		c.Disk[0].Text = bom + c.Disk[0].Text
	case MixedEOL:
		for i := os; i < oe; i++ {
			if c.Disk[i].EOL == "\n" {
				c.Disk[i].EOL = "\r\n"
			}
		}
		if DominantEOL(c.Disk) != "\n" {
			return false // a short file: CRLF would become dominant
		}
	case NoFinalNewline:
		last := len(c.Disk) - 1
		if c.Disk[last].EOL == "" {
			return false
		}
		c.Disk[last].EOL = ""
	case ChangedContext:
		var ctx []int
		for i := os; i < oe; i++ {
			if i < c.Edit.Start || i >= c.Edit.Start+c.Edit.Del {
				ctx = append(ctx, i)
			}
		}
		if len(ctx) == 0 {
			return false
		}
		i := ctx[r.IntN(len(ctx))]
		c.Disk[i].Text = indentOf(c.Disk[i].Text) + fmt.Sprintf("changedBySomeoneElse(%d) // was: %s",
			r.IntN(1_000_000), strings.TrimSpace(c.Disk[i].Text))
	case RewrittenRegion:
		for i := c.Edit.Start; i < c.Edit.Start+c.Edit.Del; i++ {
			c.Disk[i].Text = indentOf(c.Disk[i].Text) + fmt.Sprintf("rewrittenBySomeoneElse(%d)", r.IntN(1_000_000))
		}
		c.Want, c.Why = MustRefuse, "every removed line changed since the author read it"
		return true
	case DuplicatedBlock:
		return c.duplicate(r)
	case Reindented:
		return c.reindent(r)
	case EditedEdge:
		return c.editEdge(r)
	case AlreadyApplied:
		return c.alreadyApplied()
	default:
		panic("drift: unknown kind " + string(c.Kind))
	}
	switch c.Kind {
	case None, CurlyInFile, CurlyInPatch, TrailingSpaces, CRLF, NoFinalNewline, BOM, MixedEOL:
		// Every old line matches its disk line on a seek rung (exact,
		// unicode, trim-end, unicode-trim-end). If no other place agrees
		// even by a much coarser key, that is the one candidate.
		switch {
		case c.Patch.EOF:
			c.Want, c.Why = MustApply, "seek rung match pinned by End of File"
		case countBlock(c.Disk, Texts(c.View[os:oe])) == 1:
			c.Want, c.Why = MustApply, "seek rung match, unique by coarse key"
		default:
			c.Why = "old lines not unique by coarse key"
		}
	default:
		c.Why = "rescue may or may not accept"
	}
	return true
}

// duplicate inserts a copy of the chunk's old lines elsewhere in Disk.
func (c *Case) duplicate(r *rand.Rand) bool {
	os, oe := c.Patch.OldStart, c.Patch.OldEnd
	n := len(c.Disk)
	// Insertion points outside the old lines: [0, os] or [oe, n]. A chunk
	// pinned by End of File gets its copy before it, since a copy at the
	// end would be the pinned place.
	var points []int
	for b := 0; b <= os; b++ {
		points = append(points, b)
	}
	if !c.Patch.EOF {
		for b := oe; b <= n; b++ {
			if b == n && c.Disk[n-1].EOL == "" {
				continue
			}
			points = append(points, b)
		}
	}
	b := points[r.IntN(len(points))]
	block := Clone(c.Disk[os:oe])
	if block[len(block)-1].EOL == "" {
		block[len(block)-1].EOL = "\n"
	}
	c.Disk = append(append(append([]Line(nil), c.Disk[:b]...), block...), c.Disk[b:]...)
	if b <= os {
		c.DiskStart += len(block)
	}
	switch {
	case c.Patch.EOF:
		c.Want, c.Why = Either, "copy before a chunk pinned by End of File"
	case c.Patch.Scope >= 0 && b <= c.Patch.Scope:
		c.Want, c.Why = Either, "copy above the @@ scope line"
	default:
		c.Want, c.Why = MustRefuse, "two copies of the old lines in the search window"
	}
	return true
}

// spanOf returns the old-line span [start, end) of a chunk for e.
func spanOf(n int, e Edit, ctx int) [2]int {
	return [2]int{max(0, e.Start-ctx), min(n, e.Start+e.Del+ctx)}
}

// pickAndChange changes a random non-empty subset of the lines in span that
// satisfy ok; false when none does.
func pickAndChange(r *rand.Rand, lines []Line, span [2]int, ok func(string) bool, change func(string) string) bool {
	var idx []int
	for i := span[0]; i < span[1]; i++ {
		if ok(lines[i].Text) {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return false
	}
	r.Shuffle(len(idx), func(a, b int) { idx[a], idx[b] = idx[b], idx[a] })
	k := 1 + r.IntN(len(idx))
	for _, i := range idx[:k] {
		lines[i].Text = change(lines[i].Text)
	}
	return true
}

func hasQuote(s string) bool { return strings.ContainsAny(s, `"'`) }

// Curl turns straight quotes into typographic ones, opening and closing in
// turn, the way word processors and some chat front ends do.
func Curl(s string) string {
	var b strings.Builder
	dOpen, sOpen := true, true
	for _, c := range s {
		switch c {
		case '"':
			if dOpen {
				b.WriteRune('\u201C')
			} else {
				b.WriteRune('\u201D')
			}
			dOpen = !dOpen
		case '\'':
			if sOpen {
				b.WriteRune('\u2018')
			} else {
				b.WriteRune('\u2019')
			}
			sOpen = !sOpen
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}

func tabsToSpaces(s string) string {
	rest := strings.TrimLeft(s, "\t")
	return strings.Repeat("    ", len(s)-len(rest)) + rest
}

func indentOf(s string) string {
	return s[:len(s)-len(strings.TrimLeft(s, " \t"))]
}

// CoarseKey keeps only the ASCII letters and digits of the compatibility
// decomposition of s. Two lines that agree on any seek rung (exact, unicode
// fold, trim-end, NFC) agree on this key, so a block that occurs once by this
// key has at most one seek candidate.
func CoarseKey(s string) string {
	var b strings.Builder
	for _, c := range norm.NFKD.String(s) {
		if c < unicode.MaxASCII && (unicode.IsLetter(c) || unicode.IsDigit(c)) {
			b.WriteRune(c)
		}
	}
	return b.String()
}

// countBlock counts the places where old occurs in lines by CoarseKey.
func countBlock(lines []Line, old []string) int {
	if len(old) == 0 || len(old) > len(lines) {
		return 0
	}
	keys := make([]string, len(lines))
	for i, l := range lines {
		keys[i] = CoarseKey(l.Text)
	}
	want := make([]string, len(old))
	for i, o := range old {
		want[i] = CoarseKey(o)
	}
	n := 0
	for p := 0; p+len(want) <= len(keys); p++ {
		match := true
		for i, w := range want {
			if keys[p+i] != w {
				match = false
				break
			}
		}
		if match {
			n++
		}
	}
	return n
}
