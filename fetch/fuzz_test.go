package fetch

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzPlan: any URL either is refused as a usage error or gives a plan
// whose every pattern is an http(s) URL without user info or fragment, on
// the requested host's origins.
func FuzzPlan(f *testing.F) {
	for _, s := range []string{"https://example.com/a#b", "http://docs.example.com/x?y=1", "HTTPS://EXAMPLE.com:443", "file:///etc/passwd",
		"http://[::1]:8080/", "https://u:p@h/", "http://exa mple.com/", "http://xn--nxasmq6b.com/", "https://ü.example/ä", "//x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		p, err := PlanFor(NewRequest(raw))
		if err != nil {
			if e, ok := AsError(err); !ok || e.Kind != Usage {
				t.Fatalf("%q: error %v is not a usage error", raw, err)
			}
			return
		}
		origins := map[string]bool{}
		for _, o := range p.AllowedOrigins {
			origins[o] = true
		}
		for _, pat := range p.Patterns {
			u, err := urlParser.Parse(pat)
			if err != nil {
				t.Fatalf("%q: pattern %q does not parse: %v", raw, pat, err)
			}
			if s := u.Scheme(); s != "http" && s != "https" {
				t.Fatalf("%q: pattern %q has scheme %s", raw, pat, s)
			}
			if u.Username() != "" || u.Password() != "" || strings.Contains(pat, "#") {
				t.Fatalf("%q: pattern %q carries user info or a fragment", raw, pat)
			}
			if !origins[origin(u)] {
				t.Fatalf("%q: pattern %q is on an origin not in %v", raw, pat, p.AllowedOrigins)
			}
		}
	})
}

// FuzzMetaRefresh: the refresh scan never panics, reads at most the head,
// and any target it returns is a parsed URL other than the page.
func FuzzMetaRefresh(f *testing.F) {
	for _, s := range []string{`<meta http-equiv="refresh" content="0; URL=../new/">`, `<meta http-equiv=refresh content="5;url='x'">`,
		`<meta http-equiv="Refresh" content="0">`, `<body><meta http-equiv="refresh" content="0;url=/x">`, `<meta http-equiv="refresh" content="-1;url=/x">`} {
		f.Add(s)
	}
	base, _ := urlParser.Parse("https://site.example.com/old/page.html")
	f.Fuzz(func(t *testing.T, src string) {
		if !utf8.ValidString(src) {
			return
		}
		u := metaRefresh(src, base)
		if u == nil {
			return
		}
		if href(u) == href(base) {
			t.Fatalf("refresh to the page itself: %q", src)
		}
		if s := u.Scheme(); s == "" {
			t.Fatalf("no scheme in %q", href(u))
		}
	})
}

// FuzzMetadataRender: no value can add a line to the block or end the
// HTML comment early.
func FuzzMetadataRender(f *testing.F) {
	f.Add("a --> b", "x\ny")
	f.Add("\u2028", "--!>")
	f.Fuzz(func(t *testing.T, a, b string) {
		m := Metadata{{"title", a}, {"headings", []string{b, a}}, {"n", 3}}
		block := m.render(false)
		if n := strings.Count(block, "\n"); n != 2+1+1+2+1 {
			t.Fatalf("%d lines for three fields:\n%s", n, block)
		}
		c := m.render(true)
		if strings.Contains(c, "--!>") || strings.Contains(c, "-->") {
			t.Fatalf("comment can be closed:\n%s", c)
		}
	})
}

// FuzzCacheEntry: decodeEntry never panics, and what it accepts encodes
// back to the same bytes.
func FuzzCacheEntry(f *testing.F) {
	e := &entry{Kind: "page", FinalURL: "https://x/", Markdown: "# a\n\n12\nb", Text: "a 12", HTML: "<p>\n</p>", Chain: []string{}, Signals: []string{}}
	b, _ := encodeEntry(e)
	f.Add(b)
	f.Add([]byte("{\"kind\":\"page\"}\n0\n0\n0\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := decodeEntry(b)
		if err != nil {
			return
		}
		again, err := encodeEntry(e)
		if err != nil {
			t.Fatal(err)
		}
		e2, err := decodeEntry(again)
		if err != nil || e2.Markdown != e.Markdown || e2.Text != e.Text || e2.HTML != e.HTML || e2.FinalURL != e.FinalURL {
			t.Fatalf("round trip changed the entry: %v", err)
		}
	})
}
