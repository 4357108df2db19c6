package fetch

import (
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// metadataKeys are the keys of the output's metadata block, in order.
func metadataKeys(out string) []string {
	block, _, _ := strings.Cut(strings.TrimPrefix(out, "---\n"), "\n---\n")
	var keys []string
	for _, m := range regexp.MustCompile(`(?m)^([a-z_]+):`).FindAllStringSubmatch(block, -1) {
		keys = append(keys, m[1])
	}
	return keys
}

func wantKeys(t *testing.T, out string, want ...string) {
	t.Helper()
	if got := metadataKeys(out); !slices.Equal(got, want) {
		t.Errorf("keys\n got %q\nwant %q\n%s", got, want, clip(out))
	}
}

// Each kind of answer prints its metadata keys in one fixed order, the
// order the documentation lists, so that a reader (or a model) finds each
// field where the last answer had it.
func TestMetadataKeysKeepTheirOrder(t *testing.T) {
	t.Run("a page", func(t *testing.T) {
		w := newWorld(t).withCache()
		w.cfg.Cache.TTL = 1
		mux := http.NewServeMux()
		mux.Handle("/start", redirect(302, "/guide.html"))
		mux.Handle("/guide.html", http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			rw.Header().Set("ETag", `"v1"`)
			rw.Header().Set("Last-Modified", "Mon, 02 Jan 2006 15:04:05 GMT")
			if r.Header.Get("If-None-Match") == `"v1"` {
				rw.WriteHeader(304)
				return
			}
			rw.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = rw.Write([]byte(articlePage))
		}))
		w.https("site.example.com", mux)
		w.mustFetch(req("https://site.example.com/start"))
		f := &fakeOpenAI{answers: map[string]string{}}
		withModel(w, f, "p/m")
		out := w.mustFetch(req("https://site.example.com/start", prompt("what?"))).Output
		wantKeys(t, out, "requested_url", "final_url", "canonical_url", "status_code", "source_content_type", "charset",
			"etag", "last_modified", "content_length", "filename", "headings", "title", "source_kind", "used_llms_txt",
			"extracted_main", "redirect_chain", "upgraded_to_https", "llms_probe_truncated", "cache_revalidated",
			"upstream_status_code", "cache_hit", "truncated", "word_count", "quality_signals", "decoded_charset",
			"decode_fallback", "secondary_model_skipped_reason", "secondary_model_error")
	})
	t.Run("a page a model answered, with a probe error and a guessed charset", func(t *testing.T) {
		w := newWorld(t)
		mux := http.NewServeMux()
		mux.Handle("/llms-full.txt", htmlPage("<p>login</p>"))
		mux.Handle("/llms.txt", http.NotFoundHandler())
		mux.Handle("/", typed("text/html", longPage(200)+"caf\xe9"))
		w.https("docs.example.com", mux)
		withModel(w, &fakeOpenAI{answers: map[string]string{"m": "Answer"}}, "p/m")
		out := w.mustFetch(req("https://docs.example.com/", prompt("what?"))).Output
		wantKeys(t, out, "requested_url", "final_url", "canonical_url", "status_code", "source_content_type",
			"content_length", "source_kind", "used_llms_txt", "extracted_main", "redirect_chain", "upgraded_to_https", "llms_probe_error",
			"llms_probe_truncated", "cache_hit", "truncated", "word_count", "quality_signals", "decoded_charset",
			"decode_fallback", "decode_warning", "secondary_model_input_truncated", "secondary_model_input_chars",
			"secondary_model_source_chars", "secondary_model")
	})
	t.Run("a refused redirect", func(t *testing.T) {
		w := newWorld(t)
		w.https("site.example.com", redirect(301, "https://other.example.com/"))
		wantKeys(t, w.mustFetch(req("https://site.example.com/")).Output,
			"requested_url", "redirect_url", "status_code", "redirect_chain", "upgraded_to_https")
	})
	t.Run("llms.txt required but missing", func(t *testing.T) {
		w := newWorld(t)
		mux := http.NewServeMux()
		mux.Handle("/llms-full.txt", htmlPage("<p>login</p>"))
		mux.Handle("/llms.txt", http.NotFoundHandler())
		w.https("site.example.com", mux)
		wantKeys(t, w.mustFetch(req("https://site.example.com/", func(r *Request) { r.PreferLLMs = LLMsAlways })).Output,
			"requested_url", "used_llms_txt", "llms_probe_error", "prefer_llms_txt")
	})
	t.Run("a saved binary", func(t *testing.T) {
		w := newWorld(t)
		w.https("site.example.com", typed("image/png", string(png(1024))))
		wantKeys(t, w.mustFetch(req("https://site.example.com/a.png", func(r *Request) { r.SaveBinary = true })).Output,
			"requested_url", "final_url", "canonical_url", "status_code", "source_content_type", "content_length",
			"filename", "binary_kind", "redirect_chain", "upgraded_to_https", "cache_hit", "truncated",
			"download_limit_bytes", "saved_path")
	})
	t.Run("a binary over the limit", func(t *testing.T) {
		w := newWorld(t)
		w.https("site.example.com", http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			rw.Header().Set("Content-Type", "application/pdf")
			rw.Header().Set("Content-Length", "3145728")
			rw.WriteHeader(200)
		}))
		wantKeys(t, w.mustFetch(req("https://site.example.com/d.pdf")).Output,
			"requested_url", "final_url", "canonical_url", "status_code", "source_content_type", "content_length",
			"filename", "binary_kind", "redirect_chain", "upgraded_to_https", "cache_hit", "truncated",
			"download_limit_bytes", "binary_metadata_only")
	})
	t.Run("a binary fetched, not saved", func(t *testing.T) {
		w := newWorld(t)
		w.https("site.example.com", typed("image/png", string(png(1024))))
		wantKeys(t, w.mustFetch(req("https://site.example.com/a.png")).Output,
			"requested_url", "final_url", "canonical_url", "status_code", "source_content_type", "content_length",
			"filename", "binary_kind", "redirect_chain", "upgraded_to_https", "cache_hit", "truncated", "save_binary")
	})
}
