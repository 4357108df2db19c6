package extract

import (
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
)

// Work bounds. Readability and the markdown converter cost a few
// microseconds per element and more per kilobyte of text, and building
// the tree costs about one microsecond per element; a page made of
// millions of tiny elements, or simply megabytes of dense text, would take
// seconds. Pages beyond these sizes are rendered more simply instead, and
// carry SignalSimplified:
//
//   - a page with more than maxTags tags (counted as '<' characters, an
//     upper bound found in a millisecond) is never built into a tree: one
//     pass of the tokenizer gives its text, title, canonical link and
//     headings, and the markdown form is that text;
//   - a tree with more than maxElements elements or maxTextBytes of text
//     skips Readability (the page's landmark, when it has a plausible one,
//     is the main content; otherwise the body), and a chosen part over
//     either bound gets its text as its markdown form.
//
// Real documentation pages stay well below: a 400 KB API reference page
// has about 9,000 elements and 130 KB of text.
const (
	maxTags      = 250_000
	maxElements  = 40_000
	maxTextBytes = 1 << 20
)

// tooLarge reports whether the tree below n exceeds maxElements elements
// or maxTextBytes of text (script and style text not counted). It stops
// counting as soon as it knows.
func tooLarge(n *html.Node) bool {
	elements, text := 0, 0
	over := false
	walk(n, func(x *html.Node) bool {
		if over {
			return false
		}
		switch x.Type {
		case html.ElementNode:
			elements++
			if isElement(x, "script", "style") {
				return false
			}
		case html.TextNode:
			text += len(x.Data)
		}
		over = elements > maxElements || text > maxTextBytes
		return !over
	})
	return over
}

// tokenPage extracts a page too large to build a tree for, in one pass of
// the tokenizer.
func tokenPage(src string, base *url.URL) *Page {
	z := html.NewTokenizer(strings.NewReader(src))
	var w textWriter
	var title, canonical, baseHref strings.Builder
	var heading strings.Builder
	var headings []string
	var haveTitle, haveCanonical, haveBase bool
	inTitle, inHeading, skip, pre := false, "", "", 0
	var nameBuf [16]byte
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			break
		}
		switch tt {
		case html.TextToken:
			text := string(z.Text())
			switch {
			case skip != "":
			case inTitle:
				title.WriteString(text)
			default:
				if pre > 0 {
					w.write(text)
				} else {
					w.words(text)
				}
				if inHeading != "" {
					heading.WriteString(text)
				}
			}
		case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
			// The tokenizer's TagName copies every name; reading it from
			// the raw token does not, which matters on pages of millions
			// of tags.
			name := rawTagName(z.Raw(), nameBuf[:0])
			tag := internTag(name)
			block := isBlockTag(string(name))
			start := tt != html.EndTagToken
			if skip != "" {
				if !start && tag != "" && tag == skip {
					skip = ""
				}
				continue
			}
			var attrs map[string]string
			if start && (tag == "link" || tag == "base") {
				attrs = map[string]string{}
				for {
					k, v, more := z.TagAttr()
					if _, seen := attrs[string(k)]; !seen {
						attrs[string(k)] = string(v)
					}
					if !more {
						break
					}
				}
			}
			switch tag {
			case "script", "style", "noscript", "template", "textarea", "iframe", "noembed", "noframes", "xmp":
				if start && tt != html.SelfClosingTagToken {
					skip = tag
				}
				continue
			case "title":
				if start && !haveTitle {
					inTitle = true
				} else if !start && inTitle {
					inTitle, haveTitle = false, true
				}
				continue
			case "link":
				if !haveCanonical && relTokens(attrs["rel"], "canonical") && strings.TrimSpace(attrs["href"]) != "" {
					canonical.WriteString(strings.TrimSpace(attrs["href"]))
					haveCanonical = true
				}
				continue
			case "base":
				if !haveBase && strings.TrimSpace(attrs["href"]) != "" {
					baseHref.WriteString(strings.TrimSpace(attrs["href"]))
					haveBase = true
				}
				continue
			case "br":
				w.brk(1)
				continue
			case "pre":
				if start {
					pre++
				} else if pre > 0 {
					pre--
				}
			case "li":
				if start {
					w.brk(1)
					w.write("- ")
					w.space = false
				}
				continue
			case "h1", "h2", "h3":
				if start && inHeading == "" && len(headings) < maxHeadings {
					inHeading = tag
					heading.Reset()
				} else if !start && tag == inHeading {
					if h := cleanHeading(heading.String()); h != "" {
						headings = append(headings, h)
					}
					inHeading = ""
				}
			}
			if block {
				w.brk(2)
			}
		}
	}
	if haveBase {
		if ref, err := url.Parse(baseHref.String()); err == nil {
			if base != nil {
				ref = base.ResolveReference(ref)
			}
			if ref.IsAbs() {
				base = ref
			}
		}
	}
	text := strings.TrimRight(w.b.String(), " \t\n")
	p := &Page{
		Title:    collapseSpace(title.String()),
		Headings: headings,
		HTML:     src,
		Text:     text,
		Markdown: CleanMarkdown(text),
	}
	if haveCanonical {
		p.Canonical = resolve(canonical.String(), base)
	}
	if len(p.Headings) == 0 {
		p.Headings = MarkdownHeadings(p.Markdown)
	}
	p.WordCount = countFields(p.Text)
	p.Signals = append(Signals(p.Text, p.Markdown, len(src), true, false, p.WordCount), SignalSimplified)
	return p
}

// rawTagName returns the lowercased name of the tag whose raw bytes are
// raw ("<a href=x>", "</A>"), appended to buf. Names longer than buf's
// capacity are cut, which is harmless: no name this package looks for is
// that long.
func rawTagName(raw, buf []byte) []byte {
	i := 1
	if i < len(raw) && raw[i] == '/' {
		i++
	}
	for ; i < len(raw) && len(buf) < cap(buf); i++ {
		c := raw[i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '/' || c == '>' {
			break
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf = append(buf, c)
	}
	return buf
}

// internTag returns name as a string for the names the token pass acts
// on, without allocating, and "" for any other.
func internTag(name []byte) string {
	switch string(name) {
	case "script":
		return "script"
	case "style":
		return "style"
	case "noscript":
		return "noscript"
	case "template":
		return "template"
	case "textarea":
		return "textarea"
	case "iframe":
		return "iframe"
	case "noembed":
		return "noembed"
	case "noframes":
		return "noframes"
	case "xmp":
		return "xmp"
	case "title":
		return "title"
	case "link":
		return "link"
	case "base":
		return "base"
	case "br":
		return "br"
	case "pre":
		return "pre"
	case "li":
		return "li"
	case "h1":
		return "h1"
	case "h2":
		return "h2"
	case "h3":
		return "h3"
	}
	return ""
}

// relTokens reports whether the space-separated rel value holds token.
func relTokens(rel, token string) bool {
	for _, t := range strings.Fields(rel) {
		if strings.EqualFold(t, token) {
			return true
		}
	}
	return false
}

// resolve makes href absolute against base, or returns "" if it does not
// parse.
func resolve(href string, base *url.URL) string {
	ref, err := url.Parse(href)
	if err != nil {
		return ""
	}
	if base != nil {
		ref = base.ResolveReference(ref)
	}
	return ref.String()
}

// countFields is len(strings.Fields(s)) without building the slice. It
// reads ASCII a byte at a time and decodes only other characters.
func countFields(s string) int {
	n := 0
	in := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		var space bool
		if c < utf8.RuneSelf {
			// The ASCII characters unicode.IsSpace reports: TAB, LF,
			// VT, FF, CR and the space.
			space = c == ' ' || c-'\t' <= '\r'-'\t'
		} else {
			r, size := utf8.DecodeRuneInString(s[i:])
			space = unicode.IsSpace(r)
			i += size - 1
		}
		if space {
			in = false
		} else if !in {
			in = true
			n++
		}
	}
	return n
}
