package fetch

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCacheHitsAcrossFormatsNotAcrossOptions(t *testing.T) {
	w := newWorld(t).withCache()
	s := w.https("site.example.com", htmlPage(articlePage))
	w.mustFetch(req("https://site.example.com/g"))
	out := w.mustFetch(req("https://site.example.com/g", func(r *Request) { r.Format = Text })).Output
	wantContains(t, out, "cache_hit: true")
	w.mustFetch(req("https://site.example.com/g", func(r *Request) { r.ExtractMain = false }))
	if s.hits() != 2 {
		t.Errorf("hits %d, want 2", s.hits())
	}
}

func TestStaleEntryIsRevalidated(t *testing.T) {
	now := time.Now()
	w := newWorld(t).withCache()
	w.cfg.Now = func() time.Time { return now }
	w.cfg.Cache.TTL = time.Second
	var conds []string
	w.https("site.example.com", http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if inm := r.Header.Get("If-None-Match"); inm != "" {
			conds = append(conds, inm)
			if inm == `"v1"` {
				rw.WriteHeader(304)
				return
			}
		}
		rw.Header().Set("ETag", `"v1"`)
		rw.Header().Set("Content-Type", "text/html")
		_, _ = rw.Write([]byte(articlePage))
	}))
	first := w.mustFetch(req("https://site.example.com/r")).Output
	now = now.Add(1500 * time.Millisecond)
	second := w.mustFetch(req("https://site.example.com/r")).Output
	if len(conds) != 1 || conds[0] != `"v1"` {
		t.Fatalf("conditional requests %v", conds)
	}
	wantContains(t, second, "cache_revalidated: true", "upstream_status_code: 304", "status_code: 200", "cache_hit: false", "widget framework")
	_, body1, _ := strings.Cut(first, "---\n\n")
	_, body2, _ := strings.Cut(second, "---\n\n")
	if body1 != body2 {
		t.Error("revalidated content differs")
	}
	// Restamped: fresh again, no request.
	third := w.mustFetch(req("https://site.example.com/r")).Output
	wantContains(t, third, "cache_hit: true")
}

func TestCorruptEntryIsAMiss(t *testing.T) {
	w := newWorld(t).withCache()
	s := w.https("site.example.com", htmlPage(articlePage))
	w.mustFetch(req("https://site.example.com/c"))
	var files []string
	_ = filepath.Walk(w.cfg.Cache.Dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() && strings.HasSuffix(p, ".json.gz") {
			files = append(files, p)
		}
		return nil
	})
	if len(files) == 0 {
		t.Fatal("no entry written")
	}
	for _, f := range files {
		if err := os.Truncate(f, 10); err != nil {
			t.Fatal(err)
		}
	}
	out := w.mustFetch(req("https://site.example.com/c")).Output
	wantContains(t, out, "cache_hit: false")
	if s.hits() != 2 {
		t.Errorf("hits %d", s.hits())
	}
	wantContains(t, w.mustFetch(req("https://site.example.com/c")).Output, "cache_hit: true")
}

func TestSizeCapKeepsRecentPages(t *testing.T) {
	w := newWorld(t).withCache()
	w.cfg.Cache.MaxBytes = 200000
	page := func(i int) string {
		var b strings.Builder
		b.WriteString("<html><body><article>")
		for j := 0; j < 400; j++ {
			b.WriteString("<p>page " + itoa(int64(i)) + " paragraph " + itoa(int64(j)) + " with some distinct text " + itoa(int64(i*j)) + "</p>")
		}
		b.WriteString("</article></body></html>")
		return b.String()
	}
	s := w.https("site.example.com", http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		var i int
		for _, c := range strings.TrimPrefix(r.URL.Path, "/p") {
			i = i*10 + int(c-'0')
		}
		rw.Header().Set("Content-Type", "text/html")
		_, _ = rw.Write([]byte(page(i)))
	}))
	for i := 0; i < 10; i++ {
		w.mustFetch(req("https://site.example.com/p" + itoa(int64(i))))
	}
	var total int64
	_ = filepath.Walk(w.cfg.Cache.Dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			total += fi.Size()
		}
		return nil
	})
	if total > 200000 {
		t.Errorf("cache holds %d bytes, cap 200000", total)
	}
	n := s.hits()
	wantContains(t, w.mustFetch(req("https://site.example.com/p9")).Output, "cache_hit: true")
	if s.hits() != n {
		t.Error("the newest page was evicted")
	}
}

func TestSavedBinaryIsReusedOnAHit(t *testing.T) {
	w := newWorld(t).withCache()
	w.https("site.example.com", typed("image/png", string(png(2048))))
	a := w.mustFetch(req("https://site.example.com/i.png", func(r *Request) { r.SaveBinary = true }))
	b := w.mustFetch(req("https://site.example.com/i.png", func(r *Request) { r.SaveBinary = true }))
	pa, _ := a.Metadata.Get("saved_path").(string)
	pb, _ := b.Metadata.Get("saved_path").(string)
	if pa == "" || pa != pb {
		t.Errorf("saved at %q then %q", pa, pb)
	}
	wantContains(t, b.Output, "cache_hit: true")
	if err := os.Remove(pa); err != nil {
		t.Fatal(err)
	}
	c := w.mustFetch(req("https://site.example.com/i.png", func(r *Request) { r.SaveBinary = true }))
	wantContains(t, c.Output, "cache_hit: false")
	if pc, _ := c.Metadata.Get("saved_path").(string); pc == "" {
		t.Error("not saved again")
	} else if _, err := os.Stat(pc); err != nil {
		t.Error(err)
	}
}
