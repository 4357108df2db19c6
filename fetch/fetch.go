package fetch

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/slimgate/slim/fetch/internal/binsave"
	"github.com/slimgate/slim/fetch/internal/decode"
	"github.com/slimgate/slim/fetch/internal/extract"
)

// Result is one fetch, rendered.
type Result struct {
	// Output is what the model reads: the metadata block (unless
	// Request.IncludeMetadata is false) and the content, or a message
	// (a refused redirect, llms.txt required but missing, a binary).
	Output string
	// Title is the saved file's name, the page title, or the final URL.
	Title string
	// ContentType is the effective type of the content.
	ContentType string
	// Truncated: the body was longer than MaxBodyBytes and was cut.
	Truncated bool
	// Metadata is the metadata block's fields, whether or not Output
	// carries it.
	Metadata Metadata
	// Warnings are problems that did not change the answer (a helper
	// session of the secondary model that could not be deleted), for the
	// caller's log.
	Warnings []string
}

// fetcher holds one Fetch's state.
type fetcher struct {
	req     Request
	cfg     *Config
	t       *target
	c       *client
	allowed map[string]bool
	store   *cacheStore
	// scope is what, besides the URL and the options, decides what a fetch
	// may see: the address policy, the dial mapping and the extra origins.
	// It is part of every cache key, so a page fetched with private
	// addresses open is never served to a fetch with them closed.
	scope string
	// warnings collects Result.Warnings.
	warnings []string
	// outer is the caller's context, without the fetch's time limit.
	outer context.Context
}

// Fetch runs r under cfg. A refused redirect, a required llms.txt that is
// missing and a secondary model that fails are results, not errors; an
// *Error is a usage mistake, a refused address, or a fetch that failed.
func Fetch(ctx context.Context, r Request, cfg Config) (*Result, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	t, _ := parseTarget(r.URL)
	f := &fetcher{req: r, cfg: &cfg, t: t, allowed: map[string]bool{}, outer: ctx}
	for _, o := range t.origins() {
		f.allowed[o] = true
	}
	for _, o := range cfg.AllowOrigins {
		if u, err := urlParser.Parse(o); err == nil {
			f.allowed[origin(u)] = true
		}
	}
	f.scope = cfg.Network.scope(cfg.AllowOrigins)
	f.store = openCache(cfg.Cache, cfg.now)
	f.c = newClient(cfg.Network)
	defer f.c.close()

	ctx, cancel := withLimit(ctx, r.Timeout)
	defer cancel()
	e, how, err := f.run(ctx)
	if err != nil {
		return nil, err
	}
	res := f.finish(ctx, e, how)
	res.Warnings = f.warnings
	return res, nil
}

// how is what happened on the way to an entry, for the metadata.
type how struct {
	cacheHit, revalidated bool
	blocked               *walked // a refused redirect: e is nil
	llmsMissing           *probeResult
}

// cacheKey is the key of the request's options tuple.
func (f *fetcher) cacheKey() string {
	u := f.t.primary
	if f.t.fallback != nil {
		u = f.t.fallback
	}
	return f.keyOf(href(u))
}

// keyOf is the cache key of URL u under this request's options and
// network settings.
func (f *fetcher) keyOf(u string) string {
	return keyFor(u, f.req, f.scope)
}

func (f *fetcher) run(ctx context.Context) (*entry, how, error) {
	key := f.cacheKey()
	var stale *entry
	if !f.cfg.Cache.Refresh {
		if e, fresh := f.store.get(key); e != nil && !f.aliasStale(e, key) {
			if e.Key != "" && e.Key != key {
				// Stored by a request that reached this URL through
				// redirects (or an upgrade): this one asked for it directly.
				e.Chain, e.Upgraded = []string{}, false
			}
			if fresh && f.usable(e) {
				return e, how{cacheHit: true}, nil
			}
			if !fresh && e.Kind == "page" && !e.UsedLLMs && (e.ETag != "" || e.LastModified != "") {
				stale = e
			}
		}
	}

	var probe probeResult
	if f.t.probes(f.req.PreferLLMs) && stale == nil {
		if f.store.negativeProbe(origin(f.t.primary)) {
			probe.allMissing = true
		} else {
			probe = f.probeLLMs(ctx)
			if probe.found != nil {
				probe.found.Key = key
				f.store.put([]string{key, f.keyOf(probe.found.LLMsURL)}, probe.found)
				return probe.found, how{}, nil
			}
			if probe.allMissing {
				f.store.putNegativeProbe(origin(f.t.primary))
			}
		}
		if f.req.PreferLLMs == LLMsAlways {
			return nil, how{llmsMissing: &probe}, nil
		}
	}

	var cond http.Header
	if stale != nil {
		cond = http.Header{}
		if stale.ETag != "" {
			cond.Set("If-None-Match", stale.ETag)
		}
		if stale.LastModified != "" {
			cond.Set("If-Modified-Since", stale.LastModified)
		}
	}
	w, upgraded, err := f.c.upgradeWalk(ctx, f.t, f.allowed, cond)
	if err != nil {
		return nil, how{}, err
	}
	if w.blocked != nil {
		w.resp = nil
		return nil, how{blocked: w}, nil
	}
	if w.status == http.StatusNotModified && stale != nil {
		discard(w.resp)
		f.store.restamp(key, stale)
		return stale, how{revalidated: true}, nil
	}
	if w.status/100 != 2 {
		discard(w.resp)
		return nil, how{}, newErr(Failed, CodeStatus, fmt.Sprintf("Request failed with status code: %d", w.status), nil)
	}
	e, err := f.response(ctx, w, upgraded)
	if err != nil {
		return nil, how{}, err
	}
	if blocked, ok := e.(*walked); ok {
		return nil, how{blocked: blocked}, nil
	}
	ent := e.(*entry)
	ent.ProbeError = probe.lastErr
	ent.Key = key
	keys := []string{key}
	if fk := f.keyOf(ent.FinalURL); fk != key {
		keys = append(keys, fk)
	}
	f.store.put(keys, ent)
	return ent, how{}, nil
}

// aliasStale reports whether an entry reached under key through an alias
// no longer answers key: the alias was written for the final URL of an
// earlier fetch, and the entry has since been replaced by a fetch that
// ended elsewhere (a page that stopped redirecting, an https URL whose
// last answer came over plain http). Such a hit is a miss.
func (f *fetcher) aliasStale(e *entry, key string) bool {
	if e.Key == "" || e.Key == key {
		return false
	}
	return f.keyOf(e.FinalURL) != key
}

// usable reports whether a cached entry can be served as it is: an llms
// entry must still look like one, and a saved binary must still be on
// disk with the same bytes.
func (f *fetcher) usable(e *entry) bool {
	if e.UsedLLMs && !stillLLMs(e) {
		return false
	}
	if e.Kind == "binary" && e.SavedPath != "" {
		return sameFile(e.SavedPath, e.SavedSize, e.SavedSHA256)
	}
	return true
}

// response turns a 2xx response into an entry (or, for a client-side
// redirect that the policy refuses, the refused walk).
func (f *fetcher) response(ctx context.Context, w *walked, upgraded bool) (any, error) {
	resp := w.resp
	header := resp.Header
	declared := header.Get("Content-Type")
	mt, params, _ := mime.ParseMediaType(declared)
	mt = strings.ToLower(mt)
	// Only a body whose type says nothing (or says text/plain, which may
	// be HTML) is sniffed: a declared binary is judged on its headers
	// before a byte of it is read.
	var sniff []byte
	unknown := mt != "" && !textLike(mt) && !binsave.IsBinaryType(mt)
	if mt == "" || mt == "application/octet-stream" || mt == "text/plain" || unknown {
		br := bufio.NewReaderSize(resp.Body, 4096)
		resp.Body = readCloser{br, resp.Body}
		var err error
		if sniff, err = br.Peek(2048); ctx.Err() != nil || err != nil && err != io.EOF && !errors.Is(err, bufio.ErrBufferFull) {
			resp.Body.Close()
			if ctx.Err() != nil {
				return nil, timeoutErr(ctx, err)
			}
			return nil, newErr(Failed, CodeNetwork, fmt.Sprintf("Reading the response failed: %v", err), err)
		}
	}

	eff := effectiveType(declared, mt, params, sniff)
	effMT, _, _ := mime.ParseMediaType(eff)
	// A type slim does not know as text or binary (application/gzip,
	// font/woff2, a vendor type) is what its bytes look like.
	binaryBody := binsave.IsBinaryType(effMT) || unknown && !decode.LooksText(sniff)

	base := &entry{
		Kind:         "page",
		FinalURL:     href(w.finalURL),
		Status:       w.status,
		ContentType:  eff,
		Charset:      strings.Trim(params["charset"], `"'`),
		ETag:         header.Get("ETag"),
		LastModified: header.Get("Last-Modified"),
		Chain:        chainStrings(w.chain),
		Upgraded:     upgraded,
		Signals:      []string{},
	}
	base.ContentLength = contentLength(header)
	final, _ := url.Parse(base.FinalURL)
	base.Filename = binsave.Filename(header.Get("Content-Disposition"), final)

	if binaryBody {
		return f.binary(ctx, resp, base, effMT, sniff)
	}
	body, over, err := readBody(ctx, resp, MaxBodyBytes)
	if err != nil {
		return nil, err
	}
	htmlLike := effMT == "text/html" || effMT == "application/xhtml+xml"
	dec := decode.Decode(body, base.Charset, htmlLike)
	base.Truncated = over
	base.Decoded, base.DecodeFall, base.DecodeWarn = dec.Charset, dec.Fallback, dec.Warning
	if !htmlLike {
		e := f.textEntry(w, eff, base.Charset, dec, over)
		e.Upgraded, e.Filename = upgraded, base.Filename
		return e, nil
	}
	if next := metaRefresh(dec.Text, w.finalURL); next != nil {
		// This page was request len(w.chain)+1 of the walk; a refresh
		// counts like a 3xx, so the last request may not ask for another.
		if len(w.chain)+1 >= MaxRedirects {
			return nil, tooManyRedirects()
		}
		h := hop{from: href(w.finalURL), to: href(next), status: "refresh"}
		chain := append(append([]hop(nil), w.chain...), h)
		if !allowedHop(w.finalURL, next, f.allowed) || next.Host() != w.finalURL.Host() {
			return &walked{finalURL: w.finalURL, chain: chain, blocked: &h, status: w.status, upgraded: upgraded}, nil
		}
		nw, err := f.c.walk(ctx, next, f.allowed, acceptPage, nil, chain)
		if err != nil {
			return nil, err
		}
		if nw.blocked != nil {
			return nw, nil
		}
		if nw.status/100 != 2 {
			discard(nw.resp)
			return nil, newErr(Failed, CodeStatus, fmt.Sprintf("Request failed with status code: %d", nw.status), nil)
		}
		return f.response(ctx, nw, upgraded)
	}
	page, err := extract.HTML(dec.Text, final, f.req.ExtractMain)
	if err != nil {
		return nil, newErr(Internal, CodeInternal, fmt.Sprintf("Extracting the page failed: %v", err), err)
	}
	e := base
	e.SourceKind = "html"
	e.Title = page.Title
	e.Headings = page.Headings
	e.Canonical = page.Canonical
	if e.Canonical == "" {
		e.Canonical = extract.FrontmatterURL(page.Markdown)
	}
	e.Markdown, e.Text, e.HTML = page.Markdown, page.Text, page.HTML
	e.Extracted = page.Extracted
	e.Words = page.WordCount
	e.Signals = page.Signals
	return e, nil
}

// effectiveType is the type a body is taken for: the declared one, unless
// it says nothing (none, or application/octet-stream) or says text/plain,
// when sniff, the body's first bytes, decide between text, HTML and binary.
// mt and params are declared, parsed.
func effectiveType(declared, mt string, params map[string]string, sniff []byte) string {
	switch {
	case mt == "" || mt == "application/octet-stream":
		if !decode.LooksText(sniff) {
			return "application/octet-stream"
		}
		eff := "text/plain"
		if decode.StartsLikeHTML(string(sniff)) {
			eff = "text/html"
		}
		if cs := params["charset"]; cs != "" {
			eff += "; charset=" + cs
		}
		return eff
	case mt == "text/plain" && decode.StartsLikeHTML(string(sniff)):
		// The type becomes text/html; the parameters stay as sent.
		if i := strings.IndexByte(declared, ';'); i >= 0 {
			return "text/html" + declared[i:]
		}
		return "text/html"
	}
	return declared
}

// textEntry is the entry of a text (or llms.txt) body: w's response
// (its headers and charset) and what the body said.
func (f *fetcher) textEntry(w *walked, contentType, charset string, dec decode.Result, over bool) *entry {
	p := extract.Text(dec.Text)
	header := w.resp.Header
	return &entry{
		Kind:          "page",
		FinalURL:      href(w.finalURL),
		Canonical:     extract.FrontmatterURL(dec.Text),
		Status:        w.status,
		ContentType:   contentType,
		Charset:       charset,
		ETag:          header.Get("ETag"),
		LastModified:  header.Get("Last-Modified"),
		ContentLength: contentLength(header),
		Headings:      p.Headings,
		SourceKind:    "text",
		Chain:         chainStrings(w.chain),
		Truncated:     over,
		Words:         p.WordCount,
		Signals:       p.Signals,
		Decoded:       dec.Charset,
		DecodeFall:    dec.Fallback,
		DecodeWarn:    dec.Warning,
		Markdown:      p.Markdown,
		Text:          p.Text,
	}
}

// textLike reports whether a media type is text by its name: text/*,
// JSON, XML, JavaScript and the common configuration formats.
func textLike(mt string) bool {
	if strings.HasPrefix(mt, "text/") || strings.HasSuffix(mt, "+json") || strings.HasSuffix(mt, "+xml") {
		return true
	}
	switch mt {
	case "application/json", "application/xml", "application/javascript", "application/ecmascript",
		"application/x-javascript", "application/x-ndjson", "application/yaml", "application/x-yaml",
		"application/toml", "application/x-sh", "application/graphql", "application/sql":
		return true
	}
	return false
}

// contentLength is the Content-Length header as a number, or nil.
func contentLength(h http.Header) *int64 {
	if cl := h.Get("Content-Length"); cl != "" {
		if n, err := strconv.ParseInt(cl, 10, 64); err == nil && n >= 0 {
			return &n
		}
	}
	return nil
}

type readCloser struct {
	*bufio.Reader
	c interface{ Close() error }
}

func (r readCloser) Close() error { return r.c.Close() }
