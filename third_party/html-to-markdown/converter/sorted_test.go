package converter_test

// This file is added by slim's third_party/vendor-html-to-markdown.sh
// patch: the converter sorts its handlers once per registration instead of
// for every node, so every kind of registration made between two
// conversions must still reach the second one, in priority order.

import (
	"testing"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"golang.org/x/net/html"
)

func TestRegistrationsAfterAConversionCount(t *testing.T) {
	conv := converter.NewConverter(converter.WithPlugins(base.NewBasePlugin(), commonmark.NewCommonmarkPlugin()))
	convert := func() string {
		t.Helper()
		out, err := conv.ConvertString(`<p>a <b>b</b> c</p>`)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if got := convert(); got != "a **b** c" {
		t.Fatalf("before: %q", got)
	}

	var order string
	conv.Register.PreRenderer(func(converter.Context, *html.Node) { order += "2" }, converter.PriorityStandard)
	conv.Register.PreRenderer(func(converter.Context, *html.Node) { order += "1" }, converter.PriorityEarly-1)
	convert()
	if order != "12" {
		t.Errorf("pre-renderers ran in the order %q", order)
	}

	conv.Register.TextTransformer(func(_ converter.Context, s string) string { return s + "!" }, converter.PriorityLate)
	if got := convert(); got != "a !**b!** c!" {
		t.Errorf("text transformer: %q", got)
	}

	conv.Register.TagType("b", converter.TagTypeRemove, converter.PriorityEarly)
	if got := convert(); got != "a c!" {
		t.Errorf("tag type: %q", got)
	}

	conv.Register.PostRenderer(func(_ converter.Context, b []byte) []byte { return append(b, " late"...) }, converter.PriorityLate+1)
	conv.Register.PostRenderer(func(_ converter.Context, b []byte) []byte { return append(b, " early"...) }, converter.PriorityLate)
	if got := convert(); got != "a c! early late" {
		t.Errorf("post-renderers: %q", got)
	}

	conv.Register.EscapedChar('c')
	conv.Register.UnEscaper(func(chars []byte, index int) int {
		if chars[index] == 'c' {
			return 1
		}
		return -1
	}, converter.PriorityStandard)
	if got := convert(); got != `a \c! early late` {
		t.Errorf("escaped character: %q", got)
	}
}
