// Package extract turns a decoded page into what slim fetch returns: the
// main content as markdown, as text and as HTML, plus the page's title,
// canonical URL, headings, word count and quality signals.
//
// HTML goes through these steps:
//
//  1. The page is parsed once (golang.org/x/net/html). The title,
//     canonical link and headings are read from this intact tree.
//  2. With main-content extraction on, the tree is cleaned of permalink
//     markers ("¶", "§", "#" next to headings) and navigation and handed
//     to Readability (codeberg.org/readeck/go-readability), with classes
//     kept so that a code block's language-* class survives. Readability
//     turns the article's h1 into h2; the levels are put back. Pages that
//     look like technical documentation and mark their main content get
//     the landmark rule (main.go): Readability reads only that element,
//     and the element itself is used when Readability drops too much of
//     it. Documentation, with short sections, signatures, tables and
//     code, is where Readability loses the most.
//  3. The chosen content is rendered three ways: markdown
//     (github.com/JohannesKaufmann/html-to-markdown: links and images made
//     absolute against the page URL, GFM tables, fences with their
//     language, "<" and ">" in prose left alone, then CleanMarkdown), a
//     structured text form, and HTML. Without extraction, or when it finds
//     nothing, the whole <body> is rendered and the HTML form is the page
//     as given.
//
// The work is bounded: a page nested deeper than the parser accepts is
// flattened rather than refused, and pages beyond fixed sizes in tags,
// elements or text are rendered more simply (large.go), so that no input
// takes more than a fraction of a second or memory out of proportion to
// its size.
package extract

import (
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/slimgate/slim/internal/kinderr"
	"golang.org/x/net/html"
)

// Page is one extracted page.
type Page struct {
	Title     string   // Readability's title if non-empty, else the document's <title>; "" for text
	Canonical string   // HTML: the first link rel=canonical, made absolute; text: the url: of leading front matter; else ""
	Headings  []string // h1-h3 of the whole original document, cleaned, at most 12 (else the markdown's # lines)
	HTML      string   // the article HTML when extracted, else the page exactly as given
	Markdown  string   // cleaned markdown of the article (or of <body> when not extracted)
	Text      string   // structured text of the article (or of <body>)
	Extracted bool     // main-content extraction produced non-empty content
	WordCount int      // white-space separated words of Text
	Signals   []string // quality signals (Signal* constants), never nil
}

// Kind classifies an Error.
type Kind string

// Internal is the only kind: a page is never refused for its content, so
// an Error is a failure of the converter itself.
const Internal Kind = "internal"

// Stable codes of an Error.
const (
	CodeMarkdown = "markdown_conversion_failed"
)

// Error is every error the package returns.
//
// Its fields are Kind, Code (a stable code from the list above), Message
// and Err, the cause.
type Error = kinderr.Error[Kind]

// AsError returns the *Error in err's chain, if any.
func AsError(err error) (*Error, bool) { return kinderr.As[Kind](err) }

// HTML extracts a page from src, a decoded HTML document (invalid UTF-8
// is replaced, so the page's HTML form may differ from src there). base is the
// page's final URL (relative links, images and the canonical link are
// resolved against it; nil leaves them as they are). extractMain turns on
// main-content extraction.
func HTML(src string, base *url.URL, extractMain bool) (*Page, error) {
	src = validUTF8(src)
	if strings.Count(src, "<") > maxTags {
		return tokenPage(src, base), nil
	}
	doc := parse(src)
	meta := findMetaElements(doc)
	base = documentBase(meta.base, base)
	p := &Page{
		Title:     documentTitle(meta.title),
		Canonical: canonicalLink(meta.canonical, base),
		Headings:  pageHeadings(doc),
	}
	jsRendered := likelyJSRendered(doc)
	large := tooLarge(doc)
	simplified := false

	var node *html.Node
	if extractMain {
		var c *content
		if large {
			c = landmarkContent(doc, base)
			simplified = true
		} else {
			c = mainContent(doc, base)
		}
		if c != nil {
			node = c.node
			p.Extracted = true
			if c.title != "" {
				p.Title = c.title
			}
			p.HTML = renderHTML(node, len(src))
		}
	}
	if node == nil {
		if extractMain && !large {
			doc = parse(src) // extraction changed the tree
		}
		node = findFirst(doc, func(n *html.Node) bool { return isElement(n, "body") })
		if node == nil {
			node = doc
		}
		removePermalinks(node)
		p.HTML = src
	}
	p.Text = renderText(node)
	if tooLarge(node) {
		p.Markdown = CleanMarkdown(p.Text)
		simplified = true
	} else {
		md, err := toMarkdown(node, base)
		if err != nil {
			return nil, markdownError(err)
		}
		p.Markdown = md
	}

	if len(p.Headings) == 0 {
		p.Headings = MarkdownHeadings(p.Markdown)
	}
	p.WordCount = countFields(p.Text)
	p.Signals = Signals(p.Text, p.Markdown, len(src), true, p.Extracted, p.WordCount)
	if jsRendered {
		p.Signals = append(p.Signals, SignalJSRendered)
	}
	if simplified {
		p.Signals = append(p.Signals, SignalSimplified)
	}
	return p, nil
}

func markdownError(err error) *Error {
	return &Error{Kind: Internal, Code: CodeMarkdown, Message: fmt.Sprintf("converting the page to markdown failed: %v", err), Err: err}
}

// Text extracts a page from a text source (plain text, markdown, llms.txt).
// Its Markdown, Text and HTML all hold the cleaned text (line ends made LF,
// runs of three or more line breaks reduced to two, trimmed); Markdown
// also goes through CleanMarkdown. Headings come from the markdown's "#"
// lines and Canonical from a leading front matter's url: field. There is
// no title.
func Text(src string) *Page {
	src = validUTF8(src)
	clean := cleanText(src)
	p := &Page{
		HTML:     clean,
		Text:     clean,
		Markdown: CleanMarkdown(clean),
	}
	p.Headings = MarkdownHeadings(p.Markdown)
	p.Canonical = FrontmatterURL(clean)
	p.WordCount = countFields(p.Text)
	p.Signals = Signals(p.Text, p.Markdown, len(src), false, false, p.WordCount)
	return p
}

// validUTF8 replaces invalid bytes with U+FFFD. Callers pass decoded
// text, so this costs one scan; it guarantees that every output is valid
// UTF-8 whatever the input.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// metaElements are the elements of a page that say what it is rather
// than hold its content: the first <base href>, <title> and <link
// rel=canonical href> of the document, wherever they are.
type metaElements struct {
	base, title, canonical *html.Node
}

// findMetaElements finds them in one walk, which stops once all three are
// found (on most pages all or none are in the head; a page with no <base>
// is walked to its end).
func findMetaElements(doc *html.Node) metaElements {
	var m metaElements
	walk(doc, func(n *html.Node) bool {
		if m.base != nil && m.title != nil && m.canonical != nil {
			return false
		}
		if n.Type != html.ElementNode {
			return true
		}
		switch {
		case m.base == nil && isElement(n, "base") && hasAttr(n, "href"):
			m.base = n
		case m.title == nil && isElement(n, "title"):
			m.title = n
		case m.canonical == nil && isElement(n, "link") && relTokens(attr(n, "rel"), "canonical") && strings.TrimSpace(attr(n, "href")) != "":
			m.canonical = n
		}
		return true
	})
	return m
}

// documentBase returns the URL relative references resolve against: base,
// or the href of b, the first <base href>, resolved against it.
func documentBase(b *html.Node, base *url.URL) *url.URL {
	if b == nil {
		return base
	}
	ref, err := url.Parse(strings.TrimSpace(attr(b, "href")))
	if err != nil {
		return base
	}
	if base != nil {
		ref = base.ResolveReference(ref)
	}
	if !ref.IsAbs() {
		return base
	}
	return ref
}

// documentTitle is the collapsed text of t, the first <title>.
func documentTitle(t *html.Node) string {
	if t == nil {
		return ""
	}
	return collapseSpace(textOfRaw(t))
}

// canonicalLink returns the href of l, the first link rel=canonical,
// resolved against base, or "".
func canonicalLink(l *html.Node, base *url.URL) string {
	if l == nil {
		return ""
	}
	return resolve(strings.TrimSpace(attr(l, "href")), base)
}

// renderHTML serializes n, a part of a page of pageSize bytes. The
// buffer starts at the page's size, which the part seldom exceeds: grown
// by appending, it allocated about five times the result for a large page
// (Go grows a large buffer by a quarter at a time), and fresh memory is
// what a one-page process pays most for. A result much smaller than the
// page is copied out, so as not to keep the page-sized buffer.
func renderHTML(n *html.Node, pageSize int) string {
	var b strings.Builder
	b.Grow(pageSize)
	if err := html.Render(&b, n); err != nil {
		// Rendering to a strings.Builder fails only on a malformed tree.
		return ""
	}
	if b.Len() < b.Cap()/4 {
		return strings.Clone(b.String())
	}
	return b.String()
}
