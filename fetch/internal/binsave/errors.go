package binsave

import "github.com/slimgate/slim/internal/kinderr"

// ErrorKind classifies an Error by what the caller can do about it. (Kind
// is the download kind of a media type.)
type ErrorKind string

// The kinds of Error.
const (
	// Blocked: the download directory exists but is not safe to use (a
	// symbolic link, someone else's, open to others, not a directory).
	Blocked ErrorKind = "blocked"
	// Internal: the directory or the file could not be created or written,
	// or no free name was left.
	Internal ErrorKind = "internal"
)

// Stable codes of an Error.
const (
	CodeUnsafeDir   = "unsafe_dir"
	CodeDirFailed   = "dir_failed"
	CodeWriteFailed = "write_failed"
	CodeNoFreeName  = "no_free_name"
)

// NoFreeNameMessage is the message of the CodeNoFreeName error, kept word
// for word because callers and models know it.
const NoFreeNameMessage = "Unable to allocate unique filename for binary content"

// Error is every error the package returns. Message is complete.
//
// Its fields are Kind, Code (a stable code from the list above), Message
// and Err, the cause.
type Error = kinderr.Error[ErrorKind]

func newErr(k ErrorKind, code, msg string, cause error) *Error {
	return &Error{Kind: k, Code: code, Message: msg, Err: cause}
}

// AsError returns the *Error in err's chain, if any.
func AsError(err error) (*Error, bool) { return kinderr.As[ErrorKind](err) }
