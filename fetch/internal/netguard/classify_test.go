package netguard

import (
	"net/netip"
	"strings"
	"testing"
)

// Each special-purpose range gets its class, IPv4 addresses carried in
// IPv6 (mapped, NAT64, 6to4) get the class of the IPv4 address, and
// ordinary global addresses are public. Nothing here is dialed.
func TestClassifyNamesEachSpecialRange(t *testing.T) {
	cases := []struct {
		ip   string
		want Class
	}{
		{"10.0.0.1", Private},
		{"10.255.255.255", Private},
		{"172.16.0.1", Private},
		{"172.31.255.254", Private},
		{"172.32.0.1", Public},
		{"172.15.255.255", Public},
		{"192.168.1.1", Private},
		{"100.64.0.1", CGNAT},
		{"100.127.255.255", CGNAT},
		{"100.128.0.1", Public},
		{"127.0.0.1", Loopback},
		{"127.255.0.9", Loopback},
		{"::1", Loopback},
		{"169.254.169.254", Metadata},
		{"169.254.170.2", Metadata},
		{"100.100.100.200", Metadata},
		{"168.63.129.16", Metadata},
		{"169.254.1.1", LinkLocal},
		{"fe80::1", LinkLocal},
		{"fe80::1%eth0", LinkLocal},
		{"fc00::1", ULA},
		{"fd12:3456::1", ULA},
		{"fd00:ec2::254", Metadata},
		{"fd00:ec2::253", ULA},
		{"fd20:ce::254", Metadata},
		{"fec0::1", Private},
		{"0.0.0.0", Unspecified},
		{"0.1.2.3", Unspecified},
		{"::", Unspecified},
		{"224.0.0.1", Multicast},
		{"239.255.255.250", Multicast},
		{"ff02::1", Multicast},
		{"255.255.255.255", Broadcast},
		{"192.0.0.8", Reserved},
		{"198.18.0.1", Reserved},
		{"198.19.255.255", Reserved},
		{"240.0.0.1", Reserved},
		{"255.255.255.254", Reserved},
		{"192.88.99.1", Reserved},
		{"192.0.2.1", Documentation},
		{"198.51.100.7", Documentation},
		{"203.0.113.9", Documentation},
		{"2001:db8::1", Documentation},
		{"3fff::1", Documentation},
		{"::ffff:10.0.0.1", Private},
		{"::ffff:127.0.0.1", Loopback},
		{"::ffff:169.254.169.254", Metadata},
		{"::ffff:8.8.8.8", Public},
		{"64:ff9b::a00:1", Private},
		{"64:ff9b::7f00:1", Loopback},
		{"64:ff9b::a9fe:a9fe", Metadata},
		{"64:ff9b::808:808", Public},
		{"64:ff9b:1::1", Reserved},
		{"2002:a00:1::", Private},
		{"2002:7f00:1::1", Loopback},
		{"2002:808:808::1", Public},
		{"2001::1", Reserved},   // Teredo
		{"2001:2::1", Reserved}, // benchmarking
		{"100::1", Reserved},
		{"5f00::1", Reserved},
		{"::10.0.0.1", Reserved},     // IPv4-compatible, deprecated
		{"::ffff:0:a00:1", Reserved}, // IPv4-translated
		{"4000::1", Reserved},        // outside 2000::/3
		{"8.8.8.8", Public},
		{"1.1.1.1", Public},
		{"93.184.216.34", Public},
		{"2606:4700::1111", Public},
		{"2a00:1450:4001::200e", Public},
	}
	for _, c := range cases {
		ip := netip.MustParseAddr(c.ip)
		if got := Classify(ip); got != c.want {
			t.Errorf("Classify(%s) = %s, want %s", c.ip, got, c.want)
		}
	}
	if got := Classify(netip.Addr{}); got != Invalid {
		t.Errorf("Classify(zero) = %s, want invalid", got)
	}
}

// The zero policy opens public addresses only; AllowPrivate opens
// loopback, private, ULA and CGNAT but not link-local or metadata;
// AllowLinkLocal opens those two only; the never-classes stay closed with
// both switches on.
func TestPolicyOpensOnlyItsClasses(t *testing.T) {
	ips := map[Class]string{
		Public: "8.8.8.8", Loopback: "127.0.0.1", Private: "192.168.0.1", ULA: "fd00::1",
		CGNAT: "100.64.1.1", LinkLocal: "fe80::2", Metadata: "169.254.169.254",
		Unspecified: "0.0.0.0", Multicast: "ff02::1", Broadcast: "255.255.255.255",
		Documentation: "192.0.2.1", Reserved: "240.0.0.1",
	}
	private := map[Class]bool{Loopback: true, Private: true, ULA: true, CGNAT: true}
	linkLocal := map[Class]bool{LinkLocal: true, Metadata: true}
	for _, p := range []Policy{{}, {AllowPrivate: true}, {AllowLinkLocal: true}, {AllowPrivate: true, AllowLinkLocal: true}} {
		for class, s := range ips {
			got, ok := p.Allowed(netip.MustParseAddr(s))
			want := class == Public || private[class] && p.AllowPrivate || linkLocal[class] && p.AllowLinkLocal
			if got != class || ok != want {
				t.Errorf("%+v.Allowed(%s) = %s, %v; want %s, %v", p, s, got, ok, class, want)
			}
		}
	}
	if _, ok := (Policy{AllowPrivate: true, AllowLinkLocal: true}).Allowed(netip.Addr{}); ok {
		t.Error("the zero address was allowed")
	}
}

// The refusal names the host, the address and the class, and the setting
// that opens the class, or says that none does.
func TestBlockedErrorNamesHostAddressClassAndSetting(t *testing.T) {
	cases := []struct {
		err  BlockedError
		want []string
	}{
		{BlockedError{"public.example.com", netip.MustParseAddr("127.0.0.1"), Loopback},
			[]string{"public.example.com", "(127.0.0.1)", "loopback", "SLIM_FETCH_ALLOW_PRIVATE=1 (or fetch.allowPrivate in slim's configuration file)"}},
		{BlockedError{"meta.example.com", netip.MustParseAddr("fd00:ec2::254"), Metadata},
			[]string{"meta.example.com", "fd00:ec2::254", "metadata", "SLIM_FETCH_ALLOW_LINK_LOCAL=1 (or fetch.allowLinkLocal in slim's configuration file)"}},
		{BlockedError{"0.0.0.0", netip.MustParseAddr("0.0.0.0"), Unspecified},
			[]string{"0.0.0.0 refused", "an unspecified address", "never fetched"}},
	}
	for _, c := range cases {
		msg := c.err.Error()
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%q lacks %q", msg, w)
			}
		}
	}
	if msg := cases[2].err.Error(); strings.Contains(msg, "(0.0.0.0)") || strings.Contains(msg, "SLIM_") {
		t.Errorf("literal host repeated or a setting offered for a never-class: %q", msg)
	}
}

// Classify is total and consistent: every IPv4 address has the same class
// bare, mapped into IPv6, and (when it is not public) embedded in NAT64 and
// 6to4; a zone never changes a class; the zero policy allows exactly the
// public class; no switch opens the never-classes.
func FuzzClassify(f *testing.F) {
	for _, s := range []string{"10.0.0.1", "127.0.0.1", "169.254.169.254", "::1", "fe80::1", "64:ff9b::a00:1", "2002:a00:1::", "8.8.8.8", "2606:4700::1111"} {
		b := netip.MustParseAddr(s).As16()
		f.Add(b[:])
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var b [16]byte
		copy(b[:], raw)
		ip := netip.AddrFrom16(b)
		c := Classify(ip)
		if c == "" || c == Invalid {
			t.Fatalf("Classify(%s) = %q", ip, c)
		}
		if z := Classify(ip.WithZone("z1")); z != c {
			t.Fatalf("zone changed %s: %s vs %s", ip, z, c)
		}
		v4 := netip.AddrFrom4([4]byte(b[:4]))
		c4 := Classify(v4)
		if m := Classify(netip.AddrFrom16(v4.As16())); m != c4 {
			t.Fatalf("mapped %s: %s vs %s", v4, m, c4)
		}
		if c4 != Public {
			var n [16]byte
			copy(n[:], netip.MustParseAddr("64:ff9b::").AsSlice())
			copy(n[12:], b[:4])
			if got := Classify(netip.AddrFrom16(n)); got != c4 {
				t.Fatalf("NAT64 of %s: %s vs %s", v4, got, c4)
			}
			s := [16]byte{0x20, 0x02}
			copy(s[2:6], b[:4])
			if got := Classify(netip.AddrFrom16(s)); got != c4 {
				t.Fatalf("6to4 of %s: %s vs %s", v4, got, c4)
			}
		}
		if _, ok := (Policy{}).Allowed(ip); ok != (c == Public) {
			t.Fatalf("zero policy on %s (%s): %v", ip, c, ok)
		}
		switch c {
		case Unspecified, Multicast, Broadcast, Documentation, Reserved:
			if _, ok := (Policy{AllowPrivate: true, AllowLinkLocal: true}).Allowed(ip); ok {
				t.Fatalf("%s (%s) opened", ip, c)
			}
			if s, key := c.switches(); s != "" || key != "" {
				t.Fatalf("%s offers a setting", c)
			}
		}
	})
}
