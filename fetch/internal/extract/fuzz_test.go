package extract

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func FuzzHTML(f *testing.F) {
	f.Add(`<html><head><title>t</title></head><body><nav>menu</nav><main><h2 id="a">A<a class="anchor" href="#a">§</a></h2><p>`+prose[0]+`</p><pre><code class="language-go">x := 1</code></pre><div hidden>h</div></main></body></html>`, true)
	f.Add("<table><tr><td><pre>x</pre><td>| pipe</table>", true)
	f.Add(strings.Repeat("<div>", 600)+"deep", true)
	f.Add("<h1>C# ¶</h1><p>List&lt;T&gt; \uFDD0 <img src=x></p><ul><li><ul><li>n</ul></ul>", true)
	f.Add("<html><head><base href=\"//x\"><link rel=canonical href=\":bad\"></head><body><noscript>enable JavaScript</noscript>", false)
	f.Add("\xff\xfe<p>\x80</p>", true)
	u := mustURL(f, guideURL)
	f.Fuzz(func(t *testing.T, src string, extractMain bool) {
		if len(src) > 64<<10 {
			// Large inputs are the bounds tests' business; under the
			// fuzzer's instrumentation they only slow the search.
			t.Skip()
		}
		start := time.Now()
		p, err := HTML(src, u, extractMain)
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("took %v on %d bytes", d, len(src))
		}
		if err != nil {
			t.Fatalf("HTML: %v", err)
		}
		checkPage(t, p)
		if strings.ContainsAny(p.Markdown, ltStandIn+gtStandIn) {
			t.Errorf("markdown keeps a stand-in character: %q", p.Markdown)
		}
		if !p.Extracted && p.HTML != strings.ToValidUTF8(src, "\uFFFD") {
			t.Errorf("not extracted, and HTML is not the page as given")
		}
		checkPage(t, Text(src))
	})
}

func checkPage(t *testing.T, p *Page) {
	t.Helper()
	for name, s := range map[string]string{"title": p.Title, "canonical": p.Canonical, "html": p.HTML, "markdown": p.Markdown, "text": p.Text} {
		if !utf8.ValidString(s) {
			t.Errorf("%s is not valid UTF-8: %q", name, s)
		}
	}
	for _, h := range p.Headings {
		if !utf8.ValidString(h) || h == "" {
			t.Errorf("bad heading %q", h)
		}
	}
	if len(p.Headings) > maxHeadings {
		t.Errorf("%d headings", len(p.Headings))
	}
	if p.Signals == nil {
		t.Error("nil signals")
	}
	if p.WordCount != len(strings.Fields(p.Text)) {
		t.Errorf("word count %d, text has %d", p.WordCount, len(strings.Fields(p.Text)))
	}
}
