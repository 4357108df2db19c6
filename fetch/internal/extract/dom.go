package extract

import (
	"strings"

	"golang.org/x/net/html"
)

// Small helpers over x/net/html nodes. Every walk here is iterative or
// bounded by the parser's nesting limit, so no page can exhaust the stack.

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasAttr(n *html.Node, key string) bool {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return true
		}
	}
	return false
}

func setAttr(n *html.Node, key, val string) {
	for i, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			n.Attr[i].Val = val
			return
		}
	}
	n.Attr = append(n.Attr, html.Attribute{Key: key, Val: val})
}

func removeAttr(n *html.Node, key string) {
	for i, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			n.Attr = append(n.Attr[:i], n.Attr[i+1:]...)
			return
		}
	}
}

// hasClass reports whether n's class attribute holds the token c.
func hasClass(n *html.Node, c string) bool {
	for _, tok := range strings.Fields(attr(n, "class")) {
		if tok == c {
			return true
		}
	}
	return false
}

// isElement reports whether n is an HTML element with one of the names.
func isElement(n *html.Node, names ...string) bool {
	if n == nil || n.Type != html.ElementNode || n.Namespace != "" {
		return false
	}
	for _, name := range names {
		if n.Data == name {
			return true
		}
	}
	return false
}

// walk calls visit for n and every node below it in document order.
// visit returns false to skip a node's children. Children may be removed or
// replaced by visit for the node being visited but not for others.
func walk(n *html.Node, visit func(*html.Node) bool) {
	if n == nil {
		return
	}
	if !visit(n) {
		return
	}
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		walk(c, visit)
		c = next
	}
}

// elements returns the elements below n (n included) for which keep is
// true, in document order, without descending into a kept element's
// children when nested is false.
func elements(n *html.Node, nested bool, keep func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	walk(n, func(x *html.Node) bool {
		if x.Type == html.ElementNode && keep(x) {
			out = append(out, x)
			return nested
		}
		return true
	})
	return out
}

// textContent is the concatenated text of the nodes below n, skipping the
// subtrees for which skip returns true (skip may be nil).
func textContent(n *html.Node, skip func(*html.Node) bool) string {
	var b strings.Builder
	walk(n, func(x *html.Node) bool {
		if skip != nil && x != n && skip(x) {
			return false
		}
		switch x.Type {
		case html.TextNode:
			b.WriteString(x.Data)
		case html.ElementNode:
			if isElement(x, "script", "style", "template", "noscript") {
				return false
			}
		}
		return true
	})
	return b.String()
}

// ownText is textContent(n, nil) without building a string when n holds
// one text node and nothing else, as most links do.
func ownText(n *html.Node) string {
	if c := n.FirstChild; c != nil && c == n.LastChild && c.Type == html.TextNode {
		return c.Data
	}
	return textContent(n, nil)
}

// collapseSpace turns every run of white space into one space and trims
// the ends.
func collapseSpace(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// unwrap replaces n with its children.
func unwrap(n *html.Node) {
	p := n.Parent
	if p == nil {
		return
	}
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		n.RemoveChild(c)
		p.InsertBefore(c, n)
		c = next
	}
	p.RemoveChild(n)
}

func remove(n *html.Node) {
	if n.Parent != nil {
		n.Parent.RemoveChild(n)
	}
}

// findFirst returns the first element below n (n included) for which
// match is true, or nil.
func findFirst(n *html.Node, match func(*html.Node) bool) *html.Node {
	var found *html.Node
	walk(n, func(x *html.Node) bool {
		if found != nil {
			return false
		}
		if x.Type == html.ElementNode && match(x) {
			found = x
			return false
		}
		return true
	})
	return found
}

// cloneTree deep-copies n.
func cloneTree(n *html.Node) *html.Node {
	c := &html.Node{
		Type:      n.Type,
		DataAtom:  n.DataAtom,
		Data:      n.Data,
		Namespace: n.Namespace,
	}
	if len(n.Attr) > 0 {
		c.Attr = make([]html.Attribute, len(n.Attr))
		copy(c.Attr, n.Attr)
	}
	for k := n.FirstChild; k != nil; k = k.NextSibling {
		c.AppendChild(cloneTree(k))
	}
	return c
}
