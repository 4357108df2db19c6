package netguard

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/net/http/httpproxy"
)

// newProxy is a forward proxy on 127.0.0.1: it answers every proxied
// request itself, naming the absolute URL it was asked for.
func newProxy(t *testing.T) *server {
	return newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if !r.URL.IsAbs() {
			http.Error(w, "not a proxy request", http.StatusBadRequest)
			return
		}
		io.WriteString(w, "proxied "+r.URL.String())
	})
}

// The proxy rule: the proxy on a loopback address is reached (its own
// address is exempt), a public target goes through it, a target that
// resolves here to a refused address or is a refused literal is stopped
// before the proxy sees it, a name that does not resolve here is left to
// the proxy, and NO_PROXY targets go direct through the usual check.
func TestProxyTargetsAreCheckedAndTheProxyIsExempt(t *testing.T) {
	proxy := newProxy(t)
	r := resolver(
		"docs.example.com", "93.184.216.34",
		"intranet.example.com", "93.184.216.34,10.0.0.7",
		"direct.example.com", "127.0.0.1",
	)
	cfg := &httpproxy.Config{HTTPProxy: proxy.URL, NoProxy: "direct.example.com"}
	c := client(&Dialer{Resolver: r}, WithProxy(cfg))

	body, err := get(t, c, "http://docs.example.com/page")
	if err != nil || body != "proxied http://docs.example.com/page" {
		t.Fatalf("public target: %q, %v", body, err)
	}
	body, err = get(t, c, "http://unknown.example.com/x")
	if err != nil || body != "proxied http://unknown.example.com/x" {
		t.Fatalf("unresolvable target: %q, %v", body, err)
	}
	seen := proxy.hits.Load()

	_, err = get(t, c, "http://intranet.example.com/")
	wantBlocked(t, err, "intranet.example.com", Private)
	_, err = get(t, c, "http://169.254.169.254/latest/meta-data/")
	wantBlocked(t, err, "169.254.169.254", Metadata)
	_, err = get(t, c, "http://direct.example.com:"+proxy.port()+"/")
	wantBlocked(t, err, "direct.example.com", Loopback)
	if proxy.hits.Load() != seen {
		t.Fatalf("the proxy saw %d refused requests", proxy.hits.Load()-seen)
	}
}

// A request for the proxy's own host and port that would go direct (here:
// a loopback target, which is never proxied) is refused, so the proxy's
// exemption cannot be used to talk to the proxy itself.
func TestProxyAddressIsNotReachableDirectly(t *testing.T) {
	proxy := newProxy(t)
	c := client(&Dialer{}, WithProxy(&httpproxy.Config{HTTPProxy: proxy.URL}))
	_, err := get(t, c, proxy.URL+"/status")
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeProxyTarget {
		t.Fatalf("got %v, want %s", err, CodeProxyTarget)
	}
	proxy.untouched(t)
}

// A request for the proxy's own address is refused whether it would go
// direct or through the proxy: its management pages are not for the model.
func TestProxiedRequestForTheProxyItselfIsRefused(t *testing.T) {
	g := newProxyGuard(&Dialer{Resolver: resolver("proxy.example.com", "93.184.216.34")},
		&httpproxy.Config{HTTPProxy: "http://proxy.example.com:3128"})
	r, _ := http.NewRequest("GET", "http://proxy.example.com:3128/squid-internal-mgr/info", nil)
	pu, err := g.proxyFor(r)
	e, ok := err.(*Error)
	if !ok || e.Kind != Blocked || e.Code != CodeProxyTarget || pu != nil {
		t.Fatalf("proxyFor = %v, %v; want a proxy_target refusal", pu, err)
	}
}

// Without WithProxy the environment's proxy settings are ignored: the
// request goes straight to its (mapped) target and the proxy sees nothing.
// net/http reads the proxy variables once per process, so the request is
// made by a child process that starts with them set.
func TestEnvironmentProxyIsIgnoredWithoutWithProxy(t *testing.T) {
	proxy := newProxy(t)
	origin := newServer(t, nil)
	cmd := exec.Command(os.Args[0], "-test.run=^TestChildRequestsWithEnvironmentProxy$", "-test.v")
	cmd.Env = append(os.Environ(),
		"NETGUARD_CHILD_ORIGIN=127.0.0.1:"+origin.port(),
		"HTTP_PROXY="+proxy.URL, "http_proxy="+proxy.URL, "NO_PROXY=", "no_proxy=")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "child: served site.example.com") {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if origin.hits.Load() != 1 {
		t.Fatalf("origin hits = %d", origin.hits.Load())
	}
	proxy.untouched(t)
}

// TestChildRequestsWithEnvironmentProxy is the child of the test above; it
// does nothing in a normal run.
func TestChildRequestsWithEnvironmentProxy(t *testing.T) {
	origin := os.Getenv("NETGUARD_CHILD_ORIGIN")
	if origin == "" {
		t.Skip("runs only as the child of TestEnvironmentProxyIsIgnoredWithoutWithProxy")
	}
	d := &Dialer{Resolve: map[string]string{"site.example.com:80": origin}}
	body, err := get(t, client(d), "http://site.example.com/")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("child: " + body)
}

// A mapped host is dialed direct even with a proxy configured.
func TestMappedHostBypassesTheProxy(t *testing.T) {
	proxy := newProxy(t)
	origin := newServer(t, nil)
	d := &Dialer{Resolve: map[string]string{"site.example.com:80": "127.0.0.1:" + origin.port()}}
	body, err := get(t, client(d, WithProxy(&httpproxy.Config{HTTPProxy: proxy.URL})), "http://site.example.com/")
	if err != nil || body != "served site.example.com" {
		t.Fatalf("got %q, %v", body, err)
	}
	proxy.untouched(t)
}

func tlsServer(t *testing.T, configure func(*httptest.Server)) (*httptest.Server, *x509.CertPool) {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.Proto+" "+r.Host)
	}))
	if configure != nil {
		configure(srv)
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	return srv, pool
}

// Over TLS the transport negotiates HTTP/2 through the custom dialer and
// verifies the certificate against the request's host name, not the
// mapped address.
func TestTransportSpeaksHTTP2OverTLS(t *testing.T) {
	srv, pool := tlsServer(t, func(s *httptest.Server) { s.EnableHTTP2 = true })
	_, port, _ := strings.Cut(srv.Listener.Addr().String(), ":")
	d := &Dialer{Resolve: map[string]string{"docs.example.com:443": "127.0.0.1:" + port}}
	body, err := get(t, client(d, WithTLSConfig(&tls.Config{RootCAs: pool})), "https://docs.example.com/")
	if err != nil || body != "HTTP/2.0 docs.example.com" {
		t.Fatalf("got %q, %v", body, err)
	}
	d.Resolve = map[string]string{"other.test:443": "127.0.0.1:" + port}
	if _, err := get(t, client(d, WithTLSConfig(&tls.Config{RootCAs: pool})), "https://other.test/"); err == nil {
		t.Fatal("a certificate for another name was accepted")
	}
}

// TLS below 1.2 is refused even when the caller's config allows it.
func TestTransportRefusesTLSBelow12(t *testing.T) {
	srv, pool := tlsServer(t, func(s *httptest.Server) {
		s.TLS = &tls.Config{MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11}
	})
	_, port, _ := strings.Cut(srv.Listener.Addr().String(), ":")
	d := &Dialer{Resolve: map[string]string{"docs.example.com:443": "127.0.0.1:" + port}}
	_, err := get(t, client(d, WithTLSConfig(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS10})), "https://docs.example.com/")
	if err == nil {
		t.Fatal("a TLS 1.1 server was accepted")
	}
}

// Response headers over 256 KiB end the request.
func TestTransportBoundsResponseHeaders(t *testing.T) {
	big := strings.Repeat("a", MaxResponseHeaderBytes)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/big" {
			w.Header().Set("X-Big", big)
		}
		io.WriteString(w, "ok")
	})
	d := &Dialer{Resolve: map[string]string{"site.example.com:80": "127.0.0.1:" + srv.port()}}
	c := client(d)
	if body, err := get(t, c, "http://site.example.com/small"); err != nil || body != "ok" {
		t.Fatalf("small headers: %q, %v", body, err)
	}
	if _, err := get(t, c, "http://site.example.com/big"); err == nil || !strings.Contains(err.Error(), "header") {
		t.Fatalf("big headers: %v", err)
	}
}
