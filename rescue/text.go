package rescue

import (
	"bytes"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/slimgate/slim/rescue/internal/match"
	"github.com/slimgate/slim/rescue/internal/patch"
)

// This file is the model of a file's text: lines with their own
// terminators, the dominant EOL given to new lines (the most frequent; on a
// tie the first seen; LF when there is none), the final-newline state kept
// through edits, and a UTF-8 BOM set aside, part of no line.

// maxRescueSize is the size above which only exact matching runs.
const maxRescueSize = 8 << 20

// eol is a line terminator, kept as a small code rather than a string so
// a file's terminator list holds no pointers.
type eol uint8

// Line terminators.
const (
	eolNone eol = iota // a last line without a terminator
	eolLF
	eolCRLF
	eolCR
)

var eolText = [...]string{eolNone: "", eolLF: "\n", eolCRLF: "\r\n", eolCR: "\r"}

// String returns the terminator's bytes.
func (e eol) String() string { return eolText[e] }

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// fileText is one file's content split into lines.
type fileText struct {
	bom   bool
	lines []string // without terminators
	terms []eol    // each line's terminator; eolNone only for a last line without one
	eol   eol      // dominant terminator, for new lines
	// noFinal is true when the original text was non-empty and its last
	// line had no terminator; the state is kept through edits.
	noFinal bool
	// raw is the whole text as read (BOM included) for a parsed file; the
	// lines are slices of it. Empty for a text built by edits.
	raw string
}

// errBinary reports a file that is not UTF-8 text.
type errBinary struct{}

func (errBinary) Error() string { return "binary or non-UTF-8" }

// parseText splits data into a fileText. It fails for NUL bytes and
// invalid UTF-8. The text shares data's storage: data must not be modified
// afterwards.
func parseText(data []byte) (*fileText, error) {
	t := &fileText{}
	if bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data) {
		return nil, errBinary{}
	}
	if len(data) > 0 {
		// The lines are slices of data itself rather than of a copy: data
		// is never written after it is read (snapshots and Add contents
		// are only compared, written out and modelled), so the text costs
		// no second copy of the file.
		t.raw = unsafe.String(unsafe.SliceData(data), len(data))
	}
	s := t.raw
	if strings.HasPrefix(s, string(utf8BOM)) {
		t.bom = true
		s = s[len(utf8BOM):]
	}
	if strings.IndexByte(s, '\r') < 0 {
		splitLF(t, s)
		return t, nil
	}
	n := strings.Count(s, "\n") + strings.Count(s, "\r") + 1
	t.lines = make([]string, 0, n)
	t.terms = make([]eol, 0, n)
	// counts by terminator (LF, CRLF, CR) and the order of first use, so a
	// tie goes to the terminator seen first.
	var counts [3]int
	var first []int
	for len(s) > 0 {
		// The next terminator: a lone CR before the next LF, else the LF
		// (with the CR before it, if any).
		i := strings.IndexByte(s, '\n')
		line := s
		if i >= 0 {
			line = s[:i]
		}
		kind := 0
		if j := strings.IndexByte(line, '\r'); j >= 0 && j < len(line)-1 || (j >= 0 && i < 0) {
			i, kind = j, 2 // a lone CR
		} else if j >= 0 {
			i, kind = j, 1 // CRLF
		}
		if i < 0 {
			t.lines = append(t.lines, s)
			t.terms = append(t.terms, eolNone)
			t.noFinal = true
			break
		}
		term := [3]eol{eolLF, eolCRLF, eolCR}[kind]
		t.lines = append(t.lines, s[:i])
		t.terms = append(t.terms, term)
		if counts[kind] == 0 {
			first = append(first, kind)
		}
		counts[kind]++
		s = s[i+len(term.String()):]
	}
	t.eol = eolLF
	best := 0
	for _, kind := range first {
		if counts[kind] > best {
			best, t.eol = counts[kind], [3]eol{eolLF, eolCRLF, eolCR}[kind]
		}
	}
	return t, nil
}

// splitLF fills t from s, which holds no CR: every terminator is LF.
func splitLF(t *fileText, s string) {
	n := strings.Count(s, "\n")
	if len(s) > 0 && s[len(s)-1] != '\n' {
		n++
		t.noFinal = true
	}
	t.lines = make([]string, n)
	t.terms = make([]eol, n)
	for k := 0; k < n; k++ {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			t.lines[k] = s // the last line, without a terminator
			break
		}
		t.lines[k], t.terms[k] = s[:i], eolLF
		s = s[i+1:]
	}
	t.eol = eolLF
}

// textFromAdd is the text of an added file: the lines joined with LF, plus
// one LF unless the content is empty or already ends with LF, as the host
// writes it.
func textFromAdd(lines []string) []byte {
	s := strings.Join(lines, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return []byte(s)
}

// bytes renders the text.
func (t *fileText) bytes() []byte {
	size := 3
	for i, l := range t.lines {
		size += len(l) + len(t.terms[i].String())
	}
	b := bytes.NewBuffer(make([]byte, 0, size)) // never nil: nil means "no file"
	if t.bom {
		b.Write(utf8BOM)
	}
	for i, l := range t.lines {
		b.WriteString(l)
		b.WriteString(t.terms[i].String())
	}
	if b.Len() == 0 {
		return []byte{}
	}
	return b.Bytes()
}

// eolName names an EOL for JSON.
func eolName(e eol) string {
	switch e {
	case eolCRLF:
		return "crlf"
	case eolCR:
		return "cr"
	}
	return "lf"
}

// finalNewline reports whether the text ends with a terminator.
func (t *fileText) finalNewline() bool {
	return len(t.lines) > 0 && t.terms[len(t.terms)-1] != eolNone
}

// applyPlacements returns the text after replacing each placement's region
// [Start, End) by its context lines (the file's bytes and terminators) and
// its added lines (authored bytes, dominant EOL). Placements must be sorted
// and must not overlap.
func (t *fileText) applyPlacements(pls []*match.Placement) *fileText {
	size := len(t.lines)
	for _, pl := range pls {
		size += len(pl.Lines)
	}
	out := &fileText{bom: t.bom, eol: t.eol, noFinal: t.noFinal,
		lines: make([]string, 0, size), terms: make([]eol, 0, size)}
	pos := 0
	keep := func(i int) {
		out.lines = append(out.lines, t.lines[i])
		out.terms = append(out.terms, t.terms[i])
	}
	// keepRun copies the untouched lines [a, b) in one move.
	keepRun := func(a, b int) {
		if a < b {
			out.lines = append(out.lines, t.lines[a:b]...)
			out.terms = append(out.terms, t.terms[a:b]...)
		}
	}
	for _, pl := range pls {
		keepRun(pos, pl.Start)
		for _, l := range pl.Lines {
			switch l.Op {
			case patch.OpContext:
				keep(l.FileLine)
			case patch.OpAdd:
				out.lines = append(out.lines, l.Text)
				out.terms = append(out.terms, t.eol)
			}
		}
		pos = pl.End
	}
	keepRun(pos, len(t.lines))
	out.fixTerms()
	return out
}

// fixTerms keeps the final-newline state: every line but the last ends with
// a terminator; the last one has none only when the original had none.
func (t *fileText) fixTerms() {
	n := len(t.lines)
	for i := 0; i < n-1; i++ {
		if t.terms[i] == eolNone {
			t.terms[i] = t.eol
		}
	}
	if n == 0 {
		return
	}
	if t.noFinal {
		t.terms[n-1] = eolNone
	} else if t.terms[n-1] == eolNone {
		t.terms[n-1] = t.eol
	}
}

// sameAs reports whether t and o have the same BOM, lines and
// terminators, so the same bytes. Lines that share their storage compare
// in constant time.
func (t *fileText) sameAs(o *fileText) bool {
	if t.bom != o.bom || len(t.lines) != len(o.lines) {
		return false
	}
	for i := range t.lines {
		if t.lines[i] != o.lines[i] || t.terms[i] != o.terms[i] {
			return false
		}
	}
	return true
}
