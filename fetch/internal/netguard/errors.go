package netguard

import (
	"errors"
	"net/netip"

	"github.com/slimgate/slim/internal/kinderr"
)

// BlockedError reports a connection the policy refused. It is returned
// before the connection is made, and it survives net/http's wrapping
// (*url.Error, *net.OpError), so a caller finds it with errors.As.
type BlockedError struct {
	Host  string     // the host name (or IP literal) the caller asked for
	Addr  netip.Addr // the address the connection would have reached
	Class Class
}

func (e *BlockedError) Error() string {
	msg := "connection to " + e.Host
	if e.Addr.IsValid() && e.Addr.String() != e.Host {
		msg += " (" + e.Addr.String() + ")"
	}
	msg += " refused: " + article(e.Class) + " " + string(e.Class) + " address"
	if s, key := e.Class.switches(); s != "" {
		return msg + " is not fetched by default; set " + s + " (or " + key + " in slim's configuration file) to allow it"
	}
	return msg + " is never fetched"
}

func article(c Class) string {
	switch c {
	case Unspecified, Invalid:
		return "an"
	}
	return "a"
}

// AsBlocked returns the *BlockedError in err's chain, if any.
func AsBlocked(err error) (*BlockedError, bool) {
	var e *BlockedError
	ok := errors.As(err, &e)
	return e, ok
}

// Kind classifies an Error by what the caller can do about it.
type Kind string

// The kinds of Error.
const (
	// Usage: an operator setting is malformed (a resolve mapping that is
	// not host:port to ip:port).
	Usage Kind = "usage"
	// Blocked: a request the proxy rule refuses (the proxy's own address
	// asked for directly).
	Blocked Kind = "blocked"
	// Internal: the dialer was asked for something it does not do (a
	// network other than TCP, an address it cannot parse), or a name did
	// not resolve.
	Internal Kind = "internal"
)

// Stable codes of an Error.
const (
	CodeBadResolve  = "bad_resolve"
	CodeProxyTarget = "proxy_target"
	CodeBadNetwork  = "unsupported_network"
	CodeBadAddress  = "bad_address"
	CodeNoAddress   = "no_address"
)

// Error is every error the package returns other than *BlockedError.
// Message is complete.
//
// Its fields are Kind, Code (a stable code from the list above), Message
// and Err, the cause.
type Error = kinderr.Error[Kind]

func newErr(k Kind, code, msg string, cause error) *Error {
	return &Error{Kind: k, Code: code, Message: msg, Err: cause}
}
