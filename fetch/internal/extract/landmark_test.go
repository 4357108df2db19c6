package extract

import (
	"fmt"
	"strings"
	"testing"
)

// apiPage is a page of API reference in the shape rustdoc gives it: a
// sidebar, a description of a few paragraphs, then many implementations
// whose signatures sit in headings with class "code-header", each
// followed by a one-line note. Readability, given the whole page, keeps
// the description and drops the implementations.
func apiPage() string {
	var b strings.Builder
	b.WriteString(`<!doctype html><html><head><title>Widget in widgets - Rust</title></head><body>
<nav class="sidebar"><a href="index.html">SidebarOnlyWord</a><ul>`)
	for i := range 30 {
		fmt.Fprintf(&b, `<li><a href="#impl-%d">Trait%d</a></li>`, i, i)
	}
	b.WriteString(`</ul></nav>
<div id="help-popup"><h2>Keyboard shortcuts</h2><p>Press PopupOnlyWord to search.</p></div>
<main><section id="main-content"><h1>Struct <span>Widget</span></h1>
<pre class="rust item-decl"><code>pub struct Widget { /* private fields */ }</code></pre>
<div class="docblock"><p>A widget draws itself on a canvas, and can be resized, moved and hidden; widgets nest, and a parent lays out its children.</p>` + "<p>" + strings.Join(prose, "</p><p>") + "</p>" + `</div>
<h2 id="implementations" class="section-header">Trait Implementations<a href="#implementations" class="anchor">§</a></h2>`)
	for i := range 30 {
		fmt.Fprintf(&b, `<details class="toggle implementors-toggle" open><summary><section id="impl-%d" class="impl"><a href="#impl-%d" class="anchor">§</a><h3 class="code-header">impl Trait%d for Widget</h3></section></summary><div class="docblock"><p>Note%d.</p></div></details>`, i, i, i, i)
	}
	b.WriteString(`</section></main></body></html>`)
	return b.String()
}

func TestDocumentationKeepsWhatReadabilityDrops(t *testing.T) {
	p := extract(t, apiPage(), true)
	if !p.Extracted {
		t.Fatal("not extracted")
	}
	for i := range 30 {
		for _, want := range []string{fmt.Sprintf("impl Trait%d for Widget", i), fmt.Sprintf("Note%d.", i)} {
			if !strings.Contains(p.Markdown, want) {
				t.Fatalf("markdown lacks %q:\n%s", want, p.Markdown)
			}
		}
	}
	for _, leak := range []string{"SidebarOnlyWord", "PopupOnlyWord", "§"} {
		if strings.Contains(p.Markdown, leak) {
			t.Errorf("markdown holds %q", leak)
		}
	}
	if !strings.Contains(p.Markdown, "```rust\npub struct Widget") {
		t.Errorf("the declaration lost its fence or language:\n%s", p.Markdown)
	}
	if strings.Contains(p.HTML, hiddenNamePrefix) {
		t.Error("hidden class names leaked into the HTML form")
	}
}

// newsPage is an article whose <main> also holds a list of related
// stories, as news sites have it.
func newsPage() string {
	var b strings.Builder
	b.WriteString(`<!doctype html><html><head><title>Storm closes the harbour</title></head><body><header><nav><a href="/">Home</a></nav></header><main><article><h1>Storm closes the harbour</h1>`)
	for _, p := range prose {
		b.WriteString("<p>" + strings.ReplaceAll(p, "guide", "report") + "</p>")
	}
	b.WriteString(`</article><div class="related-stories"><h2>Related</h2><ul>`)
	for i := range 12 {
		fmt.Fprintf(&b, `<li><a href="/story/%d">RelatedStory%d headline about something else</a></li>`, i, i)
	}
	b.WriteString(`</ul></div></main></body></html>`)
	return b.String()
}

func TestArticlesKeepReadabilitysJudgement(t *testing.T) {
	p := extract(t, newsPage(), true)
	if !strings.Contains(p.Markdown, "troubleshooting section") {
		t.Fatalf("article text missing:\n%s", p.Markdown)
	}
	for _, leak := range []string{"RelatedStory3"} {
		if strings.Contains(p.Markdown, leak) {
			t.Errorf("markdown holds %q from the rest of the <main>:\n%s", leak, p.Markdown)
		}
	}
}

func TestTechnical(t *testing.T) {
	tests := []struct {
		name, body string
		want       bool
	}{
		{"three code elements", "<p><code>a</code> <code>b</code></p><pre>c</pre>", true},
		{"two code elements", "<p><code>a</code></p><pre>c</pre>", false},
		{"a heading linking to its own id", `<h2 id="x">X<a href="#x">#</a></h2>`, true},
		{"a heading whose section has the id", `<section id="s"><h2>S<a class="headerlink" href="#s">¶</a></h2></section>`, true},
		{"a heading link to another fragment", `<h3>There are 13 comments <a href="#reply-title"> </a></h3>`, false},
		{"an empty fragment", `<h3 id="g"><a href="#"></a></h3>`, false},
		{"plain prose", "<h2>Title</h2><p>words</p>", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc := parse("<html><body><main>" + tc.body + "</main></body></html>")
			if got := technical(landmark(doc)); got != tc.want {
				t.Errorf("technical = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestLandmark(t *testing.T) {
	tests := []struct {
		name, body, want string // want: the id of the landmark, "" for none
	}{
		{"a unique main", `<main id="m"><p>x</p></main>`, "m"},
		{"role=main inside main wins", `<main id="m"><div role="main" id="r">x</div></main>`, "r"},
		{"two mains, one article", `<main></main><main></main><article id="a">x</article>`, "a"},
		{"two articles", `<article></article><article></article>`, ""},
		{"nothing", `<div>x</div>`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := landmark(parse("<html><body>" + tc.body + "</body></html>"))
			id := ""
			if got != nil {
				id = attr(got, "id")
			}
			if id != tc.want {
				t.Errorf("landmark id %q, want %q", id, tc.want)
			}
		})
	}
}

func TestPlausibleLandmark(t *testing.T) {
	long := strings.Repeat("word ", 200)
	tests := []struct {
		name, body string
		want       bool
	}{
		{"holds most of the words", "<main>" + long + "</main><p>short aside</p>", true},
		{"small, but longer than any paragraph outside", "<main><p>twelve words of main content here to beat the popup text</p></main><p>press a key</p><p>another hint</p><p>theme list</p>", true},
		{"a banner main beside the article", "<main><p>Welcome</p></main><p>" + long + "</p>", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc := parse("<html><body>" + tc.body + "</body></html>")
			if got := plausibleLandmark(doc, landmark(doc)); got != tc.want {
				t.Errorf("plausibleLandmark = %v, want %v", got, tc.want)
			}
		})
	}
}

// historyPage is Node.js-style API documentation: each section opens
// with a collapsed version history in a box with class "api_metadata",
// which Readability, when it can see the class, takes for page metadata
// and drops, while keeping nearly all the rest.
func historyPage() string {
	var b strings.Builder
	b.WriteString(`<!doctype html><html><head><title>fs</title></head><body><div role="navigation"><a href="/">Index</a></div><div role="main" id="apicontent">`)
	for i := range 8 {
		fmt.Fprintf(&b, `<section><h3>fs.call%d()<span><a class="mark" href="#f%d" id="f%d">#</a></span></h3>`+
			`<div class="api_metadata"><details class="changelog"><summary>History</summary><table><tbody><tr><th>Version</th><th>Changes</th></tr><tr><td>v%d.0.0</td><td>Changed%d</td></tr></tbody></table></details></div>`+
			`<p>%s</p><pre><code class="language-js">fs.call%d(path)</code></pre></section>`,
			i, i, i, i, i, strings.Join(prose, "</p><p>"), i)
	}
	b.WriteString(`</div></body></html>`)
	return b.String()
}

func TestDocumentationKeepsBoxesReadabilityWouldWeighDown(t *testing.T) {
	p := extract(t, historyPage(), true)
	for i := range 8 {
		if want := fmt.Sprintf("Changed%d", i); !strings.Contains(p.Markdown, want) {
			t.Errorf("markdown lacks %q:\n%s", want, p.Markdown)
		}
	}
}

// rulesPage is reference documentation in the style of the Rust
// reference: short paragraphs, each after a div holding only a link to
// its rule name. Readability drops link-only blocks, about a tenth of the
// words here, so the landmark itself is used.
func rulesPage() string {
	body := `<!doctype html><html><head><title>Unions</title></head><body><nav>menu</nav><main><h1 id="u"><a class="header" href="#u">Unions</a></h1>`
	for i := range 12 {
		body += fmt.Sprintf(`<div class="rule" id="r-%d"><a class="rule-link" href="#r-%d">[items.union.rule%d]</a></div><p>%s</p>`, i, i, i, prose[i%4][:60])
	}
	body += `<p>See <a href="items.html">the items chapter</a>.</p><div style="display: none">HiddenOnlyWord</div><p hidden>HiddenOnlyWord</p><button>ButtonOnlyWord</button></main></body></html>`
	return body
}

func TestDocumentationFallsBackToTheLandmark(t *testing.T) {
	p := extract(t, rulesPage(), true)
	for i := range 12 {
		// The converter escapes the brackets of the link text.
		if want := fmt.Sprintf("items.union.rule%d\\]", i); !strings.Contains(p.Markdown, want) {
			t.Errorf("markdown lacks %q:\n%s", want, p.Markdown)
		}
	}
	for _, leak := range []string{"HiddenOnlyWord", "ButtonOnlyWord", "menu"} {
		if strings.Contains(p.Markdown, leak) {
			t.Errorf("markdown holds %q:\n%s", leak, p.Markdown)
		}
	}
	if !strings.Contains(p.Markdown, "# Unions") {
		t.Errorf("the landmark's h1 is missing:\n%s", p.Markdown)
	}
	if !strings.Contains(p.HTML, `href="https://site.example.com/items.html"`) {
		t.Errorf("the HTML form's links are not absolute:\n%s", p.HTML)
	}
}

func TestAnImplausibleLandmarkIsIgnored(t *testing.T) {
	// A documentation-looking <main> that holds only a banner; the
	// article is beside it.
	var article strings.Builder
	for _, p := range prose {
		article.WriteString("<p>" + p + "</p>")
	}
	src := `<html><body><main><h1 id="w"><a href="#w">Welcome</a></h1></main><div class="post">` + article.String() + `</div></body></html>`
	p := extract(t, src, true)
	if !strings.Contains(p.Markdown, "troubleshooting section") {
		t.Errorf("the article beside the landmark is lost:\n%s", p.Markdown)
	}
}

func TestNavigationInsideTheArticleGoes(t *testing.T) {
	article := `<h1>Guide</h1><nav class="toc"><ul><li><a href="#a">TocOnlyWord one</a></li><li><a href="#b">TocOnlyWord two</a></li></ul></nav>`
	for _, p := range prose {
		article += "<p>" + p + "</p>"
	}
	article += `<div role="navigation"><a href="/prev">PrevOnlyWord</a></div>`
	p := extract(t, articlePage(article), true)
	if strings.Contains(p.Markdown, "TocOnlyWord") || strings.Contains(p.Markdown, "PrevOnlyWord") {
		t.Errorf("navigation inside the article kept:\n%s", p.Markdown)
	}
}
