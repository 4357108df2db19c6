package netguard

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Resolver looks up the addresses of a host name. *net.Resolver satisfies
// it; tests supply their own answers, which the policy checks exactly like
// real DNS answers.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Dialer makes TCP connections for a fetch and refuses, before connecting,
// any address its Policy does not allow.
//
// The check runs in the net.Dialer Control hook, which sees the numeric
// address of each connection attempt after the socket is created and
// before connect is called: a refused attempt sends nothing. When a name
// resolves to several addresses, a refused one is skipped and the next is
// tried, so a public answer still works beside a private one and the
// private one is never reached.
type Dialer struct {
	// Policy says which address classes besides public may be reached.
	Policy Policy
	// Resolve maps "host:port" to "ip:port", with curl --resolve semantics
	// (a connection to host:port goes to ip:port instead, and the request
	// keeps its host name for TLS and the Host header); the target port may
	// differ. Mapped targets are exempt from the policy: the mapping is
	// operator configuration, so it must never be filled from model input.
	// Host names match case-insensitively and without a trailing dot. See
	// ParseResolve.
	Resolve map[string]string
	// Resolver answers name lookups; nil means net.DefaultResolver (with
	// the standard library's own dialing, Happy Eyeballs included). With a
	// Resolver set, the addresses it returns are tried one after another.
	Resolver Resolver
	// Timeout bounds the whole connect, over all addresses of a name; zero
	// means the context alone bounds it.
	Timeout time.Duration
}

// DialContext connects to addr ("host:port") over network ("tcp", "tcp4"
// or "tcp6"). A refused address gives a *BlockedError (wrapped in a
// *net.OpError by the standard library).
func (d *Dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	return d.dial(ctx, network, addr, false)
}

// dial is DialContext; exempt skips the policy (for the proxy's own
// address, see Transport).
func (d *Dialer) dial(ctx context.Context, network, addr string, exempt bool) (net.Conn, error) {
	switch network {
	case "tcp", "tcp4", "tcp6":
	default:
		return nil, newErr(Internal, CodeBadNetwork, fmt.Sprintf("netguard dials TCP only, not %q", network), nil)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, newErr(Internal, CodeBadAddress, fmt.Sprintf("cannot dial %q: %v", addr, err), err)
	}
	target, ok, err := d.mapped(host, port)
	if err != nil {
		return nil, err
	}
	if ok {
		nd := &net.Dialer{Timeout: d.Timeout}
		return nd.DialContext(ctx, network, target)
	}
	nd := &net.Dialer{Timeout: d.Timeout}
	if !exempt {
		nd.Control = d.control(host)
	}
	if _, err := netip.ParseAddr(host); err == nil || d.Resolver == nil {
		return nd.DialContext(ctx, network, addr)
	}
	return d.dialResolved(ctx, nd, network, host, port)
}

// dialResolved looks host up with d.Resolver and tries each address in
// turn, each through nd (and so through its Control hook).
func (d *Dialer) dialResolved(ctx context.Context, nd *net.Dialer, network, host, port string) (net.Conn, error) {
	if d.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d.Timeout)
		defer cancel()
	}
	nd.Timeout = 0
	pn, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		p, lerr := net.DefaultResolver.LookupPort(ctx, network, port)
		if lerr != nil {
			return nil, newErr(Internal, CodeBadAddress, fmt.Sprintf("cannot dial %s: unknown port %q", host, port), lerr)
		}
		pn = uint64(p)
	}
	lookup := "ip"
	switch network {
	case "tcp4":
		lookup = "ip4"
	case "tcp6":
		lookup = "ip6"
	}
	ips, err := d.Resolver.LookupNetIP(ctx, lookup, host)
	if err != nil {
		return nil, newErr(Internal, CodeNoAddress, fmt.Sprintf("cannot resolve %s: %v", host, err), err)
	}
	if len(ips) == 0 {
		return nil, newErr(Internal, CodeNoAddress, "cannot resolve "+host+": no addresses", nil)
	}
	var first error
	for _, ip := range ips {
		c, err := nd.DialContext(ctx, network, netip.AddrPortFrom(ip, uint16(pn)).String())
		if err == nil {
			return c, nil
		}
		if first == nil {
			first = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, first
}

// control returns the Control hook that applies the policy to each
// attempt's numeric address, naming host in the refusal.
func (d *Dialer) control(host string) func(network, address string, _ syscall.RawConn) error {
	policy := d.Policy
	return func(network, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			// An address we cannot read is an address we cannot vouch for.
			return &BlockedError{Host: host, Class: Invalid}
		}
		if class, ok := policy.Allowed(ap.Addr()); !ok {
			return &BlockedError{Host: host, Addr: ap.Addr(), Class: class}
		}
		return nil
	}
}

// mapped returns the Resolve target for host:port, if there is one.
func (d *Dialer) mapped(host, port string) (string, bool, error) {
	if len(d.Resolve) == 0 {
		return "", false, nil
	}
	want := normHost(host)
	for k, v := range d.Resolve {
		kh, kp, err := net.SplitHostPort(k)
		if err != nil || kp != port || normHost(kh) != want {
			continue
		}
		ap, err := netip.ParseAddrPort(v)
		if err != nil {
			return "", false, newErr(Usage, CodeBadResolve,
				fmt.Sprintf("resolve mapping %s -> %q: the target must be ip:port", k, v), err)
		}
		return ap.String(), true, nil
	}
	return "", false, nil
}

func normHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(h), ".")
}

// ParseResolve reads one mapping in curl's --resolve form,
// HOST:PORT:ADDR, or HOST:PORT:ADDR:PORT2 to connect to another port (as
// test servers on random ports need). ADDR is an IP literal; an IPv6 ADDR
// or HOST is written in brackets ([::1]), though an IPv6 ADDR without a
// PORT2 may go bare. It returns the Dialer.Resolve key ("host:port", host
// lower-cased) and target ("ip:port").
func ParseResolve(spec string) (key, target string, err error) {
	bad := func(why string) error {
		return newErr(Usage, CodeBadResolve,
			fmt.Sprintf("bad resolve mapping %q: %s (want HOST:PORT:ADDR or HOST:PORT:ADDR:PORT)", spec, why), nil)
	}
	rest := spec
	var host string
	if strings.HasPrefix(rest, "[") {
		end := strings.IndexByte(rest, ']')
		if end < 0 || !strings.HasPrefix(rest[end+1:], ":") {
			return "", "", bad("unclosed [ in the host")
		}
		host, rest = rest[1:end], rest[end+2:]
	} else {
		i := strings.IndexByte(rest, ':')
		if i < 0 {
			return "", "", bad("no port")
		}
		host, rest = rest[:i], rest[i+1:]
	}
	host = normHost(host)
	if host == "" || strings.ContainsAny(host, "/[]@ \t") {
		return "", "", bad("bad host")
	}
	i := strings.IndexByte(rest, ':')
	if i < 0 {
		return "", "", bad("no address")
	}
	port, rest := rest[:i], rest[i+1:]
	pn, ok := parsePort(port)
	if !ok {
		return "", "", bad("bad port")
	}
	var addrText string
	tport := pn
	switch {
	case strings.HasPrefix(rest, "["):
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return "", "", bad("unclosed [ in the address")
		}
		addrText, rest = rest[1:end], rest[end+1:]
		if rest != "" {
			if !strings.HasPrefix(rest, ":") {
				return "", "", bad("text after the address")
			}
			if tport, ok = parsePort(rest[1:]); !ok {
				return "", "", bad("bad target port")
			}
		}
	default:
		addrText = rest
		if _, perr := netip.ParseAddr(rest); perr != nil {
			if j := strings.LastIndexByte(rest, ':'); j >= 0 {
				addrText = rest[:j]
				if tport, ok = parsePort(rest[j+1:]); !ok {
					return "", "", bad("bad target port")
				}
				if strings.Contains(addrText, ":") {
					return "", "", bad("an IPv6 address with a port needs brackets")
				}
			}
		}
	}
	ip, perr := netip.ParseAddr(addrText)
	if perr != nil {
		return "", "", bad("the address is not an IP literal")
	}
	return net.JoinHostPort(host, strconv.Itoa(int(pn))), netip.AddrPortFrom(ip, tport).String(), nil
}

func parsePort(s string) (uint16, bool) {
	if s == "" || len(s) > 5 {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 16)
	if err != nil || n == 0 || strings.HasPrefix(s, "+") {
		return 0, false
	}
	return uint16(n), true
}
