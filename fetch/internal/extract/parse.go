package extract

import (
	"strings"

	"golang.org/x/net/html"
)

// The HTML parser refuses a page whose elements nest deeper than 512 (it
// returns an error rather than build the tree), which a hostile or badly
// broken page (thousands of unclosed <div> or <font>) reaches easily.
// Such a page is not lost: parse retries on the same token stream with the
// start tags below flattenDepth dropped, which keeps every word and the
// outer structure, and, should even that fail, on plain paragraphs of the
// page's text.
const flattenDepth = 128

// parse parses src as an HTML document, degrading as described above.
func parse(src string) *html.Node {
	if doc, err := html.Parse(strings.NewReader(src)); err == nil {
		return doc
	}
	if doc, err := html.Parse(strings.NewReader(flatten(src, flattenDepth))); err == nil {
		return doc
	}
	doc, err := html.Parse(strings.NewReader(textOnly(src)))
	if err != nil {
		// Paragraphs of escaped text nest three deep; this cannot happen.
		return &html.Node{Type: html.DocumentNode}
	}
	return doc
}

// isVoidElement reports whether elements named name never have an end tag
// or children. A switch, not a map, so the package has nothing to build at
// start-up.
func isVoidElement(name string) bool {
	switch name {
	case "area", "base", "br", "col", "embed", "hr", "img",
		"input", "link", "meta", "source", "track", "wbr":
		return true
	}
	return false
}

// flatten re-serializes src keeping at most limit elements open at once,
// by naive nesting (each start tag opens, an end tag closes back to the
// nearest open element of its name). Start tags deeper than that, and end
// tags that close nothing open, are dropped; text, comments and void
// elements are kept.
func flatten(src string, limit int) string {
	z := html.NewTokenizer(strings.NewReader(src))
	var b strings.Builder
	b.Grow(len(src))
	var open []string
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return b.String()
		case html.StartTagToken:
			name, _ := z.TagName()
			if isVoidElement(string(name)) {
				b.Write(z.Raw())
				continue
			}
			if len(open) >= limit {
				continue
			}
			open = append(open, string(name))
			b.Write(z.Raw())
		case html.EndTagToken:
			name, _ := z.TagName()
			for i := len(open) - 1; i >= 0; i-- {
				if open[i] == string(name) {
					open = open[:i]
					b.Write(z.Raw())
					break
				}
			}
		default:
			b.Write(z.Raw())
		}
	}
}

// textOnly keeps only src's text, one escaped paragraph per run of text
// between block-level tags.
func textOnly(src string) string {
	z := html.NewTokenizer(strings.NewReader(src))
	var b, para strings.Builder
	b.WriteString("<!doctype html><html><body>")
	flush := func() {
		if t := strings.TrimSpace(para.String()); t != "" {
			b.WriteString("<p>")
			b.WriteString(html.EscapeString(t))
			b.WriteString("</p>\n")
		}
		para.Reset()
	}
	skipText := false
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			flush()
			b.WriteString("</body></html>")
			return b.String()
		case html.TextToken:
			if !skipText {
				para.Write(z.Text())
			}
			skipText = false
		case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
			name, _ := z.TagName()
			switch string(name) {
			case "script", "style", "noscript", "title", "iframe", "noembed", "noframes":
				// The tokenizer returns the content of these elements as
				// one text token, which is not page text.
				skipText = tt == html.StartTagToken
			default:
				skipText = false
			}
			if isBlockTag(string(name)) || string(name) == "br" {
				flush()
			}
		default:
			skipText = false
		}
	}
}
