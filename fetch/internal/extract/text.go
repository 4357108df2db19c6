package extract

import (
	"strings"

	"golang.org/x/net/html"
)

// isBlockTag reports whether the text form sets elements named name apart
// with blank lines. A switch, not a map, so the package has nothing to
// build at start-up.
func isBlockTag(name string) bool {
	switch name {
	case "address", "article", "aside", "blockquote", "details",
		"div", "dl", "dt", "dd", "fieldset", "figcaption",
		"figure", "footer", "form", "h1", "h2", "h3", "h4",
		"h5", "h6", "header", "hr", "li", "main", "nav",
		"ol", "p", "pre", "section", "summary", "table",
		"tbody", "td", "tfoot", "th", "thead", "tr", "ul":
		return true
	}
	return false
}

// textWriter builds the text form. Line breaks are owed, not written, so
// that a run of block boundaries gives one blank line, nothing dangles at
// the ends, and no line ends in a space; only <pre> text is written as it
// is.
type textWriter struct {
	b      strings.Builder
	breaks int  // line breaks owed before the next text (at most 2)
	space  bool // a space is owed before the next word on this line
	endNL  int  // line breaks at the end of what is written (at most 2)
}

func (w *textWriter) brk(n int) {
	if n == 0 {
		return
	}
	w.space = false
	w.breaks = max(w.breaks, n)
}

// flushBreaks writes the owed line breaks, counting those already at the
// end of the text; none are written at the very start.
func (w *textWriter) flushBreaks() {
	if w.b.Len() > 0 {
		for ; w.endNL < w.breaks; w.endNL++ {
			w.b.WriteByte('\n')
		}
	}
	w.breaks = 0
}

func (w *textWriter) lineOpen() bool { return w.b.Len() > 0 && w.endNL == 0 }

func (w *textWriter) write(s string) {
	if s == "" {
		return
	}
	w.flushBreaks()
	w.b.WriteString(s)
	n := len(s) - len(strings.TrimRight(s, "\n"))
	if n == len(s) {
		w.endNL = min(w.endNL+n, 2)
	} else {
		w.endNL = min(n, 2)
	}
}

// words writes collapsed text: each run of white space becomes one space,
// and space at the start or end of a line is dropped.
func (w *textWriter) words(s string) {
	for i := 0; i < len(s); {
		if isSpaceByte(s[i]) || s[i] == '\v' {
			w.space = true
			i++
			continue
		}
		j := i
		for j < len(s) && !isSpaceByte(s[j]) && s[j] != '\v' {
			j++
		}
		if w.space && w.breaks == 0 && w.lineOpen() && !strings.HasSuffix(w.b.String(), " ") {
			w.write(" ")
		}
		w.space = false
		w.write(s[i:j])
		i = j
	}
}

func isSpaceByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
}

// renderText returns the text form of n: block elements separated by a
// blank line, list items on their own line after "- " (a list nested in an
// item continues without a blank line), <br> as a line break, <pre> kept
// as it is, white space elsewhere collapsed, and script, style, noscript
// and template skipped.
func renderText(n *html.Node) string {
	var w textWriter
	var visit func(*html.Node)
	visit = func(n *html.Node) {
		switch n.Type {
		case html.TextNode:
			w.words(n.Data)
			return
		case html.ElementNode:
		case html.DocumentNode:
		default:
			return
		}
		if n.Type == html.ElementNode {
			switch n.Data {
			case "script", "style", "noscript", "template", "head", "title":
				return
			case "br":
				w.brk(1)
				return
			case "pre":
				w.brk(2)
				w.write(textContent(n, nil))
				w.brk(2)
				return
			case "li":
				w.brk(1)
				w.write("- ")
				w.space = false
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					visit(c)
				}
				w.brk(1)
				return
			}
		}
		gap := 0
		if n.Type == html.ElementNode && isBlockTag(n.Data) {
			gap = 2
			if isElement(n, "ul", "ol") && isElement(n.Parent, "li") {
				gap = 1 // a nested list continues its item's list
			}
		}
		w.brk(gap)
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			visit(c)
		}
		w.brk(gap)
	}
	visit(n)
	return strings.TrimRight(w.b.String(), " \t\n")
}

// cleanText normalizes line ends to LF, collapses every run of three or
// more line breaks (lines holding only white space count as empty) into
// one blank line, and trims the result.
func cleanText(s string) string {
	if strings.Contains(s, "\r") {
		s = strings.ReplaceAll(s, "\r\n", "\n")
		s = strings.ReplaceAll(s, "\r", "\n")
	}
	var b strings.Builder
	b.Grow(len(s))
	var blank []string // the blank lines held back
	for line := range strings.Lines(s) {
		if strings.TrimSpace(line) == "" {
			blank = append(blank, line)
			continue
		}
		switch {
		case len(blank) == 1:
			b.WriteString(blank[0])
		case len(blank) > 1:
			b.WriteString("\n")
		}
		blank = blank[:0]
		b.WriteString(line)
	}
	return strings.TrimSpace(b.String())
}
