package fetch

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

const articlePage = `<!doctype html><html><head><title>Guide - Site</title></head><body>
<nav><a href="/">Home</a> NAVTEXT menu</nav>
<article><h1>Getting Started</h1>
<p>This guide explains how the widget framework loads its configuration files and how the loader merges the defaults with the values you set.</p>
<p>Each section below walks through one step of the process in detail, with examples that you can copy into your own project to try it out.</p>
<pre><code class="language-go">x := 1</code></pre>
<p>When the loader finds two values for the same key it keeps the one from the file that was read last, and it reports the conflict in the log.</p>
</article>
<footer>FOOTERTEXT copyright</footer></body></html>`

func TestArticlePageKeepsMainContentAndMetadata(t *testing.T) {
	w := newWorld(t)
	w.https("site.example.com", htmlPage(articlePage))
	res := w.mustFetch(req("https://site.example.com/guide"))
	out := res.Output
	if !strings.HasPrefix(out, "---\nrequested_url: \"https://site.example.com/guide\"\n") {
		t.Fatalf("output does not start with the metadata block:\n%s", clip(out))
	}
	wantContains(t, out, `source_kind: "html"`, "extracted_main: true", "used_llms_txt: false",
		"redirect_chain: []", "cache_hit: false", "quality_signals: []", `decoded_charset: "utf-8"`,
		"decode_fallback: false", "llms_probe_truncated: false", "widget framework", "```go\nx := 1\n```",
		`canonical_url: "https://site.example.com/guide"`)
	wantLacks(t, out, "NAVTEXT", "FOOTERTEXT")
	if res.Title == "" {
		t.Error("no title")
	}
}

func TestWholeBodyWhenNotExtracting(t *testing.T) {
	w := newWorld(t)
	w.https("site.example.com", htmlPage(articlePage))
	out := w.mustFetch(req("https://site.example.com/guide", func(r *Request) { r.ExtractMain = false })).Output
	wantContains(t, out, "NAVTEXT", "FOOTERTEXT", "extracted_main: false")
}

func TestHTMLFormatWrapsMetadataInAComment(t *testing.T) {
	w := newWorld(t)
	w.https("site.example.com", htmlPage(articlePage))
	out := w.mustFetch(req("https://site.example.com/guide", func(r *Request) { r.Format = HTML })).Output
	if !strings.HasPrefix(out, "<!--\n---\n") || !strings.Contains(out, "---\n-->\n") {
		t.Fatalf("metadata is not a leading comment:\n%s", clip(out))
	}
	wantContains(t, out, "widget framework")
	wantLacks(t, out, "NAVTEXT")
	raw := w.mustFetch(req("https://site.example.com/guide", func(r *Request) { r.Format = HTML; r.ExtractMain = false })).Output
	wantContains(t, raw, "<title>Guide - Site</title>", "<head>")
}

func TestCommentEscapesDoubleHyphens(t *testing.T) {
	w := newWorld(t)
	w.https("site.example.com", htmlPage(`<html><head><title>a --> b</title></head><body><p>text here</p></body></html>`))
	out := w.mustFetch(req("https://site.example.com/", func(r *Request) { r.Format = HTML })).Output
	end := strings.Index(out, "\n---\n-->\n")
	if end < 0 || strings.Index(out, "-->") != end+5 {
		t.Fatalf("a value ends the comment early:\n%s", clip(out))
	}
	wantContains(t, out, `a -\u002d> b`)
}

func TestNoMetadata(t *testing.T) {
	w := newWorld(t)
	w.https("site.example.com", htmlPage(articlePage))
	out := w.mustFetch(req("https://site.example.com/guide", func(r *Request) { r.IncludeMetadata = false })).Output
	if strings.HasPrefix(out, "---") {
		t.Fatalf("metadata printed:\n%s", clip(out))
	}
	wantContains(t, out, "widget framework")
}

func TestFragmentsShareOneCacheEntry(t *testing.T) {
	w := newWorld(t).withCache()
	s := w.https("site.example.com", htmlPage(articlePage))
	w.mustFetch(req("https://site.example.com/docs#sec1"))
	out := w.mustFetch(req("https://site.example.com/docs#sec2")).Output
	if s.hits() != 1 {
		t.Fatalf("server hit %d times, want 1", s.hits())
	}
	for _, p := range s.paths() {
		if strings.Contains(p, "#") {
			t.Errorf("the server saw a fragment: %s", p)
		}
	}
	wantContains(t, out, "cache_hit: true", `requested_url: "https://site.example.com/docs#sec2"`)
}

func TestContentTypes(t *testing.T) {
	cases := []struct {
		name, ct, body string
		opts           func(*Request)
		want, lacks    []string
	}{
		{name: "text collapses blank runs", ct: "text/plain", body: "one\n\n\n\n\ntwo",
			want: []string{"one\n\ntwo", `source_kind: "text"`, "extracted_main: false"}, lacks: []string{"one\n\n\ntwo", "title:"}},
		{name: "text that starts like HTML is HTML", ct: "text/plain", body: "  <!DOCTYPE html><html><body><p>hello page</p></body></html>",
			want: []string{`source_content_type: "text/html"`, `source_kind: "html"`}},
		{name: "octet-stream HTML", ct: "application/octet-stream", body: "<html><body><p>hi there</p></body></html>",
			want: []string{`source_content_type: "text/html"`}},
		{name: "octet-stream text", ct: "application/octet-stream", body: "just some ascii text",
			want: []string{`source_content_type: "text/plain"`}},
		{name: "no type, text", ct: "", body: "just some ascii text",
			want: []string{`source_content_type: "text/plain"`}},
		{name: "no type, PNG bytes", ct: "", body: "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01",
			want: []string{`binary_kind: "image"`, "content fetched but not saved"}},
		{name: "markdown with its own frontmatter", ct: "text/markdown", body: "---\nurl: https://site.example.com/real\n---\n# Real\nbody",
			want: []string{"---\n\nSource content:\n\n---\nurl:", `canonical_url: "https://site.example.com/real"`}},
		{name: "text as html is escaped in pre", ct: "text/plain", body: "a<b", opts: func(r *Request) { r.Format = HTML },
			want: []string{"<pre>a&lt;b</pre>"}},
		{name: "xhtml keeps the XML declaration first", ct: "application/xhtml+xml",
			body: `<?xml version="1.0" encoding="UTF-8"?><html xmlns="http://www.w3.org/1999/xhtml"><body><p>x</p></body></html>`,
			opts: func(r *Request) { r.Format = HTML; r.ExtractMain = false },
			want: []string{"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!--\n---\n"}},
		{name: "BOM then doctype as text/plain", ct: "text/plain", body: "\uFEFF<!doctype html><html><body><p>bom page</p></body></html>",
			want: []string{`source_content_type: "text/html"`}, lacks: []string{"\uFEFF"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			w.https("site.example.com", typed(c.ct, c.body))
			r := req("https://site.example.com/x")
			if c.opts != nil {
				c.opts(&r)
			}
			out := w.mustFetch(r).Output
			wantContains(t, out, c.want...)
			wantLacks(t, out, c.lacks...)
		})
	}
}

func TestCharsets(t *testing.T) {
	filler := strings.Repeat("plain words for the guesser to read. ", 10)
	cases := []struct {
		name, ct string
		body     []byte
		want     []string
		lacks    []string
	}{
		{"undeclared windows-1252", "text/html", []byte("<html><body><p>" + filler + "caf\xe9</p></body></html>"),
			[]string{"café", `decoded_charset: "windows-1252"`, "decode_fallback: true", `decode_warning: "Guessed charset without declaration: windows-1252"`}, nil},
		{"Shift_JIS by meta", "text/html", append(append([]byte(`<html><head><meta charset="Shift_JIS"></head><body><p>`), 0x93, 0xfa, 0x96, 0x7b), []byte("</p></body></html>")...),
			[]string{"日本", `decoded_charset: "Shift_JIS"`, "decode_fallback: false"}, []string{"\ncharset:"}},
		{"unknown label", "text/html; charset=x-bogus", []byte("<html><body><p>hello</p></body></html>"),
			[]string{`charset: "x-bogus"`, `decoded_charset: "utf-8"`, "decode_fallback: true", `decode_warning: "Unsupported charset decoder: x-bogus"`}, nil},
		{"UTF-8 after a long ASCII start", "text/html", []byte("<html><body><p>" + strings.Repeat("a", 1500) + " naïve</p></body></html>"),
			[]string{"naïve", `decoded_charset: "utf-8"`}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			w.https("site.example.com", typed(c.ct, string(c.body)))
			out := w.mustFetch(req("https://site.example.com/x")).Output
			wantContains(t, out, c.want...)
			wantLacks(t, out, c.lacks...)
		})
	}
}

// A body without Content-Length is cut at 10 MiB and read no further: the
// server, which would send 64 MiB, gets no more than the limit and what
// the connection's buffers held when slim hung up.
func TestLargeBodyIsCutAtTheLimit(t *testing.T) {
	var sent atomic.Int64
	done := make(chan struct{})
	w := newWorld(t)
	w.https("site.example.com", http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		defer close(done)
		rw.Header().Set("Content-Type", "text/html")
		rw.(http.Flusher).Flush() // no Content-Length
		chunk := []byte("<p>" + strings.Repeat("word ", 200) + "</p>\n")
		for sent.Load() < 64<<20 {
			n, err := rw.Write(chunk)
			sent.Add(int64(n))
			if err != nil {
				return
			}
		}
	}))
	res := w.mustFetch(req("https://site.example.com/big"))
	if !res.Truncated {
		t.Error("not reported truncated")
	}
	wantContains(t, res.Output, "truncated: true")
	if !strings.HasSuffix(res.Output, "[..content truncated..]") {
		t.Errorf("output does not end with the truncation mark: ...%s", res.Output[max(0, len(res.Output)-200):])
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the server is still sending: the body was not closed at the limit")
	}
	if n := sent.Load(); n > 24<<20 {
		t.Errorf("the server sent %d MiB: the body was read past the 10 MiB limit", n>>20)
	}
}

func TestGzipBombStopsAtTheLimit(t *testing.T) {
	var z bytes.Buffer
	gw, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
	chunk := bytes.Repeat([]byte("a"), 1<<20)
	for i := 0; i < 64; i++ {
		_, _ = gw.Write(chunk)
	}
	_ = gw.Close()
	w := newWorld(t)
	w.https("site.example.com", http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/plain")
		rw.Header().Set("Content-Encoding", "gzip")
		_, _ = rw.Write(z.Bytes())
	}))
	start := time.Now()
	res := w.mustFetch(req("https://site.example.com/bomb"))
	if !res.Truncated {
		t.Fatal("a 64 MiB bomb was not cut")
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %v", d)
	}
}

func png(n int) []byte {
	b := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{0}, n-8)...)
	return b
}

func TestBinaries(t *testing.T) {
	t.Run("image not saved", func(t *testing.T) {
		w := newWorld(t)
		w.https("site.example.com", typed("image/png", string(png(1024))))
		out := w.mustFetch(req("https://site.example.com/a.png")).Output
		wantContains(t, out, "IMAGE content fetched but not saved. Re-run with save_binary=true to persist it.", "save_binary: false")
		if ents, _ := os.ReadDir(w.cfg.BinaryDir); len(ents) != 0 {
			t.Errorf("files were created: %v", ents)
		}
	})
	t.Run("image saved", func(t *testing.T) {
		w := newWorld(t)
		body := png(1024)
		w.https("site.example.com", typed("image/png", string(body)))
		res := w.mustFetch(req("https://site.example.com/pic.png", func(r *Request) { r.SaveBinary = true }))
		path, _ := res.Metadata.Get("saved_path").(string)
		if path == "" || !strings.HasPrefix(path, w.cfg.BinaryDir) || filepath.Base(path) != "pic.png" {
			t.Fatalf("saved_path %q", path)
		}
		got, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(got, body) {
			t.Fatalf("saved bytes differ (%v)", err)
		}
		wantContains(t, res.Output, "IMAGE content saved to "+path, "download_limit_bytes: 10485760")
	})
	t.Run("pdf over the limit is not read", func(t *testing.T) {
		w := newWorld(t)
		release := make(chan struct{})
		t.Cleanup(func() { close(release) })
		w.https("site.example.com", http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			rw.Header().Set("Content-Type", "application/pdf")
			rw.Header().Set("Content-Length", fmt.Sprint(3<<20))
			rw.WriteHeader(200)
			rw.(http.Flusher).Flush()
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}))
		start := time.Now()
		res := w.mustFetch(req("https://site.example.com/doc.pdf"))
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("took %v: the body was waited for", d)
		}
		wantContains(t, res.Output, "binary_metadata_only: true", "download_limit_bytes: 2097152", "PDF content omitted because it exceeds the download limit.")
	})
	t.Run("octet-stream without length over the limit", func(t *testing.T) {
		w := newWorld(t)
		w.https("site.example.com", http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			rw.Header().Set("Content-Type", "application/octet-stream")
			rw.(http.Flusher).Flush()
			junk := bytes.Repeat([]byte{0, 1, 2, 0xff}, 1<<18)
			for i := 0; i < 5; i++ {
				if _, err := rw.Write(junk); err != nil {
					return
				}
			}
		}))
		out := w.mustFetch(req("https://site.example.com/blob")).Output
		wantContains(t, out, "binary_metadata_only: true")
	})
	t.Run("content-disposition names and a second save", func(t *testing.T) {
		w := newWorld(t)
		w.https("site.example.com", http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			rw.Header().Set("Content-Type", "application/pdf")
			rw.Header().Set("Content-Disposition", `attachment; filename*=UTF-8''na%C3%AFve%20r%C3%A9sum%C3%A9.pdf`)
			_, _ = rw.Write([]byte("%PDF-1.4 " + r.URL.Query().Get("v")))
		}))
		a := w.mustFetch(req("https://site.example.com/d?v=1", func(r *Request) { r.SaveBinary = true }))
		wantContains(t, a.Output, `filename: "naïve résumé.pdf"`)
		b := w.mustFetch(req("https://site.example.com/d?v=2", func(r *Request) { r.SaveBinary = true }))
		if p, _ := b.Metadata.Get("saved_path").(string); filepath.Base(p) != "naïve résumé-1.pdf" {
			t.Errorf("second save at %q", p)
		}
	})
	t.Run("hostile filename stays inside", func(t *testing.T) {
		w := newWorld(t)
		w.https("site.example.com", http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			rw.Header().Set("Content-Type", "application/zip")
			rw.Header().Set("Content-Disposition", `attachment; filename="../../etc/passwd"`)
			_, _ = rw.Write([]byte("PK\x03\x04"))
		}))
		res := w.mustFetch(req("https://site.example.com/z", func(r *Request) { r.SaveBinary = true }))
		wantContains(t, res.Output, `filename: "_.._etc_passwd"`)
		p, _ := res.Metadata.Get("saved_path").(string)
		if rel, err := filepath.Rel(w.cfg.BinaryDir, p); err != nil || strings.HasPrefix(rel, "..") {
			t.Errorf("saved outside the directory: %q", p)
		}
	})
	t.Run("jpeg without a name", func(t *testing.T) {
		w := newWorld(t)
		w.https("site.example.com", typed("image/jpeg", "\xff\xd8\xff\xe0 jpeg"))
		res := w.mustFetch(req("https://site.example.com/download", func(r *Request) { r.SaveBinary = true }))
		p, _ := res.Metadata.Get("saved_path").(string)
		if !strings.HasPrefix(filepath.Base(p), "webfetch-") || !strings.HasSuffix(p, ".jpg") {
			t.Errorf("saved as %q", p)
		}
	})
}

func TestRedirects(t *testing.T) {
	t.Run("same origin is followed", func(t *testing.T) {
		w := newWorld(t)
		mux := http.NewServeMux()
		mux.Handle("/start", redirect(302, "/next"))
		mux.Handle("/next", htmlPage(articlePage))
		w.https("site.example.com", mux)
		res := w.mustFetch(req("https://site.example.com/start"))
		wantContains(t, res.Output, `final_url: "https://site.example.com/next"`, `  - "302 https://site.example.com/start -> https://site.example.com/next"`)
	})
	blocked := []struct{ name, to string }{
		{"other host", "https://other.example.com/landing"},
		{"https to http", "http://site.example.com/a"},
		{"user info", "https://u:p@site.example.com/x"},
		{"protocol relative other host", "//other.example.com/x"},
	}
	for _, c := range blocked {
		t.Run("blocked: "+c.name, func(t *testing.T) {
			w := newWorld(t).withCache()
			s := w.https("site.example.com", redirect(302, c.to))
			other := w.https("other.example.com", htmlPage("<p>other</p>"))
			res, err := w.fetch(req("https://site.example.com/a"))
			if err != nil {
				t.Fatalf("a blocked redirect is an error: %v", err)
			}
			wantContains(t, res.Output, "Redirect was blocked by policy.", "Status: 302", "Re-run webfetch with the redirect URL to continue.", "redirect_url: ")
			if other.hits() != 0 {
				t.Errorf("the redirect target was contacted")
			}
			w.mustFetch(req("https://site.example.com/a"))
			if s.hits() != 2 {
				t.Errorf("a blocked answer was cached (hits %d)", s.hits())
			}
		})
	}
	t.Run("nine redirects then a page", func(t *testing.T) {
		w := newWorld(t)
		w.https("site.example.com", chainHandler(9))
		res := w.mustFetch(req("https://site.example.com/r0"))
		if ch, _ := res.Metadata.Get("redirect_chain").([]string); len(ch) != 9 {
			t.Errorf("chain %v", ch)
		}
	})
	t.Run("ten redirects is too many", func(t *testing.T) {
		w := newWorld(t)
		w.https("site.example.com", chainHandler(10))
		_, err := w.fetch(req("https://site.example.com/r0"))
		wantErr(t, err, Failed, "Too many redirects (exceeded 10)")
	})
	t.Run("missing location", func(t *testing.T) {
		w := newWorld(t)
		w.https("site.example.com", http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) { rw.WriteHeader(302) }))
		_, err := w.fetch(req("https://site.example.com/a"))
		wantErr(t, err, Failed, "Redirect response missing location header: 302")
	})
	t.Run("relative location", func(t *testing.T) {
		w := newWorld(t)
		mux := http.NewServeMux()
		mux.Handle("/a/c", redirect(302, "../b?x=1"))
		mux.Handle("/b", htmlPage(articlePage))
		w.https("site.example.com", mux)
		wantContains(t, w.mustFetch(req("https://site.example.com/a/c")).Output, `final_url: "https://site.example.com/b?x=1"`)
	})
	t.Run("unasked 304 is an error", func(t *testing.T) {
		w := newWorld(t)
		w.https("site.example.com", http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) { rw.WriteHeader(304) }))
		_, err := w.fetch(req("https://site.example.com/a"))
		wantErr(t, err, Failed, "Request failed with status code: 304")
	})
	t.Run("meta refresh on the same origin is followed", func(t *testing.T) {
		w := newWorld(t)
		mux := http.NewServeMux()
		mux.Handle("/old/", htmlPage(`<!DOCTYPE html><html><head><meta http-equiv="refresh" content="0; URL=../new/page.html"></head><body>Redirecting...</body></html>`))
		mux.Handle("/new/page.html", htmlPage(articlePage))
		w.https("site.example.com", mux)
		out := w.mustFetch(req("https://site.example.com/old/")).Output
		wantContains(t, out, "widget framework", `final_url: "https://site.example.com/new/page.html"`, "refresh https://site.example.com/old/ -> https://site.example.com/new/page.html")
	})
	t.Run("meta refresh to another host is blocked", func(t *testing.T) {
		w := newWorld(t)
		w.https("site.example.com", htmlPage(`<html><head><meta http-equiv="refresh" content="0;url=https://other.example.com/"></head><body></body></html>`))
		other := w.https("other.example.com", htmlPage("<p>other</p>"))
		out := w.mustFetch(req("https://site.example.com/")).Output
		wantContains(t, out, "Redirect was blocked by policy.", "Redirect URL: https://other.example.com/")
		if other.hits() != 0 {
			t.Error("the refresh target was contacted")
		}
	})
}

func chainHandler(n int) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		var i int
		fmt.Sscanf(r.URL.Path, "/r%d", &i)
		if i < n {
			rw.Header().Set("Location", fmt.Sprintf("/r%d", i+1))
			rw.WriteHeader(302)
			return
		}
		rw.Header().Set("Content-Type", "text/plain")
		_, _ = rw.Write([]byte("end of the chain"))
	})
}

func wantErr(t *testing.T, err error, k Kind, msg string) {
	t.Helper()
	e, ok := AsError(err)
	if !ok {
		t.Fatalf("error %v (%T), want a *fetch.Error", err, err)
	}
	if e.Kind != k || !strings.Contains(e.Message, msg) {
		t.Fatalf("error %s %q, want %s %q", e.Kind, e.Message, k, msg)
	}
}

func TestHTTPUpgrade(t *testing.T) {
	t.Run("https answers", func(t *testing.T) {
		w := newWorld(t)
		s := newTLSSite(t, htmlPage(articlePage))
		w.serve("site.example.com:443", s)
		res := w.mustFetch(req("http://site.example.com/"))
		wantContains(t, res.Output, "upgraded_to_https: true", `final_url: "https://site.example.com/"`)
	})
	t.Run("only http answers", func(t *testing.T) {
		w := newWorld(t)
		s := newPlainSite(t, htmlPage(articlePage))
		w.serve("site.example.com:80", s)
		w.serve("site.example.com:443", s) // https to a plain server fails fast
		res := w.mustFetch(req("http://site.example.com/"))
		wantContains(t, res.Output, "upgraded_to_https: false", `final_url: "http://site.example.com/"`)
	})
	t.Run("https 404, http 200", func(t *testing.T) {
		w := newWorld(t)
		w.https("site.example.com", http.NotFoundHandler())
		w.serve("site.example.com:80", newPlainSite(t, htmlPage(articlePage)))
		res := w.mustFetch(req("http://site.example.com/"))
		wantContains(t, res.Output, "upgraded_to_https: false", "widget framework")
	})
	t.Run("both redirect away", func(t *testing.T) {
		w := newWorld(t)
		w.https("site.example.com", redirect(301, "https://other.example.com/"))
		w.serve("site.example.com:80", newPlainSite(t, redirect(301, "https://other.example.com/")))
		res := w.mustFetch(req("http://site.example.com/"))
		wantContains(t, res.Output, "Redirect was blocked by policy.", "upgraded_to_https: false")
	})
}

func TestErrors(t *testing.T) {
	t.Run("404 is an error and is not cached", func(t *testing.T) {
		w := newWorld(t).withCache()
		s := w.https("site.example.com", http.NotFoundHandler())
		_, err := w.fetch(req("https://site.example.com/missing"))
		wantErr(t, err, Failed, "Request failed with status code: 404")
		_, _ = w.fetch(req("https://site.example.com/missing"))
		if s.hits() != 2 {
			t.Errorf("hits %d, want 2", s.hits())
		}
	})
	t.Run("timeout", func(t *testing.T) {
		w := newWorld(t)
		w.https("site.example.com", http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			select {
			case <-time.After(5 * time.Second):
			case <-r.Context().Done():
			}
		}))
		start := time.Now()
		_, err := w.fetch(req("https://site.example.com/slow", func(r *Request) { r.Timeout = time.Second }))
		wantErr(t, err, Failed, "timeout after 1000ms")
		if d := time.Since(start); d > 4*time.Second {
			t.Errorf("took %v", d)
		}
	})
	t.Run("slow loris body", func(t *testing.T) {
		w := newWorld(t)
		w.https("site.example.com", http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			rw.Header().Set("Content-Type", "text/plain")
			for i := 0; i < 100; i++ {
				if _, err := rw.Write([]byte("x")); err != nil {
					return
				}
				rw.(http.Flusher).Flush()
				select {
				case <-time.After(200 * time.Millisecond):
				case <-r.Context().Done():
					return
				}
			}
		}))
		_, err := w.fetch(req("https://site.example.com/drip", func(r *Request) { r.Timeout = time.Second }))
		wantErr(t, err, Failed, "timeout after 1000ms")
	})
	bad := []struct {
		name string
		r    Request
	}{
		{"timeout over the maximum", req("https://site.example.com/", func(r *Request) { r.Timeout = 121 * time.Second })},
		{"zero timeout", req("https://site.example.com/", func(r *Request) { r.Timeout = 0 })},
		{"file URL", req("file:///etc/passwd")},
		{"ftp URL", req("ftp://site.example.com/")},
		{"unknown format", req("https://site.example.com/", func(r *Request) { r.Format = "pdf" })},
		{"unknown llms mode", req("https://site.example.com/", func(r *Request) { r.PreferLLMs = "sometimes" })},
		{"user info", req("https://u:p@site.example.com/")},
		{"no URL", req("")},
	}
	for _, c := range bad {
		t.Run("usage: "+c.name, func(t *testing.T) {
			w := newWorld(t)
			s := w.https("site.example.com", htmlPage(articlePage))
			_, err := w.fetch(c.r)
			e, ok := AsError(err)
			if !ok || e.Kind != Usage {
				t.Fatalf("err %v, want a usage error", err)
			}
			if s.hits() != 0 {
				t.Error("a request was sent")
			}
		})
	}
}

func TestAddressPolicy(t *testing.T) {
	t.Run("a public name that resolves to loopback is refused", func(t *testing.T) {
		w := newWorld(t)
		s := newTLSSite(t, htmlPage(articlePage))
		_, port, _ := strings.Cut(s.addr(), ":")
		w.roots.AddCert(s.srv.Certificate())
		w.cfg.Network.Resolver = fakeDNS{"public.example.com": "127.0.0.1"}
		_, err := w.fetch(req("https://public.example.com:" + port + "/"))
		wantErr(t, err, Blocked, "loopback")
		if s.hits() != 0 {
			t.Error("the server was contacted")
		}
		w.cfg.Network.AllowPrivate = true
		if _, err := w.fetch(req("https://public.example.com:" + port + "/")); err != nil {
			t.Fatalf("allowed private: %v", err)
		}
	})
	for _, target := range []string{"http://127.0.0.1:%s/", "http://169.254.169.254:%s/latest/meta-data/", "http://[::ffff:127.0.0.1]:%s/"} {
		t.Run("literal "+target, func(t *testing.T) {
			w := newWorld(t)
			s := newPlainSite(t, htmlPage(articlePage))
			_, port, _ := strings.Cut(s.addr(), ":")
			_, err := w.fetch(req(fmt.Sprintf(target, port)))
			e, ok := AsError(err)
			if !ok || e.Kind != Blocked {
				t.Fatalf("err %v, want blocked", err)
			}
			if s.hits() != 0 {
				t.Error("contacted")
			}
		})
	}
	t.Run("a redirect to loopback is refused at the hop", func(t *testing.T) {
		w := newWorld(t)
		local := newTLSSite(t, htmlPage(articlePage))
		w.roots.AddCert(local.srv.Certificate())
		// The site listens elsewhere but is reached on the loopback server's
		// port, so the hop keeps its port and only the address is wrong.
		port := strings.Split(local.addr(), ":")[1]
		to := "https://127.0.0.1:" + port
		w.cfg.AllowOrigins = []string{to}
		w.serve("site.example.com:"+port, newTLSSite(t, redirect(302, to+"/")))
		_, err := w.fetch(req("https://site.example.com:" + port + "/"))
		wantErr(t, err, Blocked, "loopback")
		if local.hits() != 0 {
			t.Error("loopback contacted")
		}
	})
}

func TestHeaders(t *testing.T) {
	w := newWorld(t)
	mux := http.NewServeMux()
	mux.Handle("/set", http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		http.SetCookie(rw, &http.Cookie{Name: "s", Value: "1"})
		rw.Header().Set("Location", "/page")
		rw.WriteHeader(302)
	}))
	mux.Handle("/page", htmlPage(articlePage))
	mux.Handle("/llms-full.txt", typed("text/plain", "# Docs\nall of it"))
	s := w.https("docs.example.com", mux)
	w.mustFetch(req("https://docs.example.com/set", func(r *Request) { r.PreferLLMs = LLMsNever }))
	for _, r := range s.log {
		if r.Header.Get("Cookie") != "" || r.Header.Get("Authorization") != "" {
			t.Errorf("%s sent Cookie or Authorization", r.URL)
		}
		if r.Header.Get("User-Agent") != UserAgent || r.Header.Get("Accept-Language") != "en;q=0.8,*;q=0.5" ||
			!strings.HasPrefix(r.Header.Get("Accept"), "text/html;q=1.0") {
			t.Errorf("%s headers %v", r.URL, r.Header)
		}
	}
	w.mustFetch(req("https://docs.example.com/page"))
	if got := s.last().Header.Get("Accept"); got != "text/plain, text/markdown;q=0.9, */*;q=0.1" {
		t.Errorf("probe Accept %q", got)
	}
}

func TestCancelledFetchIsInterruptedNotATimeout(t *testing.T) {
	w := newWorld(t)
	w.https("site.example.com", http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	_, err := Fetch(ctx, req("https://site.example.com/"), w.cfg)
	wantErr(t, err, Failed, "interrupted")
}
