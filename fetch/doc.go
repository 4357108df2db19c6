// Package fetch is slim's webfetch: it downloads one URL and returns the
// page's main content as markdown (or text, or HTML) behind a metadata
// block, safely and fast.
//
// What it guarantees:
//
//   - Only http and https, and every connection, redirects and probes
//     included, is checked on its resolved address before connect:
//     loopback, private, link-local and other non-public ranges are
//     refused unless the operator opens them (Config.Network).
//   - Redirects are followed by hand under a fixed policy: same scheme,
//     same port, no user info, and only to origins the request itself
//     derived (the https and http forms of the requested host, plus any
//     the operator adds); a refused hop is reported, never contacted. At
//     most ten requests per walk. A 304 is never a redirect. An http://
//     URL is tried over https first. Same-origin client-side redirects
//     (<meta http-equiv="refresh">) are followed under the same policy.
//   - Every limit applies to the bytes actually read, after decompression.
//   - Results are cached on disk (Config.Cache) and revalidated with
//     ETag / Last-Modified when stale.
//
// Fetch runs a request; Plan returns, without any network I/O, what a host
// must ask permission for before it runs one.
package fetch
