package extract

import (
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"
)

func TestDeepNestingIsFlattenedNotRefused(t *testing.T) {
	for _, tag := range []string{"div", "span", "font", "b", "table"} {
		t.Run(tag, func(t *testing.T) {
			src := "<html><body>" + strings.Repeat("<"+tag+">", 20000) + "deep words here" + strings.Repeat("</"+tag+">", 20000) + "<p>after the nest</p></body></html>"
			for _, extractMain := range []bool{true, false} {
				p, err := HTML(src, mustURL(t, guideURL), extractMain)
				if err != nil {
					t.Fatal(err)
				}
				for _, want := range []string{"deep words here", "after the nest"} {
					if !strings.Contains(p.Text, want) || !strings.Contains(p.Markdown, want) {
						t.Errorf("extractMain=%v lost %q: text %q markdown %q", extractMain, want, trimTo(p.Text, 200), trimTo(p.Markdown, 200))
					}
				}
			}
		})
	}
}

func TestParseFallbacks(t *testing.T) {
	deep := strings.Repeat("<div>", 1000) + "x"
	if _, err := html.Parse(strings.NewReader(deep)); err == nil {
		t.Fatal("the parser accepts 1000 nested divs; the flattening fallback is no longer exercised here")
	}
	doc := parse(`<a href="/kept">a link</a>` + deep)
	if got := renderText(doc); got != "a link\n\nx" {
		t.Errorf("flattened text %q", got)
	}
	if findFirst(doc, func(n *html.Node) bool { return isElement(n, "a") && attr(n, "href") == "/kept" }) == nil {
		t.Error("flattening lost the structure outside the deep part")
	}
	depth := 0
	for n := doc; n != nil; n = n.LastChild {
		depth++
	}
	if depth > flattenDepth+5 {
		t.Errorf("flattened depth %d, want at most about %d", depth, flattenDepth)
	}

	// The text-only fallback keeps every word and nothing of scripts.
	got := textOnly("<title>T</title><p>one <b>two</b></p><script>var hidden</script><div>three</div>")
	d, err := html.Parse(strings.NewReader(got))
	if err != nil {
		t.Fatal(err)
	}
	if text := renderText(d); text != "one two\n\nthree" {
		t.Errorf("text-only fallback %q (from %q)", text, got)
	}
}

func TestFlattenDropsOnlyDeepTags(t *testing.T) {
	got := flatten("<div><p>a</p><div><span>b</span></div></div>", 2)
	// The span is the third open element and goes; its text stays.
	if got != "<div><p>a</p><div>b</div></div>" {
		t.Errorf("flatten = %q", got)
	}
}

func trimTo(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// boundedPages are inputs that cost the libraries seconds without the
// bounds: millions of tiny elements, megabytes of text in one node, and a
// large page of dense documentation.
func boundedPages() map[string]string {
	section := `<section><h2 id="s">Section title<a class="anchor" href="#s">§</a></h2><p>Some words of documentation, with a <a href="x.html">link</a> and <code>code</code>.</p><pre><code class="language-js">const x = 1;</code></pre><ul><li>one</li><li>two</li></ul></section>`
	return map[string]string{
		"ten megabytes of empty links":   strings.Repeat("<a>x", 10<<20/4),
		"ten megabytes of list items":    "<ul>" + strings.Repeat("<li>item <a href=x>l</a>", 10<<20/24),
		"ten megabytes of one paragraph": "<p>" + strings.Repeat("word ", 2<<20),
		"a large page of documentation":  "<html><body><nav>menu</nav><main>" + strings.Repeat(section, 3<<20/len(section)) + "</main></body></html>",
	}
}

func TestLargePagesAreBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("builds ten-megabyte pages")
	}
	for name, src := range boundedPages() {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			p, err := HTML(src, mustURL(t, guideURL), true)
			elapsed := time.Since(start)
			if err != nil {
				t.Fatal(err)
			}
			// Bounded, these take under a second (about five under the
			// race detector); unbounded, 4 MB of empty links took 16 s.
			if elapsed > 20*time.Second {
				t.Errorf("took %v", elapsed)
			}
			if !slices.Contains(p.Signals, SignalSimplified) {
				t.Errorf("signals %q lack %q", p.Signals, SignalSimplified)
			}
			if p.WordCount == 0 || p.Markdown == "" {
				t.Errorf("no content: %d words", p.WordCount)
			}
			t.Logf("%d KiB in %v, %d words", len(src)>>10, elapsed, p.WordCount)
		})
	}
}

func TestTokenPassKeepsTheMetadata(t *testing.T) {
	// Enough tags to skip the tree.
	filler := strings.Repeat("<i></i>", maxTags)
	src := `<html><head><title>Big  page</title><base href="https://cdn.example.com/r/"><link rel="canonical" href="canon"></head><body>` +
		`<h1>First ¶</h1><script>var skipped = "<p>not text</p>";</script><p>para one</p><ul><li>item</li></ul><pre>  keep  this</pre><h2>Second</h2>` + filler + `</body></html>`
	p, err := HTML(src, mustURL(t, guideURL), true)
	if err != nil {
		t.Fatal(err)
	}
	if p.Title != "Big page" || p.Canonical != "https://cdn.example.com/r/canon" || !slices.Equal(p.Headings, []string{"First", "Second"}) {
		t.Errorf("title %q canonical %q headings %q", p.Title, p.Canonical, p.Headings)
	}
	if want := "First ¶\n\npara one\n\n- item\n\n  keep  this\n\nSecond"; p.Text != want {
		t.Errorf("text %q, want %q", p.Text, want)
	}
	if p.Extracted || p.HTML != src || !slices.Contains(p.Signals, SignalSimplified) {
		t.Errorf("extracted %v, html as given %v, signals %q", p.Extracted, p.HTML == src, p.Signals)
	}
}

func TestLargeTreeUsesTheLandmarkWithoutReadability(t *testing.T) {
	item := `<p>A paragraph of the main content, with enough words to count for something here.</p>`
	src := "<html><body><nav>" + strings.Repeat(`<a href="/x">menu entry</a> `, 100) + "</nav><main>" + strings.Repeat(item, maxElements) + "</main><footer>FooterOnlyWord</footer></body></html>"
	p, err := HTML(src, mustURL(t, guideURL), true)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Extracted || strings.Contains(p.Text, "menu entry") || strings.Contains(p.Text, "FooterOnlyWord") {
		t.Errorf("extracted %v; text holds navigation or footer: %q", p.Extracted, trimTo(p.Text, 300))
	}
	if !slices.Contains(p.Signals, SignalSimplified) {
		t.Errorf("signals %q", p.Signals)
	}
}
