// Package drift builds test cases for package rescue from real text files:
// a random line edit, the Codex patch its author would have written against
// the file they read, a drift of the file on disk (the kinds of change that
// editors, formatters and other agents make between reading and patching),
// and the exact bytes a correct apply must produce on the drifted file.
//
// It knows nothing about how rescue matches; the expected bytes follow only
// from the edit's line positions and the byte discipline every apply must
// keep: untouched lines keep their bytes and terminators, added lines take
// the file's dominant EOL, the final-newline state is kept. That
// independence is what makes it useful as an oracle. It also builds the
// large inputs of the rescue benchmarks (NewBenchCase).
package drift

import "strings"

// Line is one line of a text: its content and its terminator ("\n", "\r\n",
// "\r", or "" for a last line without one).
type Line struct {
	Text string
	EOL  string
}

// Split cuts b into lines. LF, CRLF and a lone CR each end a line; a final
// line without a terminator gets EOL "". An empty text has zero lines.
func Split(b []byte) []Line {
	s := string(b)
	var out []Line
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\n':
			out = append(out, Line{s[start:i], "\n"})
			start = i + 1
		case '\r':
			if i+1 < len(s) && s[i+1] == '\n' {
				out = append(out, Line{s[start:i], "\r\n"})
				i++
			} else {
				out = append(out, Line{s[start:i], "\r"})
			}
			start = i + 1
		}
	}
	if start < len(s) {
		out = append(out, Line{s[start:], ""})
	}
	return out
}

// Join is the inverse of Split.
func Join(lines []Line) []byte {
	n := 0
	for _, l := range lines {
		n += len(l.Text) + len(l.EOL)
	}
	var b strings.Builder
	b.Grow(n)
	for _, l := range lines {
		b.WriteString(l.Text)
		b.WriteString(l.EOL)
	}
	return []byte(b.String())
}

// Texts returns the contents of lines without terminators.
func Texts(lines []Line) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l.Text
	}
	return out
}

// Clone copies lines so that a drift can change them.
func Clone(lines []Line) []Line {
	return append([]Line(nil), lines...)
}

// DominantEOL is the terminator that occurs most often; on a tie the one met
// first wins; with no terminator at all it is LF, the terminator new lines
// get in a file that has none yet.
func DominantEOL(lines []Line) string {
	count := map[string]int{}
	var order []string
	for _, l := range lines {
		if l.EOL == "" {
			continue
		}
		if count[l.EOL] == 0 {
			order = append(order, l.EOL)
		}
		count[l.EOL]++
	}
	best := "\n"
	for i, eol := range order {
		if i == 0 || count[eol] > count[best] {
			best = eol
		}
	}
	return best
}

// Apply returns the text a correct apply must produce when file lines
// [start, start+del) of disk are replaced by add. See ApplyAll.
func Apply(disk []Line, start, del int, add []string) []byte {
	return ApplyAll(disk, []Edit{{Start: start, Del: del, Add: add}})
}

// ApplyAll returns the text a correct apply must produce when every edit
// (in disk coordinates, sorted, not overlapping) is made to disk:
//   - every untouched line keeps its content and its terminator;
//   - added lines carry the authored content and disk's dominant EOL;
//   - the final-newline state of disk is kept, which may change only the
//     terminator of the line that stops or starts being the last one;
//   - text written into an empty file ends with LF.
func ApplyAll(disk []Line, edits []Edit) []byte {
	eol := DominantEOL(disk)
	out := make([]Line, 0, len(disk))
	at := 0
	for _, e := range edits {
		out = append(out, disk[at:e.Start]...)
		for _, a := range e.Add {
			out = append(out, Line{a, eol})
		}
		at = e.Start + e.Del
	}
	out = append(out, disk[at:]...)
	if len(out) == 0 {
		return nil
	}
	finalNewline := len(disk) == 0 || disk[len(disk)-1].EOL != ""
	for i := range out {
		last := i == len(out)-1
		switch {
		case last && !finalNewline:
			out[i].EOL = ""
		case out[i].EOL == "":
			out[i].EOL = eol
		}
	}
	return Join(out)
}
