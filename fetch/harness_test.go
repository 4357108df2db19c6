package fetch

import (
	"context"
	"crypto/x509"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"
)

// site is a test server with a request log, reachable under test host
// names through the dial mapping.
type site struct {
	srv *httptest.Server
	mu  sync.Mutex
	log []*http.Request
}

func (s *site) hits() int { s.mu.Lock(); defer s.mu.Unlock(); return len(s.log) }

// paths is the request log's paths (with query).
func (s *site) paths() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, r := range s.log {
		out = append(out, r.URL.RequestURI())
	}
	return out
}

func (s *site) last() *http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.log) == 0 {
		return nil
	}
	return s.log[len(s.log)-1]
}

func (s *site) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.log = append(s.log, r.Clone(context.Background()))
		s.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

// newTLSSite starts an https server for h.
func newTLSSite(t *testing.T, h http.Handler) *site {
	t.Helper()
	s := &site{}
	s.srv = httptest.NewTLSServer(s.wrap(h))
	t.Cleanup(s.srv.Close)
	return s
}

// newPlainSite starts an http server for h.
func newPlainSite(t *testing.T, h http.Handler) *site {
	t.Helper()
	s := &site{}
	s.srv = httptest.NewServer(s.wrap(h))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *site) addr() string { return s.srv.Listener.Addr().String() }

// world is the network of one test: host names mapped to test servers.
type world struct {
	t     *testing.T
	cfg   Config
	roots *x509.CertPool
}

func newWorld(t *testing.T) *world {
	w := &world{t: t, roots: x509.NewCertPool()}
	w.cfg.Network.Resolve = map[string]string{}
	w.cfg.Network.RootCAs = w.roots
	w.cfg.BinaryDir = t.TempDir()
	return w
}

// serve maps host:port to the site (and trusts its certificate).
func (w *world) serve(hostport string, s *site) {
	w.cfg.Network.Resolve[hostport] = s.addr()
	if s.srv.TLS != nil {
		w.roots.AddCert(s.srv.Certificate())
	}
}

// https maps host:443 to a new TLS site serving h.
func (w *world) https(host string, h http.Handler) *site {
	s := newTLSSite(w.t, h)
	w.serve(host+":443", s)
	return s
}

// withCache gives the world an on-disk cache.
func (w *world) withCache() *world {
	w.cfg.Cache.Dir = w.t.TempDir()
	return w
}

func (w *world) fetch(r Request) (*Result, error) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return Fetch(ctx, r, w.cfg)
}

// mustFetch fetches and fails the test on an error.
func (w *world) mustFetch(r Request) *Result {
	w.t.Helper()
	res, err := w.fetch(r)
	if err != nil {
		w.t.Fatalf("Fetch(%s): %v", r.URL, err)
	}
	return res
}

func req(url string, opts ...func(*Request)) Request {
	r := NewRequest(url)
	for _, o := range opts {
		o(&r)
	}
	return r
}

func htmlPage(body string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(body))
	})
}

func typed(ct, body string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ct == "" {
			w.Header()["Content-Type"] = nil
		} else {
			w.Header().Set("Content-Type", ct)
		}
		_, _ = w.Write([]byte(body))
	})
}

func redirect(code int, to string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", to)
		w.WriteHeader(code)
	})
}

func wantContains(t *testing.T, out string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, clip(out))
		}
	}
}

func wantLacks(t *testing.T, out string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if strings.Contains(out, s) {
			t.Errorf("output has %q:\n%s", s, clip(out))
		}
	}
}

func clip(s string) string {
	if len(s) > 3000 {
		return s[:3000] + "\n...[clipped]"
	}
	return s
}

// fakeDNS answers names from a table, like a resolver whose answers the
// address policy must still check.
type fakeDNS map[string]string

func (f fakeDNS) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	a, ok := f[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return []netip.Addr{netip.MustParseAddr(a)}, nil
}
