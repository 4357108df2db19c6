package extract

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
)

// A documentation page larger than largeDocsWords is taken as its cleaned
// landmark without running Readability (a third of the time on a dense
// megabyte, see BenchmarkHTML): the content is all there, links are
// absolute, and the site's navigation outside the landmark still goes.
func TestLargeDocumentationPageIsItsLandmark(t *testing.T) {
	var b strings.Builder
	b.WriteString(`<html><head><title>API</title></head><body><nav>SITENAV <a href="/">home</a></nav><main>`)
	for i := 0; b.Len() < 450_000; i++ {
		fmt.Fprintf(&b, `<h2 id="s%d"><a href="#s%d">Section %d</a></h2><p>The function number %d takes a slice of values and returns the sum of the values it was given.</p><pre><code class="language-rust">fn f%d() {}</code></pre>`, i, i, i, i, i)
	}
	b.WriteString(`<div><p>Implementations:</p><ul>`)
	for i := 0; i < 30; i++ {
		fmt.Fprintf(&b, `<li><a href="/impl/%d">IMPL%d</a></li>`, i, i)
	}
	b.WriteString(`</ul></div></main><footer>SITEFOOTER</footer></body></html>`)
	base, _ := url.Parse("https://docs.example.com/api")
	p, err := HTML(b.String(), base, true)
	if err != nil {
		t.Fatal(err)
	}
	if p.WordCount <= largeDocsWords {
		t.Fatalf("test setup: %d words", p.WordCount)
	}
	for _, want := range []string{"IMPL0", "IMPL29", "Section 0", "fn f0() {}", "(https://docs.example.com/impl/0)"} {
		if !strings.Contains(p.Markdown, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	if !strings.Contains(p.HTML, `href="https://docs.example.com/impl/0"`) {
		t.Error("the HTML form's links are not absolute")
	}
	for _, no := range []string{"SITENAV", "SITEFOOTER"} {
		if strings.Contains(p.Markdown, no) {
			t.Errorf("markdown has %q", no)
		}
	}
}
