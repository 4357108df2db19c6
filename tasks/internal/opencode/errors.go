package opencode

import "errors"

// Kind classifies an Error by what it says about the request: whether the
// server refused it (nothing was admitted) or whether it may have acted on
// it. The task engine decides every remote write on this.
type Kind string

// The kinds of Error.
const (
	// Usage: the Config is wrong (a base URL that is not http or https
	// with a host), a session id cannot name a session ("", ".", ".."),
	// or a request body cannot be encoded. Nothing was sent.
	Usage Kind = "usage"
	// Rejected: the server refused the request explicitly, with a 4xx
	// other than 401, 403 and 404, or with a 2xx whose body is an error
	// envelope (a JSON object with a non-null top-level "error"). Nothing
	// was admitted.
	Rejected Kind = "rejected"
	// NotFound: the server answered 404 (a deleted session, an unknown
	// route). Nothing was admitted.
	NotFound Kind = "not_found"
	// Auth: the server answered 401 or 403: it wants credentials, or
	// refused the ones sent. Nothing was admitted.
	Auth Kind = "auth"
	// Unknown: no answer can be trusted: a 5xx (or another status that is
	// neither 2xx nor 4xx), a transport error, a dropped connection, a
	// timeout. The server may have acted on the request.
	Unknown Kind = "unknown"
	// Malformed: the server answered 2xx with a body that is not what the
	// call expects (not JSON, the wrong shape, too large). For a write it
	// is up to the caller whether that counts as admitted.
	Malformed Kind = "malformed"
)

// Stable codes of an Error, for machines.
const (
	CodeBadConfig   = "bad_config"        // Usage: the Config
	CodeBadID       = "bad_session_id"    // Usage: a session id that cannot name a session
	CodeBadBody     = "bad_body"          // Usage: a request body that cannot be encoded
	CodeRejected    = "rejected"          // Rejected: an explicit 4xx
	CodeEnvelope    = "error_envelope"    // Rejected: a 2xx error envelope
	CodeNotFound    = "not_found"         // NotFound: 404
	CodeNoRoute     = "no_route"          // NotFound: the host's API has no such call; nothing was sent
	CodeAuth        = "auth"              // Auth: 401 or 403
	CodeTimeout     = "timeout"           // Unknown: the context's deadline (or a transport timeout) passed
	CodeCanceled    = "canceled"          // Unknown: the context was canceled
	CodeServerError = "server_error"      // Unknown: a 5xx
	CodeStatus      = "unexpected_status" // Unknown: a status that is neither 2xx, 4xx nor 5xx
	CodeTransport   = "transport"         // Unknown: the request or the answer did not get through
	CodeMalformed   = "malformed"         // Malformed: not the expected shape
	CodeTooLarge    = "too_large"         // Malformed: a body larger than Config.MaxBody
)

// Error is every error the package returns. Message is complete and can
// be shown as it is: for a refusal it holds the HTTP status and the
// server's own text ("HTTP 409: Message … already exists").
//
// It is a struct of its own rather than the shared generic error shape
// because it also carries the HTTP status.
type Error struct {
	Kind    Kind
	Code    string
	Message string
	// Status is the HTTP status the server answered, 0 when none came
	// (a transport error or a timeout before the answer's head) or
	// nothing was sent (Usage).
	Status int
	// Err is the cause, for errors.Is and errors.As; it is not printed
	// beyond what Message says.
	Err error
}

func (e *Error) Error() string { return e.Message }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// AsError returns the *Error in err's chain, if any.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

func kindOf(err error) Kind {
	if e, ok := AsError(err); ok {
		return e.Kind
	}
	return ""
}

// Authoritative reports whether err is a refusal the server made
// explicitly (Rejected, NotFound or Auth): the request was not admitted,
// so a write can be settled as not done.
func Authoritative(err error) bool {
	switch kindOf(err) {
	case Rejected, NotFound, Auth:
		return true
	}
	return false
}

// MayHaveBeenAdmitted reports whether the server may have acted on the
// request although no success came back (Unknown): a write must then be
// treated as possibly done.
func MayHaveBeenAdmitted(err error) bool { return kindOf(err) == Unknown }

// NoRoute reports whether err says the host's API has no such call (code
// CodeNoRoute): it was refused before anything was sent, and says nothing
// about the session the call named.
func NoRoute(err error) bool {
	e, ok := AsError(err)
	return ok && e.Code == CodeNoRoute
}

// Timeout reports whether err is a timeout: the call's deadline passed
// before the answer came (code CodeTimeout).
func Timeout(err error) bool {
	e, ok := AsError(err)
	return ok && e.Code == CodeTimeout
}
