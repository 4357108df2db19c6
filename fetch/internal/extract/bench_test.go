package extract

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// docSection is one section of an API reference page, with the markup
// real generators produce: an anchored heading, prose with links and
// inline code, a stability note, a code block, a table and a list.
func docSection(i int) string {
	return fmt.Sprintf(`<section><h2 id="s%d">method%d(options)<a class="anchor" href="#s%d">§</a></h2>
<p class="stability">Stability: 2 - Stable. Added in v%d.0.0.</p>
<p>Calls the <a href="other.html#x%d">underlying handler</a> with <code>options</code>, and returns a promise that settles when the work is done; %s</p>
<pre><code class="language-js">const r = await api.method%d({ retries: 3, timeout: 1000 });
console.log(r.status);</code></pre>
<table><thead><tr><th>Option</th><th>Type</th><th>Default</th></tr></thead><tbody><tr><td>retries</td><td>number</td><td>0</td></tr><tr><td>timeout</td><td>number</td><td>none</td></tr></tbody></table>
<ul><li>Returns: <code>Promise</code></li><li>Throws: <code>TypeError</code> on bad options</li></ul></section>
`, i, i, i, i%20, i, prose[i%len(prose)], i)
}

// benchPage builds a page of about size bytes: a site header, a sidebar
// of links, a <main> of docSections holding about content bytes, a
// footer, and, to fill the rest, an inline stylesheet and a script holding
// the page's state as JSON, as pages built by JavaScript frameworks ship
// it.
func benchPage(size, content int) string {
	var main strings.Builder
	for i := 0; main.Len() < content; i++ {
		main.WriteString(docSection(i))
	}
	var nav strings.Builder
	for i := range 200 {
		fmt.Fprintf(&nav, `<li><a href="/docs/page%d.html">Page %d</a></li>`, i, i)
	}
	head := `<!doctype html><html><head><meta charset="utf-8"><title>API reference</title><style>`
	body := `</style></head><body><header><nav><a href="/">Home</a> <a href="/docs">Docs</a></nav></header><nav class="sidebar"><ul>` + nav.String() +
		`</ul></nav><main>` + main.String() + `</main><footer><p>Copyright Example</p></footer><script id="__STATE__" type="application/json">`
	tail := `</script></body></html>`
	fill := max(size-len(head)-len(body)-len(tail), 0)
	style := strings.Repeat(".c{color:#123456;margin:0 auto}\n", fill/2/32)
	state := strings.Repeat(`{"id":1234,"name":"item","tags":["a","b"]},`, (fill-len(style))/44)
	return head + style + body + state + tail
}

// BenchmarkHTML extracts a one-megabyte page: "typical" holds 150 KB of
// documentation markup and fills the rest with a stylesheet and a state
// script, as most large pages do; "dense" is a megabyte of documentation
// markup, the worst case below the simplification bounds.
func BenchmarkHTML(b *testing.B) {
	u := mustURL(b, guideURL)
	for _, bc := range []struct {
		name    string
		content int
	}{{"typical", 150 << 10}, {"dense", 1 << 20}} {
		src := benchPage(1<<20, bc.content)
		for _, extractMain := range []bool{true, false} {
			b.Run(fmt.Sprintf("%s/extract=%v", bc.name, extractMain), func(b *testing.B) {
				b.SetBytes(int64(len(src)))
				for b.Loop() {
					p, err := HTML(src, u, extractMain)
					if err != nil || p.WordCount == 0 {
						b.Fatal(err, p.WordCount)
					}
				}
			})
		}
	}
}

func TestBenchPageIsWhatItSays(t *testing.T) {
	src := benchPage(1<<20, 150<<10)
	if len(src) < 1000<<10 || len(src) > 1100<<10 {
		t.Errorf("page is %d bytes", len(src))
	}
	p, err := HTML(src, mustURL(t, guideURL), true)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Extracted || strings.Contains(p.Markdown, "Page 17") || !strings.Contains(p.Markdown, "```js\nconst r = await api.method3(") {
		t.Errorf("extracted %v; markdown starts %q", p.Extracted, trimTo(p.Markdown, 300))
	}
}

// BenchmarkHTMLFiles extracts each page named in SLIM_BENCH_PAGES (a list
// of HTML files separated like PATH), so that real pages, such as the
// largest rustdoc pages of a Rust toolchain, can be profiled beside the
// generated ones. Without the variable it is skipped.
func BenchmarkHTMLFiles(b *testing.B) {
	list := os.Getenv("SLIM_BENCH_PAGES")
	if list == "" {
		b.Skip("SLIM_BENCH_PAGES names no pages")
	}
	u := mustURL(b, guideURL)
	for _, file := range filepath.SplitList(list) {
		data, err := os.ReadFile(file)
		if err != nil {
			b.Fatal(err)
		}
		src := string(data)
		b.Run(filepath.Base(file), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			for b.Loop() {
				p, err := HTML(src, u, true)
				if err != nil || p.WordCount == 0 {
					b.Fatal(err, p.WordCount)
				}
			}
		})
	}
}
