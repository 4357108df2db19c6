package fetch

// entry is a fetched result before rendering: what the cache stores. The
// per-call fields (requested_url, cache_hit, the secondary model's) are
// added when it is rendered.
type entry struct {
	Kind          string   `json:"kind"` // "page" or "binary"
	FinalURL      string   `json:"final_url"`
	Canonical     string   `json:"canonical_url,omitempty"`
	Status        int      `json:"status"`
	ContentType   string   `json:"content_type,omitempty"`
	Charset       string   `json:"charset,omitempty"`
	ETag          string   `json:"etag,omitempty"`
	LastModified  string   `json:"last_modified,omitempty"`
	ContentLength *int64   `json:"content_length,omitempty"`
	Filename      string   `json:"filename,omitempty"`
	Headings      []string `json:"headings,omitempty"`
	Title         string   `json:"title,omitempty"`
	SourceKind    string   `json:"source_kind,omitempty"`
	UsedLLMs      bool     `json:"used_llms,omitempty"`
	LLMsURL       string   `json:"llms_url,omitempty"`
	Extracted     bool     `json:"extracted,omitempty"`
	Chain         []string `json:"chain"`
	Upgraded      bool     `json:"upgraded,omitempty"`
	// Key is the cache key of the request that fetched the entry; a hit
	// under another key (the final URL's) did not take that request's
	// redirects or upgrade.
	Key        string   `json:"key,omitempty"`
	ProbeError string   `json:"probe_error,omitempty"`
	ProbeTrunc bool     `json:"probe_truncated,omitempty"`
	Truncated  bool     `json:"truncated,omitempty"`
	Words      int      `json:"words,omitempty"`
	Signals    []string `json:"signals"`
	Decoded    string   `json:"decoded_charset,omitempty"`
	DecodeFall bool     `json:"decode_fallback,omitempty"`
	DecodeWarn string   `json:"decode_warning,omitempty"`

	// The three renderings; Text and HTML are left empty (and the flags
	// set) when they equal Markdown, so the cache keeps one copy.
	Markdown string `json:"markdown,omitempty"`
	Text     string `json:"text,omitempty"`
	HTML     string `json:"html,omitempty"`
	TextIsMD bool   `json:"text_is_md,omitempty"`
	HTMLIsMD bool   `json:"html_is_md,omitempty"`

	// Binary results.
	BinaryKind    string `json:"binary_kind,omitempty"`
	DownloadLimit int64  `json:"download_limit,omitempty"`
	MetadataOnly  bool   `json:"metadata_only,omitempty"`
	SaveBinary    bool   `json:"save_binary,omitempty"`
	SavedPath     string `json:"saved_path,omitempty"`
	SavedSize     int64  `json:"saved_size,omitempty"`
	SavedSHA256   string `json:"saved_sha256,omitempty"`
}

// compact drops the renderings that equal Markdown (before storing).
func (e *entry) compact() {
	if e.Text == e.Markdown {
		e.Text, e.TextIsMD = "", true
	}
	if e.HTML == e.Markdown {
		e.HTML, e.HTMLIsMD = "", true
	}
}

// expand undoes compact (after loading).
func (e *entry) expand() {
	if e.TextIsMD {
		e.Text = e.Markdown
	}
	if e.HTMLIsMD {
		e.HTML = e.Markdown
	}
}
