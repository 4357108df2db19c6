package fetch

import (
	"fmt"
	"strings"

	whatwg "github.com/nlnwa/whatwg-url/url"
	"github.com/slimgate/slim/fetch/internal/netguard"
)

// target is a validated, normalized request URL.
type target struct {
	// requested is the argument as given, fragment included.
	requested string
	// primary is the URL fetched first: the WHATWG serialization without
	// the fragment, moved to https when the argument was http.
	primary *whatwg.Url
	// fallback is the http URL tried when the https attempt fails; nil
	// when the argument was https.
	fallback *whatwg.Url
}

var urlParser = whatwg.NewParser()

// parseTarget validates and normalizes a request URL: http or https only,
// a host, no user info (it would land in the cache and the metadata).
func parseTarget(raw string) (*target, error) {
	bad := func(format string, a ...any) error {
		return newErr(Usage, CodeBadURL, fmt.Sprintf(format, a...), nil)
	}
	if strings.TrimSpace(raw) == "" {
		return nil, bad("url is required")
	}
	u, err := urlParser.Parse(strings.TrimSpace(raw))
	if err != nil {
		if !strings.Contains(raw, "://") {
			return nil, bad("url %q is not a valid URL: it needs a scheme, http:// or https://", raw)
		}
		return nil, bad("url %q is not a valid URL", raw)
	}
	scheme := u.Scheme()
	if scheme != "http" && scheme != "https" {
		return nil, bad("url %q: only http and https URLs can be fetched, not %s:", raw, scheme)
	}
	if u.Hostname() == "" {
		return nil, bad("url %q has no host", raw)
	}
	if u.Username() != "" || u.Password() != "" {
		return nil, bad("url %q carries a user name or password; fetch it without them", raw)
	}
	u.SetHash("")
	t := &target{requested: raw}
	if scheme == "http" {
		t.fallback = u
		t.primary = withScheme(u, "https")
	} else {
		t.primary = u
	}
	return t, nil
}

// withScheme is u with its scheme replaced and the port kept (a default port
// was dropped by the parser and stays the new scheme's default).
func withScheme(u *whatwg.Url, scheme string) *whatwg.Url {
	c := u.Clone()
	c.SetProtocol(scheme)
	return c
}

// href is u serialized without the fragment.
func href(u *whatwg.Url) string { return u.Href(true) }

// origin is scheme://host[:port] of u.
func origin(u *whatwg.Url) string { return u.Scheme() + "://" + u.Host() }

// docsLike reports whether host looks like a documentation site, where a
// site-wide llms.txt is likely the better answer.
func docsLike(host string) bool {
	h := strings.ToLower(host)
	for _, s := range []string{".readthedocs.io", ".readthedocs.org", ".gitbook.io", ".netlify.app", ".vercel.app", "docs.rs"} {
		if strings.HasSuffix(h, s) {
			return true
		}
	}
	for _, p := range []string{"docs.", "developer.", "dev.", "wiki."} {
		if strings.HasPrefix(h, p) {
			return true
		}
	}
	return false
}

// probes reports whether the llms.txt probe runs for this target and mode.
func (t *target) probes(mode LLMsMode) bool {
	return mode == LLMsAlways || (mode == LLMsAuto && docsLike(t.primary.Hostname()))
}

// origins are the https and (for an http argument) http origins of the
// requested host: where redirects may go.
func (t *target) origins() []string {
	o := []string{origin(t.primary)}
	if t.fallback != nil {
		o = append(o, origin(t.fallback))
	}
	return o
}

// llmsCandidates are the probe URLs in order: llms-full.txt before
// llms.txt, https before http.
func (t *target) llmsCandidates() []*whatwg.Url {
	var out []*whatwg.Url
	for _, base := range []*whatwg.Url{t.primary, t.fallback} {
		if base == nil {
			continue
		}
		for _, p := range []string{"/llms-full.txt", "/llms.txt"} {
			c := base.Clone()
			c.SetPathname(p)
			c.SetSearch("")
			out = append(out, c)
		}
	}
	return out
}

// Plan is what a host asks permission for before it runs a Request: the
// URLs the request may contact and the origins its redirects may reach.
// Building one does no network I/O.
type Plan struct {
	URL            string   `json:"url"`
	RequestedURL   string   `json:"requested_url"`
	FallbackURL    string   `json:"fallback_url,omitempty"`
	ProbeLLMs      bool     `json:"llms_probe_enabled"`
	Patterns       []string `json:"patterns"`
	Always         []string `json:"always"`
	AllowedOrigins []string `json:"allowed_origins"`
	Format         Format   `json:"format"`
	Prompt         *string  `json:"prompt,omitempty"`
}

// PlanFor validates r and returns its permission plan.
func PlanFor(r Request) (*Plan, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	t, _ := parseTarget(r.URL)
	p := &Plan{URL: href(t.primary), RequestedURL: r.URL, ProbeLLMs: t.probes(r.PreferLLMs), Format: r.Format, Prompt: r.Prompt}
	p.Patterns = []string{href(t.primary)}
	if t.fallback != nil {
		p.FallbackURL = href(t.fallback)
		p.Patterns = append(p.Patterns, p.FallbackURL)
	}
	if p.ProbeLLMs {
		for _, c := range t.llmsCandidates() {
			p.Patterns = append(p.Patterns, href(c))
		}
	}
	p.Always = append([]string(nil), p.Patterns...)
	p.AllowedOrigins = t.origins()
	return p, nil
}

// ParseResolve reads one dial mapping in curl's --resolve form,
// HOST:PORT:ADDR (or HOST:PORT:ADDR:PORT2 to connect to another port), and
// returns the Network.Resolve key and target.
func ParseResolve(spec string) (key, target string, err error) {
	key, target, err = netguard.ParseResolve(spec)
	if err != nil {
		return "", "", newErr(Usage, CodeBadArgument, err.Error(), err)
	}
	return key, target, nil
}
