package base

// This file is added by slim's third_party/vendor-html-to-markdown.sh
// patch: preRenderRemove visits children in order instead of deferring
// each visit, and must leave the tree the released version leaves.

import (
	"strings"
	"testing"

	"github.com/JohannesKaufmann/dom"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/internal/domutils"
	"golang.org/x/net/html"
)

// preRenderRemoveReleased is preRenderRemove as released.
func preRenderRemoveReleased(ctx converter.Context, doc *html.Node) {
	var finder func(node *html.Node)
	finder = func(node *html.Node) {
		name := dom.NodeName(node)

		if tagType, _ := ctx.GetTagType(name); tagType == converter.TagTypeRemove {
			dom.RemoveNode(node)
			return
		}

		for child := node.FirstChild; child != nil; child = child.NextSibling {
			defer finder(child)
		}
	}
	finder(doc)
	domutils.MergeAdjacentTextNodes(doc)
}

func FuzzPreRenderRemoveAsReleased(f *testing.F) {
	for _, s := range []string{
		`<p>a<script>x</script>b<style>s</style><!-- c --><noscript>n</noscript>d</p>`,
		`<div><iframe></iframe><input><textarea>t</textarea><meta><link></div><head><title>t</title></head>`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		want, err1 := html.Parse(strings.NewReader(src))
		got, err2 := html.Parse(strings.NewReader(src))
		doc, err3 := html.Parse(strings.NewReader(src))
		if err1 != nil || err2 != nil || err3 != nil {
			t.Skip()
		}
		b := &base{}
		conv := converter.NewConverter(converter.WithPlugins(b))
		// The two versions run on copies of the page, with the context
		// the converter gives its pre-renderers.
		conv.Register.PreRenderer(func(ctx converter.Context, _ *html.Node) {
			preRenderRemoveReleased(ctx, want)
			b.preRenderRemove(ctx, got)
		}, converter.PriorityEarly-1)
		conv.Register.Renderer(func(converter.Context, converter.Writer, *html.Node) converter.RenderStatus {
			return converter.RenderSuccess
		}, converter.PriorityStandard)
		if _, err := conv.ConvertNode(doc); err != nil {
			t.Fatal(err)
		}
		var w, g strings.Builder
		html.Render(&w, want)
		html.Render(&g, got)
		if w.String() != g.String() {
			t.Errorf("preRenderRemove(%q) gives\n%s\nthe released version\n%s", src, g.String(), w.String())
		}
	})
}
