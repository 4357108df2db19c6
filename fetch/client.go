package fetch

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
	"unicode/utf8"

	whatwg "github.com/nlnwa/whatwg-url/url"
	"github.com/slimgate/slim/fetch/internal/netguard"
	"github.com/slimgate/slim/internal/kinderr"
)

// The Accept headers: pages prefer HTML, the llms.txt probe plain text.
const (
	acceptPage  = "text/html;q=1.0, application/xhtml+xml;q=0.9, text/markdown;q=0.8, text/plain;q=0.8, */*;q=0.1"
	acceptProbe = "text/plain, text/markdown;q=0.9, */*;q=0.1"
	acceptLang  = "en;q=0.8,*;q=0.5"
)

// client makes the requests of one Fetch: no cookie jar, no automatic
// redirects, every connection through the address policy.
type client struct {
	hc *http.Client
}

func newClient(n Network) *client {
	d := &netguard.Dialer{
		Policy:  netguard.Policy{AllowPrivate: n.AllowPrivate, AllowLinkLocal: n.AllowLinkLocal},
		Resolve: n.Resolve,
		Timeout: 10 * time.Second,
	}
	if n.Resolver != nil {
		d.Resolver = n.Resolver
	}
	opts := []netguard.Option{netguard.WithTLSConfig(&tls.Config{RootCAs: n.RootCAs})}
	if n.Proxy != nil {
		opts = append(opts, netguard.WithProxy(n.Proxy))
	}
	tr := netguard.Transport(d, opts...)
	return &client{hc: &http.Client{
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

func (c *client) close() { c.hc.CloseIdleConnections() }

// get sends one GET with slim's fixed headers (and cond, the conditional
// headers of a revalidation).
func (c *client) get(ctx context.Context, u string, accept string, cond http.Header) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, newErr(Usage, CodeBadURL, fmt.Sprintf("cannot request %s: %v", u, err), err)
	}
	req.Header.Set("User-Agent", UserAgent)
	req.Header.Set("Accept", accept)
	req.Header.Set("Accept-Language", acceptLang)
	for k, v := range cond {
		req.Header[k] = v
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, netErr(ctx, u, err)
	}
	return resp, nil
}

// netErr turns a transport error into an *Error: the address policy's
// refusal (blocked), the call's time limit, or a network failure.
func netErr(ctx context.Context, u string, err error) error {
	var be *netguard.BlockedError
	if errors.As(err, &be) {
		return newErr(Blocked, CodeAddressRefused, be.Error(), err)
	}
	if ne, ok := kinderr.As[netguard.Kind](err); ok && ne.Kind == netguard.Blocked {
		return newErr(Blocked, CodeAddressRefused, ne.Message, err)
	}
	if e, ok := AsError(err); ok {
		return e
	}
	if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
		return timeoutErr(ctx, err)
	}
	return newErr(Failed, CodeNetwork, fmt.Sprintf("Request to %s failed: %v", u, unwrapURLError(err)), err)
}

// timeoutErr is the error of a context that ended: the time limit (carried
// by the context, see withLimit), or the caller's cancellation (a signal).
func timeoutErr(ctx context.Context, cause error) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return newErr(Failed, CodeInterrupted, "fetch interrupted before it finished", cause)
	}
	ms := int64(0)
	if l, ok := ctx.Value(limitKey{}).(time.Duration); ok {
		ms = l.Milliseconds()
	}
	return newErr(Failed, CodeTimeout, fmt.Sprintf("timeout after %dms", ms), cause)
}

type limitKey struct{}

// withLimit is ctx with a deadline d from now, remembering d for the
// timeout message.
func withLimit(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	ctx = context.WithValue(ctx, limitKey{}, d)
	return context.WithTimeout(ctx, d)
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// hop is one followed (or refused) redirect.
type hop struct {
	from, to string
	status   string
}

func (h hop) String() string { return h.status + " " + h.from + " -> " + h.to }

func chainStrings(hs []hop) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.String()
	}
	return out
}

// walked is the end of a redirect walk: a final response, or a refused hop.
type walked struct {
	resp     *http.Response
	finalURL *whatwg.Url
	chain    []hop
	// blocked is set (and resp nil) when a hop was refused; status is the
	// refused response's status.
	blocked *hop
	status  int
	// upgraded: the refused hop came from the https attempt of an http
	// URL (a client-side redirect found after the upgrade).
	upgraded bool
}

// isRedirect: the statuses followed. 304 is a revalidation answer, and
// 300, 305 and 306 are errors like any other non-2xx status.
func isRedirect(code int) bool {
	switch code {
	case 301, 302, 303, 307, 308:
		return true
	}
	return false
}

// allowedHop reports whether a redirect from cur to next may be followed:
// same scheme, same port, no user info, an allowed origin.
func allowedHop(cur, next *whatwg.Url, allowed map[string]bool) bool {
	if next.Scheme() != cur.Scheme() || next.Port() != cur.Port() {
		return false
	}
	if next.Username() != "" || next.Password() != "" {
		return false
	}
	return allowed[origin(next)]
}

// walk GETs start and follows redirects under the policy, up to
// MaxRedirects requests. chain carries hops already taken (a client-side
// redirect continues the walk of the page that asked for it).
func (c *client) walk(ctx context.Context, start *whatwg.Url, allowed map[string]bool, accept string, cond http.Header, chain []hop) (*walked, error) {
	cur := start
	for n := len(chain); ; n++ {
		resp, err := c.get(ctx, href(cur), accept, cond)
		if err != nil {
			return nil, err
		}
		if !isRedirect(resp.StatusCode) {
			return &walked{resp: resp, finalURL: cur, chain: chain, status: resp.StatusCode}, nil
		}
		discard(resp)
		if n+1 >= MaxRedirects {
			return nil, tooManyRedirects()
		}
		loc := resp.Header.Get("Location")
		if loc == "" {
			return nil, newErr(Failed, CodeMissingLocation, fmt.Sprintf("Redirect response missing location header: %d", resp.StatusCode), nil)
		}
		next, err := cur.Parse(loc)
		if err != nil {
			return nil, newErr(Failed, CodeNetwork, fmt.Sprintf("Redirect to an invalid URL %q: %v", loc, err), err)
		}
		next.SetHash("")
		h := hop{from: href(cur), to: href(next), status: fmt.Sprint(resp.StatusCode)}
		chain = append(chain, h)
		if !allowedHop(cur, next, allowed) {
			return &walked{finalURL: cur, chain: chain, blocked: &h, status: resp.StatusCode}, nil
		}
		cur = next
	}
}

// tooManyRedirects is the error of a walk whose MaxRedirects-th request
// asked for another redirect, by HTTP or by a client-side refresh.
func tooManyRedirects() error {
	return newErr(Failed, CodeTooManyRedirects, fmt.Sprintf("Too many redirects (exceeded %d)", MaxRedirects), nil)
}

// discard drops a response body (bounded) so the connection can be reused.
func discard(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

// upgradeWalk fetches t: over https first when the argument was http,
// falling back to the http URL when the https attempt fails, is refused a
// redirect, or answers a non-2xx status other than 304. upgraded reports
// that the https attempt was used for an http argument.
func (c *client) upgradeWalk(ctx context.Context, t *target, allowed map[string]bool, cond http.Header) (w *walked, upgraded bool, err error) {
	w, err = c.walk(ctx, t.primary, allowed, acceptPage, cond, nil)
	if t.fallback == nil {
		return w, false, err
	}
	if err == nil && w.blocked == nil && (w.status/100 == 2 || w.status == http.StatusNotModified) {
		return w, true, nil
	}
	if err != nil && ctx.Err() != nil {
		return nil, false, err // out of time: no second attempt
	}
	if w != nil && w.resp != nil {
		discard(w.resp)
	}
	w, err = c.walk(ctx, t.fallback, allowed, acceptPage, cond, nil)
	return w, false, err
}

// readBody reads at most limit bytes of the (decompressed) body; over
// reports that there was more. The body is closed.
func readBody(ctx context.Context, resp *http.Response, limit int64) (data []byte, over bool, err error) {
	defer resp.Body.Close()
	data, err = io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err := readErr(ctx, err); err != nil {
		return nil, false, err
	}
	if int64(len(data)) > limit {
		return cutRune(data[:limit]), true, nil
	}
	return data, false, nil
}

// cutRune drops the last bytes of a cut body when they are the start of a
// UTF-8 character the cut split, so that a UTF-8 page cut at the limit is
// still valid UTF-8 (and is not taken for windows-1252).
func cutRune(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		c := b[len(b)-i]
		if c < 0x80 {
			return b // ASCII: nothing split
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			return b
		}
	}
	return b
}

// countBody reads and discards the body up to limit bytes, reporting
// whether it was longer: for binaries that are not kept.
func countBody(ctx context.Context, resp *http.Response, limit int64) (n int64, over bool, err error) {
	defer resp.Body.Close()
	n, err = io.Copy(io.Discard, io.LimitReader(resp.Body, limit+1))
	if err := readErr(ctx, err); err != nil {
		return n, false, err
	}
	return n, n > limit, nil
}

// readErr is the error of a body read that ended with err, or nil: the
// context's end first (a cancelled transfer may end in a clean EOF, so
// what was read is not the whole body), then a network failure.
func readErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return timeoutErr(ctx, ctx.Err())
	}
	if err != nil {
		return newErr(Failed, CodeNetwork, fmt.Sprintf("Reading the response failed: %v", err), err)
	}
	return nil
}
