package netguard

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"golang.org/x/net/http/httpproxy"
)

// Limits of the transport Transport builds.
const (
	TLSHandshakeTimeout    = 10 * time.Second
	MaxResponseHeaderBytes = 256 << 10
)

// Option adjusts the transport Transport builds.
type Option func(*options)

type options struct {
	proxy *httpproxy.Config
	tls   *tls.Config
}

// WithProxy sends requests through the proxies cfg names (HTTP_PROXY,
// HTTPS_PROXY and NO_PROXY semantics; build it with
// httpproxy.FromEnvironment where the environment is read).
//
// Without this option the transport uses no proxy at all, whatever the
// environment says: http.ProxyFromEnvironment would hand every connection
// to the proxy, and the dial-time check would then only ever see the
// proxy's address, never the target's.
//
// With it, the rule is:
//   - the proxy's own address is exempt from the policy (a company proxy
//     commonly sits on a private address), but only when it is dialed as the
//     proxy: a request that asks for the proxy's host and port directly is
//     refused, so the exemption cannot be used to talk to the proxy itself;
//   - the target of a proxied request is checked before the request leaves:
//     an IP literal is checked as it is, and a name is resolved locally and
//     refused if any of its addresses is refused. A name that does not
//     resolve locally is passed to the proxy, which does its own
//     resolution: what it then reaches is the proxy's policy, not ours;
//   - requests NO_PROXY excludes (and loopback targets, which httpproxy never
//     proxies) go direct, through the dialer's usual check;
//   - a host that Dialer.Resolve maps is always dialed direct, to the
//     mapped address.
func WithProxy(cfg *httpproxy.Config) Option {
	return func(o *options) { o.proxy = cfg }
}

// WithTLSConfig uses c (cloned) as the TLS client configuration, for
// example to trust a test server's certificate. Its MinVersion is raised to
// TLS 1.2 when it is lower.
func WithTLSConfig(c *tls.Config) Option {
	return func(o *options) { o.tls = c }
}

// Transport returns an *http.Transport whose every connection goes through
// d: HTTP/2 attempted (ForceAttemptHTTP2, which a custom dialer otherwise
// turns off), TLS 1.2 at least, a 10 s TLS handshake timeout, response
// headers bounded to 256 KiB, transparent gzip, and no proxy unless
// WithProxy is given. Cookies are the client's business: an http.Client
// without a Jar sends none.
func Transport(d *Dialer, opts ...Option) *http.Transport {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	tc := &tls.Config{}
	if o.tls != nil {
		tc = o.tls.Clone()
	}
	if tc.MinVersion < tls.VersionTLS12 {
		tc.MinVersion = tls.VersionTLS12
	}
	t := &http.Transport{
		DialContext:            d.DialContext,
		ForceAttemptHTTP2:      true,
		TLSClientConfig:        tc,
		TLSHandshakeTimeout:    TLSHandshakeTimeout,
		MaxResponseHeaderBytes: MaxResponseHeaderBytes,
		MaxIdleConns:           16,
		IdleConnTimeout:        90 * time.Second,
		ExpectContinueTimeout:  time.Second,
	}
	if o.proxy != nil {
		g := newProxyGuard(d, o.proxy)
		t.Proxy = g.proxyFor
		t.DialContext = g.dial
	}
	return t
}

// proxyGuard applies the proxy rule described at WithProxy.
type proxyGuard struct {
	d       *Dialer
	choose  func(*url.URL) (*url.URL, error)
	proxies map[string]bool // "host:port" of each configured proxy, as dialed
}

func newProxyGuard(d *Dialer, cfg *httpproxy.Config) *proxyGuard {
	g := &proxyGuard{d: d, choose: cfg.ProxyFunc(), proxies: map[string]bool{}}
	for _, raw := range []string{cfg.HTTPProxy, cfg.HTTPSProxy} {
		if u := parseProxy(raw); u != nil {
			g.proxies[dialAddr(u)] = true
		}
	}
	return g
}

// parseProxy reads a proxy setting the way httpproxy does: a value without
// a scheme is an http:// proxy.
func parseProxy(raw string) *url.URL {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		if u2, err2 := url.Parse("http://" + raw); err2 == nil && u2.Host != "" {
			return u2
		}
		return nil
	}
	return u
}

// dialAddr is the "host:port" the transport dials for u.
func dialAddr(u *url.URL) string {
	port := u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "https":
			port = "443"
		case "socks5", "socks5h":
			port = "1080"
		default:
			port = "80"
		}
	}
	return net.JoinHostPort(normHost(u.Hostname()), port)
}

func (g *proxyGuard) proxyFor(req *http.Request) (*url.URL, error) {
	host := req.URL.Hostname()
	target := dialAddr(req.URL)
	if g.mappedURL(req.URL) {
		return nil, nil
	}
	// The proxy itself is never a target, direct or through itself (its
	// management pages are not for the model).
	if g.proxies[target] {
		return nil, newErr(Blocked, CodeProxyTarget,
			"connection to "+target+" refused: it is the configured proxy, which is reached only as a proxy", nil)
	}
	pu, err := g.choose(req.URL)
	if err != nil {
		return nil, err
	}
	if pu == nil {
		return nil, nil
	}
	if err := g.checkTarget(req.Context(), host); err != nil {
		return nil, err
	}
	return pu, nil
}

// mappedURL reports whether Dialer.Resolve maps u's dial address.
func (g *proxyGuard) mappedURL(u *url.URL) bool {
	h, p, err := net.SplitHostPort(dialAddr(u))
	if err != nil {
		return false
	}
	_, ok, _ := g.d.mapped(h, p)
	return ok
}

// checkTarget applies the policy to a proxied request's host: the literal
// itself, or every address the name resolves to here.
func (g *proxyGuard) checkTarget(ctx context.Context, host string) error {
	if ip, err := netip.ParseAddr(host); err == nil {
		if c, ok := g.d.Policy.Allowed(ip); !ok {
			return &BlockedError{Host: host, Addr: ip, Class: c}
		}
		return nil
	}
	var r Resolver = net.DefaultResolver
	if g.d.Resolver != nil {
		r = g.d.Resolver
	}
	ips, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil // the proxy resolves it; see WithProxy
	}
	for _, ip := range ips {
		if c, ok := g.d.Policy.Allowed(ip); !ok {
			return &BlockedError{Host: host, Addr: ip, Class: c}
		}
	}
	return nil
}

// dial exempts the configured proxies' addresses from the policy. A direct
// request to one of them never gets here (proxyFor refuses it), so such a
// dial is always a dial of the proxy.
func (g *proxyGuard) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	h, p, err := net.SplitHostPort(addr)
	if err == nil && g.proxies[net.JoinHostPort(normHost(h), p)] {
		return g.d.dial(ctx, network, addr, true)
	}
	return g.d.dial(ctx, network, addr, false)
}
