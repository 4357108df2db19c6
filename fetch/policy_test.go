package fetch

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
)

// A walk that keeps redirecting ends at MaxRedirects requests with the
// same error whether the redirects are HTTP or client-side refreshes, so
// a loop between two pages costs ten requests and no more.
func TestRedirectLoops(t *testing.T) {
	refreshTo := func(to string) http.Handler {
		return htmlPage(`<html><head><meta http-equiv="refresh" content="0; url=` + to + `"></head><body>Redirecting</body></html>`)
	}
	loops := []struct {
		name string
		a, b http.Handler
	}{
		{"an HTTP loop", redirect(302, "/b"), redirect(302, "/a")},
		{"a refresh loop", refreshTo("/b"), refreshTo("/a")},
		{"a loop of both", redirect(301, "/b"), refreshTo("/a")},
	}
	for _, c := range loops {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t).withCache()
			mux := http.NewServeMux()
			mux.Handle("/a", c.a)
			mux.Handle("/b", c.b)
			s := w.https("site.example.com", mux)
			_, err := w.fetch(req("https://site.example.com/a"))
			wantErr(t, err, Failed, "Too many redirects (exceeded 10)")
			if s.hits() != MaxRedirects {
				t.Errorf("the loop made %d requests, want %d", s.hits(), MaxRedirects)
			}
		})
	}
	// n HTTP redirects lead to a page that refreshes to /done: the
	// refresh is the walk's next request, allowed while it is the tenth.
	chainToRefresh := func(n int) http.Handler {
		return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			var i int
			switch {
			case r.URL.Path == "/done":
				htmlPage(articlePage).ServeHTTP(rw, r)
			case fmt.Sprintf("/r%d", n) == r.URL.Path:
				refreshTo("/done").ServeHTTP(rw, r)
			default:
				fmt.Sscanf(r.URL.Path, "/r%d", &i)
				redirect(302, fmt.Sprintf("/r%d", i+1)).ServeHTTP(rw, r)
			}
		})
	}
	t.Run("a refresh as the tenth request is followed", func(t *testing.T) {
		w := newWorld(t)
		w.https("site.example.com", chainToRefresh(8))
		res := w.mustFetch(req("https://site.example.com/r0"))
		ch, _ := res.Metadata.Get("redirect_chain").([]string)
		if len(ch) != 9 || !strings.HasPrefix(ch[8], "refresh ") {
			t.Errorf("chain %q, want 8 redirects and a refresh", ch)
		}
		wantContains(t, res.Output, "widget framework")
	})
	t.Run("a refresh asked for by the tenth request is too many", func(t *testing.T) {
		w := newWorld(t)
		w.https("site.example.com", chainToRefresh(9))
		_, err := w.fetch(req("https://site.example.com/r0"))
		wantErr(t, err, Failed, "Too many redirects (exceeded 10)")
	})
}

// A redirect to loopback or to the cloud metadata address is refused by
// default: as a hop to another origin it is a refused redirect (exit 0,
// nothing contacted), and even on an allowed origin with private addresses
// open, the metadata address is refused at connect time until link-local
// addresses are opened too.
func TestRedirectsToInternalAddressesAreRefused(t *testing.T) {
	for _, to := range []string{"https://127.0.0.1:%s/secret", "https://169.254.169.254:%s/latest/meta-data/"} {
		name := strings.Split(strings.TrimPrefix(to, "https://"), ":")[0]
		t.Run("by default: "+name, func(t *testing.T) {
			w := newWorld(t)
			local := newTLSSite(t, htmlPage("<p>LOCALSECRET</p>"))
			port := strings.Split(local.addr(), ":")[1]
			target := fmt.Sprintf(to, port)
			w.serve("site.example.com:"+port, newTLSSite(t, redirect(302, target)))
			res, err := w.fetch(req("https://site.example.com:" + port + "/"))
			if err != nil {
				t.Fatalf("a refused redirect is an answer, not an error: %v", err)
			}
			wantContains(t, res.Output, "Redirect was blocked by policy.", "Redirect URL: "+target)
			wantLacks(t, res.Output, "LOCALSECRET")
			if local.hits() != 0 {
				t.Error("the redirect target was contacted")
			}
		})
	}
	t.Run("the metadata address needs link-local opened, even on an allowed origin", func(t *testing.T) {
		w := newWorld(t)
		var to string // set before the first request
		s := newTLSSite(t, http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			redirect(302, to+"/latest/meta-data/").ServeHTTP(rw, r)
		}))
		port := strings.Split(s.addr(), ":")[1]
		to = "https://169.254.169.254:" + port
		w.serve("site.example.com:"+port, s)
		w.cfg.AllowOrigins = []string{to}
		w.cfg.Network.AllowPrivate = true
		_, err := w.fetch(req("https://site.example.com:" + port + "/"))
		wantErr(t, err, Blocked, "metadata")
		wantErr(t, err, Blocked, "SLIM_FETCH_ALLOW_LINK_LOCAL=1")
		if s.hits() != 1 {
			t.Errorf("the site answered %d requests, want 1 (the redirect)", s.hits())
		}
	})
}

// --save-binary raises the download limit from 2 MiB to 10 MiB: a 3 MiB
// PDF is saved whole, an 11 MiB archive is described, not saved, whether
// its Content-Length says so or only its bytes do.
func TestSaveBinaryRaisesTheLimit(t *testing.T) {
	save := func(r *Request) { r.SaveBinary = true }
	serve := func(ct string, body []byte, withLength bool) http.Handler {
		return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			rw.Header().Set("Content-Type", ct)
			if withLength {
				rw.Header().Set("Content-Length", fmt.Sprint(len(body)))
			} else {
				rw.(http.Flusher).Flush()
			}
			_, _ = rw.Write(body)
		})
	}
	t.Run("a 3 MiB PDF is saved", func(t *testing.T) {
		w := newWorld(t)
		body := append([]byte("%PDF-1.4\n"), bytes.Repeat([]byte{0xe2, 0x80, 0x94, '\n'}, 3<<20/4)...)
		w.https("site.example.com", serve("application/pdf", body, true))
		res := w.mustFetch(req("https://site.example.com/big.pdf", save))
		p, _ := res.Metadata.Get("saved_path").(string)
		got, err := os.ReadFile(p)
		if err != nil || !bytes.Equal(got, body) {
			t.Fatalf("saved_path %q does not hold the %d bytes (%v)", p, len(body), err)
		}
		wantContains(t, res.Output, "PDF content saved to "+p, "download_limit_bytes: 10485760")
		wantLacks(t, res.Output, "binary_metadata_only")
	})
	zip := append([]byte("PK\x03\x04"), bytes.Repeat([]byte{0, 0xff}, 11<<20/2)...)
	for _, withLength := range []bool{true, false} {
		t.Run(fmt.Sprintf("an 11 MiB zip is described (Content-Length %v)", withLength), func(t *testing.T) {
			w := newWorld(t)
			w.https("site.example.com", serve("application/zip", zip, withLength))
			res := w.mustFetch(req("https://site.example.com/all.zip", save))
			wantContains(t, res.Output, "binary_metadata_only: true", "download_limit_bytes: 10485760",
				"BINARY content omitted because it exceeds the download limit.")
			wantLacks(t, res.Output, "saved_path")
			if ents, _ := os.ReadDir(w.cfg.BinaryDir); len(ents) != 0 {
				t.Errorf("something was saved: %v", ents)
			}
		})
	}
}
