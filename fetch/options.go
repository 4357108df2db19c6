package fetch

import (
	"context"
	"crypto/x509"

	"fmt"
	"golang.org/x/net/http/httpproxy"
	"net/netip"
	"sort"
	"strings"
	"time"
)

// Format is how the content is rendered.
type Format string

// The formats.
const (
	Markdown Format = "markdown"
	Text     Format = "text"
	HTML     Format = "html"
)

// LLMsMode says when to look for a site's llms.txt instead of the page.
type LLMsMode string

// The llms.txt modes.
const (
	// LLMsAuto probes on documentation-like hosts (docs.*, developer.*,
	// dev.*, wiki.*, *.readthedocs.io, docs.rs, ...) and falls back to the
	// page.
	LLMsAuto LLMsMode = "auto"
	// LLMsAlways probes on every host and never fetches the page.
	LLMsAlways LLMsMode = "always"
	// LLMsNever never probes.
	LLMsNever LLMsMode = "never"
)

// Limits and defaults.
const (
	DefaultTimeout = 30 * time.Second
	MaxTimeout     = 120 * time.Second
	// MaxBodyBytes is the most of a text body read (after decompression);
	// more is cut and reported as truncated.
	MaxBodyBytes = 10 << 20
	// MaxBinaryBytes is the binary download limit without SaveBinary; with
	// it, MaxBodyBytes.
	MaxBinaryBytes = 2 << 20
	// MaxRedirects is the most requests one redirect walk makes.
	MaxRedirects = 10
	// DefaultProbeTimeout caps the llms.txt probe (all candidates
	// together); it is further capped at half the call's timeout so that
	// the page keeps time of its own.
	DefaultProbeTimeout = 8 * time.Second
	// UserAgent is sent with every request.
	UserAgent = "slim-fetch/1 (+https://github.com/slimgate/slim)"
)

// Request is what the caller (the model, through the host's tool call)
// controls. The zero values of ExtractMain and IncludeMetadata are not the
// defaults: use NewRequest.
type Request struct {
	URL     string
	Format  Format
	Timeout time.Duration
	// Prompt, when not nil, asks the secondary model to answer it from the
	// page; a blank prompt is reported as skipped.
	Prompt          *string
	ExtractMain     bool
	PreferLLMs      LLMsMode
	IncludeMetadata bool
	SaveBinary      bool
}

// NewRequest is a Request for url with every default.
func NewRequest(url string) Request {
	return Request{URL: url, Format: Markdown, Timeout: DefaultTimeout, ExtractMain: true, PreferLLMs: LLMsAuto, IncludeMetadata: true}
}

// Validate checks the arguments: a usage *Error names the first bad one.
func (r Request) Validate() error {
	switch r.Format {
	case Markdown, Text, HTML:
	default:
		return newErr(Usage, CodeBadArgument, fmt.Sprintf("format must be markdown, text or html, not %q", r.Format), nil)
	}
	switch r.PreferLLMs {
	case LLMsAuto, LLMsAlways, LLMsNever:
	default:
		return newErr(Usage, CodeBadArgument, fmt.Sprintf("prefer_llms_txt must be auto, always or never, not %q", r.PreferLLMs), nil)
	}
	if r.Timeout <= 0 || r.Timeout > MaxTimeout {
		return newErr(Usage, CodeBadArgument, fmt.Sprintf("timeout must be more than 0 and at most %d seconds, not %g", int(MaxTimeout/time.Second), r.Timeout.Seconds()), nil)
	}
	_, err := parseTarget(r.URL)
	return err
}

// Config is what the operator and the host control; nothing in it may come
// from the model's arguments.
type Config struct {
	Network Network
	Cache   CacheConfig
	// BinaryDir is the base directory binary downloads are saved under
	// (an owner-only folder is made inside); "" means os.TempDir().
	BinaryDir string
	// AllowOrigins adds origins ("https://docs.example.com") redirects may
	// go to, for hosts that know the user allowed them.
	AllowOrigins []string
	// Model configures the secondary model that answers Request.Prompt.
	Model ModelConfig
	// ProbeTimeout overrides DefaultProbeTimeout (tests).
	ProbeTimeout time.Duration
	// Now is the clock (tests); nil means time.Now.
	Now func() time.Time
}

// Network is the connection policy.
type Network struct {
	// AllowPrivate opens loopback, private (RFC 1918, CGNAT) and unique
	// local addresses; AllowLinkLocal opens link-local ones, which include
	// the cloud metadata addresses.
	AllowPrivate   bool
	AllowLinkLocal bool
	// Resolve maps "host:port" to "ip:port", like curl's --resolve. A
	// mapped target is operator configuration and is exempt from the
	// address policy.
	Resolve map[string]string
	// Resolver replaces the system resolver; its answers are checked by
	// the policy like any other (tests).
	Resolver Resolver
	// RootCAs replaces the system roots (tests); nil means the system's
	// (SSL_CERT_FILE is honoured).
	RootCAs *x509.CertPool
	// Proxy, when set, sends requests through the proxies it names
	// (HTTP_PROXY, HTTPS_PROXY, NO_PROXY; build it with
	// httpproxy.FromEnvironment). The proxy's own address is exempt from the
	// address policy; a proxied target is checked first (an IP literal as
	// it is, a name by resolving it here), and a name that does not resolve
	// here is the proxy's to resolve. nil means no proxy.
	Proxy *httpproxy.Config
}

// Resolver looks up a host's addresses.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// CacheConfig configures the on-disk cache.
type CacheConfig struct {
	// Dir is the cache directory; "" turns the cache off.
	Dir string
	// Refresh skips the lookup but still stores the result.
	Refresh bool
	// TTL is how long an entry is fresh (0: 15 minutes); MaxStale how
	// long a stale entry with a validator is kept to revalidate (0: 24 h);
	// MaxBytes the size cap of the directory (0: 50 MiB).
	TTL      time.Duration
	MaxStale time.Duration
	MaxBytes int64
}

// ModelConfig is the secondary model: a chain of models tried in order,
// reached through the OpenCode server when OpenCodeURL is set, else
// through an OpenAI-compatible endpoint when OpenAIBaseURL is set.
type ModelConfig struct {
	// Models are "provider/model" or "provider/model#variant". When there
	// are none and the OpenCode backend is used, the chain is the
	// server's small_model (GET /config), asked for only when a prompt
	// needs a model; a server without one leaves no model configured.
	Models []string
	// Backend forces "opencode", "openai" or "none"; "" chooses.
	Backend string
	// The OpenCode server, the calling session and its directory; the
	// password (and user name, default "opencode") for basic auth.
	OpenCodeURL, SessionID, Directory string
	OpenCodeUser, OpenCodePassword    string
	// An OpenAI-compatible endpoint ("https://api.openai.com/v1"), its key,
	// and a map from "provider/model" to the endpoint's model names.
	OpenAIBaseURL, OpenAIKey string
	OpenAIModelMap           map[string]string
	// Timeout is per model attempt (0: 30 s).
	Timeout time.Duration
}

// scope is the part of the configuration that changes what a fetch may
// reach, as a string for the cache key: the address switches, the dial
// mapping and the extra redirect origins. The default settings give "".
func (n Network) scope(origins []string) string {
	var parts []string
	if n.AllowPrivate {
		parts = append(parts, "private")
	}
	if n.AllowLinkLocal {
		parts = append(parts, "link-local")
	}
	for k, v := range n.Resolve {
		parts = append(parts, "resolve "+k+"="+v)
	}
	for _, o := range origins {
		parts = append(parts, "origin "+o)
	}
	sort.Strings(parts)
	return strings.Join(parts, "\n")
}

func (c *Config) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}
