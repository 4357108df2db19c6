package fetch

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

const llmsBody = "# Project\n> Summary\n- [Docs](https://site.example.com/docs)"

func TestLLMsProbe(t *testing.T) {
	always := func(r *Request) { r.PreferLLMs = LLMsAlways }
	t.Run("always uses llms.txt and never fetches the page", func(t *testing.T) {
		w := newWorld(t).withCache()
		mux := http.NewServeMux()
		mux.Handle("/llms-full.txt", http.NotFoundHandler())
		mux.Handle("/llms.txt", typed("text/plain", llmsBody))
		mux.Handle("/page", htmlPage(articlePage))
		s := w.https("site.example.com", mux)
		out := w.mustFetch(req("https://site.example.com/page", always)).Output
		wantContains(t, out, "used_llms_txt: true", `source_kind: "llms_txt"`, `final_url: "https://site.example.com/llms.txt"`, "headings:\n  - \"Project\"")
		for _, p := range s.paths() {
			if p == "/page" {
				t.Error("the page was fetched")
			}
		}
		n := s.hits()
		again := w.mustFetch(req("https://site.example.com/page", always)).Output
		wantContains(t, again, "cache_hit: true")
		if s.hits() != n {
			t.Errorf("a cache hit made %d requests", s.hits()-n)
		}
	})
	t.Run("always with nothing is a message, not an error", func(t *testing.T) {
		w := newWorld(t)
		w.https("site.example.com", http.NotFoundHandler())
		res, err := w.fetch(req("https://site.example.com/page", always))
		if err != nil {
			t.Fatal(err)
		}
		wantContains(t, res.Output, "Required llms.txt content was unavailable.", "Original URL: https://site.example.com/page", `prefer_llms_txt: "always"`, "used_llms_txt: false")
		wantLacks(t, res.Output, "llms_probe_error")
	})
	t.Run("HTML is not llms.txt", func(t *testing.T) {
		w := newWorld(t)
		mux := http.NewServeMux()
		mux.Handle("/llms-full.txt", http.NotFoundHandler())
		mux.Handle("/llms.txt", htmlPage("<html><body>x</body></html>"))
		w.https("site.example.com", mux)
		out := w.mustFetch(req("https://site.example.com/", always)).Output
		wantContains(t, out, `llms_probe_error: "llms.txt probe returned HTML/login content: https://site.example.com/llms.txt"`)
	})
	t.Run("a redirect to a login page is not llms.txt", func(t *testing.T) {
		w := newWorld(t)
		mux := http.NewServeMux()
		mux.Handle("/llms-full.txt", redirect(302, "/login"))
		mux.Handle("/login", typed("text/plain", "please sign in"))
		mux.Handle("/llms.txt", http.NotFoundHandler())
		w.https("site.example.com", mux)
		wantContains(t, w.mustFetch(req("https://site.example.com/", always)).Output, "non-llms path")
	})
	t.Run("a cross-host redirect is not followed", func(t *testing.T) {
		w := newWorld(t)
		mux := http.NewServeMux()
		mux.Handle("/llms-full.txt", redirect(302, "https://other.example.com/llms-full.txt"))
		mux.Handle("/llms.txt", http.NotFoundHandler())
		w.https("site.example.com", mux)
		other := w.https("other.example.com", typed("text/plain", llmsBody))
		wantContains(t, w.mustFetch(req("https://site.example.com/", always)).Output, "blocked by cross-host redirect")
		if other.hits() != 0 {
			t.Error("the other host was contacted")
		}
	})
	t.Run("auto on a docs host takes llms-full.txt first and only", func(t *testing.T) {
		w := newWorld(t)
		mux := http.NewServeMux()
		mux.Handle("/llms-full.txt", typed("text/plain", "# Full\nfull text"))
		mux.Handle("/llms.txt", typed("text/plain", "# Short"))
		mux.Handle("/guide", htmlPage(articlePage))
		s := w.https("docs.example.com", mux)
		out := w.mustFetch(req("https://docs.example.com/guide")).Output
		wantContains(t, out, "full text")
		if p := s.paths(); len(p) != 1 || p[0] != "/llms-full.txt" {
			t.Errorf("requests %v", p)
		}
	})
	t.Run("auto on another host never probes", func(t *testing.T) {
		w := newWorld(t)
		s := w.https("site.example.com", htmlPage(articlePage))
		w.mustFetch(req("https://site.example.com/guide"))
		for _, p := range s.paths() {
			if strings.Contains(p, "llms") {
				t.Errorf("probed %s", p)
			}
		}
	})
	t.Run("never on a docs host never probes", func(t *testing.T) {
		w := newWorld(t)
		s := w.https("docs.example.com", htmlPage(articlePage))
		w.mustFetch(req("https://docs.example.com/guide", func(r *Request) { r.PreferLLMs = LLMsNever }))
		for _, p := range s.paths() {
			if strings.Contains(p, "llms") {
				t.Errorf("probed %s", p)
			}
		}
	})
	t.Run("a stalled probe leaves the page its time", func(t *testing.T) {
		w := newWorld(t)
		w.cfg.ProbeTimeout = 300 * time.Millisecond
		mux := http.NewServeMux()
		stall := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			select {
			case <-time.After(5 * time.Second):
			case <-r.Context().Done():
			}
		})
		mux.Handle("/llms-full.txt", stall)
		mux.Handle("/llms.txt", stall)
		mux.Handle("/guide", htmlPage(articlePage))
		w.https("docs.example.com", mux)
		out := w.mustFetch(req("https://docs.example.com/guide", func(r *Request) { r.Timeout = 5 * time.Second })).Output
		wantContains(t, out, "widget framework", "llms_probe_error: \"timeout")
	})
	t.Run("a site without llms.txt is not probed again soon", func(t *testing.T) {
		w := newWorld(t).withCache()
		mux := http.NewServeMux()
		mux.Handle("/llms-full.txt", http.NotFoundHandler())
		mux.Handle("/llms.txt", http.NotFoundHandler())
		mux.Handle("/", htmlPage(articlePage))
		s := w.https("docs.example.com", mux)
		w.mustFetch(req("https://docs.example.com/a"))
		w.mustFetch(req("https://docs.example.com/b"))
		probes := 0
		for _, p := range s.paths() {
			if strings.Contains(p, "llms") {
				probes++
			}
		}
		if probes != 2 {
			t.Errorf("%d probe requests, want 2 (one round): %v", probes, s.paths())
		}
	})
}

func TestPlan(t *testing.T) {
	p, err := PlanFor(req("http://docs.example.com/a"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"https://docs.example.com/a", "http://docs.example.com/a",
		"https://docs.example.com/llms-full.txt", "https://docs.example.com/llms.txt",
		"http://docs.example.com/llms-full.txt", "http://docs.example.com/llms.txt"}
	if strings.Join(p.Patterns, " ") != strings.Join(want, " ") {
		t.Errorf("patterns %v", p.Patterns)
	}
	if strings.Join(p.AllowedOrigins, " ") != "https://docs.example.com http://docs.example.com" {
		t.Errorf("origins %v", p.AllowedOrigins)
	}
	if !p.ProbeLLMs || p.FallbackURL != "http://docs.example.com/a" || p.URL != "https://docs.example.com/a" {
		t.Errorf("plan %+v", p)
	}
	q, _ := PlanFor(req("https://EXAMPLE.com:443/x#frag"))
	if q.URL != "https://example.com/x" || q.ProbeLLMs || len(q.Patterns) != 1 {
		t.Errorf("normalized plan %+v", q)
	}
}

func TestDocsLike(t *testing.T) {
	for host, want := range map[string]bool{
		"docs.python.org": true, "developer.mozilla.org": true, "dev.to": true, "wiki.archlinux.org": true,
		"foo.readthedocs.io": true, "docs.rs": true, "mydocs.rs": true, "pkg.go.dev": false, "go.dev": false, "github.com": false,
	} {
		if docsLike(host) != want {
			t.Errorf("docsLike(%q) = %v", host, !want)
		}
	}
}
