// Package netguard keeps a web fetch away from private networks. It decides,
// for every connection attempt, whether the address the connection is about
// to reach may be used, and refuses before a single byte is sent.
//
// A check on the URL's host name is not enough: a public name can resolve to
// 10.0.0.1 or to a cloud metadata address, a redirect can point anywhere, and
// a name can resolve differently the second time it is looked up (DNS
// rebinding). So the check runs on the resolved address of each attempt,
// inside the dialer (Dialer.DialContext, through the net.Dialer Control hook
// that runs after the socket is made and before it connects), which covers
// every redirect hop, retry and Happy-Eyeballs attempt alike.
//
// Classify names the kind of an address; Policy says which kinds a caller
// has opened; Dialer applies the policy; Transport builds the http.Transport
// a fetch client uses, with the dialer, sane TLS and header limits, and an
// explicit proxy rule.
package netguard

import (
	"net/netip"
	"sync"
)

// Class is the kind of an IP address, as far as reaching it from a fetch is
// concerned. The values are stable: they appear in messages and machines may
// match them.
type Class string

// The classes. Only Public is reachable by default; see Policy.
const (
	// Public: a global unicast address not in any range below.
	Public Class = "public"
	// Loopback: 127.0.0.0/8 and ::1, this machine.
	Loopback Class = "loopback"
	// Private: the RFC 1918 ranges 10/8, 172.16/12 and 192.168/16, and the
	// deprecated IPv6 site-local fec0::/10 that played the same part.
	Private Class = "private"
	// CGNAT: the shared address space 100.64.0.0/10 (carrier-grade NAT, and
	// overlay networks such as Tailscale).
	CGNAT Class = "cgnat"
	// LinkLocal: 169.254.0.0/16 and fe80::/10.
	LinkLocal Class = "link-local"
	// Metadata: a cloud instance-metadata or platform endpoint, which hands
	// out credentials to whoever asks: 169.254.169.254 (AWS, GCP, Azure,
	// OCI), 169.254.170.2 (ECS task credentials), fd00:ec2::254 (AWS over
	// IPv6), fd20:ce::254 (GCP over IPv6), 100.100.100.200 (Alibaba Cloud)
	// and 168.63.129.16 (the Azure wire server, a public address that every
	// Azure VM reaches). It is opened together with link-local, never with
	// private, whatever range the address lies in.
	Metadata Class = "metadata"
	// ULA: IPv6 unique local addresses, fc00::/7.
	ULA Class = "ula"
	// Unspecified: 0.0.0.0/8 and ::. Connecting to 0.0.0.0 reaches this
	// machine on most systems, so it is never opened.
	Unspecified Class = "unspecified"
	// Multicast: 224.0.0.0/4 and ff00::/8.
	Multicast Class = "multicast"
	// Broadcast: 255.255.255.255.
	Broadcast Class = "broadcast"
	// Documentation: the ranges set aside for examples (192.0.2/24,
	// 198.51.100/24, 203.0.113/24, 2001:db8::/32, 3fff::/20).
	Documentation Class = "documentation"
	// Reserved: every other special-purpose range: 192.0.0/24 (protocol
	// assignments), 192.88.99/24, 198.18/15 (benchmarking), 240/4; on IPv6
	// the discard prefix 100::/64, 2001::/23 (Teredo and other protocol
	// assignments), the local-use translation prefix 64:ff9b:1::/48, the
	// SRv6 prefix 5f00::/16, and everything outside 2000::/3 that no other
	// class names (IPv4-compatible and IPv4-translated forms included).
	Reserved Class = "reserved"
	// Invalid: the zero netip.Addr.
	Invalid Class = "invalid"
)

type classRange struct {
	prefix netip.Prefix
	class  Class
}

// classRanges are the ranges Classify checks. Ranges are checked in order,
// so a more specific range comes before the range that contains it.
type classRanges struct {
	v4, v6        []classRange
	nat64, sixTo4 netip.Prefix
}

// ranges parses the ranges on first use: every slim command links this
// package, and only a fetch needs them.
var ranges = sync.OnceValue(func() classRanges {
	return classRanges{
		v4: []classRange{
			{netip.MustParsePrefix("169.254.169.254/32"), Metadata},
			{netip.MustParsePrefix("169.254.170.2/32"), Metadata},
			{netip.MustParsePrefix("100.100.100.200/32"), Metadata},
			{netip.MustParsePrefix("168.63.129.16/32"), Metadata},
			{netip.MustParsePrefix("0.0.0.0/8"), Unspecified},
			{netip.MustParsePrefix("10.0.0.0/8"), Private},
			{netip.MustParsePrefix("100.64.0.0/10"), CGNAT},
			{netip.MustParsePrefix("127.0.0.0/8"), Loopback},
			{netip.MustParsePrefix("169.254.0.0/16"), LinkLocal},
			{netip.MustParsePrefix("172.16.0.0/12"), Private},
			{netip.MustParsePrefix("192.0.0.0/24"), Reserved},
			{netip.MustParsePrefix("192.0.2.0/24"), Documentation},
			{netip.MustParsePrefix("192.88.99.0/24"), Reserved},
			{netip.MustParsePrefix("192.168.0.0/16"), Private},
			{netip.MustParsePrefix("198.18.0.0/15"), Reserved},
			{netip.MustParsePrefix("198.51.100.0/24"), Documentation},
			{netip.MustParsePrefix("203.0.113.0/24"), Documentation},
			{netip.MustParsePrefix("224.0.0.0/4"), Multicast},
			{netip.MustParsePrefix("255.255.255.255/32"), Broadcast},
			{netip.MustParsePrefix("240.0.0.0/4"), Reserved},
		},
		v6: []classRange{
			{netip.MustParsePrefix("fd00:ec2::254/128"), Metadata},
			{netip.MustParsePrefix("fd20:ce::254/128"), Metadata},
			{netip.MustParsePrefix("::/128"), Unspecified},
			{netip.MustParsePrefix("::1/128"), Loopback},
			{netip.MustParsePrefix("64:ff9b:1::/48"), Reserved},
			{netip.MustParsePrefix("100::/64"), Reserved},
			{netip.MustParsePrefix("2001:db8::/32"), Documentation},
			{netip.MustParsePrefix("2001::/23"), Reserved},
			{netip.MustParsePrefix("3fff::/20"), Documentation},
			{netip.MustParsePrefix("5f00::/16"), Reserved},
			{netip.MustParsePrefix("2000::/3"), Public},
			{netip.MustParsePrefix("fc00::/7"), ULA},
			{netip.MustParsePrefix("fe80::/10"), LinkLocal},
			{netip.MustParsePrefix("fec0::/10"), Private},
			{netip.MustParsePrefix("ff00::/8"), Multicast},
		},
		nat64:  netip.MustParsePrefix("64:ff9b::/96"),
		sixTo4: netip.MustParsePrefix("2002::/16"),
	}
})

// Classify returns the class of ip. An IPv4-mapped IPv6 address
// (::ffff:10.0.0.1) is the IPv4 address it carries, and so is the IPv4
// address embedded in a NAT64 address (64:ff9b::/96) or a 6to4 address
// (2002::/16): a translator or relay on the path would deliver the
// connection there. A zone (fe80::1%eth0) does not change the class.
func Classify(ip netip.Addr) Class {
	if !ip.IsValid() {
		return Invalid
	}
	ip = ip.WithZone("").Unmap()
	if ip.Is4() {
		return classify4(ip)
	}
	b := ip.As16()
	t := ranges()
	switch {
	case t.nat64.Contains(ip):
		return classify4(netip.AddrFrom4([4]byte(b[12:16])))
	case t.sixTo4.Contains(ip):
		return classify4(netip.AddrFrom4([4]byte(b[2:6])))
	}
	for _, r := range t.v6 {
		if r.prefix.Contains(ip) {
			return r.class
		}
	}
	return Reserved
}

func classify4(ip netip.Addr) Class {
	for _, r := range ranges().v4 {
		if r.prefix.Contains(ip) {
			return r.class
		}
	}
	return Public
}

// Policy says which classes besides Public a fetch may reach. The zero
// Policy allows public addresses only. Both switches are operator settings
// (environment or configuration): a value chosen by a model must never set
// them.
type Policy struct {
	// AllowPrivate opens Loopback, Private, ULA and CGNAT: the addresses of
	// this machine and of the networks it sits in, where local development
	// servers and intranet documentation live. CGNAT is included because
	// overlay networks (Tailscale and the like) number their machines from
	// it, and it is no more sensitive than RFC 1918 space.
	AllowPrivate bool
	// AllowLinkLocal opens LinkLocal and Metadata. It is separate from
	// AllowPrivate because the metadata endpoints hand out cloud
	// credentials: opening a local docs server must not open them.
	AllowLinkLocal bool
}

// Allowed returns the class of ip and whether p lets a fetch connect to it.
// Unspecified, Multicast, Broadcast, Documentation, Reserved and Invalid are
// never allowed.
func (p Policy) Allowed(ip netip.Addr) (Class, bool) {
	c := Classify(ip)
	switch c {
	case Public:
		return c, true
	case Loopback, Private, ULA, CGNAT:
		return c, p.AllowPrivate
	case LinkLocal, Metadata:
		return c, p.AllowLinkLocal
	}
	return c, false
}

// switches names both operator switches that open c: the environment
// assignment slim reads ("SLIM_FETCH_ALLOW_PRIVATE=1" or
// "SLIM_FETCH_ALLOW_LINK_LOCAL=1") and the key of slim's configuration
// file that opens the same class ("fetch.allowPrivate" or
// "fetch.allowLinkLocal"); both "" when nothing opens c.
func (c Class) switches() (setting, configKey string) {
	switch c {
	case Loopback, Private, ULA, CGNAT:
		return "SLIM_FETCH_ALLOW_PRIVATE=1", "fetch.allowPrivate"
	case LinkLocal, Metadata:
		return "SLIM_FETCH_ALLOW_LINK_LOCAL=1", "fetch.allowLinkLocal"
	}
	return "", ""
}
