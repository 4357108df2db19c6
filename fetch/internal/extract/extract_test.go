package extract

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func mustURL(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

const guideURL = "https://site.example.com/guide"

// prose is a few paragraphs of article text, long enough for Readability
// to take the element holding them for the article.
var prose = []string{
	"Installing the tool takes a minute, and the rest of this guide walks through the first project, the configuration file, and the commands you will use every day.",
	"The configuration file lives next to your code, and every key in it has a default, so an empty file is a valid start; the sections below describe each key in turn, with examples.",
	"When something goes wrong, the error message names the file and the line, and the troubleshooting section at the end of the guide lists the mistakes people make most often, with fixes.",
	"Each command accepts the same global options, which control the output format, the verbosity and the colour; options given on the command line win over those in the file.",
}

// articlePage is a typical page: a site header with navigation, an
// article, and a footer.
func articlePage(article string) string {
	return `<!doctype html><html><head><title>Guide - Example Site</title></head><body>
<header><nav><a href="/">Home</a> <a href="/blog">Blog</a> <a href="/pricing">Pricing</a> <a href="/about">NavigationOnlyWord</a></nav></header>
<article>` + article + `</article>
<footer><p>Copyright FooterOnlyWord Example Inc. All rights reserved. <a href="/legal">Legal</a></p></footer>
</body></html>`
}

func defaultArticle() string {
	var b strings.Builder
	b.WriteString("<h1>Getting started</h1>")
	for _, p := range prose {
		b.WriteString("<p>" + p + "</p>\n")
	}
	b.WriteString("<ul><li>first item</li><li>second item</li></ul>\n")
	b.WriteString("<pre>  indented\n\tline two  \n\n\nafter blank lines</pre>\n")
	b.WriteString("<p>See the <a href=\"reference/config\">configuration reference</a> for every key.</p>")
	return b.String()
}

func extract(t *testing.T, src string, extractMain bool) *Page {
	t.Helper()
	p, err := HTML(src, mustURL(t, guideURL), extractMain)
	if err != nil {
		t.Fatalf("HTML: %v", err)
	}
	return p
}

func TestMainContentDropsNavigationAndFooter(t *testing.T) {
	p := extract(t, articlePage(defaultArticle()), true)
	if !p.Extracted {
		t.Fatal("Extracted = false for an article page")
	}
	for _, form := range []struct{ name, s string }{{"markdown", p.Markdown}, {"text", p.Text}, {"html", p.HTML}} {
		if !strings.Contains(form.s, "the first project") {
			t.Errorf("%s lacks the article text:\n%s", form.name, form.s)
		}
		for _, word := range []string{"NavigationOnlyWord", "FooterOnlyWord"} {
			if strings.Contains(form.s, word) {
				t.Errorf("%s holds %q from outside the article", form.name, word)
			}
		}
	}
	if len(p.Signals) != 0 {
		t.Errorf("signals %v, want none for a normal article", p.Signals)
	}
	if p.Title != "Guide - Example Site" {
		t.Errorf("title %q", p.Title)
	}
}

func TestWholePageKeepsNavigationFooterAndRawHTML(t *testing.T) {
	src := articlePage(defaultArticle())
	p := extract(t, src, false)
	if p.Extracted {
		t.Error("Extracted = true without extraction")
	}
	for _, word := range []string{"NavigationOnlyWord", "FooterOnlyWord", "the first project"} {
		if !strings.Contains(p.Markdown, word) || !strings.Contains(p.Text, word) {
			t.Errorf("markdown or text lacks %q", word)
		}
	}
	if p.HTML != src {
		t.Error("HTML is not the page exactly as given")
	}
	if !strings.Contains(p.HTML, "<title>Guide - Example Site</title>") {
		t.Error("HTML lacks the head")
	}
}

func TestTextForm(t *testing.T) {
	p := extract(t, articlePage(defaultArticle()), true)
	if regexp.MustCompile(`(?m)^#`).MatchString(p.Text) {
		t.Errorf("text has a markdown heading:\n%s", p.Text)
	}
	if regexp.MustCompile(`\[[^\]]*\]\([^)]*\)`).MatchString(p.Text) {
		t.Errorf("text has a markdown link:\n%s", p.Text)
	}
	for _, want := range []string{"\n- first item\n- second item\n", "  indented\n\tline two  \n\n\nafter blank lines", "\n\nSee the configuration reference for every key."} {
		if !strings.Contains(p.Text, want) {
			t.Errorf("text lacks %q:\n%s", want, p.Text)
		}
	}
}

func TestHTMLFormIsTheArticle(t *testing.T) {
	p := extract(t, articlePage(defaultArticle()), true)
	if !strings.Contains(p.HTML, "the first project") || strings.Contains(p.HTML, "NavigationOnlyWord") || strings.Contains(p.HTML, "<title>") {
		t.Errorf("HTML is not the article alone:\n%s", p.HTML)
	}
	if !strings.Contains(p.HTML, `href="https://site.example.com/reference/config"`) {
		t.Errorf("HTML link not absolute:\n%s", p.HTML)
	}
}

func TestMarkdownRendering(t *testing.T) {
	tests := []struct {
		name    string
		article string
		want    []string // substrings of the markdown
		absent  []string
	}{
		{
			name: "a code block keeps its language and its text",
			article: `<p>` + prose[0] + `</p><pre><code class="language-go">x := 1
if x &lt; 2 { return }</code></pre><p>` + prose[1] + `</p>`,
			want: []string{"```go\nx := 1\nif x < 2 { return }\n```"},
		},
		{
			name:    "rustdoc's rust class gives the fence its language",
			article: `<p>` + prose[0] + `</p><pre class="rust"><code>let x = 1;</code></pre><p>` + prose[1] + `</p>`,
			want:    []string{"```rust\nlet x = 1;\n```"},
		},
		{
			name:    "a table without th becomes a GFM table",
			article: `<p>` + prose[0] + `</p><table><tr><td>key</td><td>value</td></tr><tr><td>port</td><td>8080</td></tr></table><p>` + prose[1] + `</p>`,
			want:    []string{"| key | value |\n|", "| port | 8080 |"},
		},
		{
			name:    "h1 stays a level-one heading",
			article: `<h1>Top title</h1><p>` + prose[0] + `</p><h2>Second</h2><p>` + prose[1] + `</p><h3>Third</h3><p>` + prose[2] + `</p>`,
			want:    []string{"\n## Second\n", "\n### Third\n"},
		},
		{
			name:    "relative links and images become absolute against the page URL",
			article: `<p>` + prose[0] + ` Read <a href="../docs/a?x=1">the docs</a> and <a href="/b">b</a>.</p><p><img src="img/c.png" alt="c"> ` + prose[1] + `</p>`,
			want:    []string{"[the docs](https://site.example.com/docs/a?x=1)", "[b](https://site.example.com/b)", "](https://site.example.com/img/c.png)"},
		},
		{
			name:    "a headerlink permalink leaves a clean heading",
			article: `<h2>Install<a class="headerlink" title="Permanent link" href="#i">¶</a></h2><p>` + prose[0] + `</p><p>` + prose[1] + `</p>`,
			want:    []string{"## Install\n"},
			absent:  []string{"¶", "Permanent"},
		},
		{
			name:    "rustdoc and Node.js anchors are dropped, mdBook heading links unwrapped",
			article: `<h2 id="impls">Implementations<a href="#impls" class="anchor">§</a></h2><p>` + prose[0] + `</p><h2 id="x"><a class="header" href="#x">Wrapped title</a></h2><p>` + prose[1] + `</p><h3>Node style<span><a class="mark" href="#n" id="n">#</a></span></h3><p>` + prose[2] + `</p>`,
			want:    []string{"## Implementations\n", "## Wrapped title\n", "### Node style\n"},
			absent:  []string{"§", "[Wrapped title]", "[#]"},
		},
		{
			name:    "a paragraph holding only an image becomes Image omitted",
			article: `<p>` + prose[0] + `</p><p><img src="/pic.png" alt="a picture"></p><p>` + prose[1] + `</p>`,
			want:    []string{"\nImage omitted\n"},
			absent:  []string{"pic.png"},
		},
		{
			name:    "angle brackets in prose stay characters",
			article: `<p>` + prose[0] + ` It returns List&lt;String&gt; and a&gt;b.</p><p>` + prose[1] + `</p>`,
			want:    []string{"List<String> and a>b"},
			absent:  []string{"&lt;", "&gt;"},
		},
		{
			name:    "an issue reference in prose survives",
			article: `<p>` + prose[0] + `</p><ul><li>Fix crash (#1234)</li></ul><p>` + prose[1] + `</p>`,
			want:    []string{"- Fix crash (#1234)"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := extract(t, articlePage(tc.article), true)
			for _, w := range tc.want {
				if !strings.Contains(p.Markdown, w) {
					t.Errorf("markdown lacks %q:\n%s", w, p.Markdown)
				}
			}
			for _, a := range tc.absent {
				if strings.Contains(p.Markdown, a) {
					t.Errorf("markdown holds %q:\n%s", a, p.Markdown)
				}
			}
		})
	}
}

func TestHeadingLevelsSurviveExtraction(t *testing.T) {
	p := extract(t, articlePage(`<h1>Install the tool</h1><p>`+prose[0]+`</p><h1>Configure it</h1><p>`+prose[1]+`</p><p>`+prose[2]+`</p>`), true)
	if !strings.Contains(p.Markdown, "\n# Configure it\n") {
		t.Errorf("h1 lost its level:\n%s", p.Markdown)
	}
	if strings.Contains(p.HTML, headingLevelAttr) {
		t.Error("the level marker leaked into the HTML form")
	}
}

func TestHeadings(t *testing.T) {
	tests := []struct {
		name string
		body string
		want []string
	}{
		{"marks, closing sequences and C# are handled", `<h1>Getting Started ¶</h1><h2>Details ###</h2><h3>C#</h3><h3>F#</h3>`, []string{"Getting Started", "Details", "C#", "F#"}},
		{"h4 and deeper are not headings of the page", `<h1>One</h1><h4>Four</h4><h3>Three</h3>`, []string{"One", "Three"}},
		{"permalink markers and white space go, empty headings are dropped", "<h2>Install\n  the <em>tool</em><a class=\"anchor\" href=\"#i\">§</a></h2><h2> </h2><h2><a href=\"#x\">¶</a></h2>", []string{"Install the tool"}},
		{"headings outside the article count too", `<nav><h2>Site menu</h2></nav><h2>Body</h2>`, []string{"Site menu", "Body"}},
		{"at most twelve", strings.Repeat("<h2>Section</h2>", 15), slices.Repeat([]string{"Section"}, 12)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := extract(t, "<html><body>"+tc.body+"<p>"+prose[0]+"</p></body></html>", true)
			if !slices.Equal(p.Headings, tc.want) {
				t.Errorf("headings %q, want %q", p.Headings, tc.want)
			}
		})
	}
}

func TestHeadingsFallBackToMarkdownLines(t *testing.T) {
	p := Text("# Project\n> Summary\n- [Docs](https://site.example.com/docs)\n\n## Usage\ntext")
	if !slices.Equal(p.Headings, []string{"Project", "Usage"}) {
		t.Errorf("headings %q", p.Headings)
	}
}

func TestCanonical(t *testing.T) {
	tests := []struct {
		name string
		head string
		want string
	}{
		{"a relative canonical is resolved", `<link rel="canonical" href="/canon/x">`, "https://site.example.com/canon/x"},
		{"rel holds several tokens", `<link rel="alternate canonical" href="https://other.example.com/y">`, "https://other.example.com/y"},
		{"none", ``, ""},
		{"a base element changes the resolution", `<base href="https://cdn.example.com/root/"><link rel="canonical" href="page">`, "https://cdn.example.com/root/page"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := extract(t, "<html><head>"+tc.head+"</head><body><p>"+prose[0]+"</p></body></html>", true)
			if p.Canonical != tc.want {
				t.Errorf("canonical %q, want %q", p.Canonical, tc.want)
			}
		})
	}
}

func TestTextSources(t *testing.T) {
	t.Run("blank runs collapse to one blank line", func(t *testing.T) {
		p := Text("first paragraph\n\n\n\n\n\nsecond paragraph\r\n\r\n\r\nthird\n  \n\t\nfourth\n")
		want := "first paragraph\n\nsecond paragraph\n\nthird\n\nfourth"
		if p.Text != want || p.HTML != want || p.Markdown != want {
			t.Errorf("text %q, html %q, markdown %q; want %q", p.Text, p.HTML, p.Markdown, want)
		}
		if p.Title != "" || p.Extracted {
			t.Errorf("title %q, extracted %v for a text source", p.Title, p.Extracted)
		}
	})
	t.Run("markdown front matter gives the canonical URL", func(t *testing.T) {
		p := Text("---\ntitle: Real\nurl: https://site.example.com/real\n---\n\n# Body\n")
		if p.Canonical != "https://site.example.com/real" {
			t.Errorf("canonical %q", p.Canonical)
		}
		if !strings.HasPrefix(p.Markdown, "---\n") {
			t.Errorf("markdown lost its front matter: %q", p.Markdown)
		}
	})
	t.Run("the markdown clean-up applies to text sources", func(t *testing.T) {
		p := Text("## 'Quoted'\n\n![logo](/logo.png)\n")
		if p.Markdown != "## Quoted\n\nImage omitted" {
			t.Errorf("markdown %q", p.Markdown)
		}
		if p.Text != "## 'Quoted'\n\n![logo](/logo.png)" {
			t.Errorf("text was changed: %q", p.Text)
		}
	})
}

func words(n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = fmt.Sprintf("word%d", i)
	}
	return strings.Join(w, " ")
}

func TestSignals(t *testing.T) {
	tests := []struct {
		name        string
		src         string
		extractMain bool
		want        []string
	}{
		{"ten words are very short", "<html><body><p>" + words(10) + "</p></body></html>", true, []string{SignalVeryShort}},
		{"a paywall phrase", articlePage("<p>" + prose[0] + "</p><p>" + prose[1] + " Subscribe to continue reading.</p><p>" + prose[2] + "</p>"), true, []string{SignalPaywall}},
		{"a whole page of script with little text", "<html><head><script>" + strings.Repeat("var a = 1;\n", 6000) + "</script></head><body><p>" + words(100) + "</p></body></html>", false, []string{SignalBoilerplate}},
		{"the same page extracted is not boilerplate", "<html><head><script>" + strings.Repeat("var a = 1;\n", 6000) + "</script></head><body><p>" + words(100) + "</p></body></html>", true, []string{}},
		{"an empty body", "<html><body></body></html>", false, []string{SignalBoilerplate, SignalEmpty}},
		{"a script-built page", `<html><body><div id="root"></div><noscript>You need to enable JavaScript to run this app.</noscript><script src="a.js"></script></body></html>`, true, []string{SignalBoilerplate, SignalEmpty, SignalJSRendered}},
		{"scripts in the head build the page", `<html><head><title>App</title><script src="a.js"></script><script src="b.js"></script><script src="c.js"></script></head><body><div id="root"></div></body></html>`, true, []string{SignalBoilerplate, SignalEmpty, SignalJSRendered}},
		{"many scripts and little text", `<html><body><p>Loading</p><script>1</script><script>2</script><script>3</script></body></html>`, false, []string{SignalVeryShort, SignalBoilerplate, SignalJSRendered}},
		{"a long title is not body text", `<html><head><title>` + words(80) + `</title><script src="a.js"></script><script src="b.js"></script><script src="c.js"></script></head><body><div id="root"></div></body></html>`, true, []string{SignalBoilerplate, SignalEmpty, SignalJSRendered}},
		{"many scripts after enough text", `<html><body><p>` + words(60) + `</p><script>1</script><script>2</script><script>3</script></body></html>`, false, []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := extract(t, tc.src, tc.extractMain)
			if p.Signals == nil {
				t.Fatal("Signals is nil")
			}
			if !slices.Equal(p.Signals, tc.want) {
				t.Errorf("signals %q, want %q (words %d)", p.Signals, tc.want, p.WordCount)
			}
		})
	}
}

func TestSignalsRules(t *testing.T) {
	tests := []struct {
		name                  string
		text, markdown        string
		raw                   int
		sourceHTML, extracted bool
		words                 int
		want                  []string
	}{
		{"59 words are very short", words(59), "", 0, false, false, 59, []string{SignalVeryShort}},
		{"60 words are not", words(60), "", 0, false, false, 60, []string{}},
		{"the paywall match ignores case and reads the markdown too", "", "Members Only area", 0, false, false, 100, []string{SignalPaywall}},
		{"boilerplate needs an HTML source", "abc", "", 1000, false, false, 100, []string{}},
		{"boilerplate is a ratio of ten", "0123456789", "", 100, true, false, 100, []string{SignalBoilerplate}},
		{"below ten is not boilerplate", "0123456789", "", 99, true, false, 100, []string{}},
		{"1200 words are never boilerplate", "0123456789", "", 1000, true, false, 1200, []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Signals(tc.text, tc.markdown, tc.raw, tc.sourceHTML, tc.extracted, tc.words)
			if got == nil || !slices.Equal(got, tc.want) {
				t.Errorf("Signals = %#v, want %q", got, tc.want)
			}
		})
	}
}

func TestWordCountIsTheTextForm(t *testing.T) {
	// The list marker is a token of the text form like any other.
	p := extract(t, "<html><body><p>one two</p><ul><li>three</li></ul><pre>four  five</pre></body></html>", false)
	if p.WordCount != 6 {
		t.Errorf("word count %d, want 6 (text %q)", p.WordCount, p.Text)
	}
}
