package model

import "errors"

// Kind classifies an Error by what went wrong.
type Kind string

// The kinds of Error.
const (
	// Config: the backend is set up wrongly (a base URL that is not http or
	// https); no request was sent.
	Config Kind = "config"
	// Unreachable: the request did not complete (refused, reset, a TLS
	// failure).
	Unreachable Kind = "unreachable"
	// Status: the server answered with a status other than 2xx.
	Status Kind = "status"
	// Protocol: the answer could not be used (not the expected JSON, no
	// choices, a session without an id, larger than MaxResponseBytes).
	Protocol Kind = "protocol"
	// Failed: the server ran the model and reported that the model failed
	// (a provider error recorded on the reply).
	Failed Kind = "failed"
	// Unusable: the model answered, but with nothing to show.
	Unusable Kind = "unusable"
	// Timeout: the attempt's deadline passed before the answer came.
	Timeout Kind = "timeout"
	// Canceled: the caller gave up (its context was canceled).
	Canceled Kind = "canceled"
	// Cleanup: the answer (or the failure) stands, but the helper session
	// could not be aborted or deleted cleanly. Only reported through
	// Reply.Cleanup and Outcome.Warnings, never as an attempt's failure.
	Cleanup Kind = "cleanup"
)

// Stable codes of an Error, for machines.
const (
	CodeBadConfig = "bad_config"
	// CodeBadSmallModel: the OpenCode server's small_model is not a
	// provider/model reference (OpenCode.SmallModel).
	CodeBadSmallModel    = "bad_small_model"
	CodeUnreachable      = "unreachable"
	CodeStatus           = "http_status"
	CodeBadResponse      = "bad_response"
	CodeResponseTooLarge = "response_too_large"
	CodeModelError       = "model_error"
	CodeEmptyAnswer      = "empty_answer"
	CodeTimeout          = "timeout"
	CodeCanceled         = "canceled"
	CodeAbortFailed      = "session_abort_failed"
	CodeNotSettled       = "session_not_settled"
	CodeDeleteFailed     = "session_delete_failed"
)

// Error is every error the package returns. Message is complete: it names
// the model it is about and says what happened.
type Error struct {
	Kind Kind
	Code string
	// Model is the reference (Ref.String) the error is about.
	Model string
	// HTTPStatus is the server's status for a Status error, else 0.
	HTTPStatus int
	Message    string
	Err        error
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
