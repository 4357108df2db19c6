package fetch

import (
	"context"
	"mime"
	"net/http"
	"regexp"
	"strings"
	"sync"

	whatwg "github.com/nlnwa/whatwg-url/url"
	"github.com/slimgate/slim/fetch/internal/decode"
)

// probeResult is the outcome of the llms.txt probe: found is nil when no
// candidate gave usable content; lastErr is the last failure worth
// reporting (a 404, another non-2xx status or an empty body reports
// nothing); allMissing says every candidate answered 404 or 410.
type probeResult struct {
	found      *entry
	lastErr    string
	allMissing bool
}

// Compiled on first use, to keep them out of every run's start-up.
var (
	loginTitle = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?is)<title[^>]*>\s*(log ?in|sign ?in)`) })
	loginWord  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)log[- ]?in`) })
)

// llmsRejection says why an llms.txt answer is not one, or "".
func llmsRejection(finalURL *whatwg.Url, contentType, body string) string {
	p := finalURL.Pathname()
	if !strings.HasSuffix(p, "/llms.txt") && !strings.HasSuffix(p, "/llms-full.txt") {
		return "llms.txt probe resolved to non-llms path: " + href(finalURL)
	}
	ct := strings.ToLower(contentType)
	head := strings.ToLower(strings.TrimSpace(trimBOM(body)))
	if strings.Contains(ct, "text/html") || strings.Contains(ct, "xhtml") ||
		strings.HasPrefix(head, "<!doctype html") || strings.HasPrefix(head, "<html") ||
		loginTitle().MatchString(body) || loginWord().MatchString(finalURL.Pathname()+finalURL.Search()) {
		return "llms.txt probe returned HTML/login content: " + href(finalURL)
	}
	return ""
}

func trimBOM(s string) string { return strings.TrimPrefix(s, "\uFEFF") }

// probeLLMs tries the llms.txt candidates in order within one budget, and
// returns the first usable answer as a text entry.
func (f *fetcher) probeLLMs(ctx context.Context) probeResult {
	budget := f.cfg.ProbeTimeout
	if budget <= 0 {
		budget = DefaultProbeTimeout
	}
	if half := f.req.Timeout / 2; half < budget {
		budget = half
	}
	pctx, cancel := withLimit(ctx, budget)
	defer cancel()
	allowed := map[string]bool{}
	for _, o := range f.t.origins() {
		allowed[o] = true
	}
	res := probeResult{allMissing: true}
	for _, cand := range f.t.llmsCandidates() {
		if pctx.Err() != nil {
			res.lastErr = timeoutErr(pctx, nil).Error()
			res.allMissing = false
			continue
		}
		w, err := f.c.walk(pctx, cand, allowed, acceptProbe, nil, nil)
		if err != nil {
			res.lastErr = err.Error()
			res.allMissing = false
			continue
		}
		if w.blocked != nil {
			res.lastErr = "llms.txt probe blocked by cross-host redirect: " + w.blocked.to
			res.allMissing = false
			continue
		}
		if w.status != http.StatusNotFound && w.status != http.StatusGone {
			res.allMissing = false
		}
		if w.status/100 != 2 {
			discard(w.resp)
			continue
		}
		body, over, err := readBody(pctx, w.resp, MaxBodyBytes)
		if err != nil {
			res.lastErr = err.Error()
			continue
		}
		ct := w.resp.Header.Get("Content-Type")
		_, params, _ := mime.ParseMediaType(ct)
		charset := strings.Trim(params["charset"], `"'`)
		dec := decode.Decode(body, charset, false)
		if why := llmsRejection(w.finalURL, ct, dec.Text); why != "" {
			res.lastErr = why
			continue
		}
		if strings.TrimSpace(dec.Text) == "" {
			continue
		}
		if ct == "" {
			ct = "text/plain"
		}
		e := f.textEntry(w, ct, charset, dec, over)
		e.ProbeTrunc = over
		e.SourceKind = "llms_txt"
		e.UsedLLMs = true
		e.LLMsURL = href(w.finalURL)
		e.Upgraded = f.t.fallback != nil && w.finalURL.Scheme() == "https"
		res.found = e
		return res
	}
	return res
}

// stillLLMs re-checks a cached llms entry: one that no longer passes is
// dropped.
func stillLLMs(e *entry) bool {
	if e.LLMsURL == "" {
		return true
	}
	u, err := urlParser.Parse(e.LLMsURL)
	if err != nil {
		return false
	}
	return llmsRejection(u, e.ContentType, e.Markdown) == ""
}
