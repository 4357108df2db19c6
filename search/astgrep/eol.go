package astgrep

import "bytes"

// Line-ending styles of a file.
const (
	EOLNone = "none" // no line break at all
	EOLLF   = "lf"
	EOLCRLF = "crlf"
	EOLCR   = "cr"
)

var bom = []byte("\xef\xbb\xbf")

// textStyle is what a rewrite keeps of a file: its dominant line ending,
// whether it ends with a line break, and the length of its UTF-8 byte
// order mark (0 or 3).
type textStyle struct {
	eol   string
	final bool
	bom   int
}

func styleOf(data []byte) textStyle {
	var s textStyle
	if bytes.HasPrefix(data, bom) {
		s.bom = len(bom)
	}
	var lf, crlf, cr int
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '\n':
			lf++
		case '\r':
			if i+1 < len(data) && data[i+1] == '\n' {
				crlf++
				i++
			} else {
				cr++
			}
		}
	}
	switch {
	case lf == 0 && crlf == 0 && cr == 0:
		s.eol = EOLNone
	case crlf >= lf && crlf >= cr:
		s.eol = EOLCRLF
	case cr > lf:
		s.eol = EOLCR
	default:
		s.eol = EOLLF
	}
	n := len(data)
	s.final = n > s.bom && (data[n-1] == '\n' || data[n-1] == '\r')
	return s
}

// terminator is the line break of the style ("\n" for a file without one).
func (s textStyle) terminator() string {
	switch s.eol {
	case EOLCRLF:
		return "\r\n"
	case EOLCR:
		return "\r"
	}
	return "\n"
}

// adapt gives the line breaks of a replacement the file's style: ast-grep
// joins the lines of a multi-line rewrite (and its re-indented template)
// with LF, which in a CRLF file would leave a mixed file behind. A break
// copied from the file (a captured metavariable) already has the style and
// stays as it is. In an LF file nothing changes.
func (s textStyle) adapt(repl string) string {
	switch s.eol {
	case EOLCRLF:
		var b []byte
		for i := 0; i < len(repl); i++ {
			if repl[i] == '\n' && (i == 0 || repl[i-1] != '\r') {
				b = append(b, '\r')
			}
			b = append(b, repl[i])
		}
		return string(b)
	case EOLCR:
		var b []byte
		for i := 0; i < len(repl); i++ {
			switch {
			case repl[i] == '\r' && i+1 < len(repl) && repl[i+1] == '\n':
				b = append(b, '\r')
				i++
			case repl[i] == '\n':
				b = append(b, '\r')
			default:
				b = append(b, repl[i])
			}
		}
		return string(b)
	}
	return repl
}

// endsWithBreak reports whether data ends with a line break, and how long
// that break is.
func endsWithBreak(data []byte) (bool, int) {
	n := len(data)
	switch {
	case n >= 2 && data[n-2] == '\r' && data[n-1] == '\n':
		return true, 2
	case n >= 1 && (data[n-1] == '\n' || data[n-1] == '\r'):
		return true, 1
	}
	return false, 0
}
