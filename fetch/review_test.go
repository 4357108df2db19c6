package fetch

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"strings"
	"testing"

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
