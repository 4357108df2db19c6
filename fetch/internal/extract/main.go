package extract

import (
	"net/url"
	"strings"

	readability "codeberg.org/readeck/go-readability/v2"
	"golang.org/x/net/html"
)

// content is the main content of a page.
type content struct {
	node  *html.Node
	title string // Readability's title, "" if none
}

// The landmark rule, for documentation. Readability scores paragraphs of
// prose and weighs class names, so it drops what documentation is made
// of: API signatures in headings whose class says "header", version and
// stability notes in boxes whose class says "meta", short sections,
// tables, code, pages of links. It also keeps, now and then, a dialog or
// banner the page hides with CSS. So when a page is documentation (see
// technical) and marks its main content plausibly (see landmark and
// plausibleLandmark), the landmark is cleaned of controls and hidden
// parts and Readability runs on it alone, with class and id names out of
// its sight; its result is kept if it holds at least landmarkCoverage of
// the cleaned landmark's words, and otherwise the cleaned landmark itself
// is the content.
//
// Other pages (news, blogs) get Readability on the whole page: there the
// words it drops from a <main> are mostly related links, comments and
// promotions, and the article is not always inside the <main>.
const (
	landmarkShare    = 0.5
	landmarkCoverage = 0.95
)

// largeDocsWords is the size above which a documentation page's landmark
// is taken without running Readability on it.
const largeDocsWords = 40000

// mainContent finds the main content of doc, or returns nil when there is
// none. It changes doc: it cleans it and hands it to Readability, which
// rewrites the tree it reads.
func mainContent(doc *html.Node, base *url.URL) *content {
	lm := landmark(doc)
	docs := lm != nil && technical(lm)

	removePermalinks(doc)
	removeNavigation(doc)
	markHeadingLevels(doc)

	var mark *html.Node
	markWords := 0
	if docs && contains(doc, lm) && plausibleLandmark(doc, lm) {
		cleanLandmark(lm)
		markWords = countWords(lm)
		if markWords > largeDocsWords {
			// A large documentation page: Readability would spend a
			// third of the page's time to keep nearly all of the
			// landmark anyway, and on documentation the cleaned landmark
			// alone measures as well. It is taken out of the page as it
			// is, without the copy Readability would need.
			remove(lm)
			absolutize(lm, base)
			restoreHeadingLevels(lm)
			return &content{node: lm}
		}
		if markWords > 0 {
			// The copy is taken before Readability rewrites the
			// landmark.
			mark = cloneTree(lm)
			isolate(doc, lm)
			hideNames(lm)
		}
	}

	node, title := runReadability(doc, base)
	if node != nil && mark != nil {
		showNames(node)
	}
	nodeWords := 0
	if node != nil {
		if nodeWords = countWords(node); nodeWords == 0 {
			node = nil
		}
	}
	// The coverage is the share of the landmark's words that Readability
	// kept: it ran on the landmark alone, so its words are the
	// landmark's (less what it dropped), and counting is enough.
	if mark != nil && (node == nil || float64(nodeWords)/float64(markWords) < landmarkCoverage) {
		absolutize(mark, base)
		node = mark
	}
	if node == nil {
		return nil
	}
	restoreHeadingLevels(node)
	return &content{node: node, title: title}
}

// technical reports whether the landmark m looks like technical
// documentation: it holds at least three code elements (<pre> or
// <code>), or a heading that carries a link to its own anchor (a
// permalink marker, or a link around the heading's text), which
// documentation generators add and articles seldom do.
func technical(m *html.Node) bool {
	code, anchored := 0, 0
	walk(m, func(n *html.Node) bool {
		switch {
		case isElement(n, "pre", "code"):
			code++
			return false
		case isElement(n, headingTags...):
			if ownAnchor(n) {
				anchored++
			}
			return false
		}
		return true
	})
	return code >= 3 || anchored >= 1
}

// hideNames moves the class and id attributes below n out of
// Readability's sight; showNames puts them back.
func hideNames(n *html.Node) {
	walk(n, func(x *html.Node) bool {
		for i, a := range x.Attr {
			if a.Namespace == "" && (a.Key == "class" || a.Key == "id") {
				x.Attr[i].Key = hiddenNamePrefix + a.Key
			}
		}
		return true
	})
}

const hiddenNamePrefix = "data-slim-"

func showNames(n *html.Node) {
	walk(n, func(x *html.Node) bool {
		for i, a := range x.Attr {
			if a.Namespace == "" && (a.Key == hiddenNamePrefix+"class" || a.Key == hiddenNamePrefix+"id") {
				x.Attr[i].Key = strings.TrimPrefix(a.Key, hiddenNamePrefix)
			}
		}
		return true
	})
}

// landmarkContent is the cheap main content of a page too large for
// Readability: its plausible landmark, cleaned, or nil.
func landmarkContent(doc *html.Node, base *url.URL) *content {
	m := landmark(doc)
	if m == nil || !plausibleLandmark(doc, m) {
		return nil
	}
	removePermalinks(m)
	removeNavigation(m)
	cleanLandmark(m)
	if countWords(m) == 0 {
		return nil
	}
	absolutize(m, base)
	return &content{node: m}
}

// landmark returns the element the page marks as its main content: the
// innermost of a unique <main> and a unique role=main element, or failing
// both a unique <article>; nil if there is none.
func landmark(doc *html.Node) *html.Node {
	unique := func(match func(*html.Node) bool) *html.Node {
		found := elements(doc, true, match)
		if len(found) == 1 {
			return found[0]
		}
		return nil
	}
	m := unique(func(n *html.Node) bool { return isElement(n, "main") })
	r := unique(func(n *html.Node) bool { return strings.EqualFold(strings.TrimSpace(attr(n, "role")), "main") })
	switch {
	case m != nil && r != nil:
		if contains(m, r) {
			return r
		}
		return m
	case m != nil:
		return m
	case r != nil:
		return r
	}
	return unique(func(n *html.Node) bool { return isElement(n, "article") })
}

// ownAnchor reports whether heading h holds a link to its own fragment:
// the id of the heading, of its parent (a section), of the link itself or
// of an element inside the heading.
func ownAnchor(h *html.Node) bool {
	ids := map[string]bool{}
	if h.Parent != nil {
		if id := attr(h.Parent, "id"); id != "" {
			ids[id] = true
		}
	}
	walk(h, func(n *html.Node) bool {
		if id := attr(n, "id"); n.Type == html.ElementNode && id != "" {
			ids[id] = true
		}
		return true
	})
	return findFirst(h, func(a *html.Node) bool {
		if !isElement(a, "a") {
			return false
		}
		frag, ok := strings.CutPrefix(strings.TrimSpace(attr(a, "href")), "#")
		if !ok || frag == "" {
			return false
		}
		if ids[frag] {
			return true
		}
		if unescaped, err := url.PathUnescape(frag); err == nil && ids[unescaped] {
			return true
		}
		return false
	}) != nil
}

// contains reports whether inner is outer or lies below it.
func contains(outer, inner *html.Node) bool {
	for n := inner; n != nil; n = n.Parent {
		if n == outer {
			return true
		}
	}
	return false
}

// cleanLandmark removes from a landmark what is not content: navigation
// (already gone), asides, forms and controls, scripts and styles, and
// elements the page hides (the hidden attribute, aria-hidden, display:none
// or visibility:hidden in an inline style).
func cleanLandmark(root *html.Node) {
	for _, n := range elements(root, false, func(n *html.Node) bool {
		if isElement(n, "aside", "form", "script", "style", "noscript", "template", "button", "input", "select", "textarea", "iframe", "dialog") {
			return true
		}
		return isHidden(n)
	}) {
		if n != root {
			remove(n)
		}
	}
}

// isHidden reports whether the page hides n from readers.
func isHidden(n *html.Node) bool {
	if hasAttr(n, "hidden") || strings.EqualFold(strings.TrimSpace(attr(n, "aria-hidden")), "true") {
		return true
	}
	style := strings.ToLower(attr(n, "style"))
	if style == "" {
		return false
	}
	style = strings.Join(strings.Fields(style), "")
	return strings.Contains(style, "display:none") || strings.Contains(style, "visibility:hidden")
}

// plausibleLandmark reports whether m, a landmark of doc, plausibly holds
// the page's content (see the landmark rule).
func plausibleLandmark(doc, m *html.Node) bool {
	body := findFirst(doc, func(n *html.Node) bool { return isElement(n, "body") })
	if body == nil {
		return false
	}
	inside := countWords(m)
	if inside == 0 {
		return false
	}
	if float64(inside) >= landmarkShare*float64(countWordsAround(body, m, inside)) {
		return true
	}
	longest := 0
	walk(body, func(n *html.Node) bool {
		if n == m {
			return false
		}
		if isElement(n, "p", "pre", "li", "td", "dd", "blockquote") {
			longest = max(longest, countWords(n))
			return false
		}
		return true
	})
	return inside >= longest
}

// countWordsAround is countWords(n) for an n that may hold m, whose words
// are already counted (inside): m's subtree is not walked again.
func countWordsAround(n, m *html.Node, inside int) int {
	words := 0
	walk(n, func(x *html.Node) bool {
		switch x.Type {
		case html.TextNode:
			words += countFields(x.Data)
		case html.ElementNode:
			if x == m {
				words += inside
				return false
			}
			if isElement(x, "script", "style", "noscript", "template") {
				return false
			}
		}
		return true
	})
	return words
}

// countWords counts the white-space separated words of the text below n
// (none inside scripts, styles and templates).
func countWords(n *html.Node) int { return countWordsAround(n, nil, 0) }

// isolate makes m the only content of doc's body, keeping the head (and
// so the page's metadata) as it is.
func isolate(doc, m *html.Node) {
	body := findFirst(doc, func(n *html.Node) bool { return isElement(n, "body") })
	if body == nil || body == m {
		return
	}
	remove(m)
	for c := body.FirstChild; c != nil; {
		next := c.NextSibling
		body.RemoveChild(c)
		c = next
	}
	body.AppendChild(m)
}

// absolutize resolves the links and media sources below root against
// base, as Readability does for its own result, so that the HTML form of
// a landmark reads the same out of context. Each distinct reference is
// resolved once: a documentation page links to the same pages thousands
// of times (rustdoc's slice page: 4,200 links, 1,200 distinct).
func absolutize(root *html.Node, base *url.URL) {
	if base == nil {
		return
	}
	resolved := map[string]string{}
	walk(root, func(n *html.Node) bool {
		if n.Type != html.ElementNode {
			return true
		}
		for i, a := range n.Attr {
			switch a.Key {
			case "href", "src", "poster":
			default:
				continue
			}
			v := strings.TrimSpace(a.Val)
			if v == "" || strings.HasPrefix(v, "#") || strings.HasPrefix(strings.ToLower(v), "data:") || strings.HasPrefix(strings.ToLower(v), "javascript:") {
				continue
			}
			if r, ok := resolved[v]; ok {
				n.Attr[i].Val = r
			} else if ref, err := url.Parse(v); err == nil {
				r = base.ResolveReference(ref).String()
				resolved[v] = r
				n.Attr[i].Val = r
			}
		}
		return true
	})
}

// runReadability runs Readability on doc, which it changes. A panic in the
// library (it is a port of JavaScript written for well-formed pages) is
// treated as finding nothing, so that the page still renders whole.
func runReadability(doc *html.Node, base *url.URL) (node *html.Node, title string) {
	defer func() {
		if recover() != nil {
			node, title = nil, ""
		}
	}()
	p := readability.NewParser()
	p.KeepClasses = true
	article, err := p.ParseAndMutate(doc, base)
	if err != nil || article.Node == nil {
		return nil, ""
	}
	return article.Node, strings.TrimSpace(article.Title())
}
