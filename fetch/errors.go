package fetch

import "github.com/slimgate/slim/internal/kinderr"

// Kind classifies an Error by what the caller can do about it.
type Kind string

// The kinds of Error.
const (
	// Usage: an argument is wrong (a bad URL or scheme, a timeout out of
	// range, an unknown format). Nothing was sent.
	Usage Kind = "usage"
	// Blocked: the network policy refused an address (a private, loopback
	// or link-local target) before anything was sent to it.
	Blocked Kind = "blocked"
	// Failed: the server could not be reached or answered with an error
	// (a non-2xx status, a redirect without Location, too many redirects,
	// the time limit).
	Failed Kind = "failed"
	// Internal: slim itself failed (a file could not be written).
	Internal Kind = "internal"
)

// Stable codes of an Error, for machines.
const (
	CodeBadArgument      = "bad_argument"
	CodeBadURL           = "bad_url"
	CodeStatus           = "http_status"
	CodeTooManyRedirects = "too_many_redirects"
	CodeMissingLocation  = "missing_location"
	CodeTimeout          = "timeout"
	CodeInterrupted      = "interrupted"
	CodeNetwork          = "network_error"
	CodeAddressRefused   = "address_refused"
	CodeBinaryUnsavable  = "binary_unsavable"
	CodeInternal         = "internal_unexpected"
)

// Error is every error Fetch and Plan return. Message is complete and is
// what the model reads.
//
// Its fields are Kind, Code (a stable code from the list above), Message
// and Err, the cause.
type Error = kinderr.Error[Kind]

func newErr(k Kind, code, msg string, cause error) *Error {
	return &Error{Kind: k, Code: code, Message: msg, Err: cause}
}

// AsError returns the *Error in err's chain, if any.
func AsError(err error) (*Error, bool) { return kinderr.As[Kind](err) }
