package fetch

import (
	"context"
	"html"
	"strings"
)

// The messages a result can be instead of content.
const (
	truncMark        = "[..content truncated..]"
	truncMarkHTML    = "<!-- [..content truncated..] -->"
	blockedFirstLine = "Redirect was blocked by policy."
)

// finish renders an entry (or the refused redirect, or the missing
// llms.txt) for this call, asking the secondary model first when a prompt
// was given.
func (f *fetcher) finish(ctx context.Context, e *entry, h how) *Result {
	switch {
	case h.blocked != nil:
		return f.blockedResult(h.blocked)
	case h.llmsMissing != nil:
		return f.llmsMissingResult(h.llmsMissing)
	case e.Kind == "binary":
		return f.binaryResult(e, h)
	}
	e.expand()
	m := f.pageMeta(e, h)
	content, answered := f.content(e), false
	if f.req.Prompt != nil {
		content, answered = f.askModel(ctx, e, &m, content)
	}
	res := &Result{Title: e.Title, ContentType: e.ContentType, Truncated: e.Truncated && !answered, Metadata: m}
	if res.Title == "" {
		res.Title = e.FinalURL
	}
	if res.Truncated {
		if f.req.Format == HTML {
			content += "\n" + truncMarkHTML
		} else {
			content += "\n\n" + truncMark
		}
	}
	res.Output = f.compose(m, content)
	return res
}

// content is the entry in the request's format.
func (f *fetcher) content(e *entry) string {
	switch f.req.Format {
	case Text:
		return e.Text
	case HTML:
		if e.SourceKind == "html" {
			return e.HTML
		}
		return pre(e.Text)
	}
	return e.Markdown
}

func pre(s string) string { return "<pre>" + html.EscapeString(s) + "</pre>" }

// compose puts the metadata block in front of the content: as a block for
// markdown and text (with "Source content:" between when the content has a
// block of its own), as a comment for HTML (after an XML declaration).
func (f *fetcher) compose(m Metadata, content string) string {
	if !f.req.IncludeMetadata {
		return content
	}
	if f.req.Format != HTML {
		block := m.render(false)
		if content == "" {
			return block
		}
		if strings.HasPrefix(content, "---\n") || content == "---" || strings.HasPrefix(content, "---\r\n") {
			return block + "\nSource content:\n\n" + content
		}
		return block + "\n" + content
	}
	comment := "<!--\n" + m.render(true) + "-->\n"
	if strings.HasPrefix(content, "<?xml") {
		if end := strings.Index(content, "?>"); end >= 0 {
			decl, rest := content[:end+2], strings.TrimLeft(content[end+2:], "\r\n")
			return decl + "\n" + comment + rest
		}
	}
	return comment + content
}

// pageMeta is the metadata of a text, HTML or llms.txt result.
func (f *fetcher) pageMeta(e *entry, h how) Metadata {
	var m Metadata
	canon := e.Canonical
	if canon == "" && e.SourceKind != "llms_txt" {
		canon = e.FinalURL
	}
	f.responseFields(&m, e, canon)
	if len(e.Headings) > 0 {
		m.add("headings", e.Headings)
	}
	if e.SourceKind == "html" {
		m.addIf("title", e.Title)
	}
	m.add("source_kind", e.SourceKind)
	m.add("used_llms_txt", e.UsedLLMs)
	m.add("extracted_main", e.Extracted)
	m.add("redirect_chain", nonNil(e.Chain))
	m.add("upgraded_to_https", e.Upgraded)
	m.addIf("llms_probe_error", e.ProbeError)
	m.add("llms_probe_truncated", e.ProbeTrunc)
	if h.revalidated {
		m.add("cache_revalidated", true)
		m.add("upstream_status_code", 304)
	}
	m.add("cache_hit", h.cacheHit)
	m.add("truncated", e.Truncated)
	m.add("word_count", e.Words)
	m.add("quality_signals", nonNil(e.Signals))
	m.add("decoded_charset", e.Decoded)
	m.add("decode_fallback", e.DecodeFall)
	m.addIf("decode_warning", e.DecodeWarn)
	return m
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// responseFields are the first fields of every answer built from a
// response, page or binary: where it came from and what its headers said.
func (f *fetcher) responseFields(m *Metadata, e *entry, canonical string) {
	m.add("requested_url", f.req.URL)
	m.add("final_url", e.FinalURL)
	m.addIf("canonical_url", canonical)
	m.add("status_code", e.Status)
	m.add("source_content_type", e.ContentType)
	m.addIf("charset", e.Charset)
	m.addIf("etag", e.ETag)
	m.addIf("last_modified", e.LastModified)
	if e.ContentLength != nil {
		m.add("content_length", *e.ContentLength)
	}
	m.addIf("filename", e.Filename)
}

// blockedResult is the answer for a refused redirect: not an error, so
// the model can re-run with the target it now knows.
func (f *fetcher) blockedResult(w *walked) *Result {
	var m Metadata
	m.add("requested_url", f.req.URL)
	m.add("redirect_url", w.blocked.to)
	m.add("status_code", w.status)
	m.add("redirect_chain", chainStrings(w.chain))
	m.add("upgraded_to_https", w.upgraded)
	msg := blockedFirstLine + "\nOriginal URL: " + f.req.URL + "\nRedirect URL: " + w.blocked.to +
		"\nStatus: " + w.blocked.status + "\n\nRe-run webfetch with the redirect URL to continue."
	return f.messageResult(m, msg, w.blocked.to)
}

// llmsMissingResult is the answer when llms.txt was required and no
// candidate had it.
func (f *fetcher) llmsMissingResult(p *probeResult) *Result {
	var m Metadata
	m.add("requested_url", f.req.URL)
	m.add("used_llms_txt", false)
	m.addIf("llms_probe_error", p.lastErr)
	m.add("prefer_llms_txt", "always")
	msg := "Required llms.txt content was unavailable.\nOriginal URL: " + f.req.URL
	if p.lastErr != "" {
		msg += "\nReason: " + p.lastErr
	}
	return f.messageResult(m, msg, f.req.URL)
}

// messageResult renders a message in the request's format.
func (f *fetcher) messageResult(m Metadata, msg, title string) *Result {
	content := msg
	if f.req.Format == HTML {
		content = pre(msg)
	}
	return &Result{Output: f.compose(m, content), Title: title, ContentType: "text/plain", Metadata: m}
}

// binaryResult is the answer for a binary download.
func (f *fetcher) binaryResult(e *entry, h how) *Result {
	var m Metadata
	f.responseFields(&m, e, e.FinalURL)
	m.add("binary_kind", e.BinaryKind)
	kind := strings.ToUpper(e.BinaryKind)
	var msg string
	switch {
	case e.MetadataOnly || e.SavedPath != "":
		m.add("redirect_chain", nonNil(e.Chain))
		m.add("upgraded_to_https", e.Upgraded)
		m.addIf("llms_probe_error", e.ProbeError)
		m.add("cache_hit", h.cacheHit)
		m.add("truncated", e.Truncated)
		m.add("download_limit_bytes", e.DownloadLimit)
		if e.MetadataOnly {
			m.add("binary_metadata_only", true)
			msg = kind + " content omitted because it exceeds the download limit."
		} else {
			m.add("saved_path", e.SavedPath)
			msg = kind + " content saved to " + e.SavedPath
		}
	default:
		m.add("redirect_chain", nonNil(e.Chain))
		m.add("upgraded_to_https", e.Upgraded)
		m.add("cache_hit", h.cacheHit)
		m.add("truncated", e.Truncated)
		m.add("save_binary", false)
		msg = kind + " content fetched but not saved. Re-run with save_binary=true to persist it."
	}
	title := e.Filename
	if e.SavedPath != "" {
		title = e.SavedPath
	}
	if title == "" {
		title = e.FinalURL
	}
	r := f.messageResult(m, msg, title)
	r.ContentType = e.ContentType
	return r
}
