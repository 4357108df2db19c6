package domutils

// This file is added by slim's third_party/vendor-html-to-markdown.sh
// patch: LeafBlockAlternatives visits children in order instead of
// deferring each visit, and must leave the tree the released version
// leaves.

import (
	"context"
	"strings"
	"testing"

	"github.com/JohannesKaufmann/dom"
	"golang.org/x/net/html"
)

// leafBlockAlternativesReleased is LeafBlockAlternatives as released.
func leafBlockAlternativesReleased(ctx context.Context, doc *html.Node) {
	var finder func(node *html.Node, isInsideLeafBlock bool, isInsideInline bool)
	finder = func(node *html.Node, isInsideLeafBlock bool, isInsideInline bool) {
		name := dom.NodeName(node)

		structure := getMarkdownStructure(name)
		if (structure == "container_block" || structure == "leaf_block") && (isInsideLeafBlock || isInsideInline) {
			fn, ok := alternatives[name]
			if ok {
				fn(ctx, node)
			} else {
				node.Data = "span"
			}
		}
		if structure == "leaf_block" {
			isInsideLeafBlock = true
		}
		if structure == "inline" {
			isInsideInline = true
		}
		for child := node.FirstChild; child != nil; child = child.NextSibling {
			defer finder(child, isInsideLeafBlock, isInsideInline)
		}
	}
	finder(doc, false, false)
}

func FuzzLeafBlockAlternativesAsReleased(f *testing.F) {
	for _, s := range []string{
		`<h1>a<blockquote>q</blockquote><h2>b</h2><hr>c<pre>p</pre></h1>`,
		`<a href="x"><h3>t</h3><h4>u</h4><ul><li>l</li></ul></a><strong><hr><hr></strong>`,
		`<pre><h2>x</h2><blockquote><blockquote>y</blockquote></blockquote></pre>`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		want, err1 := html.Parse(strings.NewReader(src))
		got, err2 := html.Parse(strings.NewReader(src))
		if err1 != nil || err2 != nil {
			t.Skip()
		}
		leafBlockAlternativesReleased(context.Background(), want)
		LeafBlockAlternatives(context.Background(), got)
		var w, g strings.Builder
		html.Render(&w, want)
		html.Render(&g, got)
		if w.String() != g.String() {
			t.Errorf("LeafBlockAlternatives(%q) gives\n%s\nthe released version\n%s", src, g.String(), w.String())
		}
	})
}
