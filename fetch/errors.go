package fetch

import "errors"

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
type Error struct {
	Kind    Kind
	Code    string
	Message string
	Err     error
}

func (e *Error) Error() string { return e.Message }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

func newErr(k Kind, code, msg string, cause error) *Error {
	return &Error{Kind: k, Code: code, Message: msg, Err: cause}
}

// AsError returns the *Error in err's chain, if any.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
