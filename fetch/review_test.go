package fetch

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http/httpproxy"
)

func TestBinaryNotSavedKeysInOrder(t *testing.T) {
	w := newWorld(t)
	w.https("site.example.com", typed("image/png", string(png(1024))))
	out := w.mustFetch(req("https://site.example.com/a.png")).Output
	if i, j := strings.Index(out, "\ncache_hit:"), strings.Index(out, "\ntruncated:"); i < 0 || j < 0 || i > j {
		t.Errorf("cache_hit must come before truncated:\n%s", out)
	}
}

func TestHitThroughTheFinalURLHasNoOtherRequestsHistory(t *testing.T) {
	w := newWorld(t).withCache()
	mux := http.NewServeMux()
	mux.Handle("/a", redirect(302, "/b"))
	mux.Handle("/b", htmlPage(articlePage))
	w.https("site.example.com", mux)
	w.mustFetch(req("https://site.example.com/a"))
	out := w.mustFetch(req("https://site.example.com/b")).Output
	wantContains(t, out, "cache_hit: true", "redirect_chain: []")
	// And the other way: the redirected request still reports its own hop.
	again := w.mustFetch(req("https://site.example.com/a")).Output
	wantContains(t, again, "302 https://site.example.com/a -> https://site.example.com/b")
}

func TestLoginInTheHostNameIsNotALoginPage(t *testing.T) {
	w := newWorld(t)
	mux := http.NewServeMux()
	mux.Handle("/llms-full.txt", typed("text/plain; charset=utf-8", llmsBody))
	w.https("loginradius.example.com", mux)
	out := w.mustFetch(req("https://loginradius.example.com/", func(r *Request) { r.PreferLLMs = LLMsAlways })).Output
	wantContains(t, out, "used_llms_txt: true", `charset: "utf-8"`, "llms_probe_truncated: false")
}

func TestRequestForTheProxyItselfIsBlocked(t *testing.T) {
	w := newWorld(t)
	w.cfg.Network.Proxy = &httpproxy.Config{HTTPSProxy: "http://proxy.example.com:3128", NoProxy: "proxy.example.com"}
	_, err := w.fetch(req("https://proxy.example.com:3128/"))
	wantErr(t, err, Blocked, "proxy")
}

func TestUTF8CutAtTheLimitStaysUTF8(t *testing.T) {
	body := bytes.Repeat([]byte("é "), MaxBodyBytes/3+1000)
	if body[MaxBodyBytes-1] != 0xC3 {
		t.Fatal("test setup: the cut must split a character")
	}
	w := newWorld(t)
	w.https("site.example.com", typed("text/plain", string(body)))
	res := w.mustFetch(req("https://site.example.com/big.txt", func(r *Request) { r.IncludeMetadata = true }))
	wantContains(t, res.Output, `decoded_charset: "utf-8"`, "decode_fallback: false", "truncated: true")
	wantLacks(t, res.Output, "Ã©")
}

func TestUnknownTypesAreJudgedByTheirBytes(t *testing.T) {
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(bytes.Repeat([]byte("data "), 2000))
	zw.Close()
	w := newWorld(t)
	mux := http.NewServeMux()
	mux.Handle("/a.tgz", typed("application/gzip", z.String()))
	mux.Handle("/notes", typed("application/x-custom-notes", "plain words in a vendor type"))
	w.https("site.example.com", mux)
	wantContains(t, w.mustFetch(req("https://site.example.com/a.tgz")).Output, `binary_kind: "binary"`, "BINARY content fetched but not saved")
	wantContains(t, w.mustFetch(req("https://site.example.com/notes")).Output, `source_kind: "text"`, "plain words in a vendor type")
}

func TestTruncatedLLMsTxtIsReported(t *testing.T) {
	w := newWorld(t)
	mux := http.NewServeMux()
	mux.Handle("/llms-full.txt", typed("text/plain", "# Big\n"+strings.Repeat("line of text\n", MaxBodyBytes/13+100)))
	w.https("site.example.com", mux)
	out := w.mustFetch(req("https://site.example.com/", func(r *Request) { r.PreferLLMs = LLMsAlways })).Output
	wantContains(t, out, "llms_probe_truncated: true", "truncated: true")
}

func secPage(m string) http.Handler {
	return htmlPage(`<html><head><title>T</title></head><body><article><h1>H</h1><p>` + m + ` words words words words words words words words words words words.</p></article></body></html>`)
}

// An alias written for the final URL of an earlier fetch does not outlive
// that answer: once the entry is replaced by a fetch that ended elsewhere,
// the alias is a miss, never another URL's page.
func TestStaleAliasIsAMissNotAnotherPage(t *testing.T) {
	w := newWorld(t).withCache()
	var redir atomic.Bool
	redir.Store(true)
	w.https("site.example.com", http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/a" && redir.Load():
			http.Redirect(rw, r, "/b", 302)
		case r.URL.Path == "/a":
			secPage("APAGE").ServeHTTP(rw, r)
		default:
			secPage("BPAGE").ServeHTTP(rw, r)
		}
	}))
	w.mustFetch(req("https://site.example.com/a"))
	redir.Store(false)
	w.cfg.Cache.Refresh = true
	w.mustFetch(req("https://site.example.com/a"))
	w.cfg.Cache.Refresh = false
	out := w.mustFetch(req("https://site.example.com/b")).Output
	wantContains(t, out, "BPAGE")
	wantLacks(t, out, "APAGE")
}

// A plain-http answer to an http URL is never served for the https URL.
func TestPlaintextAnswerIsNeverServedForHTTPS(t *testing.T) {
	w := newWorld(t).withCache()
	now := time.Now()
	w.cfg.Now = func() time.Time { return now }
	var broken atomic.Bool // an attacker on the path makes https fail
	w.https("site.example.com", http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if broken.Load() {
			rw.WriteHeader(503)
			return
		}
		secPage("SECURE").ServeHTTP(rw, r)
	}))
	w.serve("site.example.com:80", newPlainSite(t, secPage("PLAINTEXT")))
	wantContains(t, w.mustFetch(req("http://site.example.com/a")).Output, "upgraded_to_https: true")
	broken.Store(true)
	now = now.Add(16 * time.Minute)
	wantContains(t, w.mustFetch(req("http://site.example.com/a")).Output, "PLAINTEXT")
	broken.Store(false)
	out := w.mustFetch(req("https://site.example.com/a")).Output
	wantContains(t, out, "SECURE")
	wantLacks(t, out, "PLAINTEXT")
}

// What a fetch may reach is part of the cache key: a page fetched with
// private addresses open, or through an extra origin, is not served when
// they are closed.
func TestCacheKeepsTheNetworkPolicy(t *testing.T) {
	t.Run("private addresses", func(t *testing.T) {
		w := newWorld(t).withCache()
		s := newPlainSite(t, secPage("LOOPBACKSECRET"))
		u := "http://" + s.addr() + "/admin"
		w.cfg.Network.AllowPrivate = true
		wantContains(t, w.mustFetch(req(u)).Output, "LOOPBACKSECRET")
		w.cfg.Network.AllowPrivate = false
		_, err := w.fetch(req(u))
		wantErr(t, err, Blocked, "loopback")
	})
	t.Run("allowed origins", func(t *testing.T) {
		w := newWorld(t).withCache()
		w.https("site.example.com", redirect(302, "https://other.example.com/x"))
		w.https("other.example.com", secPage("OTHERORIGIN"))
		w.cfg.AllowOrigins = []string{"https://other.example.com"}
		wantContains(t, w.mustFetch(req("https://site.example.com/a")).Output, "OTHERORIGIN")
		w.cfg.AllowOrigins = nil
		wantContains(t, w.mustFetch(req("https://site.example.com/a")).Output, "Redirect was blocked by policy.")
	})
}

// A client-side redirect refused on the page the https attempt gave says
// that https answered.
func TestRefusedRefreshAfterTheUpgradeSaysSo(t *testing.T) {
	w := newWorld(t)
	w.https("site.example.com", htmlPage(`<html><head><meta http-equiv="refresh" content="0;url=https://other.example.com/"></head><body></body></html>`))
	out := w.mustFetch(req("http://site.example.com/")).Output
	wantContains(t, out, "Redirect was blocked by policy.", "Status: refresh", "upgraded_to_https: true")
}

// The text/plain that starts like HTML is HTML whatever the case of the
// header, and its parameters are kept.
func TestPlainTextHTMLInAnyCase(t *testing.T) {
	w := newWorld(t)
	w.https("site.example.com", typed("Text/Plain; charset=UTF-8", "<!doctype html><html><body><p>hello page</p></body></html>"))
	out := w.mustFetch(req("https://site.example.com/x")).Output
	wantContains(t, out, `source_content_type: "text/html; charset=UTF-8"`, `source_kind: "html"`)
}
