package netguard

import (
	"net/http"
	"testing"

	"golang.org/x/net/http/httpproxy"
)

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
