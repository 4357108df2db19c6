package netguard

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// server is an httptest server on 127.0.0.1 that counts the requests it
// serves and the TCP connections it accepts: a refused dial must leave
// both at zero.
type server struct {
	*httptest.Server
	hits, conns atomic.Int64
}

func newServer(t *testing.T, h http.HandlerFunc) *server {
	t.Helper()
	s := &server{}
	if h == nil {
		h = func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "served "+r.Host) }
	}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		h(w, r)
	}))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// port is the server's port, as text.
func (s *server) port() string {
	_, p, _ := net.SplitHostPort(s.Listener.Addr().String())
	return p
}

func (s *server) untouched(t *testing.T) {
	t.Helper()
	if h, c := s.hits.Load(), s.conns.Load(); h != 0 || c != 0 {
		t.Fatalf("the refused server saw %d requests over %d connections", h, c)
	}
}

// fakeResolver answers from a table and counts lookups; its answers
// replace DNS, and the policy checks them like DNS answers.
type fakeResolver struct {
	mu      sync.Mutex
	answers map[string][][]netip.Addr // successive answers; the last repeats
	lookups map[string]int
}

func resolver(pairs ...string) *fakeResolver {
	r := &fakeResolver{answers: map[string][][]netip.Addr{}, lookups: map[string]int{}}
	for i := 0; i+1 < len(pairs); i += 2 {
		r.add(pairs[i], pairs[i+1])
	}
	return r
}

// add appends one answer (comma-separated addresses) for host.
func (r *fakeResolver) add(host, addrs string) {
	var a []netip.Addr
	for _, s := range strings.Split(addrs, ",") {
		a = append(a, netip.MustParseAddr(s))
	}
	r.answers[host] = append(r.answers[host], a)
}

func (r *fakeResolver) LookupNetIP(_ context.Context, network, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	all, ok := r.answers[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	i := min(r.lookups[host], len(all)-1)
	r.lookups[host]++
	return all[i], nil
}

func get(t *testing.T, c *http.Client, u string) (string, error) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func client(d *Dialer, opts ...Option) *http.Client {
	return &http.Client{Transport: Transport(d, opts...), Timeout: 10 * time.Second}
}

func wantBlocked(t *testing.T, err error, host string, class Class) *BlockedError {
	t.Helper()
	be, ok := AsBlocked(err)
	if !ok {
		t.Fatalf("want a *BlockedError for %s, got %v", host, err)
	}
	if be.Host != host || be.Class != class {
		t.Fatalf("blocked %q as %s, want %q as %s (%v)", be.Host, be.Class, host, class, be)
	}
	return be
}

// A public-looking name that resolves to 127.0.0.1 is refused at connect
// time: the error names the host, the address and the class, and the
// server never sees a connection.
func TestDialRefusesAPublicNameThatResolvesToLoopback(t *testing.T) {
	srv := newServer(t, nil)
	r := resolver("public.example.com", "127.0.0.1")
	_, err := get(t, client(&Dialer{Resolver: r}), "http://public.example.com:"+srv.port()+"/")
	be := wantBlocked(t, err, "public.example.com", Loopback)
	if be.Addr != netip.MustParseAddr("127.0.0.1") {
		t.Fatalf("addr = %s", be.Addr)
	}
	if !strings.Contains(err.Error(), "loopback") || !strings.Contains(err.Error(), "SLIM_FETCH_ALLOW_PRIVATE=1") {
		t.Fatalf("message: %v", err)
	}
	if r.lookups["public.example.com"] == 0 {
		t.Fatal("the resolver was not asked")
	}
	srv.untouched(t)
}

// AllowPrivate opens loopback: the same request is served.
func TestAllowPrivateServesTheLoopbackServer(t *testing.T) {
	srv := newServer(t, nil)
	d := &Dialer{Policy: Policy{AllowPrivate: true}, Resolver: resolver("public.example.com", "127.0.0.1")}
	body, err := get(t, client(d), "http://public.example.com:"+srv.port()+"/")
	if err != nil || body != "served public.example.com:"+srv.port() {
		t.Fatalf("got %q, %v", body, err)
	}
}

// A Resolve mapping is operator configuration: its target is reached under
// the zero policy, the request keeps its host name, the port may differ,
// and the host matches without regard to case or a trailing dot.
func TestResolveMappingIsExemptFromThePolicy(t *testing.T) {
	srv := newServer(t, nil)
	d := &Dialer{Resolve: map[string]string{"Site.Example.com:80": "127.0.0.1:" + srv.port()}}
	for _, u := range []string{"http://site.example.com/", "http://SITE.example.com./"} {
		body, err := get(t, client(d), u)
		if err != nil || !strings.HasPrefix(body, "served ") {
			t.Fatalf("%s: got %q, %v", u, body, err)
		}
	}
	// Another port of the same host is not mapped: it is resolved and goes
	// through the policy.
	if _, err := get(t, client(&Dialer{Resolve: d.Resolve, Resolver: resolver("site.example.com", "127.0.0.1")}),
		"http://site.example.com:81/"); err == nil {
		t.Fatal("an unmapped port was served")
	} else {
		wantBlocked(t, err, "site.example.com", Loopback)
	}
}

// A redirect to 127.0.0.1 is refused at the hop: the first server answers,
// the redirect target never sees a connection, and the *BlockedError
// reaches the caller through http.Client's wrapping.
func TestRedirectToLoopbackIsRefusedAtTheHop(t *testing.T) {
	target := newServer(t, nil)
	first := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://127.0.0.1:"+target.port()+"/secret", http.StatusFound)
	})
	d := &Dialer{Resolve: map[string]string{"site.example.com:80": "127.0.0.1:" + first.port()}}
	_, err := get(t, client(d), "http://site.example.com/start")
	wantBlocked(t, err, "127.0.0.1", Loopback)
	if first.hits.Load() != 1 {
		t.Fatalf("first server hits = %d", first.hits.Load())
	}
	target.untouched(t)
}

// Every connection is checked again: after a name's answer changes from an
// allowed address to the metadata address, the next connection is refused
// (DNS rebinding cannot reuse an earlier approval).
func TestEveryConnectionIsCheckedAgainAfterTheAnswerChanges(t *testing.T) {
	srv := newServer(t, nil)
	r := resolver("rebind.example.com", "127.0.0.1")
	r.add("rebind.example.com", "169.254.169.254")
	d := &Dialer{Policy: Policy{AllowPrivate: true}, Resolver: r}
	c := client(d)
	u := "http://rebind.example.com:" + srv.port() + "/"
	if _, err := get(t, c, u); err != nil {
		t.Fatal(err)
	}
	c.CloseIdleConnections()
	_, err := get(t, c, u)
	wantBlocked(t, err, "rebind.example.com", Metadata)
	if srv.hits.Load() != 1 {
		t.Fatalf("hits = %d", srv.hits.Load())
	}
}

// A refused address among a name's answers is skipped and the next one
// tried; with only refused answers the first refusal is reported.
func TestRefusedAnswersAreSkippedNotDialed(t *testing.T) {
	srv := newServer(t, nil)
	p := Policy{AllowPrivate: true}
	mixed := resolver("mixed.example.com", "169.254.169.254,127.0.0.1")
	body, err := get(t, client(&Dialer{Policy: p, Resolver: mixed}), "http://mixed.example.com:"+srv.port()+"/")
	if err != nil || !strings.HasPrefix(body, "served") {
		t.Fatalf("got %q, %v", body, err)
	}
	bad := resolver("bad.example.com", "169.254.169.254,0.0.0.0")
	_, err = get(t, client(&Dialer{Policy: p, Resolver: bad}), "http://bad.example.com:"+srv.port()+"/")
	wantBlocked(t, err, "bad.example.com", Metadata)
}

// With no Resolver the standard library resolves and dials, and the
// Control hook still refuses each attempt: IP literals (IPv4-mapped
// included) and "localhost".
func TestSystemResolverPathIsCheckedToo(t *testing.T) {
	srv := newServer(t, nil)
	d := &Dialer{Timeout: 5 * time.Second}
	for _, addr := range []string{"127.0.0.1:" + srv.port(), "[::ffff:127.0.0.1]:" + srv.port(), "localhost:" + srv.port()} {
		c, err := d.DialContext(context.Background(), "tcp", addr)
		if err == nil {
			c.Close()
			t.Fatalf("%s: dialed", addr)
		}
		host, _, _ := net.SplitHostPort(addr)
		wantBlocked(t, err, host, Loopback)
		var oe *net.OpError
		if !errors.As(err, &oe) {
			t.Fatalf("%s: the refusal is not inside a *net.OpError: %T", addr, err)
		}
	}
	srv.untouched(t)
}

// Mis-use is reported with a stable code: a network other than TCP, a
// mapping whose target is not ip:port, an unknown name.
func TestDialerReportsMisuseWithCodes(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		d       *Dialer
		network string
		addr    string
		code    string
	}{
		{&Dialer{}, "udp", "8.8.8.8:53", CodeBadNetwork},
		{&Dialer{}, "tcp", "no-port", CodeBadAddress},
		{&Dialer{Resolve: map[string]string{"a.example.com:80": "localhost:80"}}, "tcp", "a.example.com:80", CodeBadResolve},
		{&Dialer{Resolver: resolver()}, "tcp", "nowhere.example.com:80", CodeNoAddress},
	}
	for _, c := range cases {
		conn, err := c.d.DialContext(ctx, c.network, c.addr)
		if err == nil {
			conn.Close()
			t.Fatalf("%s %s: dialed", c.network, c.addr)
		}
		var e *Error
		if !errors.As(err, &e) || e.Code != c.code {
			t.Fatalf("%s %s: got %v, want code %s", c.network, c.addr, err, c.code)
		}
	}
}

// ParseResolve reads curl's HOST:PORT:ADDR and the HOST:PORT:ADDR:PORT
// form, brackets for IPv6, and refuses anything else.
func TestParseResolveReadsCurlForms(t *testing.T) {
	ok := []struct{ spec, key, target string }{
		{"site.example.com:443:127.0.0.1", "site.example.com:443", "127.0.0.1:443"},
		{"Site.Example.COM.:443:127.0.0.1:8443", "site.example.com:443", "127.0.0.1:8443"},
		{"v6.example.com:80:[::1]", "v6.example.com:80", "[::1]:80"},
		{"v6.example.com:80:[::1]:9000", "v6.example.com:80", "[::1]:9000"},
		{"v6.example.com:80:::1", "v6.example.com:80", "[::1]:80"},
		{"[::1]:80:127.0.0.1", "[::1]:80", "127.0.0.1:80"},
	}
	for _, c := range ok {
		k, tg, err := ParseResolve(c.spec)
		if err != nil || k != c.key || tg != c.target {
			t.Errorf("ParseResolve(%q) = %q, %q, %v; want %q, %q", c.spec, k, tg, err, c.key, c.target)
		}
	}
	for _, spec := range []string{"", "host", "host:80", "host:80:", "host:0:127.0.0.1", "host:99999:127.0.0.1",
		"host:80:localhost", ":80:127.0.0.1", "host:80:127.0.0.1:x", "host:80:[::1", "host:80:[::1]x",
		"host:+80:127.0.0.1", "a b:80:127.0.0.1", "host:80:fe80::1:bad:zz"} {
		if k, tg, err := ParseResolve(spec); err == nil {
			t.Errorf("ParseResolve(%q) = %q, %q; want an error", spec, k, tg)
		} else if e, ok := err.(*Error); !ok || e.Code != CodeBadResolve {
			t.Errorf("ParseResolve(%q): %v", spec, err)
		}
	}
}

// ParseResolve never panics, and what it accepts is a key and target the
// Dialer reads back.
func FuzzParseResolve(f *testing.F) {
	for _, s := range []string{"a.example.com:443:127.0.0.1", "h:80:[::1]:81", "[::1]:80:::1", "x:1:1.2.3.4:5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		k, tg, err := ParseResolve(spec)
		if err != nil {
			return
		}
		h, p, err := net.SplitHostPort(k)
		if err != nil || h == "" || p == "" {
			t.Fatalf("key %q from %q", k, spec)
		}
		if _, err := netip.ParseAddrPort(tg); err != nil {
			t.Fatalf("target %q from %q: %v", tg, spec, err)
		}
		d := &Dialer{Resolve: map[string]string{k: tg}}
		if got, ok, err := d.mapped(h, p); !ok || err != nil || got != tg {
			t.Fatalf("mapping %q -> %q not read back: %q %v %v", k, tg, got, ok, err)
		}
	})
}
