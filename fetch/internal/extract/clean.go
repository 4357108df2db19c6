package extract

import (
	"strings"
	"unicode"

	"golang.org/x/net/html"
)

var headingTags = []string{"h1", "h2", "h3", "h4", "h5", "h6"}

// isPermalink reports whether the link a is a permalink marker that
// documentation generators put next to headings and figures ("¶", "§",
// "#" or an icon pointing at the element's own anchor), which says nothing
// to a reader of the text. It recognizes:
//
//   - a link whose only text is "¶";
//   - class headerlink (Sphinx and Python-Markdown);
//
// and, among links whose text is only symbols or empty (a link with words,
// such as a comment's date, is kept whatever its title):
//
//   - a title containing "permanent link" or "permalink";
//   - class anchor or mark on a link to a fragment (rustdoc's "§", the "#"
//     of GitHub and Node.js);
//   - inside a heading, any link to a fragment.
func isPermalink(a *html.Node, inHeading bool) bool {
	if !isElement(a, "a") {
		return false
	}
	text := strings.TrimSpace(ownText(a))
	if text == "¶" || hasClass(a, "headerlink") {
		return true
	}
	if !symbolsOnly(text) {
		return false // a link with words (a date, a name) says something
	}
	title := strings.ToLower(attr(a, "title"))
	if strings.Contains(title, "permanent link") || strings.Contains(title, "permalink") {
		return true
	}
	if !strings.HasPrefix(strings.TrimSpace(attr(a, "href")), "#") {
		return false
	}
	return inHeading || hasClass(a, "anchor") || hasClass(a, "mark")
}

// symbolsOnly reports whether s has no letter or digit (an empty s has
// none).
func symbolsOnly(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// selfLinkInHeading reports whether a is a link inside a heading that
// points at a fragment of this page and wraps real text (mdBook wraps each
// heading's text in such a link). Its text is kept and the link dropped.
func selfLinkInHeading(a *html.Node) bool {
	return isElement(a, "a") && strings.HasPrefix(strings.TrimSpace(attr(a, "href")), "#")
}

// removePermalinks drops permalink markers from the tree below root and
// unwraps the links that wrap a heading's own text.
func removePermalinks(root *html.Node) {
	var visit func(n *html.Node, inHeading bool)
	visit = func(n *html.Node, inHeading bool) {
		for c := n.FirstChild; c != nil; {
			next := c.NextSibling
			if c.Type == html.ElementNode {
				switch {
				case isPermalink(c, inHeading):
					remove(c)
				case inHeading && selfLinkInHeading(c):
					visit(c, true)
					unwrap(c)
				default:
					visit(c, inHeading || isElement(c, headingTags...))
				}
			}
			c = next
		}
	}
	visit(root, false)
}

// isNavigation reports whether n is navigation rather than content: a
// <nav>, an element with role navigation, or a "skip to content" link
// list.
func isNavigation(n *html.Node) bool {
	if isElement(n, "nav") {
		return true
	}
	switch strings.ToLower(strings.TrimSpace(attr(n, "role"))) {
	case "navigation":
		return true
	}
	return false
}

// removeNavigation drops navigation elements below root.
func removeNavigation(root *html.Node) {
	for _, n := range elements(root, false, isNavigation) {
		remove(n)
	}
}

// headingLevelAttr marks each h1 before main-content extraction, which
// turns every h1 of the article into an h2 (the title is meant to be shown
// apart); restoreHeadingLevels puts the level back.
const headingLevelAttr = "data-slim-h1"

func markHeadingLevels(root *html.Node) {
	walk(root, func(n *html.Node) bool {
		if isElement(n, "h1") {
			setAttr(n, headingLevelAttr, "")
		}
		return true
	})
}

func restoreHeadingLevels(root *html.Node) {
	walk(root, func(n *html.Node) bool {
		if n.Type == html.ElementNode && hasAttr(n, headingLevelAttr) {
			removeAttr(n, headingLevelAttr)
			if isElement(n, headingTags...) {
				n.Data = "h1"
			}
		}
		return true
	})
}

// pageHeadings returns the cleaned text of the h1, h2 and h3 elements of
// the whole document, in document order, empty ones dropped, at most
// maxHeadings.
func pageHeadings(doc *html.Node) []string {
	var out []string
	walk(doc, func(n *html.Node) bool {
		if len(out) == maxHeadings {
			return false
		}
		if !isElement(n, "h1", "h2", "h3") {
			return true
		}
		text := textContent(n, func(x *html.Node) bool { return isPermalink(x, true) })
		if h := cleanHeading(text); h != "" {
			out = append(out, h)
		}
		return false
	})
	return out
}

// maxHeadings is how many headings a page reports.
const maxHeadings = 12

// cleanHeading collapses white space, drops trailing "¶" marks and a
// trailing " #..." (a closing sequence or an anchor name). "C#" and "F#"
// have no space before the "#" and are kept.
func cleanHeading(s string) string {
	s = collapseSpace(s)
	for {
		t := strings.TrimSpace(strings.TrimSuffix(s, "¶"))
		if i := strings.LastIndexByte(t, ' '); i >= 0 && strings.HasPrefix(t[i+1:], "#") {
			t = strings.TrimSpace(t[:i])
		} else if strings.HasPrefix(t, "#") && strings.Trim(t, "#") == "" {
			t = ""
		}
		if t == s {
			return s
		}
		s = t
	}
}
